//! `server/discover`: the server's supported versions, capabilities and
//! instructions (schema `DiscoverResult`; its request carries
//! [`RequestParams`](super::RequestParams)).
//!
//! Spec: server/discover.mdx

use super::capabilities::ServerCapabilities;
use super::common::{CacheScope, Meta, ResultType};
use serde::{Deserialize, Serialize};

/// The result of `server/discover` (schema `DiscoverResult`; cacheable).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DiscoverResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// The protocol versions the server supports.
    pub supported_versions: Vec<String>,
    /// What the server supports.
    pub capabilities: ServerCapabilities,
    /// How to use the server, e.g. for a system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub instructions: Option<String>,
    /// How long the result stays fresh, in milliseconds.
    pub ttl_ms: u64,
    /// Who may cache the result.
    pub cache_scope: CacheScope,
    /// Result `_meta`, e.g. `io.modelcontextprotocol/serverInfo`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl DiscoverResult {
    /// A complete discover result.
    pub fn new(
        supported_versions: Vec<String>,
        capabilities: ServerCapabilities,
        ttl_ms: u64,
        cache_scope: CacheScope,
    ) -> Self {
        Self {
            result_type: ResultType::Complete,
            supported_versions,
            capabilities,
            instructions: None,
            ttl_ms,
            cache_scope,
            meta: None,
        }
    }
}
