//! Client and server capabilities (schema `ClientCapabilities`,
//! `ServerCapabilities`). Every capability object keeps unknown members in a
//! catch-all so it round-trips whatever a peer sends.

use super::common::JsonObject;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// Capability objects keyed by experimental feature or extension name.
pub type CapabilityMap = BTreeMap<String, JsonObject>;

/// What a client supports, sent in each request's `_meta`
/// (schema `ClientCapabilities`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ClientCapabilities {
    /// Present if the client can answer elicitation input requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub elicitation: Option<ElicitationCapability>,
    /// Present if the client can answer sampling input requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sampling: Option<SamplingCapability>,
    /// Present if the client can answer `roots/list` input requests.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub roots: Option<RootsCapability>,
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<CapabilityMap>,
    /// Extensions the client supports, keyed by extension identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<CapabilityMap>,
    /// Members this revision does not define.
    #[serde(flatten)]
    pub other: JsonObject,
}

impl ClientCapabilities {
    /// Whether form-mode elicitation is supported: an `elicitation` object with
    /// `form`, or with neither `form` nor `url` (form is then implied).
    pub fn supports_elicitation_form(&self) -> bool {
        self.elicitation
            .as_ref()
            .is_some_and(|e| e.form.is_some() || e.url.is_none())
    }

    /// Whether URL-mode elicitation is supported.
    pub fn supports_elicitation_url(&self) -> bool {
        self.elicitation.as_ref().is_some_and(|e| e.url.is_some())
    }

    /// Whether sampling is supported.
    pub fn supports_sampling(&self) -> bool {
        self.sampling.is_some()
    }

    /// Whether tool use in sampling is supported.
    pub fn supports_sampling_tools(&self) -> bool {
        self.sampling.as_ref().is_some_and(|s| s.tools.is_some())
    }

    /// Whether `roots/list` is supported.
    pub fn supports_roots(&self) -> bool {
        self.roots.is_some()
    }
}

/// The client's elicitation capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ElicitationCapability {
    /// Present if form mode is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub form: Option<JsonObject>,
    /// Present if URL mode is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<JsonObject>,
    /// Members this revision does not define.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The client's sampling capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SamplingCapability {
    /// Present if `includeContext` values other than `"none"` are supported (deprecated).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub context: Option<JsonObject>,
    /// Present if tool use (`tools`, `toolChoice`) is supported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<JsonObject>,
    /// Members this revision does not define.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The client's roots capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RootsCapability {
    /// Members this revision does not define.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// What a server supports, advertised by `server/discover`
/// (schema `ServerCapabilities`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerCapabilities {
    /// Present if the server offers tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<ToolsCapability>,
    /// Present if the server offers prompts.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptsCapability>,
    /// Present if the server offers resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources: Option<ResourcesCapability>,
    /// Present if the server offers argument completion.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub completions: Option<JsonObject>,
    /// Present if the server can send log messages.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logging: Option<JsonObject>,
    /// Experimental, non-standard capabilities.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub experimental: Option<CapabilityMap>,
    /// Extensions the server supports, keyed by extension identifier.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub extensions: Option<CapabilityMap>,
    /// Members this revision does not define.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The server's tools capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolsCapability {
    /// Whether the server sends `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this revision does not define.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The server's prompts capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptsCapability {
    /// Whether the server sends `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this revision does not define.
    #[serde(flatten)]
    pub other: JsonObject,
}

/// The server's resources capability.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ResourcesCapability {
    /// Whether clients can subscribe to updates of individual resources.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub subscribe: Option<bool>,
    /// Whether the server sends `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub list_changed: Option<bool>,
    /// Members this revision does not define.
    #[serde(flatten)]
    pub other: JsonObject,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn empty_elicitation_object_implies_form_only() {
        let c: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {}})).expect("parses");
        assert!(c.supports_elicitation_form());
        assert!(!c.supports_elicitation_url());
        let c: ClientCapabilities =
            serde_json::from_value(json!({"elicitation": {"url": {}}})).expect("parses");
        assert!(!c.supports_elicitation_form());
        assert!(c.supports_elicitation_url());
    }

    #[test]
    fn unknown_capability_members_round_trip() {
        let v = json!({
            "tools": {"listChanged": true, "future": 1},
            "somethingNew": {"x": [1]}
        });
        let c: ServerCapabilities = serde_json::from_value(v.clone()).expect("parses");
        assert_eq!(c.tools.as_ref().and_then(|t| t.list_changed), Some(true));
        assert_eq!(serde_json::to_value(&c).expect("serialises"), v);
    }
}
