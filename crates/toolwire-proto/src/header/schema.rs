//! The `x-mcp-header` schema walk: [`validate_x_mcp_headers`] and [`XMcpHeaderError`].

use std::collections::HashMap;

use serde_json::{Map, Value};

use super::{HeaderParam, PrimitiveKind, X_MCP_HEADER, json_type_name};

/// How many JSON Pointer segments deep the schema walk goes before it gives
/// up, so that a hostile, programmatically built schema cannot overflow the
/// stack.
const MAX_SCHEMA_DEPTH: usize = 256;

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
        // A nullable primitive (`["string", "null"]`) is still a primitive
        // parameter: a `null` value just has no header.
        // Spec: basic/transports/streamable-http.mdx#value-encoding — "Parameter
        // value is `null`: Client MUST omit the header".
        let ty = match schema.get("type") {
            Some(Value::Array(types))
                if types.len() == 2 && types.contains(&Value::from("null")) =>
            {
                types.iter().find(|t| *t != "null")
            }
            other => other,
        };
        let kind = match ty {
            Some(Value::String(ty)) if ty == "string" => PrimitiveKind::String,
            Some(Value::String(ty)) if ty == "integer" => PrimitiveKind::Integer,
            Some(Value::String(ty)) if ty == "boolean" => PrimitiveKind::Boolean,
            _ => {
                let other = schema.get("type");
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

#[cfg(test)]
mod tests;
