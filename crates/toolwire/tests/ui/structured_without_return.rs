//! `#[tool(structured)]` with nothing to structure.

/// Does something.
#[toolwire::tool(structured)]
async fn nothing(text: String) {
    let _ = text;
}

fn main() {}
