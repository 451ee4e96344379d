//! A `Result` whose error does not convert into `ToolError`.

struct Oops;

/// Fails.
#[toolwire::tool]
async fn fails(text: String) -> Result<String, Oops> {
    let _ = text;
    Err(Oops)
}

fn main() {
    let _ = fails_tool();
}
