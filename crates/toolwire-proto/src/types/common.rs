//! Shared building blocks of the protocol types: `_meta` maps, result kinds,
//! cache hints, roles, annotations, icons, implementation info, progress
//! tokens, the request `_meta` object and the generic request/result shapes.

use super::capabilities::{CapabilitiesInto, ClientCapabilities};
use super::notifications::LoggingLevel;
use crate::unique::{Checked, UniqueValue, repeated};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::map::Entry;
use std::borrow::Cow;

/// A `_meta` object: free-form JSON members, some with reserved keys (see [`crate::meta`]).
pub type Meta = serde_json::Map<String, Value>;

/// Any JSON object (schema `JSONObject`).
pub type JsonObject = serde_json::Map<String, Value>;

/// An opaque pagination cursor (schema `Cursor`).
pub type Cursor = String;

/// Whether a result is final, asks the client for more input, or is the
/// handle of a task (schema `ResultType`, with the Tasks extension's `task`).
///
/// Spec: changelog.mdx (major change 8): a result without `resultType` from an
/// earlier-protocol server is treated as `complete`, so this is the default.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ResultType {
    /// `"complete"`: an ordinary, final result.
    #[default]
    Complete,
    /// `"input_required"`: an interim [`InputRequiredResult`](super::InputRequiredResult).
    InputRequired,
    /// `"task"`: a [`CreateTaskResult`](super::CreateTaskResult), the handle
    /// of a task the request runs as (the Tasks extension), only ever sent
    /// to a client that declared the extension on that request.
    Task,
}

/// Who may cache a cacheable result (the `cacheScope` of schema `CacheableResult`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CacheScope {
    /// `"public"`: shared intermediaries may cache the result.
    Public,
    /// `"private"`: only the requesting client may cache the result.
    Private,
}

/// The sender or recipient of a message or piece of content (schema `Role`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Role {
    /// `"user"`.
    User,
    /// `"assistant"`.
    Assistant,
}

/// Hints to the client about how to use or display an object (schema `Annotations`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Annotations {
    /// Who the object is intended for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub audience: Option<Vec<Role>>,
    /// Importance from 0 (least) to 1 (most).
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::number::opt_f64"
    )]
    pub priority: Option<f64>,
    /// ISO 8601 timestamp of the last modification.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_modified: Option<String>,
}

/// The theme an [`Icon`] is designed for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum IconTheme {
    /// `"light"`: for a light background.
    Light,
    /// `"dark"`: for a dark background.
    Dark,
}

/// An icon for display in a user interface (schema `Icon`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Icon {
    /// An `http(s):` or `data:` URI of the icon.
    pub src: String,
    /// The MIME type, when `src` does not make it clear.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mime_type: Option<String>,
    /// Sizes such as `"48x48"` or `"any"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sizes: Option<Vec<String>>,
    /// The theme the icon is designed for.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub theme: Option<IconTheme>,
}

impl Icon {
    /// An icon at `src` with no other detail.
    pub fn new(src: impl Into<String>) -> Self {
        Self {
            src: src.into(),
            ..Self::default()
        }
    }
}

/// The name and version of an MCP client or server (schema `Implementation`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Implementation {
    /// Programmatic name.
    pub name: String,
    /// Version string.
    pub version: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Human-readable description.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// URL of the implementation's website.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub website_url: Option<String>,
}

impl Implementation {
    /// An implementation called `name` at `version`.
    pub fn new(name: impl Into<String>, version: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            version: version.into(),
            ..Self::default()
        }
    }
}

/// A token that ties progress notifications to a request: a string or an
/// integer (schema `ProgressToken`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(untagged)]
pub enum ProgressToken {
    /// A string token.
    String(String),
    /// An integer token.
    Integer(i64),
}

impl From<&str> for ProgressToken {
    fn from(s: &str) -> Self {
        Self::String(s.to_owned())
    }
}

impl From<String> for ProgressToken {
    fn from(s: String) -> Self {
        Self::String(s)
    }
}

impl From<i64> for ProgressToken {
    fn from(n: i64) -> Self {
        Self::Integer(n)
    }
}

