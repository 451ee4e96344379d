//! What one outgoing request looks like on the wire: its body, with the
//! `_meta` members written straight into it (the caller's, the options'
//! defaults, the protocol's), and its HTTP headers (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, `Mcp-Param-*`).
//!
//! Spec: basic/index.mdx#meta, basic/transports/streamable-http.mdx#request-metadata

use super::Client;
use super::engine::Wire;
use super::error::ClientError;
use super::method::MethodInfo;
use super::options::RequestOptions;
use super::tools::Lookup;
use super::transport::TransportKind;
use bytes::Bytes;
use http::{HeaderName, HeaderValue};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::sync::atomic::Ordering;
use toolwire_proto::header::encode_header_value;
use toolwire_proto::meta::{
    CLIENT_CAPABILITIES_KEY, CLIENT_INFO_KEY, LOG_LEVEL_KEY, PROGRESS_TOKEN_KEY, PROTOCOL_VERSION,
    PROTOCOL_VERSION_KEY,
};
use toolwire_proto::types::{ClientCapabilities, LoggingLevel, ProgressToken};
use toolwire_proto::{RequestId, encode_request};

/// The `_meta` of an outgoing request, written without building a map:
/// the caller's own `_meta` members, then the options' defaults it lacks,
/// then the protocol members (which replace any of the same name). The
/// modern version key never comes from the caller: a legacy server must not
/// see it, or it may serve the request as a modern one.
struct MetaOut<'a> {
    given: Option<&'a Map<String, Value>>,
    defaults: &'a Map<String, Value>,
    ours: Vec<(&'a str, Ours<'a>)>,
}

/// A protocol member's value.
enum Ours<'a> {
    Str(&'a str),
    /// The trace context's members.
    #[cfg(feature = "otel")]
    Json(&'a Value),
    /// Serialized once, for every request.
    Raw(&'a RawValue),
    Capabilities(&'a ClientCapabilities),
    Token(&'a ProgressToken),
    Level(&'a LoggingLevel),
}

impl Serialize for Ours<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Str(v) => v.serialize(s),
            #[cfg(feature = "otel")]
            Self::Json(v) => v.serialize(s),
            Self::Raw(v) => v.serialize(s),
            Self::Capabilities(v) => v.serialize(s),
            Self::Token(v) => v.serialize(s),
            Self::Level(v) => v.serialize(s),
        }
    }
}

impl MetaOut<'_> {
    fn ours(&self, key: &str) -> bool {
        key == PROTOCOL_VERSION_KEY || self.ours.iter().any(|(k, _)| *k == key)
    }

    fn given(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.given
            .into_iter()
            .flatten()
            .filter(|(k, _)| !self.ours(k))
    }

    fn defaults(&self) -> impl Iterator<Item = (&String, &Value)> {
        self.defaults.iter().filter(|(k, _)| {
            !self.ours(k) && !self.given.is_some_and(|g| g.contains_key(k.as_str()))
        })
    }

    fn is_empty(&self) -> bool {
        self.ours.is_empty() && self.given().next().is_none() && self.defaults().next().is_none()
    }
}

impl Serialize for MetaOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (k, v) in self.given().chain(self.defaults()) {
            map.serialize_entry(k, v)?;
        }
        for (k, v) in &self.ours {
            map.serialize_entry(k, v)?;
        }
        map.end()
    }
}

/// A request's `params` with its `_meta` replaced by [`MetaOut`] (left
/// out when empty).
struct ParamsOut<'a> {
    params: &'a Map<String, Value>,
    meta: MetaOut<'a>,
}

impl Serialize for ParamsOut<'_> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let mut map = s.serialize_map(None)?;
        for (k, v) in self.params {
            if k != "_meta" {
                map.serialize_entry(k, v)?;
            }
        }
        if !self.meta.is_empty() {
            map.serialize_entry("_meta", &self.meta)?;
        }
        map.end()
    }
}

