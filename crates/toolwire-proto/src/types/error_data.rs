//! The `data` of the MCP-specific JSON-RPC errors (schema
//! `UnsupportedProtocolVersionError`, `MissingRequiredClientCapabilityError`).

use super::capabilities::ClientCapabilities;
use serde::{Deserialize, Serialize};

/// `data` of an unsupported-protocol-version error (`-32022`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UnsupportedProtocolVersionData {
    /// The version the client asked for.
    pub requested: String,
    /// The versions the server supports; the client picks one and retries.
    pub supported: Vec<String>,
}

/// `data` of a missing-required-client-capability error (`-32021`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MissingRequiredClientCapabilityData {
    /// The capabilities the server needs to process the request.
    pub required_capabilities: ClientCapabilities,
}
