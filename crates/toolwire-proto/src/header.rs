//! The `x-mcp-header` schema rules and the `Mcp-Param-*` / `Mcp-Name` header values.
//!
//! A tool may mark primitive properties of its `inputSchema` with
//! `x-mcp-header`; over Streamable HTTP a client then mirrors those argument
//! values into `Mcp-Param-{name}` headers and the server checks that they match
//! the body. This module holds the pieces both sides need:
//!
//! - [`validate_x_mcp_headers`] checks every annotation of a schema and lists
//!   them as [`HeaderParam`]s;
//! - [`encode_header_value`] and [`decode_header_value`] implement the
//!   `=?base64?…?=` sentinel encoding (also used by `Mcp-Name`);
//! - [`lookup_path`] and [`param_header_value`] build the value a client sends;
//! - [`header_matches_value`] is the server-side comparison.

use std::borrow::Cow;
use std::collections::HashMap;
use std::fmt;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::{Map, Value};

/// The prefix of every header mirrored from a tool parameter.
///
/// The full header name is this prefix followed by the `x-mcp-header` value,
/// for example `Mcp-Param-Region`.
pub const PARAM_HEADER_PREFIX: &str = "Mcp-Param-";

/// The JSON Schema extension keyword that marks a property for mirroring.
pub const X_MCP_HEADER: &str = "x-mcp-header";

/// The largest integer a mirrored parameter may carry, 2^53 − 1. The smallest is
/// its negation.
// Spec: server/tools.mdx#x-mcp-header
pub const MAX_SAFE_INTEGER: i64 = (1 << 53) - 1;

// Spec: basic/transports/streamable-http.mdx#value-encoding
const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// How many JSON Pointer segments deep the schema walk goes before it gives
/// up, so that a hostile, programmatically built schema cannot overflow the
/// stack.
const MAX_SCHEMA_DEPTH: usize = 256;

/// The primitive JSON Schema types a mirrored parameter may have.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum PrimitiveKind {
    /// `"type": "string"`; sent as is, or Base64-encoded when unsafe.
    String,
    /// `"type": "integer"`; sent in decimal, within ±(2^53 − 1).
    Integer,
    /// `"type": "boolean"`; sent as `true` or `false`.
    Boolean,
}

impl PrimitiveKind {
    /// The JSON Schema `type` name of this kind.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::String => "string",
            Self::Integer => "integer",
            Self::Boolean => "boolean",
        }
    }
}

impl fmt::Display for PrimitiveKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// One valid `x-mcp-header` annotation of an `inputSchema`.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct HeaderParam {
    /// The annotation value as written: the name part of `Mcp-Param-{name}`.
    pub header: String,
    /// The property names from the schema root to the annotated property,
    /// which is also where its value sits in the call arguments.
    pub path: Vec<String>,
    /// The property's type.
    pub kind: PrimitiveKind,
}

impl HeaderParam {
    /// The full header name, for example `Mcp-Param-Region`.
    pub fn header_name(&self) -> String {
        format!("{PARAM_HEADER_PREFIX}{}", self.header)
    }
}

/// Why an `inputSchema` carries an invalid `x-mcp-header` annotation.
///
/// Every `pointer` is a JSON Pointer (RFC 6901) into the schema, to the
/// schema object that carries the annotation.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum XMcpHeaderError {
    /// The annotation value is not a JSON string.
    #[error("x-mcp-header at {pointer} must be a JSON string, found {found}")]
    NotAString {
        /// Where the annotated schema is.
        pointer: String,
        /// The JSON type that was found instead.
        found: &'static str,
    },
    /// The annotation value is the empty string.
    #[error("x-mcp-header at {pointer} must not be empty")]
    Empty {
        /// Where the annotated schema is.
        pointer: String,
    },
    /// The annotation value contains a control character such as CR or LF.
    #[error(
        "x-mcp-header {header:?} at {pointer} contains the control character {ch:?}; control characters are not allowed"
    )]
    ControlChar {
        /// Where the annotated schema is.
        pointer: String,
        /// The annotation value.
        header: String,
        /// The first control character.
        ch: char,
    },
    /// The annotation value is not an HTTP field-name token (`1*tchar`).
    #[error(
        "x-mcp-header {header:?} at {pointer} contains {ch:?}, which is not an HTTP token character (RFC 9110 tchar)"
    )]
    NotAToken {
        /// Where the annotated schema is.
        pointer: String,
        /// The annotation value.
        header: String,
        /// The first character that is not a `tchar`.
        ch: char,
    },
    /// Two annotations are equal when compared case-insensitively.
    #[error(
        "x-mcp-header {header:?} at {pointer} duplicates {first_header:?} at {first_pointer}; values must be case-insensitively unique"
    )]
    Duplicate {
        /// Where the second annotated schema is.
        pointer: String,
        /// The second annotation value.
        header: String,
        /// Where the first annotated schema is.
        first_pointer: String,
        /// The first annotation value.
        first_header: String,
    },
    /// The annotated property's `type` is not exactly one of `"string"`,
    /// `"integer"` or `"boolean"`.
    #[error(
        "x-mcp-header {header:?} at {pointer} is on a property whose type is {found}; only \"string\", \"integer\" and \"boolean\" are allowed"
    )]
    UnsupportedType {
        /// Where the annotated schema is.
        pointer: String,
        /// The annotation value.
        header: String,
        /// The `type` found, as JSON, or `missing`.
        found: String,
    },
    /// The annotation is somewhere a chain of `properties` keys from the root
    /// does not lead (under `items`, `anyOf`, `$defs`, `additionalProperties`
    /// and so on).
    #[error(
        "x-mcp-header{} at {pointer} is not statically reachable: it must sit on a property reached from the root through `properties` keys only",
        show_header(.header)
    )]
    NotStaticallyReachable {
        /// Where the annotated schema is.
        pointer: String,
        /// The annotation value, when it is a string.
        header: Option<String>,
    },
    /// The annotation is on the schema root, which is not a property.
    #[error("x-mcp-header{} is on the schema root; it must be on a property", show_header(.header))]
    OnSchemaRoot {
        /// The annotation value, when it is a string.
        header: Option<String>,
    },
    /// The schema nests too deeply to be checked.
    #[error("inputSchema nests deeper than {max} levels at {pointer}")]
    TooDeep {
        /// Where the walk stopped.
        pointer: String,
        /// The depth limit.
        max: usize,
    },
}

fn show_header(header: &Option<String>) -> String {
    header
        .as_ref()
        .map(|h| format!(" {h:?}"))
        .unwrap_or_default()
}

