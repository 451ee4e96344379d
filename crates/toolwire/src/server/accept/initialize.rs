//! A legacy `initialize`, as the boundary recognises it: the request that
//! opens a legacy session (which `crate::legacy` then negotiates).

use super::Params;
use serde::Deserialize;
use serde_json::{Map, Value};
use toolwire_proto::types::{ClientCapabilities, Implementation};

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
pub(super) fn parse_initialize(params: &Params) -> Option<InitializeParams> {
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
