//! `#[tool]` with two request contexts.

use toolwire::RequestContext;

/// Twice the context.
#[toolwire::tool]
async fn twice(cx: RequestContext, text: String, again: &RequestContext) -> String {
    let _ = (cx, again);
    text
}

fn main() {}