/// The `_meta` object of a request (schema `RequestMetaObject`).
///
/// The schema requires the protocol version and client capabilities, but every
/// field is optional here so a server can parse the object and then report
/// precisely which member is missing.
// Serde needs literal keys; a unit test checks them against `crate::meta`.
#[derive(Debug, Clone, PartialEq, Default, Serialize)]
pub struct RequestMeta {
    /// `io.modelcontextprotocol/protocolVersion`: the protocol version of this request.
    #[serde(
        rename = "io.modelcontextprotocol/protocolVersion",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    /// Read without allocating when it is [`PROTOCOL_VERSION`](crate::meta::PROTOCOL_VERSION)
    /// (borrowed then), as nearly every request's is.
    pub protocol_version: Option<Cow<'static, str>>,
    /// `io.modelcontextprotocol/clientCapabilities`: what the client supports for this request.
    #[serde(
        rename = "io.modelcontextprotocol/clientCapabilities",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_capabilities: Option<ClientCapabilities>,
    /// `io.modelcontextprotocol/clientInfo`: who the client is.
    #[serde(
        rename = "io.modelcontextprotocol/clientInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub client_info: Option<Implementation>,
    /// `io.modelcontextprotocol/logLevel`: the lowest level of log messages the
    /// client wants for this request; absent means no log messages.
    #[serde(
        rename = "io.modelcontextprotocol/logLevel",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub log_level: Option<LoggingLevel>,
    /// `progressToken`: opts in to progress notifications for this request.
    #[serde(
        rename = "progressToken",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub progress_token: Option<ProgressToken>,
    /// `traceparent`: the caller's W3C Trace Context `traceparent`, for
    /// OpenTelemetry trace propagation. A value that is not a string is kept
    /// in [`other`](Self::other) instead: a broken trace context is ignored,
    /// never a reason to refuse the request.
    ///
    /// Spec: basic/index.mdx#opentelemetry-trace-context
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub traceparent: Option<String>,
    /// `tracestate`: the W3C Trace Context `tracestate` that goes with
    /// [`traceparent`](Self::traceparent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tracestate: Option<String>,
    /// `baggage`: W3C Baggage, propagated with the trace context.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub baggage: Option<String>,
    /// Every other member, kept as is.
    #[serde(flatten)]
    pub other: Meta,
}

/// A protocol version as read: this crate's own is borrowed, not copied.
struct VersionText(Cow<'static, str>);

impl<'de> Deserialize<'de> for VersionText {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = VersionText;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a protocol version string")
            }
            fn visit_str<E: serde::de::Error>(self, v: &str) -> Result<VersionText, E> {
                Ok(VersionText(if v == crate::meta::PROTOCOL_VERSION {
                    Cow::Borrowed(crate::meta::PROTOCOL_VERSION)
                } else {
                    Cow::Owned(v.to_owned())
                }))
            }
        }
        d.deserialize_str(V)
    }
}

/// The members of [`RequestMeta`] with a type of their own.
enum MetaKey {
    ProtocolVersion,
    ClientCapabilities,
    ClientInfo,
    LogLevel,
    ProgressToken,
    Traceparent,
    Tracestate,
    Baggage,
    Other(String),
}

impl<'de> Deserialize<'de> for MetaKey {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct KeyVisitor;
        impl serde::de::Visitor<'_> for KeyVisitor {
            type Value = MetaKey;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a _meta key")
            }
            fn visit_str<E: serde::de::Error>(self, key: &str) -> Result<MetaKey, E> {
                Ok(match key {
                    "io.modelcontextprotocol/protocolVersion" => MetaKey::ProtocolVersion,
                    "io.modelcontextprotocol/clientCapabilities" => MetaKey::ClientCapabilities,
                    "io.modelcontextprotocol/clientInfo" => MetaKey::ClientInfo,
                    "io.modelcontextprotocol/logLevel" => MetaKey::LogLevel,
                    "progressToken" => MetaKey::ProgressToken,
                    "traceparent" => MetaKey::Traceparent,
                    "tracestate" => MetaKey::Tracestate,
                    "baggage" => MetaKey::Baggage,
                    other => MetaKey::Other(other.to_owned()),
                })
            }
        }
        d.deserialize_str(KeyVisitor)
    }
}

// Written by hand rather than derived: `#[serde(flatten)]` makes a derived
// impl buffer the whole object before typing it, and `_meta` is read on
// every request. Known keys are matched without allocating. A repeated
// member name is refused at any depth (the server's one-pass decoder relies
// on it): known keys are read once, other members go through `UniqueValue`,
// and the typed `clientInfo` through `UniqueKeys`.
impl<'de> Deserialize<'de> for RequestMeta {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let mut out = RequestMeta::default();
        Self::deserialize_into(d, &mut out)?;
        Ok(out)
    }
}

