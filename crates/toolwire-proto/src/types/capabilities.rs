//! Client and server capabilities (schema `ClientCapabilities`,
//! `ServerCapabilities`). Every capability object keeps unknown members in a
//! catch-all so it round-trips whatever a peer sends.

use super::common::JsonObject;
use crate::unique::{Checked, UniqueValue, repeated};
use serde::{Deserialize, Serialize};
use serde_json::map::Entry;
use std::collections::BTreeMap;

/// Capability objects keyed by experimental feature or extension name.
pub type CapabilityMap = BTreeMap<String, JsonObject>;

/// What a client supports, sent in each request's `_meta`
/// (schema `ClientCapabilities`).
// Deserialize is written by hand below: the object arrives in every
// request's `_meta`, and a derived impl with `#[serde(flatten)]` buffers it.
// It refuses a repeated member name at any depth, as `RequestMeta` does.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
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

impl<'de> Deserialize<'de> for ClientCapabilities {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut out = ClientCapabilities::default();
        Self::deserialize_into(d, &mut out)?;
        Ok(out)
    }
}

impl ClientCapabilities {
    /// Reads a capabilities object into `out`, which should be empty (as
    /// [`Default`] makes it): `_meta` reads the object of every request
    /// into its place this way, so that the value, a few hundred bytes, is
    /// not returned and moved through each level of the decoder.
    ///
    /// # Errors
    ///
    /// As [`Deserialize::deserialize`]: anything but an object, a member
    /// of the wrong type, or a member name given twice.
    pub fn deserialize_into<'de, D: serde::Deserializer<'de>>(
        d: D,
        out: &mut ClientCapabilities,
    ) -> Result<(), D::Error> {
        use serde::de::{Error, MapAccess, Visitor};
        /// A member name, borrowed when the input allows it.
        struct Key<'a>(std::borrow::Cow<'a, str>);
        impl<'de> Deserialize<'de> for Key<'de> {
            fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                std::borrow::Cow::<'de, str>::deserialize(d).map(Key)
            }
        }
        fn once<'de, A: MapAccess<'de>, T: Deserialize<'de>>(
            map: &mut A,
            slot: &mut Option<T>,
            key: &'static str,
        ) -> Result<(), A::Error> {
            if slot.is_some() {
                return Err(A::Error::duplicate_field(key));
            }
            *slot = Some(map.next_value_seed(Checked::new())?);
            Ok(())
        }
        struct CapabilitiesVisitor<'a>(&'a mut ClientCapabilities);
        impl<'de> Visitor<'de> for CapabilitiesVisitor<'_> {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the client capabilities object")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
                let out = self.0;
                while let Some(Key(key)) = map.next_key()? {
                    match &*key {
                        "elicitation" => once(&mut map, &mut out.elicitation, "elicitation")?,
                        "sampling" => once(&mut map, &mut out.sampling, "sampling")?,
                        "roots" => once(&mut map, &mut out.roots, "roots")?,
                        "experimental" => once(&mut map, &mut out.experimental, "experimental")?,
                        "extensions" => once(&mut map, &mut out.extensions, "extensions")?,
                        _ => {
                            let UniqueValue(value) = map.next_value()?;
                            match out.other.entry(key.into_owned()) {
                                Entry::Vacant(slot) => {
                                    slot.insert(value);
                                }
                                Entry::Occupied(held) => return Err(repeated(held.key())),
                            }
                        }
                    }
                }
                Ok(())
            }
        }
        d.deserialize_map(CapabilitiesVisitor(out))
    }
}

/// `Option<ClientCapabilities>` read into its place: `null` is `None`, an
/// object is read with [`ClientCapabilities::deserialize_into`].
pub(crate) struct CapabilitiesInto<'a>(pub(crate) &'a mut Option<ClientCapabilities>);

impl<'de> serde::de::DeserializeSeed<'de> for CapabilitiesInto<'_> {
    type Value = ();
    fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_option(self)
    }
}

impl<'de> serde::de::Visitor<'de> for CapabilitiesInto<'_> {
    type Value = ();
    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("the client capabilities object or null")
    }
    fn visit_none<E: serde::de::Error>(self) -> Result<(), E> {
        *self.0 = None;
        Ok(())
    }
    fn visit_unit<E: serde::de::Error>(self) -> Result<(), E> {
        *self.0 = None;
        Ok(())
    }
    fn visit_some<D: serde::Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        let slot = self.0.insert(ClientCapabilities::default());
        ClientCapabilities::deserialize_into(d, slot)
    }
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

    #[test]
    fn client_capabilities_read_by_hand_like_a_derived_impl() {
        let v = json!({
            "roots": {"listChanged": true},
            "sampling": {"tools": {}},
            "elicitation": {"form": {}},
            "experimental": {"x": {"a": 1}},
            "extensions": {"io.example/y": {}},
            "somethingNew": {"x": [1]},
            "escaped": 2
        });
        // Both from a string (borrowed keys) and from a `Value` (owned).
        let text = serde_json::to_string(&v).expect("text");
        let from_text: ClientCapabilities = serde_json::from_str(&text).expect("parses");
        let from_value: ClientCapabilities = serde_json::from_value(v.clone()).expect("parses");
        assert_eq!(from_text, from_value);
        assert!(from_text.roots.is_some() && from_text.supports_sampling());
        assert!(from_text.supports_elicitation_form());
        assert_eq!(from_text.other.len(), 2);
        assert_eq!(serde_json::to_value(&from_text).expect("serialises"), v);
        // An escaped key cannot be borrowed; it is read all the same.
        let escaped: ClientCapabilities =
            serde_json::from_str(r#"{"esc\u0061ped":2,"r\u006fots":{}}"#).expect("parses");
        assert_eq!(escaped.other.get("escaped"), Some(&json!(2)));
        assert!(escaped.roots.is_some());
        assert_eq!(
            serde_json::from_str::<ClientCapabilities>("{}").expect("empty"),
            ClientCapabilities::default()
        );
        for bad in [
            r#"{"roots":{},"roots":{}}"#,
            r#"{"roots":5}"#,
            r#"[]"#,
            r#"null"#,
            r#""x""#,
        ] {
            assert!(
                serde_json::from_str::<ClientCapabilities>(bad).is_err(),
                "{bad}"
            );
        }
    }
}