impl ParamsOut<'_> {
    /// The request, written out member by member. The output is what
    /// serializing the envelope with serde_json gives (`tests` compares
    /// them), but the protocol's `_meta` keys go in as they are: they are
    /// constants with nothing to escape, and serde_json would scan each of
    /// their forty-odd bytes for escapes on every request.
    fn encode(&self, id: &RequestId, method: &str) -> Vec<u8> {
        let mut out = Vec::with_capacity(256);
        match self.write(&mut out, id, method) {
            Ok(()) => out,
            // Only a value serde_json cannot write (none of the request's
            // can fail): the envelope's own encoder says why.
            Err(_) => encode_request(id, method, Some(self)),
        }
    }

    fn write(&self, out: &mut Vec<u8>, id: &RequestId, method: &str) -> serde_json::Result<()> {
        out.extend_from_slice(br#"{"jsonrpc":"2.0","id":"#);
        serde_json::to_writer(&mut *out, id)?;
        out.extend_from_slice(br#","method":"#);
        serde_json::to_writer(&mut *out, method)?;
        out.extend_from_slice(br#","params":{"#);
        let mut members = Members::default();
        for (k, v) in self.params {
            if k != "_meta" {
                members.entry(out, k, v)?;
            }
        }
        if !self.meta.is_empty() {
            members.next(out);
            out.extend_from_slice(br#""_meta":{"#);
            let mut meta = Members::default();
            for (k, v) in self.meta.given().chain(self.meta.defaults()) {
                meta.entry(out, k, v)?;
            }
            for (k, v) in &self.meta.ours {
                if is_protocol_key(k) {
                    meta.next(out);
                    out.push(b'"');
                    out.extend_from_slice(k.as_bytes());
                    out.extend_from_slice(b"\":");
                    serde_json::to_writer(&mut *out, v)?;
                } else {
                    meta.entry(out, k, v)?;
                }
            }
            out.push(b'}');
        }
        out.extend_from_slice(b"}}");
        Ok(())
    }
}

/// The `_meta` keys this client writes, none with a character JSON
/// escapes.
const PROTOCOL_KEYS: [&str; 5] = [
    PROTOCOL_VERSION_KEY,
    CLIENT_CAPABILITIES_KEY,
    CLIENT_INFO_KEY,
    PROGRESS_TOKEN_KEY,
    LOG_LEVEL_KEY,
];

fn is_protocol_key(k: &str) -> bool {
    PROTOCOL_KEYS.contains(&k)
}

/// The members of one JSON object being written: a comma before each but
/// the first.
#[derive(Default)]
struct Members {
    started: bool,
}

impl Members {
    fn next(&mut self, out: &mut Vec<u8>) {
        if std::mem::replace(&mut self.started, true) {
            out.push(b',');
        }
    }

    fn entry(
        &mut self,
        out: &mut Vec<u8>,
        k: &str,
        v: &(impl Serialize + ?Sized),
    ) -> serde_json::Result<()> {
        self.next(out);
        serde_json::to_writer(&mut *out, k)?;
        out.push(b':');
        serde_json::to_writer(&mut *out, v)
    }
}

const VERSION_NAME: HeaderName = HeaderName::from_static("mcp-protocol-version");
const METHOD_NAME: HeaderName = HeaderName::from_static("mcp-method");
const NAME_NAME: HeaderName = HeaderName::from_static("mcp-name");

fn header_value(v: &str) -> Result<HeaderValue, ClientError> {
    HeaderValue::from_str(v).map_err(|e| ClientError::Protocol(format!("header value {v:?}: {e}")))
}

/// A header value that lives as long as the program (a method's name, this
/// revision's version), borrowed rather than copied into a new buffer as
/// [`header_value`]'s is: two allocations fewer on every request.
fn static_value(v: &'static str) -> Result<HeaderValue, ClientError> {
    // `from_static` panics on what `from_str` refuses: asked first.
    if v.bytes().all(|b| b == b'\t' || (b' '..=b'~').contains(&b)) {
        Ok(HeaderValue::from_static(v))
    } else {
        header_value(v)
    }
}

impl Client {
    /// The request's body, `params` plus `_meta` with the protocol members
    /// (written as they are, without copying `params`), and the progress
    /// token if one was asked for.
    pub(crate) fn encode(
        &self,
        id: &RequestId,
        method: &str,
        params: &Map<String, Value>,
        wire: Wire<'_>,
        options: &RequestOptions,
    ) -> (Bytes, Option<ProgressToken>) {
        let token = options.progress.as_ref().map(|_| {
            let n = self.inner.next_token.fetch_add(1, Ordering::Relaxed);
            ProgressToken::String(format!("toolwire-{n}"))
        });
        // Spec: basic/index.mdx#opentelemetry-trace-context
        #[cfg(feature = "otel")]
        let trace = {
            let mut trace = Map::new();
            crate::otel::inject(&mut trace);
            trace
        };
        let mut ours: Vec<(&str, Ours<'_>)> = Vec::with_capacity(6);
        if let Wire::Modern(version) = wire {
            // Spec: basic/index.mdx#meta — protocolVersion and
            // clientCapabilities on every request, clientInfo unless
            // configured otherwise.
            ours.push((PROTOCOL_VERSION_KEY, Ours::Str(version)));
            ours.push((
                CLIENT_CAPABILITIES_KEY,
                match &options.capabilities {
                    Some(given) => Ours::Capabilities(given),
                    None => Ours::Raw(&self.inner.capabilities_raw),
                },
            ));
        }
        if let Some(t) = &token {
            ours.push((PROGRESS_TOKEN_KEY, Ours::Token(t)));
        }
        if let (Some((level, _)), Wire::Modern(_)) = (&options.log, wire) {
            ours.push((LOG_LEVEL_KEY, Ours::Level(level)));
        }
        #[cfg(feature = "otel")]
        ours.extend(trace.iter().map(|(k, v)| (k.as_str(), Ours::Json(v))));
        let given = match params.get("_meta") {
            Some(Value::Object(m)) => Some(m),
            _ => None,
        };
        let info = match (wire, &self.inner.info_raw) {
            (Wire::Modern(_), Some(info))
                if !given.is_some_and(|g| g.contains_key(CLIENT_INFO_KEY))
                    && !options.meta.contains_key(CLIENT_INFO_KEY) =>
            {
                Some(info)
            }
            _ => None,
        };
        if let Some(info) = info {
            ours.push((CLIENT_INFO_KEY, Ours::Raw(info)));
        }
        let meta = MetaOut {
            given,
            defaults: &options.meta,
            ours,
        };
        let body = ParamsOut { params, meta };
        (Bytes::from(body.encode(id, method)), token)
    }

    /// The HTTP headers of a request: the version, the method, the name
    /// where required, and the `Mcp-Param-*` mirrors for `tools/call`.
    // Spec: basic/transports/streamable-http.mdx#request-metadata
    pub(crate) fn http_headers(
        &self,
        method: MethodInfo,
        params: &Map<String, Value>,
        wire: Wire<'_>,
        options: &RequestOptions,
    ) -> Result<Vec<(HeaderName, HeaderValue)>, ClientError> {
        if self.inner.kind != TransportKind::Http {
            return Ok(Vec::new());
        }
        let mut headers = self.protocol_headers(method, params, wire)?;
        for (name, value) in &options.http_headers {
            let name = HeaderName::try_from(name.as_str())
                .map_err(|e| ClientError::Protocol(format!("header name {name:?}: {e}")))?;
            let mut value = HeaderValue::try_from(value.as_str()).map_err(|_| {
                ClientError::Protocol(format!("the value of header {name} is not a valid one"))
            })?;
            value.set_sensitive(true);
            headers.push((name, value));
        }
        Ok(headers)
    }

    /// The headers the protocol puts on an HTTP request: the version, the
    /// method and name, and the tool's mirrored parameters.
    fn protocol_headers(
        &self,
        method: MethodInfo,
        params: &Map<String, Value>,
        wire: Wire<'_>,
    ) -> Result<Vec<(HeaderName, HeaderValue)>, ClientError> {
        let version = match wire {
            Wire::Modern(v) => v,
            // Spec (2025-06-18): basic/transports.mdx#protocol-version-header
            // — every request after initialize names the version; 2025-03-26
            // had no such header.
            Wire::Legacy(v) if v != "2025-03-26" => {
                return Ok(vec![(VERSION_NAME, header_value(v)?)]);
            }
            Wire::Legacy(_) | Wire::Initialize => return Ok(Vec::new()),
        };
        let mut headers = Vec::with_capacity(4);
        let version = match version {
            // Checked when compiled, not on every request.
            PROTOCOL_VERSION => const { HeaderValue::from_static(PROTOCOL_VERSION) },
            other => header_value(other)?,
        };
        headers.push((VERSION_NAME, version));
        headers.push((METHOD_NAME, static_value(method.name)?));
        if let Some(name) = method
            .name_param
            .and_then(|f| params.get(f))
            .and_then(Value::as_str)
        {
            headers.push((NAME_NAME, header_value(&encode_header_value(name))?));
        }
        if method.calls_tool
            && let Some(name) = params.get("name").and_then(Value::as_str)
            && let Lookup::Known(tool) = self.inner.tools.lookup(name)
        {
            let empty = Value::Object(Map::new());
            let args = params.get("arguments").unwrap_or(&empty);
            for (name, value) in tool.param_headers(args) {
                let name = HeaderName::try_from(name.as_str())
                    .map_err(|e| ClientError::Protocol(format!("header name {name:?}: {e}")))?;
                headers.push((name, header_value(&value)?));
            }
        }
        Ok(headers)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_written_request_is_what_serde_json_writes() {
        let raw = RawValue::from_string(r#"{"roots":{}}"#.to_owned()).expect("raw");
        let caps = ClientCapabilities::default();
        let token = ProgressToken::String("toolwire-7".to_owned());
        let level = LoggingLevel::Debug;
        let given = json!({"mine": "a\"b", "progressToken": "overridden"});
        let defaults = json!({"tenant": {"id": 3}, "mine": "not used"});
        let params = json!({"name": "échø", "arguments": {"q": [1, 2.5, null]}, "_meta": given});
        let (Value::Object(params), Value::Object(defaults)) = (params, defaults) else {
            unreachable!()
        };
        let Some(Value::Object(given)) = params.get("_meta") else {
            unreachable!()
        };
        let ours = vec![
            (PROTOCOL_VERSION_KEY, Ours::Str("2026-07-28")),
            (CLIENT_CAPABILITIES_KEY, Ours::Capabilities(&caps)),
            (CLIENT_INFO_KEY, Ours::Raw(&raw)),
            (PROGRESS_TOKEN_KEY, Ours::Token(&token)),
            (LOG_LEVEL_KEY, Ours::Level(&level)),
            // Not a protocol key: written (and escaped) by serde_json.
            ("trace\"parent", Ours::Raw(&raw)),
        ];
        let body = ParamsOut {
            params: &params,
            meta: MetaOut {
                given: Some(given),
                defaults: &defaults,
                ours,
            },
        };
        for id in [RequestId::Number(42), RequestId::String("a\"b".into())] {
            let written = body.encode(&id, "tools/call");
            assert_eq!(
                String::from_utf8(written).expect("utf-8"),
                String::from_utf8(encode_request(&id, "tools/call", Some(&body))).expect("utf-8")
            );
        }
        // No `_meta` at all, and no members.
        let empty = Map::new();
        let bare = ParamsOut {
            params: &empty,
            meta: MetaOut {
                given: None,
                defaults: &empty,
                ours: Vec::new(),
            },
        };
        let id = RequestId::Number(1);
        assert_eq!(
            bare.encode(&id, "ping"),
            encode_request(&id, "ping", Some(&bare))
        );
        assert_eq!(
            bare.encode(&id, "ping"),
            br#"{"jsonrpc":"2.0","id":1,"method":"ping","params":{}}"#
        );
    }

    #[test]
    fn protocol_keys_have_nothing_to_escape() {
        for k in PROTOCOL_KEYS {
            assert!(is_protocol_key(k));
            assert_eq!(serde_json::to_string(k).expect("str"), format!("\"{k}\""));
        }
        assert!(!is_protocol_key("traceparent"));
    }

    #[test]
    fn a_static_value_is_the_value_from_str_makes_and_refuses_what_it_refuses() {
        for v in ["tools/call", "2026-07-28", "a\tb ~"] {
            assert_eq!(static_value(v).ok(), header_value(v).ok(), "{v:?}");
            assert!(static_value(v).is_ok());
        }
        for v in ["line\nbreak", "nul\0", "del\u{7f}"] {
            assert!(static_value(v).is_err(), "{v:?} is no header value");
        }
    }
}
