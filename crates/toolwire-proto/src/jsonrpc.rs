//! The JSON-RPC 2.0 envelope: ids, decoding of incoming messages and encoding
//! of outgoing ones.
//!
//! Decoding reads the envelope once and keeps `params` and `result` as raw
//! JSON, so a handler deserialises its own parameters straight into its type.

use crate::error::ErrorObject;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use serde_json::value::RawValue;
use std::fmt;
use std::sync::Arc;

mod plain;

pub use plain::PlainRequest;

/// The JSON-RPC version string.
pub const JSONRPC_VERSION: &str = "2.0";

/// A request id: a string or an integer, never null.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum RequestId {
    /// An integer id.
    Number(i64),
    /// A string id.
    String(Arc<str>),
}

impl fmt::Display for RequestId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Number(n) => write!(f, "{n}"),
            Self::String(s) => write!(f, "{s:?}"),
        }
    }
}

impl From<i64> for RequestId {
    fn from(n: i64) -> Self {
        Self::Number(n)
    }
}

impl From<&str> for RequestId {
    fn from(s: &str) -> Self {
        Self::String(s.into())
    }
}

impl Serialize for RequestId {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Number(n) => s.serialize_i64(*n),
            Self::String(v) => s.serialize_str(v),
        }
    }
}

impl<'de> Deserialize<'de> for RequestId {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V;
        impl de::Visitor<'_> for V {
            type Value = RequestId;
            fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                f.write_str("a string or integer request id")
            }
            fn visit_i64<E: de::Error>(self, v: i64) -> Result<RequestId, E> {
                Ok(RequestId::Number(v))
            }
            fn visit_u64<E: de::Error>(self, v: u64) -> Result<RequestId, E> {
                i64::try_from(v)
                    .map(RequestId::Number)
                    .map_err(|_| E::custom("request id out of i64 range"))
            }
            fn visit_f64<E: de::Error>(self, v: f64) -> Result<RequestId, E> {
                // JSON-RPC ids SHOULD NOT have fractional parts; accept integral floats.
                if v.fract() == 0.0 && v.abs() < 9.0e15 {
                    #[allow(clippy::cast_possible_truncation)]
                    Ok(RequestId::Number(v as i64))
                } else {
                    Err(E::custom("request id must be an integer"))
                }
            }
            fn visit_str<E: de::Error>(self, v: &str) -> Result<RequestId, E> {
                Ok(RequestId::String(v.into()))
            }
        }
        d.deserialize_any(V)
    }
}

/// An incoming request.
#[derive(Debug)]
pub struct Request {
    /// The request id.
    pub id: RequestId,
    /// The method name.
    pub method: String,
    /// The raw `params`, if present.
    pub params: Option<Box<RawValue>>,
}

/// An incoming notification.
#[derive(Debug)]
pub struct Notification {
    /// The method name.
    pub method: String,
    /// The raw `params`, if present.
    pub params: Option<Box<RawValue>>,
}

/// An incoming response (to a request this side sent).
#[derive(Debug)]
pub struct Response {
    /// The id of the request it answers; `None` for errors about unreadable requests.
    pub id: Option<RequestId>,
    /// The raw result, or the error.
    pub outcome: Result<Box<RawValue>, ErrorObject>,
}

/// Any JSON-RPC message.
#[derive(Debug)]
pub enum Message {
    /// A request, which expects a response.
    Request(Request),
    /// A notification, which expects none.
    Notification(Notification),
    /// A response.
    Response(Response),
}

/// Why bytes could not be decoded into a [`Message`].
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
pub enum DecodeError {
    /// The bytes are not JSON (`-32700`).
    #[error("parse error: {0}")]
    Parse(String),
    /// JSON, but not a valid JSON-RPC message (`-32600`); carries the id if one was readable.
    #[error("invalid request: {reason}")]
    Invalid {
        /// The id, when one could be read.
        id: Option<RequestId>,
        /// What is wrong.
        reason: String,
    },
}