/// Checks every `x-mcp-header` annotation of a tool's `inputSchema` and
/// returns them ordered by property path.
///
/// All the constraints of the spec are enforced: the value is a non-empty
/// string made only of HTTP token characters (so no control characters),
/// unique ignoring ASCII case, on a property whose `type` is exactly
/// `"string"`, `"integer"` or `"boolean"`, and that property is reached from
/// the root through nothing but `properties` keys (nested objects are fine).
/// An annotation anywhere else is an error, not ignored.
///
/// Values of `const`, `enum`, `default` and `examples` are instance data, not
/// schemas, and are not searched. Values of keywords this function does not
/// know are searched, and an annotation found there is reported as not
/// statically reachable.
///
/// A schema that is not a JSON object (such as `true`) has no annotations.
///
/// ```
/// use serde_json::json;
/// use toolwire_proto::header::{PrimitiveKind, validate_x_mcp_headers};
///
/// let schema = json!({
///     "type": "object",
///     "properties": {
///         "region": { "type": "string", "x-mcp-header": "Region" },
///         "query": { "type": "string" }
///     }
/// });
/// let params = validate_x_mcp_headers(&schema)?;
/// assert_eq!(params.len(), 1);
/// assert_eq!(params[0].header_name(), "Mcp-Param-Region");
/// assert_eq!(params[0].path, ["region"]);
/// assert_eq!(params[0].kind, PrimitiveKind::String);
/// # Ok::<(), toolwire_proto::header::XMcpHeaderError>(())
/// ```
// Spec: server/tools.mdx#x-mcp-header
// Spec: basic/transports/streamable-http.mdx#schema-extension
pub fn validate_x_mcp_headers(input_schema: &Value) -> Result<Vec<HeaderParam>, XMcpHeaderError> {
    let mut walker = Walker::default();
    if let Value::Object(root) = input_schema {
        walker.schema(root, true)?;
    }
    Ok(walker.found.into_iter().map(|(param, _)| param).collect())
}

/// Keywords whose values are instance data or plain names, never schemas. An
/// `x-mcp-header` key inside them is data, not an annotation.
const DATA_KEYWORDS: &[&str] = &[
    "const",
    "enum",
    "default",
    "examples",
    "required",
    "dependentRequired",
    "$vocabulary",
];

/// Keywords whose value maps names to subschemas. Only `properties` keeps the
/// subschemas statically reachable.
const SCHEMA_MAP_KEYWORDS: &[&str] = &[
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
    "dependencies",
];

#[derive(Default)]
struct Walker {
    /// Valid annotations with the pointer of their schema, in walk order.
    found: Vec<(HeaderParam, String)>,
    /// Lowercased annotation value → index into `found`.
    seen: HashMap<String, usize>,
    /// JSON Pointer segments from the root to the current node.
    pointer: Vec<String>,
    /// Property names from the root; meaningful only while reachable.
    path: Vec<String>,
}

impl Walker {
    fn pointer(&self) -> String {
        render_pointer(&self.pointer)
    }

    fn check_depth(&self) -> Result<(), XMcpHeaderError> {
        if self.pointer.len() > MAX_SCHEMA_DEPTH {
            return Err(XMcpHeaderError::TooDeep {
                pointer: self.pointer(),
                max: MAX_SCHEMA_DEPTH,
            });
        }
        Ok(())
    }

    /// Walks a schema object. `reachable` says whether a chain of
    /// `properties` keys alone leads here from the root.
    fn schema(
        &mut self,
        schema: &Map<String, Value>,
        reachable: bool,
    ) -> Result<(), XMcpHeaderError> {
        self.check_depth()?;
        if let Some(annotation) = schema.get(X_MCP_HEADER) {
            // Spec: basic/transports/streamable-http.mdx#schema-extension
            let header = annotation.as_str().map(str::to_owned);
            if !reachable {
                return Err(XMcpHeaderError::NotStaticallyReachable {
                    pointer: self.pointer(),
                    header,
                });
            }
            if self.path.is_empty() {
                return Err(XMcpHeaderError::OnSchemaRoot { header });
            }
            self.record(annotation, schema)?;
        }
        for (key, value) in sorted(schema) {
            let key = key.as_str();
            if key == X_MCP_HEADER || DATA_KEYWORDS.contains(&key) {
                continue;
            }
            self.pointer.push(key.to_owned());
            if SCHEMA_MAP_KEYWORDS.contains(&key) {
                self.schema_map(value, reachable && key == "properties")?;
            } else {
                self.any(value)?;
            }
            self.pointer.pop();
        }
        Ok(())
    }

    /// Walks the value of a keyword such as `properties` or `$defs`.
    fn schema_map(&mut self, value: &Value, reachable: bool) -> Result<(), XMcpHeaderError> {
        let Value::Object(map) = value else {
            // Malformed, but still must not hide an annotation.
            return self.any(value);
        };
        for (name, sub) in sorted(map) {
            self.pointer.push(name.clone());
            if reachable {
                self.path.push(name.clone());
            }
            let result = match sub {
                Value::Object(sub) => self.schema(sub, reachable),
                other => self.any(other),
            };
            if reachable {
                self.path.pop();
            }
            self.pointer.pop();
            result?;
        }
        Ok(())
    }

    /// Walks a value that is not on the `properties` chain: any object in it
    /// is treated as a schema that is not statically reachable.
    fn any(&mut self, value: &Value) -> Result<(), XMcpHeaderError> {
        self.check_depth()?;
        match value {
            Value::Object(obj) => self.schema(obj, false),
            Value::Array(items) => {
                for (index, item) in items.iter().enumerate() {
                    self.pointer.push(index.to_string());
                    let result = self.any(item);
                    self.pointer.pop();
                    result?;
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }

    /// Checks an annotation on a reachable property and records it.
    fn record(
        &mut self,
        annotation: &Value,
        schema: &Map<String, Value>,
    ) -> Result<(), XMcpHeaderError> {
        // Spec: server/tools.mdx#x-mcp-header
        let pointer = self.pointer();
        let Value::String(header) = annotation else {
            return Err(XMcpHeaderError::NotAString {
                pointer,
                found: json_type_name(annotation),
            });
        };
        if header.is_empty() {
            return Err(XMcpHeaderError::Empty { pointer });
        }
        if let Some(ch) = header.chars().find(|c| c.is_control()) {
            return Err(XMcpHeaderError::ControlChar {
                pointer,
                header: header.clone(),
                ch,
            });
        }
        if let Some(ch) = header.chars().find(|&c| !is_tchar(c)) {
            return Err(XMcpHeaderError::NotAToken {
                pointer,
                header: header.clone(),
                ch,
            });
        }
        let kind = match schema.get("type") {
            Some(Value::String(ty)) if ty == "string" => PrimitiveKind::String,
            Some(Value::String(ty)) if ty == "integer" => PrimitiveKind::Integer,
            Some(Value::String(ty)) if ty == "boolean" => PrimitiveKind::Boolean,
            other => {
                return Err(XMcpHeaderError::UnsupportedType {
                    pointer,
                    header: header.clone(),
                    found: other.map_or_else(|| "missing".to_owned(), Value::to_string),
                });
            }
        };
        // tchar is ASCII-only, so ASCII case folding is the whole story.
        let folded = header.to_ascii_lowercase();
        if let Some(&first) = self.seen.get(&folded) {
            let (first_param, first_pointer) = &self.found[first];
            return Err(XMcpHeaderError::Duplicate {
                pointer,
                header: header.clone(),
                first_pointer: first_pointer.clone(),
                first_header: first_param.header.clone(),
            });
        }
        self.seen.insert(folded, self.found.len());
        let param = HeaderParam {
            header: header.clone(),
            path: self.path.clone(),
            kind,
        };
        self.found.push((param, pointer));
        Ok(())
    }
}

/// The entries of an object in key order, so that the result and the error
/// reported do not depend on how `serde_json` orders its maps.
fn sorted(map: &Map<String, Value>) -> Vec<(&String, &Value)> {
    let mut entries: Vec<_> = map.iter().collect();
    entries.sort_unstable_by(|a, b| a.0.cmp(b.0));
    entries
}

fn render_pointer(segments: &[String]) -> String {
    if segments.is_empty() {
        return "/ (the root)".to_owned();
    }
    let mut out = String::new();
    for segment in segments {
        out.push('/');
        out.push_str(&segment.replace('~', "~0").replace('/', "~1"));
    }
    out
}

/// `tchar` of RFC 9110 §5.6.2, the characters of an HTTP field name.
fn is_tchar(c: char) -> bool {
    c.is_ascii_alphanumeric()
        || matches!(
            c,
            '!' | '#'
                | '$'
                | '%'
                | '&'
                | '\''
                | '*'
                | '+'
                | '-'
                | '.'
                | '^'
                | '_'
                | '`'
                | '|'
                | '~'
        )
}

fn json_type_name(value: &Value) -> &'static str {
    match value {
        Value::Null => "null",
        Value::Bool(_) => "boolean",
        Value::Number(_) => "number",
        Value::String(_) => "string",
        Value::Array(_) => "array",
        Value::Object(_) => "object",
    }
}

/// Why a header value could not be decoded, or does not match the body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderValueError {
    /// The raw header value has a character that HTTP does not allow in a
    /// field value (only visible ASCII, space and horizontal tab are allowed).
    #[error(
        "header value contains {ch:?} at character {index}; only visible ASCII, space and horizontal tab are allowed"
    )]
    InvalidChar {
        /// The offending character.
        ch: char,
        /// Its position in the raw value, counted in characters from 0.
        index: usize,
    },
    /// The value uses the `=?base64?…?=` sentinel but the payload is not
    /// padded standard Base64.
    #[error(
        "header value uses the =?base64?...?= sentinel but its payload is not valid Base64: {detail}"
    )]
    InvalidBase64 {
        /// What the Base64 decoder reported.
        detail: String,
    },
    /// The Base64 payload does not decode to UTF-8.
    #[error("header value's Base64 payload is not valid UTF-8 (valid up to byte {valid_up_to})")]
    InvalidUtf8 {
        /// How many leading bytes are valid UTF-8.
        valid_up_to: usize,
    },
    /// The header is present but the body value is `null`, in which case a
    /// client must omit the header.
    #[error("header value {header:?} is present but the body value is null")]
    UnexpectedHeader {
        /// The decoded header value.
        header: String,
    },
    /// The header of an integer parameter is not an integer.
    #[error("header value {header:?} is not an integer")]
    NotAnInteger {
        /// The decoded header value.
        header: String,
    },
    /// The header of an integer parameter is outside ±(2^53 − 1).
    #[error("header value {header:?} is outside the safe integer range ±(2^53-1)")]
    IntegerOutOfRange {
        /// The decoded header value.
        header: String,
    },
    /// The header of a boolean parameter is not lowercase `true` or `false`.
    #[error(
        "header value {header:?} is not a boolean; only lowercase `true` and `false` are accepted"
    )]
    NotABoolean {
        /// The decoded header value.
        header: String,
    },
    /// The body value cannot be mirrored as the parameter's kind.
    #[error("body value: {0}")]
    Body(#[from] ParamValueError),
    /// Header and body hold different values.
    #[error("{kind} header value {header:?} does not match body value {body}")]
    Mismatch {
        /// The parameter kind compared.
        kind: PrimitiveKind,
        /// The decoded header value.
        header: String,
        /// The body value, as JSON.
        body: String,
    },
}

