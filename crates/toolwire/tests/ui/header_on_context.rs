//! `#[header]` on the request context, which is not part of the input.

use toolwire::RequestContext;

/// Regional.
#[toolwire::tool]
async fn regional(#[header("Region")] cx: RequestContext, text: String) -> String {
    let _ = cx;
    text
}

fn main() {}
