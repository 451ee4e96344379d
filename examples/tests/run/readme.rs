//! Keeps the README and the examples honest with each other: every Rust
//! block of the README is one rustdoc compiles (the crate's lib includes the
//! README as doctests; this checks none opts out or hides lines), every
//! example is listed, and every example says how to run it.

use std::path::Path;

const README: &str = include_str!("../../../README.md");
const MANIFEST: &str = include_str!("../../Cargo.toml");

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
fn every_rust_block_of_the_readme_is_compiled_as_shown() {
    let mut rust_blocks = 0;
    let mut in_rust = false;
    let mut fence_line = 0;
    for (n, line) in README.lines().enumerate() {
        if let Some(info) = line.strip_prefix("```") {
            if in_rust || info.is_empty() {
                in_rust = false;
                continue;
            }
            let attributes: Vec<&str> = info.split(',').map(str::trim).collect();
            if attributes[0] == "rust" {
                rust_blocks += 1;
                in_rust = true;
                fence_line = n + 1;
                for attribute in &attributes[1..] {
                    // `ignore` and `compile_fail` would let a block drift.
                    assert_eq!(*attribute, "no_run", "README line {fence_line}: ```{info}");
                }
            } else {
                // Any other language is not compiled: keep Rust out of it.
                assert!(
                    ["sh", "toml", "json"].contains(&attributes[0]),
                    "README line {}: ```{info} is neither Rust nor a known non-Rust block",
                    n + 1
                );
            }
            continue;
        }
        if in_rust {
            // rustdoc hides `# ` lines: the README would show something
            // else than what compiles.
            assert!(
                !(line == "#" || line.starts_with("# ")),
                "README line {}: a hidden rustdoc line in the block of line {fence_line}",
                n + 1
            );
        }
    }
    assert!(rust_blocks >= 8, "only {rust_blocks} Rust blocks found");
}

#[test]
fn every_example_is_listed_in_the_readme_and_says_how_to_run_it() {
    let examples = examples();
    assert!(examples.len() >= 7, "{examples:?}");
    let dir = Path::new(env!("CARGO_MANIFEST_DIR"));
    for name in examples {
        let file = format!("examples/{name}.rs");
        assert!(
            README.contains(&format!("[`{name}`]({file})")),
            "the README's Examples table lists {file}"
        );
        let source = std::fs::read_to_string(dir.join(format!("{name}.rs")))
            .unwrap_or_else(|e| panic!("{name}.rs: {e}"));
        assert!(
            source.starts_with("//! "),
            "{name}.rs starts with a //! line"
        );
        let run = format!("cargo run -p toolwire-examples --bin {name}");
        assert!(source.contains(&run), "{name}.rs says `{run}`");
    }
}