/// Why an argument value cannot become a header value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamValueError {
    /// The value's JSON type does not fit the parameter's kind.
    #[error("expected a {expected} value, found {found}")]
    WrongType {
        /// The kind from the schema.
        expected: PrimitiveKind,
        /// What was found instead.
        found: &'static str,
    },
    /// An integer outside ±(2^53 − 1).
    #[error("integer {value} is outside the safe integer range ±(2^53-1)")]
    IntegerOutOfRange {
        /// The value, as JSON.
        value: String,
    },
}

/// Encodes a string for an `Mcp-Param-*` or `Mcp-Name` header.
///
/// The value is returned unchanged when it is safe as a plain header value:
/// every character is visible ASCII or a space, it does not start or end with
/// a space, and it does not look like the sentinel. Otherwise it becomes
/// `=?base64?{standard Base64 of the UTF-8}?=`. The output is always a valid
/// HTTP field value with no leading or trailing whitespace.
///
/// Tabs are control characters and so are always encoded. A value that
/// starts with `=?base64?` and ends with `?=` is encoded too, so that it is
/// not mistaken for an encoded one; this check ignores ASCII case in the
/// prefix, which encodes a few more values than the spec requires and is
/// harmless because a decoder gets the same string back.
///
/// ```
/// use toolwire_proto::header::encode_header_value;
///
/// assert_eq!(encode_header_value("us-west1"), "us-west1");
/// assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
/// ```
// Spec: basic/transports/streamable-http.mdx#value-encoding
pub fn encode_header_value(v: &str) -> Cow<'_, str> {
    if is_plain_safe(v) {
        Cow::Borrowed(v)
    } else {
        Cow::Owned(format!(
            "{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}",
            STANDARD.encode(v)
        ))
    }
}

fn is_plain_safe(v: &str) -> bool {
    v.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !v.starts_with(' ')
        && !v.ends_with(' ')
        && !looks_like_sentinel(v)
}

fn looks_like_sentinel(v: &str) -> bool {
    v.get(..SENTINEL_PREFIX.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(SENTINEL_PREFIX))
        && v.ends_with(SENTINEL_SUFFIX)
}

/// Decodes a received `Mcp-Param-*` or `Mcp-Name` header value.
///
/// The raw value may only hold visible ASCII, spaces and horizontal tabs.
/// Leading and trailing spaces and tabs are dropped, as HTTP does not count
/// them as part of a field value. A value then wrapped in exactly
/// `=?base64?` and `?=` (case-sensitive) is decoded as padded standard
/// Base64 of UTF-8; any other value is returned as is.
///
/// ```
/// use toolwire_proto::header::decode_header_value;
///
/// assert_eq!(decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=")?, "Hello, 世界");
/// assert_eq!(decode_header_value("us-west1")?, "us-west1");
/// # Ok::<(), toolwire_proto::header::HeaderValueError>(())
/// ```
// Spec: basic/transports/streamable-http.mdx#value-encoding
// Spec: basic/transports/streamable-http.mdx#server-validation
pub fn decode_header_value(raw: &str) -> Result<String, HeaderValueError> {
    if let Some((index, ch)) = raw
        .chars()
        .enumerate()
        .find(|&(_, c)| !(c == '\t' || (' '..='~').contains(&c)))
    {
        return Err(HeaderValueError::InvalidChar { ch, index });
    }
    // RFC 9110 §5.5: leading and trailing whitespace is not part of the value.
    let value = raw.trim_matches([' ', '\t']);
    if !value.starts_with(SENTINEL_PREFIX) || !value.ends_with(SENTINEL_SUFFIX) {
        return Ok(value.to_owned());
    }
    // Both markers present; if they overlap ("=?base64?=") there is no
    // payload slot, which no conforming client produces.
    let Some(payload) = value
        .strip_prefix(SENTINEL_PREFIX)
        .and_then(|rest| rest.strip_suffix(SENTINEL_SUFFIX))
    else {
        return Err(HeaderValueError::InvalidBase64 {
            detail: "the =?base64? prefix and ?= suffix overlap".to_owned(),
        });
    };
    let bytes = STANDARD
        .decode(payload)
        .map_err(|e| HeaderValueError::InvalidBase64 {
            detail: e.to_string(),
        })?;
    String::from_utf8(bytes).map_err(|e| HeaderValueError::InvalidUtf8 {
        valid_up_to: e.utf8_error().valid_up_to(),
    })
}

