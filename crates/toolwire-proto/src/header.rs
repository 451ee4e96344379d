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

use std::fmt;

use serde_json::Value;

mod schema;
mod value;

pub use schema::{XMcpHeaderError, validate_x_mcp_headers};
pub use value::{
    HeaderValueError, ParamValueError, decode_header_value, encode_header_value,
    header_matches_value, lookup_path, param_header_value,
};

/// The protocol version header every Streamable HTTP request carries.
/// Spec: basic/transports/streamable-http.mdx#protocol-version-header
pub const PROTOCOL_VERSION_HEADER: &str = "MCP-Protocol-Version";

/// The header mirroring the request's `method`.
/// Spec: basic/transports/streamable-http.mdx#standard-headers
pub const METHOD_HEADER: &str = "Mcp-Method";

/// The header mirroring the tool or prompt name, or the resource URI.
/// Spec: basic/transports/streamable-http.mdx#standard-headers
pub const NAME_HEADER: &str = "Mcp-Name";

/// The session header of the initialize-based revisions' Streamable HTTP.
/// Spec (2025-11-25): basic/transports.mdx#session-management
pub const SESSION_ID_HEADER: &str = "Mcp-Session-Id";

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

/// The JSON type of a value, as named in error messages.
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

#[cfg(test)]
mod tests {
    use super::*;
    use PrimitiveKind::String as Str;

    fn path(segments: &[&str]) -> Vec<String> {
        segments.iter().map(|s| (*s).to_owned()).collect()
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
}
