//! The legacy handshake: version negotiation and the `initialize` result
//! (the boundary reads the `initialize` parameters, `server/accept.rs`).
//!
//! Spec (2025-11-25): basic/lifecycle.mdx#version-negotiation — a server that
//! supports the requested version answers with it, otherwise with the latest
//! version it supports.

use crate::server::Server;
use serde_json::{Value, json};

/// The initialize-based revisions served beside 2026-07-28, newest first.
pub const LEGACY_PROTOCOL_VERSIONS: [&str; 3] = ["2025-11-25", "2025-06-18", "2025-03-26"];

/// The version answered to an `initialize` asking for `requested`.
pub(crate) fn negotiate(requested: &str) -> &'static str {
    LEGACY_PROTOCOL_VERSIONS
        .iter()
        .find(|v| **v == requested)
        .copied()
        .unwrap_or(LEGACY_PROTOCOL_VERSIONS[0])
}

/// The `initialize` result at `version`: the server's capabilities in the
/// legacy shape (`resources.subscribe`, `logging` for `logging/setLevel`).
pub(crate) fn initialize_result(server: &Server, version: &str) -> Value {
    let config = server.config();
    let mut result = json!({
        "protocolVersion": version,
        "capabilities": {
            "tools": { "listChanged": true },
            "prompts": { "listChanged": true },
            "resources": { "subscribe": true, "listChanged": true },
            "logging": {},
            "completions": {},
        },
        "serverInfo": { "name": config.name, "version": config.version },
    });
    if let (Some(text), Some(obj)) = (&config.instructions, result.as_object_mut()) {
        obj.insert("instructions".into(), Value::String(text.clone()));
    }
    // MCP Apps negotiates in the legacy era too (ext-apps apps.mdx: the
    // host declares it in `initialize`).
    if server.offers_apps() {
        result["capabilities"]["extensions"] = json!({ crate::apps::UI_EXTENSION: {} });
    }
    result
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_versions_are_echoed_and_others_get_the_latest() {
        assert_eq!(negotiate("2025-06-18"), "2025-06-18");
        assert_eq!(negotiate("2025-03-26"), "2025-03-26");
        assert_eq!(negotiate("2024-11-05"), "2025-11-25");
        assert_eq!(negotiate("2026-07-28"), "2025-11-25");
    }
}