/// Finds the value at a property path in call arguments.
///
/// Each step must go through a JSON object; `None` means no value is present
/// there, in which case the client omits the header. An empty path returns
/// `args` itself.
// Spec: basic/transports/streamable-http.mdx#schema-extension
pub fn lookup_path<'a>(args: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(args, |value, key| value.as_object()?.get(key))
}

/// Turns an argument value into the header value a client sends.
///
/// `null` gives `None` (the header is omitted). Strings go through
/// [`encode_header_value`], and the empty string stays empty. Integers are
/// written in decimal and must be within ±(2^53 − 1); an integral float such
/// as `42.0` counts as `42`. Booleans become `true` or `false`.
///
/// ```
/// use serde_json::json;
/// use toolwire_proto::header::{PrimitiveKind, param_header_value};
///
/// assert_eq!(param_header_value(&json!(42.0), PrimitiveKind::Integer)?.as_deref(), Some("42"));
/// assert_eq!(param_header_value(&json!(null), PrimitiveKind::String)?, None);
/// # Ok::<(), toolwire_proto::header::ParamValueError>(())
/// ```
// Spec: basic/transports/streamable-http.mdx#value-encoding
pub fn param_header_value(
    value: &Value,
    kind: PrimitiveKind,
) -> Result<Option<String>, ParamValueError> {
    if value.is_null() {
        return Ok(None);
    }
    let text = match kind {
        PrimitiveKind::String => encode_header_value(body_string(value)?).into_owned(),
        PrimitiveKind::Integer => body_integer(value)?.to_string(),
        PrimitiveKind::Boolean => bool_text(body_bool(value)?).to_owned(),
    };
    Ok(Some(text))
}

/// Checks, on the server, that a received `Mcp-Param-*` header matches the
/// argument value in the body.
///
/// The header is decoded first (see [`decode_header_value`]). Strings must be
/// equal exactly, case included. Integers are compared as numbers, so a
/// header `42` matches a body `42` or `42.0`, and a header written as a JSON
/// number such as `42.0` or `4.2e1` is accepted too; both sides must be within
/// ±(2^53 − 1). Booleans match only as lowercase `true` or `false`. A header
/// for a `null` body value is an error, since the client must omit it.
///
/// Whether a header is missing is the caller's question: look the value up
/// with [`lookup_path`] and require the header when it is present and not
/// `null`.
// Spec: basic/transports/streamable-http.mdx#server-behavior-for-custom-headers
// Spec: basic/transports/streamable-http.mdx#server-validation
pub fn header_matches_value(
    header_raw: &str,
    value: &Value,
    kind: PrimitiveKind,
) -> Result<(), HeaderValueError> {
    let header = decode_header_value(header_raw)?;
    if value.is_null() {
        return Err(HeaderValueError::UnexpectedHeader { header });
    }
    let matches = match kind {
        PrimitiveKind::String => body_string(value)? == header,
        PrimitiveKind::Integer => {
            let body = body_integer(value)?;
            match parse_integer_text(&header) {
                IntegerText::Integer(n) => n == body,
                IntegerText::NotAnInteger => return Err(HeaderValueError::NotAnInteger { header }),
                IntegerText::OutOfRange => {
                    return Err(HeaderValueError::IntegerOutOfRange { header });
                }
            }
        }
        PrimitiveKind::Boolean => {
            let body = body_bool(value)?;
            match header.as_str() {
                "true" => body,
                "false" => !body,
                _ => return Err(HeaderValueError::NotABoolean { header }),
            }
        }
    };
    if matches {
        Ok(())
    } else {
        Err(HeaderValueError::Mismatch {
            kind,
            header,
            body: value.to_string(),
        })
    }
}