impl RequestMeta {
    /// Reads a `_meta` object into `out`, which should be empty (as
    /// [`Default`] makes it): the decoder of a request builds the `Arc` it
    /// keeps `_meta` in first and reads into it, so that the value, a few
    /// hundred bytes, is not moved from the stack into the heap.
    ///
    /// # Errors
    ///
    /// As [`Deserialize::deserialize`]: anything but an object, a member
    /// of the wrong type, or a member name given twice.
    pub fn deserialize_into<'de, D: serde::Deserializer<'de>>(
        d: D,
        out: &mut RequestMeta,
    ) -> Result<(), D::Error> {
        struct MetaVisitor<'a>(&'a mut RequestMeta);
        impl<'de> serde::de::Visitor<'de> for MetaVisitor<'_> {
            type Value = ();
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("the request _meta object")
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
                // A member read straight into its slot (not through a
                // helper that takes it by value: the larger values, the
                // capabilities and the client info, are then not copied).
                macro_rules! once {
                    ($slot:expr, $read:expr, $key:literal, $seen:expr) => {{
                        if std::mem::replace($seen, true) {
                            return Err(serde::de::Error::duplicate_field($key));
                        }
                        $slot = $read;
                    }};
                }
                // The trace context keys: a string is typed, anything else
                // stays in `other` (W3C Trace Context ignores a malformed
                // header rather than failing the request).
                fn trace_key<'de, A: serde::de::MapAccess<'de>>(
                    map: &mut A,
                    out: &mut RequestMeta,
                    key: &'static str,
                    seen: &mut bool,
                ) -> Result<(), A::Error> {
                    if std::mem::replace(seen, true) {
                        return Err(serde::de::Error::duplicate_field(key));
                    }
                    let slot = match key {
                        "traceparent" => &mut out.traceparent,
                        "tracestate" => &mut out.tracestate,
                        _ => &mut out.baggage,
                    };
                    match map.next_value::<UniqueValue>()?.0 {
                        Value::String(s) => *slot = Some(s),
                        Value::Null => {}
                        other => {
                            out.other.insert(key.to_owned(), other);
                        }
                    }
                    Ok(())
                }
                let out = self.0;
                let mut seen = [false; 8];
                while let Some(key) = map.next_key::<MetaKey>()? {
                    match key {
                        MetaKey::ProtocolVersion => once!(
                            out.protocol_version,
                            map.next_value::<Option<VersionText>>()?.map(|v| v.0),
                            "io.modelcontextprotocol/protocolVersion",
                            &mut seen[0]
                        ),
                        MetaKey::ClientCapabilities => {
                            if std::mem::replace(&mut seen[1], true) {
                                return Err(serde::de::Error::duplicate_field(
                                    "io.modelcontextprotocol/clientCapabilities",
                                ));
                            }
                            map.next_value_seed(CapabilitiesInto(&mut out.client_capabilities))?;
                        }
                        MetaKey::ClientInfo => once!(
                            out.client_info,
                            map.next_value_seed(Checked::new())?,
                            "io.modelcontextprotocol/clientInfo",
                            &mut seen[2]
                        ),
                        MetaKey::LogLevel => once!(
                            out.log_level,
                            map.next_value()?,
                            "io.modelcontextprotocol/logLevel",
                            &mut seen[3]
                        ),
                        MetaKey::ProgressToken => once!(
                            out.progress_token,
                            map.next_value()?,
                            "progressToken",
                            &mut seen[4]
                        ),
                        MetaKey::Traceparent => {
                            trace_key(&mut map, out, "traceparent", &mut seen[5])?;
                        }
                        MetaKey::Tracestate => {
                            trace_key(&mut map, out, "tracestate", &mut seen[6])?;
                        }
                        MetaKey::Baggage => {
                            trace_key(&mut map, out, "baggage", &mut seen[7])?;
                        }
                        MetaKey::Other(key) => {
                            let UniqueValue(value) = map.next_value()?;
                            match out.other.entry(key) {
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
        d.deserialize_map(MetaVisitor(out))
    }
}

impl RequestMeta {
    /// A request `_meta` with the protocol version and capabilities set.
    pub fn new(
        protocol_version: impl Into<Cow<'static, str>>,
        client_capabilities: ClientCapabilities,
    ) -> Self {
        Self {
            protocol_version: Some(protocol_version.into()),
            client_capabilities: Some(client_capabilities),
            ..Self::default()
        }
    }
}

/// Parameters of a request that carries only `_meta` (schema `RequestParams`),
/// such as `server/discover`.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct RequestParams {
    /// The request `_meta` (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// Parameters of a paginated list request (schema `PaginatedRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PaginatedRequestParams {
    /// Where to continue from: a `nextCursor` of an earlier page.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<Cursor>,
    /// The request `_meta` (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// A result with no content beyond its kind (schema `EmptyResult`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EmptyResult {
    /// Always `complete` for this result.
    #[serde(default)]
    pub result_type: ResultType,
    /// Result `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta;
    use serde_json::json;

    #[test]
    fn request_meta_types_known_keys_and_keeps_the_rest() {
        let m: RequestMeta = serde_json::from_value(json!({
            "io.modelcontextprotocol/protocolVersion": "2026-07-28",
            "io.modelcontextprotocol/clientCapabilities": {"sampling": {}},
            "io.modelcontextprotocol/logLevel": "info",
            "progressToken": 7,
            "com.example/trace": {"x": [1, 2]}
        }))
        .expect("valid meta");
        assert_eq!(m.protocol_version.as_deref(), Some("2026-07-28"));
        // This crate's own version is not copied; any other is.
        assert!(matches!(m.protocol_version, Some(Cow::Borrowed(_))));
        for text in [
            r#"{"io.modelcontextprotocol/protocolVersion":"2025-11-25"}"#,
            r#"{"io.modelcontextprotocol/protocolVersion":"2026-07-2\u0038"}"#,
        ] {
            let other: RequestMeta = serde_json::from_str(text).expect("valid meta");
            let version = other.protocol_version.expect("a version");
            assert_eq!(
                matches!(version, Cow::Borrowed(_)),
                text.contains("\\u"),
                "{text}"
            );
        }
        assert!(m.client_capabilities.is_some());
        assert_eq!(m.log_level, Some(LoggingLevel::Info));
        assert_eq!(
            m.other.get("com.example/trace"),
            Some(&json!({"x": [1, 2]}))
        );
        let back = serde_json::to_value(&m).expect("serialise");
        assert_eq!(back["com.example/trace"], json!({"x": [1, 2]}));
        assert_eq!(back["progressToken"], 7);
    }

    #[test]
    fn request_meta_refuses_duplicates_and_wrong_types() {
        let dup = r#"{"progressToken":1,"progressToken":2}"#;
        assert!(serde_json::from_str::<RequestMeta>(dup).is_err());
        let wrong = r#"{"io.modelcontextprotocol/protocolVersion":5}"#;
        assert!(serde_json::from_str::<RequestMeta>(wrong).is_err());
        let null = r#"{"io.modelcontextprotocol/protocolVersion":null}"#;
        let m: RequestMeta = serde_json::from_str(null).expect("null is absent");
        assert!(m.protocol_version.is_none());
        assert!(serde_json::from_str::<RequestMeta>("[]").is_err());
    }

    #[test]
    fn request_meta_reads_capabilities_in_place() {
        const KEY: &str = "io.modelcontextprotocol/clientCapabilities";
        let read =
            |caps: &str| serde_json::from_str::<RequestMeta>(&format!(r#"{{"{KEY}":{caps}}}"#));
        let m = read(r#"{"roots":{},"com.example/x":1}"#).expect("an object");
        let caps = m.client_capabilities.expect("present");
        assert!(caps.roots.is_some());
        assert_eq!(caps.other.get("com.example/x"), Some(&json!(1)));
        assert_eq!(read("null").expect("null").client_capabilities, None);
        assert_eq!(
            read("{}").expect("empty").client_capabilities,
            Some(ClientCapabilities::default())
        );
        for bad in [
            "5",
            "[]",
            r#"{"roots":{},"roots":{}}"#,
            r#"{"a":{"b":1,"b":2}}"#,
        ] {
            assert!(read(bad).is_err(), "{bad} was read");
        }
        let twice = format!(r#"{{"{KEY}":{{}},"{KEY}":{{}}}}"#);
        assert!(serde_json::from_str::<RequestMeta>(&twice).is_err());
    }

    #[test]
    fn request_meta_keys_equal_the_meta_constants() {
        let m = RequestMeta {
            protocol_version: Some("v".into()),
            client_capabilities: Some(ClientCapabilities::default()),
            client_info: Some(Implementation::new("c", "1")),
            log_level: Some(LoggingLevel::Info),
            progress_token: Some(ProgressToken::Integer(1)),
            traceparent: Some("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01".into()),
            tracestate: Some("k=v".into()),
            baggage: Some("a=b".into()),
            other: Meta::new(),
        };
        let v = serde_json::to_value(&m).expect("serialises");
        let obj = v.as_object().expect("object");
        for key in [
            meta::PROTOCOL_VERSION_KEY,
            meta::CLIENT_CAPABILITIES_KEY,
            meta::CLIENT_INFO_KEY,
            meta::LOG_LEVEL_KEY,
            meta::PROGRESS_TOKEN_KEY,
            meta::TRACEPARENT_KEY,
            meta::TRACESTATE_KEY,
            meta::BAGGAGE_KEY,
        ] {
            assert!(obj.contains_key(key), "missing {key} in {v}");
        }
        assert_eq!(obj.len(), 8);
        let back: RequestMeta = serde_json::from_value(v).expect("parses back");
        assert_eq!(back, m);
    }

    #[test]
    fn request_meta_keeps_unknown_members_and_reports_missing_ones() {
        let v = json!({"com.example/x": "00-abc", "io.modelcontextprotocol/logLevel": "debug"});
        let m: RequestMeta = serde_json::from_value(v.clone()).expect("parses");
        assert_eq!(m.protocol_version, None);
        assert_eq!(m.client_capabilities, None);
        assert_eq!(m.log_level, Some(LoggingLevel::Debug));
        assert_eq!(m.other.get("com.example/x"), Some(&json!("00-abc")));
        assert_eq!(serde_json::to_value(&m).expect("serialises"), v);
    }

    #[test]
    fn request_meta_types_trace_context_strings_and_keeps_other_values() {
        let v = json!({
            "traceparent": "00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01",
            "tracestate": "vendor=1",
            "baggage": "user=alice"
        });
        let m: RequestMeta = serde_json::from_value(v.clone()).expect("parses");
        assert_eq!(
            m.traceparent.as_deref(),
            Some("00-0af7651916cd43dd8448eb211c80319c-00f067aa0ba902b7-01")
        );
        assert_eq!(m.tracestate.as_deref(), Some("vendor=1"));
        assert_eq!(m.baggage.as_deref(), Some("user=alice"));
        assert!(m.other.is_empty());
        assert_eq!(serde_json::to_value(&m).expect("serialises"), v);
        // Not a string: not a trace context, but not a reason to refuse
        // the request either; it is kept as it came.
        let odd = json!({"traceparent": 7, "baggage": null});
        let m: RequestMeta = serde_json::from_value(odd).expect("parses");
        assert_eq!(m.traceparent, None);
        assert_eq!(m.baggage, None);
        assert_eq!(m.other.get("traceparent"), Some(&json!(7)));
        let dup = r#"{"traceparent":"a","traceparent":"b"}"#;
        assert!(serde_json::from_str::<RequestMeta>(dup).is_err());
    }

    #[test]
    fn result_type_uses_snake_case_and_defaults_to_complete() {
        assert_eq!(
            serde_json::to_value(ResultType::InputRequired).expect("serialises"),
            json!("input_required")
        );
        assert_eq!(
            serde_json::from_value::<ResultType>(json!("complete")).expect("parses"),
            ResultType::Complete
        );
        assert!(serde_json::from_value::<ResultType>(json!("inputRequired")).is_err());
        let r: EmptyResult = serde_json::from_value(json!({})).expect("parses");
        assert_eq!(r.result_type, ResultType::Complete);
    }

    #[test]
    fn progress_token_is_string_or_integer() {
        let s: ProgressToken = serde_json::from_value(json!("abc")).expect("string");
        assert_eq!(s, ProgressToken::from("abc"));
        let n: ProgressToken = serde_json::from_value(json!(42)).expect("integer");
        assert_eq!(n, ProgressToken::Integer(42));
        assert_eq!(serde_json::to_value(&n).expect("serialises"), json!(42));
        assert!(serde_json::from_value::<ProgressToken>(json!(1.5)).is_err());
        assert!(serde_json::from_value::<ProgressToken>(json!(null)).is_err());
    }

    #[test]
    fn annotations_keep_integral_priority_as_integer() {
        let v = json!({"priority": 1, "audience": ["user"]});
        let a: Annotations = serde_json::from_value(v.clone()).expect("parses");
        assert_eq!(serde_json::to_value(&a).expect("serialises"), v);
    }
}
