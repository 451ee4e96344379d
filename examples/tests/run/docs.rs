//! Keeps the README, the book (`docs/src`), the crates' READMEs and the
//! examples honest with each other: every Rust block is one rustdoc
//! compiles (the crate's lib includes every Markdown file as doctests; this
//! checks none is left out, opts out or hides lines), every relative link
//! and `#anchor` leads somewhere, every chapter is in the book's summary,
//! and every example is listed and says how to run it.

use std::collections::BTreeSet;
use std::path::{Component, Path, PathBuf};

const LIB: &str = include_str!("../../lib.rs");
const MANIFEST: &str = include_str!("../../Cargo.toml");

/// The repository's root.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("examples/ is in the repository")
        .to_path_buf()
}

fn read(path: &Path) -> String {
    std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

/// Every `.md` file under `dir`, sorted, as paths from the root.
fn markdown_under(dir: &str) -> Vec<String> {
    fn walk(dir: &Path, out: &mut Vec<PathBuf>) {
        for entry in std::fs::read_dir(dir).unwrap_or_else(|e| panic!("{}: {e}", dir.display())) {
            let path = entry.expect("a directory entry").path();
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path);
            }
        }
    }
    let root = root();
    let mut found = Vec::new();
    walk(&root.join(dir), &mut found);
    let mut names: Vec<String> = found
        .iter()
        .map(|p| {
            let relative = p.strip_prefix(&root).expect("under the root");
            relative.to_str().expect("UTF-8 path").replace('\\', "/")
        })
        .collect();
    names.sort();
    names
}

/// The book's chapters (`docs/src`, its summary aside).
fn chapters() -> Vec<String> {
    markdown_under("docs/src")
        .into_iter()
        .filter(|p| p != "docs/src/SUMMARY.md")
        .collect()
}

/// The Markdown files whose Rust blocks are compiled: the README and the
/// chapters.
fn compiled_markdown() -> Vec<String> {
    let mut files = vec!["README.md".to_owned()];
    files.extend(chapters());
    files.extend(crate_readmes());
    files
}

/// The READMEs of the crates, which crates.io shows.
fn crate_readmes() -> Vec<String> {
    let mut found: Vec<String> = std::fs::read_dir(root().join("crates"))
        .expect("crates/")
        .map(|e| e.expect("a directory entry").path().join("README.md"))
        .filter(|p| p.is_file())
        .map(|p| {
            let relative = p.strip_prefix(root()).expect("under the root");
            relative.to_str().expect("UTF-8 path").replace('\\', "/")
        })
        .collect();
    found.sort();
    found
}

/// The Markdown files whose links are checked.
fn linked_markdown() -> Vec<String> {
    let mut files = compiled_markdown();
    files.extend(["docs/src/SUMMARY.md", "CONTRIBUTING.md", "deploy/README.md"].map(str::to_owned));
    files
}

/// The binaries of this crate, from `[[bin]] name = "..."`.
fn examples() -> Vec<&'static str> {
    MANIFEST
        .split("[[bin]]")
        .skip(1)
        .map(|section| {
            let line = section
                .lines()
                .find(|l| l.starts_with("name = "))
                .expect("every [[bin]] has a name");
            line.trim_start_matches("name = ").trim_matches('"')
        })
        .collect()
}

#[test]
fn every_markdown_file_is_included_as_doctests() {
    let included: BTreeSet<String> = LIB
        .lines()
        .filter_map(|l| l.split_once("= \"../").map(|(_, path)| path))
        .map(|path| path.trim_end_matches("\",").to_owned())
        .collect();
    let wanted: BTreeSet<String> = compiled_markdown().into_iter().collect();
    assert!(wanted.len() > 20, "{wanted:?}");
    let missing: Vec<_> = wanted.difference(&included).collect();
    assert!(
        missing.is_empty(),
        "examples/lib.rs does not include {missing:?}"
    );
    let gone: Vec<_> = included.difference(&wanted).collect();
    assert!(
        gone.is_empty(),
        "examples/lib.rs includes files that are gone: {gone:?}"
    );
}