fn bool_text(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

fn body_string(value: &Value) -> Result<&str, ParamValueError> {
    value.as_str().ok_or(ParamValueError::WrongType {
        expected: PrimitiveKind::String,
        found: json_type_name(value),
    })
}

fn body_bool(value: &Value) -> Result<bool, ParamValueError> {
    value.as_bool().ok_or(ParamValueError::WrongType {
        expected: PrimitiveKind::Boolean,
        found: json_type_name(value),
    })
}

/// The body value as a safe integer; integral floats count.
// Spec: server/tools.mdx#x-mcp-header
fn body_integer(value: &Value) -> Result<i64, ParamValueError> {
    let out_of_range = || ParamValueError::IntegerOutOfRange {
        value: value.to_string(),
    };
    let Value::Number(number) = value else {
        return Err(ParamValueError::WrongType {
            expected: PrimitiveKind::Integer,
            found: json_type_name(value),
        });
    };
    if let Some(n) = number.as_i64() {
        return if n.unsigned_abs() <= MAX_SAFE_INTEGER.unsigned_abs() {
            Ok(n)
        } else {
            Err(out_of_range())
        };
    }
    if number.as_u64().is_some() {
        // Above i64::MAX, so far above 2^53.
        return Err(out_of_range());
    }
    match number.as_f64() {
        Some(f) if f.is_finite() && f.fract() == 0.0 => {
            // Every integer up to 2^53 is exact in an f64, so the bound check
            // and the cast are both exact.
            if f.abs() <= MAX_SAFE_INTEGER as f64 {
                Ok(f as i64)
            } else {
                Err(out_of_range())
            }
        }
        _ => Err(ParamValueError::WrongType {
            expected: PrimitiveKind::Integer,
            found: "a number with a fractional part",
        }),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum IntegerText {
    Integer(i64),
    NotAnInteger,
    OutOfRange,
}

/// Reads JSON-number text exactly (no float rounding) and says whether it is
/// a safe integer. `42`, `-7`, `42.0`, `4.2e1` and `-0` are integers; `42.5`,
/// `+1`, `042`, ` 1` and `1e` are not.
fn parse_integer_text(text: &str) -> IntegerText {
    let (negative, unsigned) = match text.strip_prefix('-') {
        Some(rest) => (true, rest),
        None => (false, text),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (unsigned, None),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int_part) || (int_part.len() > 1 && int_part.starts_with('0')) {
        return IntegerText::NotAnInteger;
    }
    let frac = frac_part.unwrap_or("");
    if frac_part.is_some() && !all_digits(frac) {
        return IntegerText::NotAnInteger;
    }
    // The exponent saturates: beyond ±1e6 the answer no longer changes.
    let exp: i64 = match exponent {
        None => 0,
        Some(e) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => (-1, d),
                None => (1, e.strip_prefix('+').unwrap_or(e)),
            };
            if !all_digits(digits) {
                return IntegerText::NotAnInteger;
            }
            let magnitude = digits.bytes().fold(0_i64, |acc, b| {
                acc.saturating_mul(10)
                    .saturating_add(i64::from(b - b'0'))
                    .min(1_000_000)
            });
            sign * magnitude
        }
    };
    // The value is digits × 10^scale.
    let digits = format!("{int_part}{frac}");
    let significant = digits.trim_start_matches('0');
    if significant.is_empty() {
        return IntegerText::Integer(0);
    }
    let trimmed = significant.trim_end_matches('0');
    let trailing_zeros = significant.len() - trimmed.len();
    let scale = exp
        .saturating_sub(i64::try_from(frac.len()).unwrap_or(i64::MAX))
        .saturating_add(i64::try_from(trailing_zeros).unwrap_or(i64::MAX));
    if scale < 0 {
        // The last significant digit is non-zero and after the point.
        return IntegerText::NotAnInteger;
    }
    // 2^53 − 1 has 16 digits.
    let total_digits = i64::try_from(trimmed.len())
        .unwrap_or(i64::MAX)
        .saturating_add(scale);
    if total_digits > 16 {
        return IntegerText::OutOfRange;
    }
    let magnitude = trimmed
        .parse::<i64>()
        .ok()
        .and_then(|m| (0..scale).try_fold(m, |acc, _| acc.checked_mul(10)));
    match magnitude {
        Some(m) if m <= MAX_SAFE_INTEGER => IntegerText::Integer(if negative { -m } else { m }),
        _ => IntegerText::OutOfRange,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use PrimitiveKind::{Boolean as Bool, Integer as Int, String as Str};
    use serde_json::json;

    fn params(schema: Value) -> Vec<HeaderParam> {
        match validate_x_mcp_headers(&schema) {
            Ok(params) => params,
            Err(e) => panic!("schema rejected: {e}"),
        }
    }

    fn rejected(schema: Value) -> XMcpHeaderError {
        match validate_x_mcp_headers(&schema) {
            Ok(params) => panic!("schema accepted: {params:?}"),
            Err(e) => e,
        }
    }

    fn one_property(prop: Value) -> Value {
        json!({ "type": "object", "properties": { "p": prop } })
    }

    fn path(segments: &[&str]) -> Vec<String> {
        segments.iter().map(|s| (*s).to_owned()).collect()
    }

    // ---- x-mcp-header schema rules ----

    #[test]
    fn spec_example_schema_yields_region_header() {
        let schema = json!({
            "type": "object",
            "properties": {
                "region": {
                    "type": "string",
                    "description": "The region to execute the query in",
                    "x-mcp-header": "Region"
                },
                "query": { "type": "string", "description": "The SQL query to execute" }
            },
            "required": ["region", "query"]
        });
        assert_eq!(
            params(schema),
            vec![HeaderParam {
                header: "Region".to_owned(),
                path: path(&["region"]),
                kind: Str,
            }]
        );
    }

    #[test]
    fn header_name_adds_the_prefix() {
        let param = HeaderParam {
            header: "Region".to_owned(),
            path: path(&["region"]),
            kind: Str,
        };
        assert_eq!(param.header_name(), "Mcp-Param-Region");
    }

    #[test]
    fn schema_without_annotations_yields_nothing() {
        assert!(params(json!({ "type": "object", "additionalProperties": false })).is_empty());
        assert!(params(json!({ "type": "object" })).is_empty());
        assert!(params(json!(true)).is_empty());
        assert!(params(json!(null)).is_empty());
    }

    #[test]
    fn all_three_primitive_types_are_accepted() {
        let found = params(json!({
            "type": "object",
            "properties": {
                "a": { "type": "string", "x-mcp-header": "A" },
                "b": { "type": "integer", "x-mcp-header": "B" },
                "c": { "type": "boolean", "x-mcp-header": "C" }
            }
        }));
        let kinds: Vec<_> = found.iter().map(|p| p.kind).collect();
        assert_eq!(kinds, [Str, Int, Bool]);
    }

    #[test]
    fn nested_properties_are_statically_reachable() {
        let found = params(json!({
            "type": "object",
            "properties": {
                "target": {
                    "type": "object",
                    "properties": {
                        "tenant": { "type": "string", "x-mcp-header": "Tenant" }
                    }
                }
            }
        }));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].path, path(&["target", "tenant"]));
    }

    #[test]
    fn results_are_ordered_by_property_path() {
        let found = params(json!({
            "type": "object",
            "properties": {
                "zeta": { "type": "string", "x-mcp-header": "Z" },
                "alpha": {
                    "type": "object",
                    "properties": { "inner": { "type": "integer", "x-mcp-header": "Inner" } }
                },
                "beta": { "type": "boolean", "x-mcp-header": "B" }
            }
        }));
        let paths: Vec<_> = found.iter().map(|p| p.path.clone()).collect();
        assert_eq!(
            paths,
            [path(&["alpha", "inner"]), path(&["beta"]), path(&["zeta"])]
        );
    }

    #[test]
    fn every_tchar_is_accepted_in_a_header_name() {
        let name = "!#$%&'*+-.^_`|~09AZaz";
        let found = params(one_property(
            json!({ "type": "string", "x-mcp-header": name }),
        ));
        assert_eq!(found[0].header, name);
    }

    #[test]
    fn empty_header_name_is_rejected() {
        assert!(matches!(
            rejected(one_property(json!({ "type": "string", "x-mcp-header": "" }))),
            XMcpHeaderError::Empty { pointer } if pointer == "/properties/p"
        ));
    }

    #[test]
    fn control_characters_in_header_name_are_rejected() {
        for (name, bad) in [
            ("A\rB", '\r'),
            ("A\nB", '\n'),
            ("\0", '\0'),
            ("A\u{7f}", '\u{7f}'),
            ("A\tB", '\t'),
        ] {
            assert!(
                matches!(
                    rejected(one_property(json!({ "type": "string", "x-mcp-header": name }))),
                    XMcpHeaderError::ControlChar { ch, .. } if ch == bad
                ),
                "{name:?}"
            );
        }
    }

    #[test]
    fn non_token_characters_in_header_name_are_rejected() {
        for (name, bad) in [
            ("My Header", ' '),
            ("a:b", ':'),
            ("(x)", '('),
            ("a/b", '/'),
            ("a\"b", '"'),
            ("a,b", ','),
            ("Région", 'é'),
            ("a@b", '@'),
            ("a{b}", '{'),
        ] {
            assert!(
                matches!(
                    rejected(one_property(json!({ "type": "string", "x-mcp-header": name }))),
                    XMcpHeaderError::NotAToken { ch, .. } if ch == bad
                ),
                "{name:?}"
            );
        }
    }

    #[test]
    fn non_string_annotation_values_are_rejected() {
        for (value, found) in [
            (json!(1), "number"),
            (json!(true), "boolean"),
            (json!(null), "null"),
            (json!(["A"]), "array"),
            (json!({ "name": "A" }), "object"),
        ] {
            assert_eq!(
                rejected(one_property(
                    json!({ "type": "string", "x-mcp-header": value })
                )),
                XMcpHeaderError::NotAString {
                    pointer: "/properties/p".to_owned(),
                    found
                }
            );
        }
    }

    #[test]
    fn duplicate_header_names_differing_only_in_case_are_rejected() {
        let err = rejected(json!({
            "type": "object",
            "properties": {
                "a": { "type": "string", "x-mcp-header": "Region" },
                "b": {
                    "type": "object",
                    "properties": { "c": { "type": "string", "x-mcp-header": "REGION" } }
                }
            }
        }));
        assert_eq!(
            err,
            XMcpHeaderError::Duplicate {
                pointer: "/properties/b/properties/c".to_owned(),
                header: "REGION".to_owned(),
                first_pointer: "/properties/a".to_owned(),
                first_header: "Region".to_owned(),
            }
        );
    }

    #[test]
    fn exact_duplicate_header_names_are_rejected() {
        let err = rejected(json!({
            "type": "object",
            "properties": {
                "a": { "type": "string", "x-mcp-header": "X" },
                "b": { "type": "integer", "x-mcp-header": "X" }
            }
        }));
        assert!(matches!(err, XMcpHeaderError::Duplicate { .. }), "{err}");
    }

    #[test]
    fn number_type_is_rejected() {
        assert_eq!(
            rejected(one_property(
                json!({ "type": "number", "x-mcp-header": "N" })
            )),
            XMcpHeaderError::UnsupportedType {
                pointer: "/properties/p".to_owned(),
                header: "N".to_owned(),
                found: "\"number\"".to_owned(),
            }
        );
    }

    #[test]
    fn non_primitive_missing_and_union_types_are_rejected() {
        for (ty, found) in [
            (Some(json!("object")), "\"object\""),
            (Some(json!("array")), "\"array\""),
            (Some(json!("null")), "\"null\""),
            (Some(json!("String")), "\"String\""),
            (Some(json!(["string", "null"])), "[\"string\",\"null\"]"),
            (Some(json!(["string"])), "[\"string\"]"),
            (Some(json!(7)), "7"),
            (None, "missing"),
        ] {
            let mut prop = json!({ "x-mcp-header": "H" });
            if let (Some(ty), Some(obj)) = (ty, prop.as_object_mut()) {
                obj.insert("type".to_owned(), ty);
            }
            assert_eq!(
                rejected(one_property(prop)),
                XMcpHeaderError::UnsupportedType {
                    pointer: "/properties/p".to_owned(),
                    header: "H".to_owned(),
                    found: found.to_owned(),
                }
            );
        }
    }

    #[test]
    fn ref_without_type_is_rejected_as_missing_type() {
        let err = rejected(json!({
            "type": "object",
            "$defs": { "Region": { "type": "string" } },
            "properties": { "r": { "$ref": "#/$defs/Region", "x-mcp-header": "Region" } }
        }));
        assert!(
            matches!(&err, XMcpHeaderError::UnsupportedType { found, .. } if found == "missing"),
            "{err}"
        );
    }

    #[test]
    fn annotation_on_the_root_is_rejected() {
        assert_eq!(
            rejected(json!({ "type": "object", "x-mcp-header": "Root" })),
            XMcpHeaderError::OnSchemaRoot {
                header: Some("Root".to_owned())
            }
        );
    }

    #[test]
    fn annotation_under_any_non_properties_keyword_is_rejected() {
        let h = json!({ "type": "string", "x-mcp-header": "H" });
        // (the property's schema, where the annotated schema sits below it)
        let cases = [
            (json!({ "items": h }), "items"),
            (json!({ "prefixItems": [h] }), "prefixItems/0"),
            (json!({ "contains": h }), "contains"),
            (json!({ "anyOf": [h] }), "anyOf/0"),
            (json!({ "oneOf": [{}, h] }), "oneOf/1"),
            (json!({ "allOf": [h] }), "allOf/0"),
            (json!({ "not": h }), "not"),
            (json!({ "if": h }), "if"),
            (json!({ "then": h }), "then"),
            (json!({ "else": h }), "else"),
            (json!({ "additionalProperties": h }), "additionalProperties"),
            (
                json!({ "patternProperties": { "^x": h } }),
                "patternProperties/^x",
            ),
            (json!({ "propertyNames": h }), "propertyNames"),
            (json!({ "$defs": { "D": h } }), "$defs/D"),
            (json!({ "definitions": { "D": h } }), "definitions/D"),
            (
                json!({ "dependentSchemas": { "a": h } }),
                "dependentSchemas/a",
            ),
            (
                json!({ "unevaluatedProperties": h }),
                "unevaluatedProperties",
            ),
            (json!({ "unevaluatedItems": h }), "unevaluatedItems"),
            (json!({ "x-vendor": { "nested": h } }), "x-vendor/nested"),
        ];
        for (mut prop, below) in cases {
            if let Some(obj) = prop.as_object_mut() {
                obj.insert("type".to_owned(), json!("object"));
            }
            assert_eq!(
                rejected(one_property(prop)),
                XMcpHeaderError::NotStaticallyReachable {
                    pointer: format!("/properties/p/{below}"),
                    header: Some("H".to_owned()),
                },
            );
        }
    }

    #[test]
    fn annotation_under_root_level_composition_is_rejected() {
        let err = rejected(json!({
            "type": "object",
            "anyOf": [{ "properties": { "p": { "type": "string", "x-mcp-header": "P" } } }]
        }));
        assert_eq!(
            err,
            XMcpHeaderError::NotStaticallyReachable {
                pointer: "/anyOf/0/properties/p".to_owned(),
                header: Some("P".to_owned()),
            }
        );
    }

    #[test]
    fn properties_below_an_unreachable_schema_stay_unreachable() {
        let err = rejected(json!({
            "type": "object",
            "properties": {
                "list": {
                    "type": "array",
                    "items": {
                        "type": "object",
                        "properties": { "id": { "type": "string", "x-mcp-header": "Id" } }
                    }
                }
            }
        }));
        assert!(
            matches!(&err, XMcpHeaderError::NotStaticallyReachable { pointer, .. }
                if pointer == "/properties/list/items/properties/id"),
            "{err}"
        );
    }

    #[test]
    fn unreachable_annotation_is_rejected_even_when_its_value_is_not_a_string() {
        assert_eq!(
            rejected(json!({ "$defs": { "D": { "x-mcp-header": 5 } } })),
            XMcpHeaderError::NotStaticallyReachable {
                pointer: "/$defs/D".to_owned(),
                header: None,
            }
        );
    }

    #[test]
    fn instance_data_keywords_are_not_searched() {
        let found = params(json!({
            "type": "object",
            "default": { "x-mcp-header": "NotAnAnnotation" },
            "examples": [{ "x-mcp-header": "NotAnAnnotation" }],
            "properties": {
                "p": {
                    "type": "object",
                    "const": { "x-mcp-header": "X" },
                    "enum": [{ "x-mcp-header": "X" }]
                },
                "q": { "type": "string", "x-mcp-header": "Q" }
            },
            "required": ["x-mcp-header"]
        }));
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].header, "Q");
    }

    #[test]
    fn a_property_named_x_mcp_header_is_not_an_annotation() {
        let found = params(json!({
            "type": "object",
            "properties": { "x-mcp-header": { "type": "string", "x-mcp-header": "Meta" } }
        }));
        assert_eq!(found[0].path, path(&["x-mcp-header"]));
    }

    #[test]
    fn pointer_segments_are_escaped() {
        let err = rejected(json!({
            "type": "object",
            "properties": { "a/b~c": { "type": "number", "x-mcp-header": "N" } }
        }));
        assert!(
            matches!(&err, XMcpHeaderError::UnsupportedType { pointer, .. } if pointer == "/properties/a~1b~0c"),
            "{err}"
        );
    }

    #[test]
    fn first_error_in_key_order_is_reported() {
        let err = rejected(json!({
            "type": "object",
            "properties": {
                "b": { "type": "number", "x-mcp-header": "B" },
                "a": { "type": "string", "x-mcp-header": "" }
            }
        }));
        assert!(matches!(err, XMcpHeaderError::Empty { .. }), "{err}");
    }

    #[test]
    fn overly_deep_schema_is_rejected_without_overflowing() {
        let mut schema = json!({ "type": "string" });
        for _ in 0..200 {
            schema = json!({ "type": "object", "properties": { "p": schema } });
        }
        assert!(matches!(rejected(schema), XMcpHeaderError::TooDeep { .. }));
    }

    #[test]
    fn schema_error_messages_name_the_rule_and_location() {
        let msg = rejected(one_property(
            json!({ "type": "number", "x-mcp-header": "N" }),
        ))
        .to_string();
        assert!(
            msg.contains("/properties/p") && msg.contains("\"N\"") && msg.contains("number"),
            "{msg}"
        );
        let msg = rejected(json!({ "items": { "x-mcp-header": "I" } })).to_string();
        assert!(
            msg.contains("/items") && msg.contains("statically reachable") && msg.contains("\"I\""),
            "{msg}"
        );
        let msg = rejected(json!({ "x-mcp-header": 1 })).to_string();
        assert!(msg.contains("root"), "{msg}");
    }

    // ---- value encoding ----

    /// The table of `#value-encoding`: (original, encoded header value).
    const SPEC_ENCODING_EXAMPLES: [(&str, &str); 5] = [
        ("us-west1", "us-west1"),
        ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
        (" padded ", "=?base64?IHBhZGRlZCA=?="),
        ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
        ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
    ];

    #[test]
    fn spec_encoding_examples_encode_as_documented() {
        for (original, encoded) in SPEC_ENCODING_EXAMPLES {
            assert_eq!(encode_header_value(original), encoded, "{original:?}");
        }
    }

    #[test]
    fn spec_encoding_examples_decode_to_the_original() {
        for (original, encoded) in SPEC_ENCODING_EXAMPLES {
            assert_eq!(decode_header_value(encoded).as_deref(), Ok(original));
        }
    }

    #[test]
    fn safe_ascii_is_borrowed_unchanged() {
        for v in [
            "",
            "a",
            "a b",
            "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
            "=?base64?",
            "?=",
            "=?base64",
        ] {
            assert!(
                matches!(encode_header_value(v), Cow::Borrowed(s) if s == v),
                "{v:?}"
            );
        }
    }

    #[test]
    fn leading_or_trailing_space_is_encoded() {
        assert_eq!(encode_header_value(" a"), "=?base64?IGE=?=");
        assert_eq!(encode_header_value("a "), "=?base64?YSA=?=");
        assert_eq!(encode_header_value(" "), "=?base64?IA==?=");
    }

    #[test]
    fn control_characters_including_tab_are_encoded() {
        for v in ["a\tb", "a\rb", "\0", "a\u{7f}"] {
            assert!(encode_header_value(v).starts_with(SENTINEL_PREFIX), "{v:?}");
        }
    }

    #[test]
    fn sentinel_look_alikes_are_encoded() {
        for v in [
            "=?base64??=",
            "=?base64?=",
            "=?BASE64?abc?=",
            "=?Base64?x?=",
        ] {
            let encoded = encode_header_value(v);
            assert!(encoded.starts_with(SENTINEL_PREFIX), "{v:?}");
            assert_eq!(decode_header_value(&encoded), Ok(v.to_owned()));
        }
    }

    #[test]
    fn decode_trims_surrounding_spaces_and_tabs() {
        assert_eq!(
            decode_header_value(" \tus-west1\t "),
            Ok("us-west1".to_owned())
        );
        assert_eq!(
            decode_header_value("  =?base64?IGE=?= "),
            Ok(" a".to_owned())
        );
    }

    #[test]
    fn decode_keeps_inner_spaces_and_tabs() {
        assert_eq!(decode_header_value("a \tb"), Ok("a \tb".to_owned()));
    }

    #[test]
    fn decode_rejects_characters_http_does_not_allow() {
        for (raw, ch, index) in [
            ("a\nb", '\n', 1),
            ("a\rb", '\r', 1),
            ("\0", '\0', 0),
            ("x\u{7f}", '\u{7f}', 1),
            ("世界", '世', 0),
        ] {
            assert_eq!(
                decode_header_value(raw),
                Err(HeaderValueError::InvalidChar { ch, index }),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn sentinel_markers_are_case_sensitive_when_decoding() {
        assert_eq!(
            decode_header_value("=?BASE64?YQ==?="),
            Ok("=?BASE64?YQ==?=".to_owned())
        );
    }

    #[test]
    fn decode_rejects_bad_base64() {
        for raw in [
            "=?base64?not base64?=",
            "=?base64?YQ?=",
            "=?base64?YQ=?=",
            "=?base64?Y?=",
            "=?base64?YR==?=",
            "=?base64?-_==?=",
            "=?base64?=",
        ] {
            assert!(
                matches!(
                    decode_header_value(raw),
                    Err(HeaderValueError::InvalidBase64 { .. })
                ),
                "{raw:?}"
            );
        }
    }

    #[test]
    fn decode_rejects_payload_that_is_not_utf8() {
        // 0xFF 0xFE
        assert_eq!(
            decode_header_value("=?base64?//4=?="),
            Err(HeaderValueError::InvalidUtf8 { valid_up_to: 0 })
        );
    }

    #[test]
    fn decode_of_empty_payload_is_empty_string() {
        assert_eq!(decode_header_value("=?base64??="), Ok(String::new()));
        assert_eq!(decode_header_value(""), Ok(String::new()));
    }

    // ---- argument extraction ----

    #[test]
    fn lookup_path_follows_nested_objects() {
        let args = json!({ "target": { "tenant": "acme" }, "n": 1 });
        assert_eq!(
            lookup_path(&args, &path(&["target", "tenant"])),
            Some(&json!("acme"))
        );
        assert_eq!(lookup_path(&args, &path(&["n"])), Some(&json!(1)));
        assert_eq!(lookup_path(&args, &[]), Some(&args));
    }

    #[test]
    fn lookup_path_is_none_when_absent_or_not_an_object() {
        let args = json!({ "target": "flat", "list": [{ "id": 1 }] });
        assert_eq!(lookup_path(&args, &path(&["missing"])), None);
        assert_eq!(lookup_path(&args, &path(&["target", "tenant"])), None);
        assert_eq!(lookup_path(&args, &path(&["list", "0"])), None);
        assert_eq!(lookup_path(&json!(null), &path(&["a"])), None);
    }

    #[test]
    fn lookup_path_returns_explicit_null() {
        assert_eq!(
            lookup_path(&json!({ "a": null }), &path(&["a"])),
            Some(&Value::Null)
        );
    }

    #[test]
    fn param_header_value_follows_the_type_conversion_rules() {
        let cases = [
            (json!("us-west1"), Str, Some("us-west1")),
            (
                json!("Hello, 世界"),
                Str,
                Some("=?base64?SGVsbG8sIOS4lueVjA==?="),
            ),
            (json!(""), Str, Some("")),
            (json!(42), Int, Some("42")),
            (json!(-7), Int, Some("-7")),
            (json!(42.0), Int, Some("42")),
            (json!(-0.0), Int, Some("0")),
            (
                json!(9_007_199_254_740_991_i64),
                Int,
                Some("9007199254740991"),
            ),
            (
                json!(-9_007_199_254_740_991_i64),
                Int,
                Some("-9007199254740991"),
            ),
            (json!(true), Bool, Some("true")),
            (json!(false), Bool, Some("false")),
            (json!(null), Str, None),
            (json!(null), Int, None),
            (json!(null), Bool, None),
        ];
        for (value, kind, expected) in cases {
            assert_eq!(
                param_header_value(&value, kind),
                Ok(expected.map(str::to_owned)),
                "{value} as {kind}"
            );
        }
    }

    #[test]
    fn param_header_value_rejects_integers_outside_the_safe_range() {
        for value in [
            json!(9_007_199_254_740_992_i64),
            json!(-9_007_199_254_740_992_i64),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1e300),
            json!(9_007_199_254_740_992.0),
        ] {
            assert!(
                matches!(
                    param_header_value(&value, Int),
                    Err(ParamValueError::IntegerOutOfRange { .. })
                ),
                "{value}"
            );
        }
    }

    #[test]
    fn param_header_value_rejects_values_of_the_wrong_type() {
        let cases = [
            (json!(42.5), Int),
            (json!("42"), Int),
            (json!(1), Bool),
            (json!("true"), Bool),
            (json!(5), Str),
            (json!(["a"]), Str),
            (json!({}), Str),
        ];
        for (value, kind) in cases {
            assert!(
                matches!(param_header_value(&value, kind), Err(ParamValueError::WrongType { expected, .. }) if expected == kind),
                "{value} as {kind}"
            );
        }
    }

    // ---- server-side comparison ----

    #[test]
    fn matching_strings_are_accepted_exactly() {
        assert_eq!(
            header_matches_value("us-west1", &json!("us-west1"), Str),
            Ok(())
        );
        assert_eq!(header_matches_value("", &json!(""), Str), Ok(()));
        assert_eq!(
            header_matches_value(
                "=?base64?SGVsbG8sIOS4lueVjA==?=",
                &json!("Hello, 世界"),
                Str
            ),
            Ok(())
        );
    }

    #[test]
    fn string_comparison_is_case_sensitive() {
        assert_eq!(
            header_matches_value("US-WEST1", &json!("us-west1"), Str),
            Err(HeaderValueError::Mismatch {
                kind: Str,
                header: "US-WEST1".to_owned(),
                body: "\"us-west1\"".to_owned(),
            })
        );
    }

    #[test]
    fn plain_sentinel_look_alike_does_not_match_its_literal_body() {
        // A conforming client would have encoded it, so a plain one decodes
        // to something else.
        assert!(header_matches_value("=?base64?YQ==?=", &json!("=?base64?YQ==?="), Str).is_err());
    }

    #[test]
    fn integers_compare_numerically() {
        for (header, body) in [
            ("42", json!(42)),
            ("42", json!(42.0)),
            ("42.0", json!(42)),
            ("4.2e1", json!(42)),
            ("420E-1", json!(42)),
            ("-7", json!(-7)),
            ("0", json!(0)),
            ("-0", json!(0)),
            ("0.000", json!(-0.0)),
            ("9007199254740991", json!(9_007_199_254_740_991_i64)),
            ("-9007199254740991", json!(-9_007_199_254_740_991_i64)),
            ("=?base64?NDI=?=", json!(42)),
        ] {
            assert_eq!(
                header_matches_value(header, &body, Int),
                Ok(()),
                "{header} vs {body}"
            );
        }
    }

    #[test]
    fn different_integers_mismatch() {
        assert_eq!(
            header_matches_value("43", &json!(42), Int),
            Err(HeaderValueError::Mismatch {
                kind: Int,
                header: "43".to_owned(),
                body: "42".to_owned(),
            })
        );
        assert!(header_matches_value("-42", &json!(42), Int).is_err());
    }

    #[test]
    fn non_integer_headers_are_rejected() {
        for header in [
            "", "abc", "42.5", "+42", "042", "4 2", "0x2A", "1e", "1.", ".5", "--1", "NaN", "inf",
            "1e-1",
        ] {
            assert_eq!(
                header_matches_value(header, &json!(42), Int),
                Err(HeaderValueError::NotAnInteger {
                    header: header.to_owned()
                }),
                "{header:?}"
            );
        }
    }

    #[test]
    fn out_of_range_integer_headers_are_rejected() {
        for header in [
            "9007199254740992",
            "-9007199254740992",
            "1e16",
            "99999999999999999999",
            "1e1000000000000",
        ] {
            assert_eq!(
                header_matches_value(header, &json!(1), Int),
                Err(HeaderValueError::IntegerOutOfRange {
                    header: header.to_owned()
                }),
                "{header:?}"
            );
        }
    }

    #[test]
    fn integer_text_is_read_exactly() {
        assert_eq!(
            parse_integer_text("9007199254740991.0"),
            IntegerText::Integer(MAX_SAFE_INTEGER)
        );
        assert_eq!(
            parse_integer_text("9007199254740991.4"),
            IntegerText::NotAnInteger
        );
        assert_eq!(
            parse_integer_text("0e99999999999999999999"),
            IntegerText::Integer(0)
        );
        assert_eq!(
            parse_integer_text("1e-99999999999999999999"),
            IntegerText::NotAnInteger
        );
        assert_eq!(parse_integer_text("1.55e1"), IntegerText::NotAnInteger);
        assert_eq!(parse_integer_text("1.50e1"), IntegerText::Integer(15));
        assert_eq!(parse_integer_text("1.50e2"), IntegerText::Integer(150));
        assert_eq!(parse_integer_text("100e-2"), IntegerText::Integer(1));
        assert_eq!(parse_integer_text("1E+3"), IntegerText::Integer(1000));
    }

    #[test]
    fn out_of_range_or_fractional_body_integers_are_rejected() {
        assert!(matches!(
            header_matches_value("9007199254740992", &json!(9_007_199_254_740_992_i64), Int),
            Err(HeaderValueError::Body(
                ParamValueError::IntegerOutOfRange { .. }
            ))
        ));
        assert!(matches!(
            header_matches_value("42", &json!(42.5), Int),
            Err(HeaderValueError::Body(ParamValueError::WrongType { .. }))
        ));
    }

    #[test]
    fn booleans_match_only_lowercase() {
        assert_eq!(header_matches_value("true", &json!(true), Bool), Ok(()));
        assert_eq!(header_matches_value("false", &json!(false), Bool), Ok(()));
        assert!(matches!(
            header_matches_value("false", &json!(true), Bool),
            Err(HeaderValueError::Mismatch { .. })
        ));
        for header in ["True", "TRUE", "1", "yes", ""] {
            assert_eq!(
                header_matches_value(header, &json!(true), Bool),
                Err(HeaderValueError::NotABoolean {
                    header: header.to_owned()
                }),
                "{header:?}"
            );
        }
    }

    #[test]
    fn header_for_null_body_value_is_unexpected() {
        assert_eq!(
            header_matches_value("x", &Value::Null, Str),
            Err(HeaderValueError::UnexpectedHeader {
                header: "x".to_owned()
            })
        );
    }

    #[test]
    fn body_of_the_wrong_type_is_reported_as_such() {
        assert_eq!(
            header_matches_value("42", &json!("42"), Int),
            Err(HeaderValueError::Body(ParamValueError::WrongType {
                expected: Int,
                found: "string",
            }))
        );
    }

    #[test]
    fn undecodable_header_is_rejected_before_comparison() {
        assert!(matches!(
            header_matches_value("a\nb", &json!("a\nb"), Str),
            Err(HeaderValueError::InvalidChar { .. })
        ));
    }

    #[test]
    fn what_a_client_sends_matches_on_the_server() {
        let cases = [
            (json!("us-west1"), Str),
            (json!(" padded "), Str),
            (json!("=?base64?literal?="), Str),
            (json!(""), Str),
            (json!(42.0), Int),
            (json!(-9_007_199_254_740_991_i64), Int),
            (json!(false), Bool),
        ];
        for (value, kind) in cases {
            let sent = match param_header_value(&value, kind) {
                Ok(Some(sent)) => sent,
                other => panic!("{value}: {other:?}"),
            };
            assert_eq!(header_matches_value(&sent, &value, kind), Ok(()), "{value}");
        }
    }

    #[test]
    fn mismatch_message_says_what_differs() {
        let msg = HeaderValueError::Mismatch {
            kind: Str,
            header: "foo".to_owned(),
            body: "\"bar\"".to_owned(),
        }
        .to_string();
        assert!(
            msg.contains("\"foo\"") && msg.contains("\"bar\"") && msg.contains("does not match"),
            "{msg}"
        );
    }
}
