//! `#[tool]` with a borrowed parameter: arguments are deserialised, so
//! parameters are owned.

/// Echoes.
#[toolwire::tool]
async fn echo(text: &str) -> String {
    text.to_owned()
}

fn main() {}
