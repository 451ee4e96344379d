//! The module graph of `crates/toolwire/src` is a tree: no top-level module
//! imports one that imports it back, directly or through others. Read from
//! the crate's own source files, every `use crate::x` and `crate::x::` path.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Edges `(from, to)` left out of the check, each with the reason.
const ALLOWED: &[(&str, &str)] = &[];

/// Top-level module -> the top-level modules it imports -> a file that does.
type Graph = BTreeMap<String, BTreeMap<String, PathBuf>>;

#[test]
fn top_level_modules_import_each_other_without_cycles() {
    let mut graph = crate_graph();
    for &(from, to) in ALLOWED {
        let removed = graph.get_mut(from).and_then(|e| e.remove(to));
        assert!(
            removed.is_some(),
            "{from} no longer imports {to}: remove the exception from ALLOWED"
        );
    }
    if let Some(cycle) = find_cycle(&graph) {
        panic!("the module graph has a cycle: {}", describe(&graph, &cycle));
    }
}

#[test]
fn a_cycle_is_found_and_named() {
    fn edge(graph: &mut Graph, a: &str, b: &str) {
        graph
            .entry(a.into())
            .or_default()
            .insert(b.into(), PathBuf::from(format!("{a}.rs")));
    }
    let mut graph = Graph::new();
    edge(&mut graph, "client", "bounds");
    edge(&mut graph, "server", "bounds");
    edge(&mut graph, "server", "mrtr");
    edge(&mut graph, "mrtr", "context");
    assert_eq!(find_cycle(&graph), None);
    edge(&mut graph, "context", "server");
    let cycle = find_cycle(&graph).expect("server -> mrtr -> context -> server");
    assert_eq!(
        describe(&graph, &cycle),
        "context -> server (context.rs), server -> mrtr (server.rs), mrtr -> context (mrtr.rs)"
    );
}

#[test]
fn imports_are_read_from_use_lines_and_paths() {
    let modules: BTreeSet<String> = ["client", "legacy", "mrtr", "server"]
        .map(String::from)
        .into();
    let src = "//! Uses crate::server::Server in a comment only.\n\
               use crate::{legacy::LEGACY_PROTOCOL_VERSIONS, Tool, mrtr::{self, seal}};\n\
               fn f() { crate::client::go(); crate::serve_io(); }\n\
               let url = \"http://example.com\"; // crate::server\n";
    let found = imports(src, &modules);
    assert_eq!(found, ["client", "legacy", "mrtr"].map(String::from).into());
}

/// The graph between the crate's top-level modules.
fn crate_graph() -> Graph {
    let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&src, &mut files);
    let top = |path: &Path| -> String {
        let rel = path.strip_prefix(&src).expect("under src");
        let first = rel.components().next().expect("a file name");
        let first = first.as_os_str().to_string_lossy();
        first.strip_suffix(".rs").unwrap_or(&first).to_owned()
    };
    let modules: BTreeSet<String> = files.iter().map(|f| top(f)).collect();
    let mut graph = Graph::new();
    for file in &files {
        let from = top(file);
        if from == "lib" {
            continue;
        }
        let text = std::fs::read_to_string(file).expect("a readable source file");
        for to in imports(&text, &modules) {
            if to == from {
                continue;
            }
            let rel = file.strip_prefix(&src).expect("under src").to_path_buf();
            graph
                .entry(from.clone())
                .or_default()
                .entry(to)
                .or_insert(rel);
        }
    }
    graph
}

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    for entry in std::fs::read_dir(dir).expect("a readable directory") {
        let path = entry.expect("a directory entry").path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// The top-level modules among `modules` that `text` imports: the first
/// segment after every `crate::`, or each first segment of a `crate::{..}`
/// group. Comments are skipped; names that are no module (items re-exported
/// at the crate root, `crate::serve_io`) are not counted.
fn imports(text: &str, modules: &BTreeSet<String>) -> BTreeSet<String> {
    let code: String = text
        .lines()
        .map(|line| line.split("//").next().unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n");
    let mut found = BTreeSet::new();
    let mut rest = code.as_str();
    while let Some(at) = rest.find("crate::") {
        rest = &rest[at + "crate::".len()..];
        let names = match rest.strip_prefix('{') {
            Some(group) => group_heads(group),
            None => vec![ident(rest)],
        };
        found.extend(
            names
                .into_iter()
                .filter(|n| modules.contains(*n))
                .map(str::to_owned),
        );
    }
    found
}

/// The first segment of each item of a `{..}` group, up to its closing brace.
fn group_heads(group: &str) -> Vec<&str> {
    let mut heads = Vec::new();
    let mut depth = 0;
    let mut item_start = true;
    for (i, c) in group.char_indices() {
        match c {
            '{' => depth += 1,
            '}' if depth == 0 => break,
            '}' => depth -= 1,
            ',' if depth == 0 => item_start = true,
            c if item_start && !c.is_whitespace() => {
                heads.push(ident(&group[i..]));
                item_start = false;
            }
            _ => {}
        }
    }
    heads
}

fn ident(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// A cycle of the graph, as its modules in order, if there is one.
fn find_cycle(graph: &Graph) -> Option<Vec<String>> {
    #[derive(Clone, Copy, PartialEq)]
    enum Mark {
        Open,
        Done,
    }
    fn visit(
        node: &str,
        graph: &Graph,
        marks: &mut BTreeMap<String, Mark>,
        path: &mut Vec<String>,
    ) -> Option<Vec<String>> {
        match marks.get(node) {
            Some(Mark::Done) => return None,
            Some(Mark::Open) => {
                let from = path.iter().position(|n| n == node).expect("on the path");
                return Some(path[from..].to_vec());
            }
            None => {}
        }
        marks.insert(node.to_owned(), Mark::Open);
        path.push(node.to_owned());
        for next in graph.get(node).into_iter().flat_map(BTreeMap::keys) {
            if let Some(cycle) = visit(next, graph, marks, path) {
                return Some(cycle);
            }
        }
        path.pop();
        marks.insert(node.to_owned(), Mark::Done);
        None
    }
    let mut marks = BTreeMap::new();
    for node in graph.keys() {
        if let Some(cycle) = visit(node, graph, &mut marks, &mut Vec::new()) {
            return Some(cycle);
        }
    }
    None
}

/// `a -> b (file), b -> a (file)`: each edge of `cycle` with a file that
/// makes it.
fn describe(graph: &Graph, cycle: &[String]) -> String {
    let edges: Vec<String> = (0..cycle.len())
        .map(|i| {
            let (a, b) = (&cycle[i], &cycle[(i + 1) % cycle.len()]);
            let file = &graph[a][b];
            format!("{a} -> {b} ({})", file.display())
        })
        .collect();
    edges.join(", ")
}