/// Checks the fences of one file: Rust blocks compiled as shown, other
/// blocks of known languages. Returns how many Rust blocks it has.
fn check_blocks(name: &str, text: &str) -> Result<usize, String> {
    let mut rust_blocks = 0;
    let mut fence: Option<(bool, usize)> = None;
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        if let Some(info) = line.trim_start().strip_prefix("```") {
            if fence.is_some() {
                fence = None;
                continue;
            }
            let attributes: Vec<&str> = info.split(',').map(str::trim).collect();
            let is_rust = attributes[0] == "rust";
            if is_rust {
                rust_blocks += 1;
                // `ignore` and `compile_fail` would let a block drift.
                if let Some(a) = attributes[1..].iter().find(|a| **a != "no_run") {
                    return Err(format!("{name}:{n}: ```{info}: `{a}` is not allowed"));
                }
            } else if !["sh", "toml", "json", "text"].contains(&attributes[0]) {
                // rustdoc compiles a block without a language as Rust.
                return Err(format!(
                    "{name}:{n}: ```{info} is neither Rust nor a known non-Rust block"
                ));
            }
            fence = Some((is_rust, n));
            continue;
        }
        if let Some((true, start)) = fence {
            // rustdoc hides `# ` lines: the page would show something
            // else than what compiles.
            if line == "#" || line.starts_with("# ") {
                return Err(format!(
                    "{name}:{n}: a hidden rustdoc line in the block of line {start}"
                ));
            }
        }
    }
    match fence {
        Some((_, start)) => Err(format!("{name}:{start}: a block that never ends")),
        None => Ok(rust_blocks),
    }
}

#[test]
fn every_rust_block_is_compiled_as_shown() {
    let mut rust_blocks = 0;
    for name in compiled_markdown() {
        rust_blocks +=
            check_blocks(&name, &read(&root().join(&name))).unwrap_or_else(|e| panic!("{e}"));
    }
    assert!(rust_blocks >= 19, "only {rust_blocks} Rust blocks found");
}

#[test]
fn block_checks_catch_what_would_drift() {
    assert_eq!(
        check_blocks("a.md", "```rust,no_run\nfn main() {}\n```\n"),
        Ok(1)
    );
    assert!(check_blocks("a.md", "```rust,ignore\nx\n```\n").is_err());
    assert!(check_blocks("a.md", "```\nx\n```\n").is_err());
    assert!(check_blocks("a.md", "```rust\n# use x;\n```\n").is_err());
    assert!(check_blocks("a.md", "```sh\nls\n").is_err());
}

#[test]
fn the_readme_fits_on_a_screen() {
    let lines = read(&root().join("README.md")).lines().count();
    assert!(
        lines <= 250,
        "README.md has {lines} lines: move the detail into docs/"
    );
}

#[test]
fn every_example_is_listed_in_the_book_and_says_how_to_run_it() {
    let examples = examples();
    assert!(examples.len() >= 7, "{examples:?}");
    let page = read(&root().join("docs/src/getting-started.md"));
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in examples {
        let file = format!("../../examples/{name}.rs");
        assert!(
            page.contains(&format!("[`{name}`]({file})")),
            "docs/src/getting-started.md's Examples table lists {file}"
        );
        let source = read(&dir.join(format!("{name}.rs")));
        assert!(
            source.starts_with("//! "),
            "{name}.rs starts with a //! line"
        );
        let run = format!("cargo run -p toolwire-examples --bin {name}");
        assert!(source.contains(&run), "{name}.rs says `{run}`");
    }
}

/// The anchor mdBook and GitHub give a heading: its text without Markdown
/// marks, lower case, letters, digits, `-` and `_` kept, spaces as `-`.
fn anchor_of(heading: &str) -> String {
    heading
        .chars()
        .filter_map(|c| {
            if c.is_alphanumeric() || c == '-' || c == '_' {
                Some(c.to_lowercase().next().unwrap_or(c))
            } else if c == ' ' {
                Some('-')
            } else {
                None
            }
        })
        .collect()
}

/// The anchors of a Markdown file's headings (outside code blocks), a
/// repeated one numbered `-1`, `-2`, … as both renderers do.
fn anchors(text: &str) -> BTreeSet<String> {
    let mut seen = BTreeSet::new();
    let mut in_code = false;
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code || !line.starts_with('#') {
            continue;
        }
        let Some((hashes, heading)) = line.split_once(' ') else {
            continue;
        };
        if !hashes.chars().all(|c| c == '#') {
            continue;
        }
        let base = anchor_of(heading.trim());
        let mut anchor = base.clone();
        let mut n = 0;
        while seen.contains(&anchor) {
            n += 1;
            anchor = format!("{base}-{n}");
        }
        seen.insert(anchor);
    }
    seen
}

/// The targets of a Markdown file's inline links (`[text](target)`)
/// outside code blocks and code spans, with their line numbers.
fn links(text: &str) -> Vec<(usize, String)> {
    let mut found = Vec::new();
    let mut in_code = false;
    for (n, line) in text.lines().enumerate() {
        if line.trim_start().starts_with("```") {
            in_code = !in_code;
            continue;
        }
        if in_code {
            continue;
        }
        // Code spans are not links: drop every other backtick-delimited part.
        let prose: String = line
            .split('`')
            .enumerate()
            .filter(|(i, _)| i % 2 == 0)
            .map(|(_, part)| part)
            .collect::<Vec<_>>()
            .join(" ");
        let mut rest = prose.as_str();
        while let Some(at) = rest.find("](") {
            rest = &rest[at + 2..];
            let end = rest.find(')').unwrap_or(rest.len());
            let target = rest[..end].split_whitespace().next().unwrap_or_default();
            found.push((n + 1, target.to_owned()));
            rest = &rest[end..];
        }
    }
    found
}

