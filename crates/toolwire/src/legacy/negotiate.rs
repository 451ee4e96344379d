//! The legacy handshake: version negotiation, the `initialize` parameters and
//! the `initialize` result.
//!
//! Spec (2025-11-25): basic/lifecycle.mdx#version-negotiation — a server that
//! supports the requested version answers with it, otherwise with the latest
//! version it supports.

use crate::server::Params;
use crate::server::Server;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use toolwire_proto::types::{ClientCapabilities, Implementation};

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

/// What a legacy `initialize` carries.
#[derive(Debug, Clone)]
pub(crate) struct InitializeParams {
    pub(crate) requested: String,
    pub(crate) capabilities: ClientCapabilities,
    pub(crate) client_info: Option<Implementation>,
}

/// Reads the legacy `initialize` params; `None` unless `protocolVersion` is a
/// string and `capabilities` an object. Unknown capability members are
/// tolerated.
pub(crate) fn parse_initialize(params: &Params) -> Option<InitializeParams> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Raw {
        protocol_version: String,
        capabilities: Map<String, Value>,
        #[serde(default)]
        client_info: Option<Value>,
    }
    let raw: Raw = params.raw.as_ref()?.parse().ok()?;
    Some(InitializeParams {
        requested: raw.protocol_version,
        capabilities: serde_json::from_value(Value::Object(raw.capabilities)).unwrap_or_default(),
        client_info: raw.client_info.and_then(|v| serde_json::from_value(v).ok()),
    })
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
