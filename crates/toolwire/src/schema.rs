//! JSON Schema handling: dialect selection, bounds, and compiled validators.
//!
//! Spec: basic/index.mdx#json-schema-usage — schemas without `$schema` are
//! 2020-12; draft-07 is honoured when declared; other dialects are refused
//! when a tool is registered. A `$ref` is never fetched over the network.

use jsonschema::{Draft, Retrieve, Uri, Validator};
use serde_json::Value;
use std::fmt::Write as _;

/// Largest schema accepted, in bytes of compact JSON.
pub(crate) const MAX_SCHEMA_BYTES: usize = 256 * 1024;
/// Deepest schema accepted, in nested arrays and objects.
pub(crate) const MAX_SCHEMA_DEPTH: usize = 64;
/// At most this many validation errors are reported back to the model.
const MAX_REPORTED_ERRORS: usize = 8;

/// Why a schema could not be used.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum SchemaError {
    /// The schema is not a JSON object.
    #[error("schema must be a JSON object")]
    NotAnObject,
    /// `$schema` names a dialect other than 2020-12 or draft-07.
    #[error("unsupported JSON Schema dialect {0:?}: use 2020-12 (the default) or draft-07")]
    UnsupportedDialect(String),
    /// The schema is larger than [`MAX_SCHEMA_BYTES`].
    #[error("schema is {0} bytes, more than the limit of {MAX_SCHEMA_BYTES}")]
    TooLarge(usize),
    /// The schema nests deeper than [`MAX_SCHEMA_DEPTH`].
    #[error("schema nests deeper than {MAX_SCHEMA_DEPTH} levels")]
    TooDeep,
    /// The schema does not compile (invalid keyword values, unresolvable `$ref`, ...).
    #[error("invalid schema: {0}")]
    Invalid(String),
}

/// Refuses every external reference: schemas are resolved only against themselves.
struct NoRemoteRefs;

impl Retrieve for NoRemoteRefs {
    fn retrieve(
        &self,
        uri: &Uri<String>,
    ) -> Result<Value, Box<dyn std::error::Error + Send + Sync>> {
        Err(format!("external $ref {uri} is never fetched").into())
    }
}

fn depth(v: &Value) -> usize {
    // Iterative, so a hostile schema cannot exhaust the stack here.
    let mut max = 0;
    let mut stack = vec![(v, 1usize)];
    while let Some((v, d)) = stack.pop() {
        max = max.max(d);
        if d > MAX_SCHEMA_DEPTH {
            return d;
        }
        match v {
            Value::Array(a) => stack.extend(a.iter().map(|c| (c, d + 1))),
            Value::Object(o) => stack.extend(o.values().map(|c| (c, d + 1))),
            _ => {}
        }
    }
    max
}

fn dialect(schema: &serde_json::Map<String, Value>) -> Result<Draft, SchemaError> {
    let Some(uri) = schema.get("$schema") else {
        return Ok(Draft::Draft202012);
    };
    let Some(uri) = uri.as_str() else {
        return Err(SchemaError::UnsupportedDialect(uri.to_string()));
    };
    let bare = uri.trim_end_matches('#');
    let bare = bare
        .strip_prefix("https://")
        .or_else(|| bare.strip_prefix("http://"))
        .unwrap_or(bare);
    match bare {
        "json-schema.org/draft/2020-12/schema" => Ok(Draft::Draft202012),
        "json-schema.org/draft-07/schema" => Ok(Draft::Draft7),
        _ => Err(SchemaError::UnsupportedDialect(uri.to_owned())),
    }
}

/// A schema compiled once, used for every call.
pub(crate) struct CompiledSchema {
    validator: Validator,
}

impl std::fmt::Debug for CompiledSchema {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("CompiledSchema")
    }
}

impl CompiledSchema {
    /// Checks bounds and dialect, then compiles `schema`.
    pub(crate) fn compile(schema: &Value) -> Result<Self, SchemaError> {
        let obj = schema.as_object().ok_or(SchemaError::NotAnObject)?;
        let size = serde_json::to_vec(schema)
            .map(|v| v.len())
            .unwrap_or(usize::MAX);
        if size > MAX_SCHEMA_BYTES {
            return Err(SchemaError::TooLarge(size));
        }
        if depth(schema) > MAX_SCHEMA_DEPTH {
            return Err(SchemaError::TooDeep);
        }
        let draft = dialect(obj)?;
        let validator = jsonschema::options()
            .with_draft(draft)
            .with_retriever(NoRemoteRefs)
            .build(schema)
            .map_err(|e| SchemaError::Invalid(e.to_string()))?;
        Ok(Self { validator })
    }

