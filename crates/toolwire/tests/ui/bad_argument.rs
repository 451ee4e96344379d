//! Unknown, repeated and unsupported `#[tool(...)]` arguments.

/// A typo.
#[toolwire::tool(readonly)]
async fn typo() -> &'static str {
    "x"
}

/// The name twice.
#[toolwire::tool(name = "a", name = "b")]
async fn twice() -> &'static str {
    "x"
}

/// A name that is not a string.
#[toolwire::tool(name = echo)]
async fn unquoted() -> &'static str {
    "x"
}

/// `scopes` is spelt `scope`, once per scope.
#[toolwire::tool(scopes = "admin")]
async fn scoped() -> &'static str {
    "x"
}

/// A time limit of nothing.
#[toolwire::tool(timeout_ms = 0)]
async fn instant() -> &'static str {
    "x"
}

/// Task support is one of three words.
#[toolwire::tool(task = "sometimes")]
async fn unsure() -> &'static str {
    "x"
}

fn main() {}