impl DecodeError {
    /// The JSON-RPC error object to answer with.
    pub fn to_error_object(&self) -> ErrorObject {
        match self {
            Self::Parse(m) => ErrorObject::parse_error(format!("parse error: {m}")),
            Self::Invalid { reason, .. } => {
                ErrorObject::invalid_request(format!("invalid request: {reason}"))
            }
        }
    }

    /// The id to echo, if one was readable.
    pub fn id(&self) -> Option<&RequestId> {
        match self {
            Self::Parse(_) => None,
            Self::Invalid { id, .. } => id.as_ref(),
        }
    }
}

/// A field that is distinguishes "absent" from "present" (even when null).
#[derive(Default)]
enum Field<T> {
    #[default]
    Absent,
    Present(T),
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Field<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        T::deserialize(d).map(Field::Present)
    }
}

#[derive(Deserialize)]
struct RawEnvelope<'a> {
    #[serde(default, borrow)]
    jsonrpc: Option<&'a RawValue>,
    #[serde(default)]
    id: Field<Value>,
    #[serde(default)]
    method: Option<Value>,
    #[serde(default)]
    params: Option<Box<RawValue>>,
    #[serde(default)]
    result: Option<Box<RawValue>>,
    #[serde(default)]
    error: Field<Value>,
}

/// Deepest nesting of arrays and objects accepted in a message.
pub const MAX_DEPTH: usize = 128;

/// Whether `bytes` nest arrays/objects deeper than `max`. A linear scan that
/// skips strings; it does not validate JSON. [`Message::from_slice_with_max_depth`]
/// runs it first; a caller that parses a message some other way runs it
/// before its parser sees the bytes.
pub fn exceeds_depth(bytes: &[u8], max: usize) -> bool {
    // The depth never exceeds the number of opening brackets: when there
    // are at most `max` of them (nearly always), skip the scan. Counting
    // vectorises; the scan below goes byte by byte.
    if opening_brackets(bytes) <= max {
        return false;
    }
    let mut depth = 0usize;
    let mut in_string = false;
    let mut escaped = false;
    for &b in bytes {
        if in_string {
            if escaped {
                escaped = false;
            } else if b == b'\\' {
                escaped = true;
            } else if b == b'"' {
                in_string = false;
            }
            continue;
        }
        match b {
            b'"' => in_string = true,
            b'{' | b'[' => {
                depth += 1;
                if depth > max {
                    return true;
                }
            }
            b'}' | b']' => depth = depth.saturating_sub(1),
            _ => {}
        }
    }
    false
}

/// How many `{` and `[` bytes `bytes` holds (in strings too). `{` and `[`
/// differ only in bit 5, so one comparison finds both; counting into bytes,
/// a chunk of at most 255 at a time, lets the loop vectorise.
fn opening_brackets(bytes: &[u8]) -> usize {
    bytes
        .chunks(255)
        .map(|chunk| {
            let n: u8 = chunk
                .iter()
                .map(|&b| u8::from(b | 0x20 == b'{'))
                .fold(0, u8::wrapping_add);
            usize::from(n)
        })
        .sum()
}

impl Message {
    /// Decodes one message from bytes.
    ///
    /// A JSON array (a batch) is refused as an invalid request: the
    /// 2026-07-28 revision has no batching. Nesting deeper than
    /// [`MAX_DEPTH`] is a parse error, found before any parsing.
    pub fn from_slice(bytes: &[u8]) -> Result<Self, DecodeError> {
        Self::from_slice_with_max_depth(bytes, MAX_DEPTH)
    }

    /// [`from_slice`](Self::from_slice) with a caller-chosen nesting bound
    /// (clamped to [`MAX_DEPTH`], which the parser needs anyway).
    pub fn from_slice_with_max_depth(bytes: &[u8], max_depth: usize) -> Result<Self, DecodeError> {
        let max_depth = max_depth.min(MAX_DEPTH);
        if exceeds_depth(bytes, max_depth) {
            return Err(DecodeError::Parse(format!(
                "JSON nests deeper than {max_depth} levels"
            )));
        }
        if let Some(response) = plain::read(bytes) {
            return Ok(Self::Response(response));
        }
        decode_general(bytes)
    }
}

