//! `#[tool]` on a function that is not `async`.

/// Echoes.
#[toolwire::tool]
fn echo(text: String) -> String {
    text
}

fn main() {}
