//! `toolwire new NAME`: a new server crate in `./NAME`, with two tools on
//! stdio, a test through the in-process test kit, and a README saying how
//! to run it and add it to a host.

use anyhow::{Context as _, bail};
use clap::Args;
use std::path::{Path, PathBuf};

/// The long help of `new`.
pub(crate) const LONG_ABOUT: &str = "\
Make a new MCP server crate in ./NAME: src/main.rs with two #[tool]s served
over stdio, src/tests.rs calling them through toolwire's in-process test kit
(the `testing` feature), a README with how to run, test and add it to a
host (the snippet `toolwire host-config claude` prints), and a .gitignore.

The toolwire dependency is the released version by default; --path points
it at a checkout of the toolwire repository instead (its root or its
crates/toolwire). NAME must be a valid crate name, and ./NAME must not exist
or be empty.

Then:
  cd NAME && cargo test
  cargo build && toolwire list --stdio target/debug/NAME";

/// `toolwire new`.
#[derive(Args, Debug)]
pub(crate) struct NewArgs {
    /// The crate's name, which is also its directory, its binary's and its
    /// server's name.
    name: String,
    /// Depend on toolwire at DIR, a checkout of the toolwire repository (or
    /// its crates/toolwire), instead of the released version.
    #[arg(long, value_name = "DIR")]
    path: Option<PathBuf>,
}

const CARGO_TOML: &str = include_str!("new_cmd/Cargo.toml.txt");
const MAIN_RS: &str = include_str!("new_cmd/main.rs.txt");
const TESTS_RS: &str = include_str!("new_cmd/tests.rs.txt");
const README_MD: &str = include_str!("new_cmd/README.md.txt");
const GITIGNORE: &str = include_str!("new_cmd/gitignore.txt");

/// Rust's keywords, strict and reserved: no crate may be named one.
const KEYWORDS: [&str; 51] = [
    "abstract", "as", "async", "await", "become", "box", "break", "const", "continue", "crate",
    "do", "dyn", "else", "enum", "extern", "false", "final", "fn", "for", "gen", "if", "impl",
    "in", "let", "loop", "macro", "match", "mod", "move", "mut", "override", "priv", "pub", "ref",
    "return", "self", "Self", "static", "struct", "super", "trait", "true", "try", "type",
    "typeof", "unsafe", "unsized", "use", "virtual", "where", "while",
];

/// Names that would clash with the standard library, with cargo's own
/// directories in `target/`, or with the toolwire dependency.
const RESERVED: [&str; 10] = [
    "std",
    "core",
    "alloc",
    "proc_macro",
    "test",
    "build",
    "deps",
    "examples",
    "incremental",
    "toolwire",
];

/// Why `name` cannot be a crate's name, if it cannot.
fn invalid_name(name: &str) -> Option<String> {
    let Some(first) = name.chars().next() else {
        return Some("the name is empty".into());
    };
    if let Some(bad) = name
        .chars()
        .find(|c| !(c.is_ascii_alphanumeric() || *c == '-' || *c == '_'))
    {
        return Some(format!(
            "{bad:?} is not allowed: a crate name has ASCII letters, digits, `-` and `_` only"
        ));
    }
    if first.is_ascii_digit() {
        return Some("a crate name cannot start with a digit".into());
    }
    if first == '-' {
        return Some("a crate name cannot start with `-`".into());
    }
    if name.len() > 64 {
        return Some("a crate name has at most 64 characters".into());
    }
    if KEYWORDS.contains(&name) {
        return Some(format!("{name} is a Rust keyword"));
    }
    let underscored = name.replace('-', "_");
    if RESERVED.contains(&underscored.as_str()) {
        return Some(format!(
            "{name} is reserved (it would clash with a crate or a cargo directory)"
        ));
    }
    None
}

/// The `crates/toolwire` directory of a checkout at `dir` (or `dir` itself
/// when it is that crate), absolute.
fn toolwire_crate(dir: &Path) -> anyhow::Result<PathBuf> {
    let dir = dir
        .canonicalize()
        .with_context(|| format!("--path {}", dir.display()))?;
    for candidate in [dir.join("crates/toolwire"), dir.clone()] {
        let manifest = candidate.join("Cargo.toml");
        if let Ok(text) = std::fs::read_to_string(&manifest)
            && text.lines().any(|l| l.trim() == "name = \"toolwire\"")
        {
            return Ok(candidate);
        }
    }
    bail!(
        "--path {}: neither it nor its crates/toolwire is the toolwire crate (a Cargo.toml with name = \"toolwire\")",
        dir.display()
    )
}