    /// `Ok` when `instance` is valid; otherwise a description of what is wrong,
    /// written for the model that produced the instance.
    pub(crate) fn check(&self, instance: &Value) -> Result<(), String> {
        if self.validator.is_valid(instance) {
            return Ok(());
        }
        let mut out = String::new();
        for (i, e) in self.validator.iter_errors(instance).enumerate() {
            if i == MAX_REPORTED_ERRORS {
                out.push_str("\n- (more errors omitted)");
                break;
            }
            let path = e.instance_path().to_string();
            let at = if path.is_empty() {
                "(root)"
            } else {
                path.as_str()
            };
            let _ = write!(out, "\n- at {at}: {e}");
        }
        Err(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn defaults_to_2020_12() {
        // `prefixItems` exists only in 2020-12.
        let s = CompiledSchema::compile(&json!({
            "type": "array", "prefixItems": [{"type": "string"}], "items": false
        }))
        .expect("ok");
        assert!(s.check(&json!(["a"])).is_ok());
        assert!(s.check(&json!(["a", 1])).is_err());
    }

    #[test]
    fn draft_07_is_honoured() {
        // In draft-07 `items` as an array is tuple validation; in 2020-12 it is not allowed.
        let schema = json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "array",
            "items": [{"type": "string"}],
            "additionalItems": false
        });
        let s = CompiledSchema::compile(&schema).expect("draft-07 compiles");
        assert!(s.check(&json!(["a"])).is_ok());
        assert!(s.check(&json!(["a", 1])).is_err());
    }

    #[test]
    fn unknown_dialect_is_refused() {
        let err =
            CompiledSchema::compile(&json!({"$schema": "http://json-schema.org/draft-04/schema#"}))
                .unwrap_err();
        assert!(matches!(err, SchemaError::UnsupportedDialect(_)));
    }

    #[test]
    fn non_object_is_refused() {
        assert_eq!(
            CompiledSchema::compile(&json!(null)).unwrap_err(),
            SchemaError::NotAnObject
        );
        assert_eq!(
            CompiledSchema::compile(&json!(true)).unwrap_err(),
            SchemaError::NotAnObject
        );
    }

    #[test]
    fn network_ref_is_never_fetched() {
        let schema = json!({
            "type": "object",
            "properties": {"p": {"$ref": "http://127.0.0.1:9/never.json"}}
        });
        let err = CompiledSchema::compile(&schema).unwrap_err();
        assert!(matches!(err, SchemaError::Invalid(_)), "{err:?}");
    }

    #[test]
    fn local_ref_resolves() {
        let schema = json!({
            "type": "object",
            "$defs": {"n": {"type": "integer"}},
            "properties": {"p": {"$ref": "#/$defs/n"}}
        });
        let s = CompiledSchema::compile(&schema).expect("ok");
        assert!(s.check(&json!({"p": 1})).is_ok());
        assert!(s.check(&json!({"p": "x"})).is_err());
    }

    #[test]
    fn deep_schema_is_refused() {
        let mut v = json!({"type": "object"});
        for _ in 0..100 {
            v = json!({"type": "object", "properties": {"x": v}});
        }
        assert_eq!(
            CompiledSchema::compile(&v).unwrap_err(),
            SchemaError::TooDeep
        );
    }

    #[test]
    fn huge_schema_is_refused() {
        let big = "x".repeat(MAX_SCHEMA_BYTES);
        let err = CompiledSchema::compile(&json!({"description": big})).unwrap_err();
        assert!(matches!(err, SchemaError::TooLarge(_)));
    }

    #[test]
    fn errors_name_the_path() {
        let s = CompiledSchema::compile(&json!({
            "type":"object","properties":{"a":{"type":"number"}},"required":["a"]
        }))
        .expect("ok");
        let msg = s.check(&json!({"a": "x"})).unwrap_err();
        assert!(msg.contains("/a"), "{msg}");
        let msg = s.check(&json!({})).unwrap_err();
        assert!(msg.contains("\"a\""), "{msg}");
    }
}
