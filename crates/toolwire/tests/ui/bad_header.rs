//! `#[header]` without a quoted header name.

/// Regional.
#[toolwire::tool]
async fn regional(#[header(Region)] region: String) -> String {
    region
}

fn main() {}