/// `path` with `.` and `..` resolved, or `None` if it leaves the root.
fn normalise(path: &Path) -> Option<PathBuf> {
    let mut out = PathBuf::new();
    for part in path.components() {
        match part {
            Component::ParentDir => {
                if !out.pop() {
                    return None;
                }
            }
            Component::CurDir => {}
            other => out.push(other),
        }
    }
    Some(out)
}

/// What is wrong with a link from `from` (a path from the root) to
/// `target`, if anything. Links with a scheme are not followed.
fn broken(from: &str, target: &str, read: &dyn Fn(&Path) -> Option<String>) -> Option<String> {
    if target.contains("://") || target.starts_with("mailto:") {
        return None;
    }
    let (path, anchor) = target.split_once('#').unwrap_or((target, ""));
    let file = if path.is_empty() {
        PathBuf::from(from)
    } else {
        match normalise(&Path::new(from).parent().unwrap_or(Path::new("")).join(path)) {
            Some(file) => file,
            None => return Some(format!("{target}: outside the repository")),
        }
    };
    let Some(text) = read(&file) else {
        return Some(format!("{target}: no such file ({})", file.display()));
    };
    if !anchor.is_empty() {
        if file.extension().is_none_or(|e| e != "md") {
            return Some(format!(
                "{target}: an anchor into a file that is not Markdown"
            ));
        }
        if !anchors(&text).contains(anchor) {
            return Some(format!(
                "{target}: {} has no heading #{anchor}",
                file.display()
            ));
        }
    }
    None
}

/// Reads a file or lists a directory (as an empty text) under the root.
fn read_under_root(path: &Path) -> Option<String> {
    let full = root().join(path);
    if full.is_dir() {
        return Some(String::new());
    }
    std::fs::read_to_string(full).ok()
}

#[test]
fn every_relative_link_and_anchor_leads_somewhere() {
    let mut problems = Vec::new();
    let mut checked = 0;
    for name in linked_markdown() {
        for (line, target) in links(&read(&root().join(&name))) {
            checked += 1;
            if let Some(problem) = broken(&name, &target, &read_under_root) {
                problems.push(format!("{name}:{line}: {problem}"));
            }
        }
    }
    assert!(checked > 100, "only {checked} links found");
    assert!(
        problems.is_empty(),
        "broken links:\n{}",
        problems.join("\n")
    );
}

#[test]
fn link_checks_catch_a_missing_file_or_heading() {
    let files = |path: &Path| match path.to_str() {
        Some("docs/src/a.md") => Some(
            "# The `#[tool]` macro\n## Typed output, and errors with `?`\n## Notes\n## Notes\n"
                .to_owned(),
        ),
        Some("README.md") => Some(String::new()),
        _ => None,
    };
    assert_eq!(broken("docs/src/a.md", "#the-tool-macro", &files), None);
    assert_eq!(
        broken("docs/src/a.md", "#typed-output-and-errors-with-", &files),
        None
    );
    assert_eq!(broken("docs/src/a.md", "#notes-1", &files), None);
    assert_eq!(broken("docs/src/b.md", "a.md#notes", &files), None);
    assert_eq!(broken("docs/src/b.md", "../../README.md", &files), None);
    assert!(broken("docs/src/a.md", "#notes-2", &files).is_some());
    assert!(broken("docs/src/b.md", "c.md", &files).is_some());
    assert!(broken("docs/src/b.md", "../../../x.md", &files).is_some());
    assert!(broken("README.md", "docs/src/a.md#nowhere", &files).is_some());
    assert_eq!(
        links("see [a](b.md#c) and `[x](y)`\n```\n[p](q)\n```\n"),
        vec![(1, "b.md#c".to_owned())]
    );
}

#[test]
fn every_chapter_is_in_the_summary() {
    let summary = read(&root().join("docs/src/SUMMARY.md"));
    let listed: BTreeSet<String> = links(&summary)
        .into_iter()
        .map(|(_, target)| format!("docs/src/{target}"))
        .collect();
    let missing: Vec<String> = chapters()
        .into_iter()
        .filter(|c| !listed.contains(c))
        .collect();
    assert!(
        missing.is_empty(),
        "not in docs/src/SUMMARY.md: {missing:?}"
    );
}