/// Any message, in any spelling JSON allows: the members in any order,
/// unknown ones ignored. The nesting was bounded before.
fn decode_general(bytes: &[u8]) -> Result<Message, DecodeError> {
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    match first {
        Some(b'{') => {}
        Some(b'[') => {
            // Still must be JSON to be an "invalid request" rather than a parse error.
            serde_json::from_slice::<de::IgnoredAny>(bytes)
                .map_err(|e| DecodeError::Parse(e.to_string()))?;
            return Err(DecodeError::Invalid {
                id: None,
                reason: "batch requests are not supported".into(),
            });
        }
        _ => {
            serde_json::from_slice::<de::IgnoredAny>(bytes)
                .map_err(|e| DecodeError::Parse(e.to_string()))?;
            return Err(DecodeError::Invalid {
                id: None,
                reason: "a message must be a JSON object".into(),
            });
        }
    }
    let raw: RawEnvelope<'_> = match serde_json::from_slice(bytes) {
        Ok(raw) => raw,
        Err(e) if e.is_data() => {
            return Err(DecodeError::Invalid {
                id: None,
                reason: e.to_string(),
            });
        }
        Err(e) => return Err(DecodeError::Parse(e.to_string())),
    };
    let id = match raw.id {
        Field::Absent => None,
        Field::Present(v) => {
            Some(
                RequestId::deserialize(&v).map_err(|_| DecodeError::Invalid {
                    id: None,
                    reason: "id must be a string or an integer".into(),
                })?,
            )
        }
    };
    let invalid = |reason: &str| DecodeError::Invalid {
        id: id.clone(),
        reason: reason.into(),
    };
    if raw.jsonrpc.map(RawValue::get) != Some("\"2.0\"") {
        return Err(invalid("jsonrpc must be \"2.0\""));
    }
    match (raw.method, raw.result, raw.error) {
        (Some(method), None, Field::Absent) => {
            let Value::String(method) = method else {
                return Err(invalid("method must be a string"));
            };
            if let Some(p) = &raw.params {
                let c = p.get().as_bytes().first();
                if c != Some(&b'{') && c != Some(&b'[') {
                    return Err(invalid("params must be an object or an array"));
                }
            }
            Ok(match id {
                Some(id) => Message::Request(Request {
                    id,
                    method,
                    params: raw.params,
                }),
                None => Message::Notification(Notification {
                    method,
                    params: raw.params,
                }),
            })
        }
        (None, Some(result), Field::Absent) => {
            let Some(id) = id else {
                return Err(invalid("a result response needs an id"));
            };
            Ok(Message::Response(Response {
                id: Some(id),
                outcome: Ok(result),
            }))
        }
        (None, None, Field::Present(error)) => {
            let error = ErrorObject::deserialize(error)
                .map_err(|e| invalid(&format!("malformed error object: {e}")))?;
            Ok(Message::Response(Response {
                id,
                outcome: Err(error),
            }))
        }
        _ => Err(invalid(
            "a message needs exactly one of method, result or error",
        )),
    }
}

#[derive(Serialize)]
struct OutResult<'a, T: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    result: &'a T,
}

#[derive(Serialize)]
struct OutError<'a> {
    jsonrpc: &'static str,
    // Spec: basic/index.mdx#error-responses — the id is omitted, never null,
    // when the request's id could not be read.
    #[serde(skip_serializing_if = "Option::is_none")]
    id: Option<&'a RequestId>,
    error: &'a ErrorObject,
}

#[derive(Serialize)]
struct OutRequest<'a, P: ?Sized> {
    jsonrpc: &'static str,
    id: &'a RequestId,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

#[derive(Serialize)]
struct OutNotification<'a, P: ?Sized> {
    jsonrpc: &'static str,
    method: &'a str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