/// The version requirement of the released toolwire this command belongs
/// to: its major and minor version, `"0.1"` for 0.1.x.
fn version_requirement() -> String {
    let version = env!("CARGO_PKG_VERSION");
    let mut parts = version.split('.');
    match (parts.next(), parts.next()) {
        (Some(major), Some(minor)) => format!("{major}.{minor}"),
        _ => version.to_owned(),
    }
}

/// `toolwire new`.
pub(crate) fn run(a: NewArgs) -> anyhow::Result<()> {
    if let Some(why) = invalid_name(&a.name) {
        bail!("cannot make a crate named {:?}: {why}", a.name);
    }
    let dir = PathBuf::from(&a.name);
    if let Ok(mut entries) = std::fs::read_dir(&dir) {
        if entries.next().is_some() {
            bail!(
                "{} already exists and is not empty; not overwriting it (pick another name, or remove it)",
                dir.display()
            );
        }
    } else if dir.exists() {
        bail!("{} already exists and is not a directory", dir.display());
    }
    // The dependency as a TOML value, and inline (for the dev-dependency,
    // which adds the `testing` feature).
    let inline = match &a.path {
        Some(path) => {
            let krate = toolwire_crate(path)?;
            let krate = krate
                .to_str()
                .with_context(|| format!("{} is not UTF-8", krate.display()))?;
            // A JSON string is a TOML basic string.
            format!("path = {}", serde_json::Value::from(krate))
        }
        None => format!("version = \"{}\"", version_requirement()),
    };
    let dependency = match &a.path {
        Some(_) => format!("{{ {inline} }}"),
        None => format!("\"{}\"", version_requirement()),
    };
    let binary = std::path::absolute(&dir)
        .context("cannot find the current directory")?
        .join("target/release")
        .join(&a.name);
    let binary = binary
        .to_str()
        .with_context(|| format!("{} is not UTF-8", binary.display()))?;
    let snippet = crate::host_config::claude_snippet(&a.name, binary);
    let snippet = snippet.trim_end();
    let fill = |template: &str| {
        template
            .replace("{{toolwire_inline}}", &inline)
            .replace("{{toolwire}}", &dependency)
            .replace("{{claude_snippet}}", snippet)
            .replace("{{name}}", &a.name)
    };
    let files = [
        ("Cargo.toml", fill(CARGO_TOML)),
        ("src/main.rs", fill(MAIN_RS)),
        ("src/tests.rs", fill(TESTS_RS)),
        ("README.md", fill(README_MD)),
        (".gitignore", GITIGNORE.to_owned()),
    ];
    std::fs::create_dir_all(dir.join("src"))
        .with_context(|| format!("cannot create {}", dir.display()))?;
    for (file, text) in files {
        let path = dir.join(file);
        std::fs::write(&path, text).with_context(|| format!("cannot write {}", path.display()))?;
    }
    let name = &a.name;
    if a.path.is_none() {
        eprintln!(
            "toolwire: {name} depends on toolwire {} from crates.io; to build against a \
             checkout of toolwire instead, run `toolwire new` with --path DIR",
            version_requirement()
        );
    }
    crate::client_cmd::print(&format!(
        "Created the MCP server crate {name} in ./{name}. Next:\n  \
         cd {name}\n  \
         cargo test\n  \
         cargo build && toolwire list --stdio target/debug/{name}\n  \
         toolwire host-config claude -- \"$PWD/target/debug/{name}\"\n"
    ))?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::{invalid_name, version_requirement};

    #[test]
    fn crate_names() {
        for good in ["weather", "my-server", "my_server2", "a"] {
            assert_eq!(invalid_name(good), None, "{good}");
        }
        for bad in [
            "",
            "9lives",
            "-x",
            "my server",
            "a/b",
            "../x",
            "fn",
            "test",
            "toolwire",
            "déjà",
        ] {
            assert!(invalid_name(bad).is_some(), "{bad:?}");
        }
        assert!(invalid_name(&"x".repeat(65)).is_some());
    }

    #[test]
    fn the_version_is_major_and_minor() {
        assert_eq!(version_requirement().matches('.').count(), 1);
    }
}
