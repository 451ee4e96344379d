//! `#[tool]` on a generic function.

/// Shows anything.
#[toolwire::tool]
async fn show<T: std::fmt::Display>(value: String) -> String {
    value
}

fn main() {}