fn to_vec<T: Serialize>(value: &T) -> Vec<u8> {
    // Serialising our own envelope structs into a Vec cannot fail: every key is
    // a string and no custom serializer errors.
    // Sized for a typical message, so that small ones never grow the buffer.
    let mut out = Vec::with_capacity(256);
    serde_json::to_writer(&mut out, value)
        .map(|()| out)
        .unwrap_or_else(|e| {
            let err = ErrorObject::internal(format!("failed to encode message: {e}"));
            encode_error(None, &err)
        })
}

/// Encodes a result response.
pub fn encode_result<T: Serialize + ?Sized>(id: &RequestId, result: &T) -> Vec<u8> {
    to_vec(&OutResult {
        jsonrpc: JSONRPC_VERSION,
        id,
        result,
    })
}

/// Encodes an error response; `id` is `None` when the request's id was
/// unreadable, and the member is then left out (2026-07-28 forbids `null` ids).
pub fn encode_error(id: Option<&RequestId>, error: &ErrorObject) -> Vec<u8> {
    let out = OutError {
        jsonrpc: JSONRPC_VERSION,
        id,
        error,
    };
    serde_json::to_vec(&out).unwrap_or_else(|_| {
        br#"{"jsonrpc":"2.0","error":{"code":-32603,"message":"failed to encode error"}}"#.to_vec()
    })
}

/// Encodes a request.
pub fn encode_request<P: Serialize + ?Sized>(
    id: &RequestId,
    method: &str,
    params: Option<&P>,
) -> Vec<u8> {
    to_vec(&OutRequest {
        jsonrpc: JSONRPC_VERSION,
        id,
        method,
        params,
    })
}

