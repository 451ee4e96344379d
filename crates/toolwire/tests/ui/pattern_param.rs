//! `#[tool]` with a pattern where a parameter name belongs.

/// Adds a pair.
#[toolwire::tool]
async fn add((a, b): (i64, i64)) -> String {
    (a + b).to_string()
}

fn main() {}