/// Encodes a notification.
pub fn encode_notification<P: Serialize + ?Sized>(method: &str, params: Option<&P>) -> Vec<u8> {
    to_vec(&OutNotification {
        jsonrpc: JSONRPC_VERSION,
        method,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::error::ErrorCode;

    fn invalid_reason(bytes: &[u8]) -> String {
        match Message::from_slice(bytes) {
            Err(DecodeError::Invalid { reason, .. }) => reason,
            other => panic!("expected invalid request, got {other:?}"),
        }
    }

    #[test]
    fn decodes_request_with_raw_params() {
        let m = Message::from_slice(
            br#"{"jsonrpc":"2.0","id":7,"method":"tools/list","params":{"a":1}}"#,
        )
        .expect("valid");
        let Message::Request(r) = m else {
            panic!("not a request")
        };
        assert_eq!(r.id, RequestId::Number(7));
        assert_eq!(r.method, "tools/list");
        assert_eq!(r.params.expect("params").get(), r#"{"a":1}"#);
    }

    #[test]
    fn null_id_is_invalid_not_notification() {
        let reason = invalid_reason(br#"{"jsonrpc":"2.0","id":null,"method":"x"}"#);
        assert!(reason.contains("id"), "{reason}");
    }

    #[test]
    fn missing_id_is_notification() {
        let m = Message::from_slice(br#"{"jsonrpc":"2.0","method":"notifications/cancelled"}"#)
            .expect("valid");
        assert!(matches!(m, Message::Notification(_)));
    }

    #[test]
    fn string_and_big_ids_round_trip() {
        for id in [r#""abc""#, "1764000000000", "-5"] {
            let text = format!(r#"{{"jsonrpc":"2.0","id":{id},"method":"m"}}"#);
            let Message::Request(r) = Message::from_slice(text.as_bytes()).expect("valid") else {
                panic!("not a request")
            };
            let out = encode_result(&r.id, &serde_json::json!({}));
            let v: Value = serde_json::from_slice(&out).expect("json");
            assert_eq!(v["id"].to_string(), id);
        }
    }

    #[test]
    fn fractional_id_is_invalid() {
        invalid_reason(br#"{"jsonrpc":"2.0","id":1.5,"method":"m"}"#);
    }

    #[test]
    fn batch_is_invalid_request() {
        let reason = invalid_reason(br#"[{"jsonrpc":"2.0","id":1,"method":"m"}]"#);
        assert!(reason.contains("batch"));
    }

    #[test]
    fn garbage_is_parse_error() {
        assert!(matches!(
            Message::from_slice(b"{not json"),
            Err(DecodeError::Parse(_))
        ));
        assert!(matches!(
            Message::from_slice(b""),
            Err(DecodeError::Parse(_))
        ));
    }

    #[test]
    fn wrong_version_keeps_id() {
        let Err(err) = Message::from_slice(br#"{"jsonrpc":"1.0","id":"x","method":"m"}"#) else {
            panic!("accepted a wrong version")
        };
        assert_eq!(err.id(), Some(&RequestId::from("x")));
        assert_eq!(err.to_error_object().code, ErrorCode::INVALID_REQUEST);
    }

    #[test]
    fn scalar_params_are_invalid() {
        invalid_reason(br#"{"jsonrpc":"2.0","id":1,"method":"m","params":3}"#);
    }

    #[test]
    fn decodes_error_response() {
        let m = Message::from_slice(
            br#"{"jsonrpc":"2.0","id":3,"error":{"code":-32022,"message":"nope","data":{"supported":["2026-07-28"]}}}"#,
        )
        .expect("valid");
        let Message::Response(Response {
            id,
            outcome: Err(e),
        }) = m
        else {
            panic!("not an error response")
        };
        assert_eq!(id, Some(RequestId::Number(3)));
        assert_eq!(e.code, ErrorCode::UNSUPPORTED_PROTOCOL_VERSION);
    }

    #[test]
    fn deep_nesting_is_an_error_not_a_crash() {
        let mut s = String::from(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":"#);
        s.push_str(&"[".repeat(200_000));
        s.push_str(&"]".repeat(200_000));
        s.push_str("}}");
        assert!(matches!(
            Message::from_slice(s.as_bytes()),
            Err(DecodeError::Parse(_))
        ));
    }

    #[test]
    fn caller_depth_bound_applies() {
        let body = br#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[[1]]}}"#;
        assert!(Message::from_slice_with_max_depth(body, 4).is_ok());
        assert!(matches!(
            Message::from_slice_with_max_depth(body, 3),
            Err(DecodeError::Parse(_))
        ));
    }

    #[test]
    fn depth_scan_ignores_brackets_in_strings() {
        let mut s = String::from(r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":""#);
        s.push_str(&"[".repeat(1000));
        s.push_str(r#"\"]"}}"#);
        assert!(matches!(
            Message::from_slice(s.as_bytes()),
            Ok(Message::Request(_))
        ));
        assert!(!exceeds_depth(&b"[".repeat(MAX_DEPTH), MAX_DEPTH));
        assert!(!exceeds_depth(br#"{"a":[1,{"b":2}]}"#, 3));
        assert!(exceeds_depth(br#"{"a":[1,{"b":2}]}"#, 2));
        assert!(!exceeds_depth(br#"{"a":"\"[[[["}"#, 1));
        assert!(exceeds_depth(br#"{"a":"\\","b":[[]]}"#, 2));
        assert!(!exceeds_depth(b"", 1));
        assert!(exceeds_depth(&b"[".repeat(MAX_DEPTH + 1), MAX_DEPTH));
        // 0x5b | 0x20 and 0x7b | 0x20 are `{`; nothing else is.
        let all: Vec<u8> = (0..=255).collect();
        assert_eq!(opening_brackets(&all), 2);
        assert_eq!(opening_brackets(&b"{[".repeat(1000)), 2000);
        assert_eq!(opening_brackets(&[b'{'; 255]), 255);
        assert_eq!(opening_brackets(&[b'['; 256]), 256);
    }

    #[test]
    fn error_without_readable_id_omits_id() {
        let out = encode_error(None, &ErrorObject::parse_error("bad"));
        let v: Value = serde_json::from_slice(&out).expect("json");
        assert!(v.get("id").is_none(), "{v}");
        assert_eq!(v["error"]["code"], -32700);
    }
}
