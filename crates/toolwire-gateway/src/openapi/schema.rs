//! An OpenAPI schema turned into a self-contained JSON Schema for a tool:
//! local `$ref`s inlined (a schema that refers back to itself is cut off
//! after a few levels, and the whole is bounded in size), OpenAPI 3.0's
//! dialect (`nullable`, boolean `exclusiveMinimum`) rewritten as JSON
//! Schema 2020-12, and what JSON Schema does not know (`example`, `xml`,
//! `discriminator`, `x-…`) left out. A request's schema drops `readOnly`
//! properties, a response's `writeOnly` ones.

use serde_json::{Map, Value};

/// How many `$ref`s deep a schema is inlined: a recursive schema (a tree
/// node holding nodes) stops here and accepts anything below.
const MAX_REF_DEPTH: usize = 6;
/// The most JSON values one tool's schema may hold once inlined: a
/// document whose schemas refer to one another many times over cannot
/// make a tool list grow without bound.
const MAX_NODES: usize = 20_000;

/// Which way the schema's data travels.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Direction {
    Request,
    Response,
}

/// Inlines schemas of one document.
pub(crate) struct Resolver<'a> {
    root: &'a Value,
    /// OpenAPI 3.0 (its own schema dialect) rather than 3.1.
    v30: bool,
}

impl<'a> Resolver<'a> {
    pub(crate) fn new(root: &'a Value) -> Self {
        let v30 = root
            .get("openapi")
            .and_then(Value::as_str)
            .is_some_and(|v| v.starts_with("3.0"));
        Self { root, v30 }
    }

    /// The object a local `$ref` points to (`#/components/...`), for
    /// parameters, request bodies and responses as well as schemas.
    pub(crate) fn deref<'v>(&'v self, value: &'v Value) -> &'v Value {
        let mut value = value;
        for _ in 0..MAX_REF_DEPTH {
            match value.get("$ref").and_then(Value::as_str) {
                Some(r) => match self.pointer(r) {
                    Some(v) => value = v,
                    None => return value,
                },
                None => return value,
            }
        }
        value
    }

    fn pointer(&self, reference: &str) -> Option<&'a Value> {
        let pointer = reference.strip_prefix('#')?;
        self.root.pointer(&percent_decode(pointer))
    }

    /// `schema` self-contained, for data going `direction`.
    pub(crate) fn schema(&self, schema: &Value, direction: Direction) -> Value {
        let mut walk = Walk {
            resolver: self,
            direction,
            stack: Vec::new(),
            nodes: MAX_NODES,
        };
        walk.schema(schema)
    }
}

struct Walk<'r, 'a> {
    resolver: &'r Resolver<'a>,
    direction: Direction,
    /// The `$ref`s being inlined, outermost first.
    stack: Vec<String>,
    /// Values left in the budget.
    nodes: usize,
}

/// Keywords whose value is a map of schemas.
const SCHEMA_MAPS: &[&str] = &[
    "properties",
    "patternProperties",
    "dependentSchemas",
    "$defs",
    "definitions",
];
/// Keywords whose value is a list of schemas.
const SCHEMA_LISTS: &[&str] = &["allOf", "anyOf", "oneOf", "prefixItems"];
/// Keywords whose value is one schema.
const SCHEMA_ONES: &[&str] = &[
    "items",
    "additionalProperties",
    "not",
    "contains",
    "if",
    "then",
    "else",
    "propertyNames",
    "unevaluatedProperties",
    "unevaluatedItems",
    "additionalItems",
];
/// OpenAPI's own keywords, which JSON Schema does not know.
const DROPPED: &[&str] = &[
    "example",
    "xml",
    "externalDocs",
    "discriminator",
    "nullable",
];

impl Walk<'_, '_> {
    fn schema(&mut self, schema: &Value) -> Value {
        if self.nodes == 0 {
            return Value::Object(Map::new());
        }
        self.nodes -= 1;
        let Value::Object(map) = schema else {
            // `true`, `false`, or something malformed: kept as is.
            return schema.clone();
        };
        if let Some(reference) = map.get("$ref").and_then(Value::as_str) {
            return self.reference(reference, map);
        }
        let mut out = Map::new();
        for (key, value) in map {
            if DROPPED.contains(&key.as_str()) || key.starts_with("x-") {
                continue;
            }
            let value = if SCHEMA_MAPS.contains(&key.as_str()) {
                match value {
                    Value::Object(m) => {
                        Value::Object(m.iter().map(|(k, v)| (k.clone(), self.schema(v))).collect())
                    }
                    other => other.clone(),
                }
            } else if SCHEMA_LISTS.contains(&key.as_str()) {
                match value {
                    Value::Array(l) => Value::Array(l.iter().map(|v| self.schema(v)).collect()),
                    other => other.clone(),
                }
            } else if SCHEMA_ONES.contains(&key.as_str()) {
                self.schema(value)
            } else {
                value.clone()
            };
            out.insert(key.clone(), value);
        }
        if self.resolver.v30 {
            dialect_30(map, &mut out);
        }
        self.one_way(&mut out);
        Value::Object(out)
    }

    /// A `$ref`, inlined unless it is not local, repeats itself or is too
    /// deep. Its siblings (3.1 allows a `description` beside it) are laid
    /// over what it points to.
    fn reference(&mut self, reference: &str, map: &Map<String, Value>) -> Value {
        let target = self.resolver.pointer(reference);
        let mut out = match target {
            Some(target)
                if !self.stack.iter().any(|r| r == reference)
                    && self.stack.len() < MAX_REF_DEPTH =>
            {
                self.stack.push(reference.to_owned());
                let inlined = self.schema(target);
                self.stack.pop();
                match inlined {
                    Value::Object(m) => m,
                    other => return other,
                }
            }
            Some(_) => {
                let mut m = Map::new();
                m.insert(
                    "description".into(),
                    Value::String(format!(
                        "{} again (nested too deep to spell out)",
                        name_of(reference)
                    )),
                );
                m
            }
            None => {
                tracing::warn!(
                    "OpenAPI $ref {reference:?} is not in the document; accepting anything there"
                );
                Map::new()
            }
        };
        for (key, value) in map {
            if key != "$ref" && !DROPPED.contains(&key.as_str()) && !key.starts_with("x-") {
                out.insert(key.clone(), value.clone());
            }
        }
        Value::Object(out)
    }

    /// Leaves out the properties that do not travel this way.
    fn one_way(&self, out: &mut Map<String, Value>) {
        let hidden = match self.direction {
            Direction::Request => "readOnly",
            Direction::Response => "writeOnly",
        };
        let Some(Value::Object(props)) = out.get_mut("properties") else {
            return;
        };
        let gone: Vec<String> = props
            .iter()
            .filter(|(_, s)| s.get(hidden) == Some(&Value::Bool(true)))
            .map(|(k, _)| k.clone())
            .collect();
        if gone.is_empty() {
            return;
        }
        for k in &gone {
            props.remove(k);
        }
        if let Some(Value::Array(required)) = out.get_mut("required") {
            required.retain(|r| !r.as_str().is_some_and(|r| gone.iter().any(|g| g == r)));
        }
    }
}

/// OpenAPI 3.0's differences from JSON Schema: `nullable: true` is a
/// `"null"` type (and a `null` in an `enum`); `exclusiveMinimum: true`
/// makes `minimum` exclusive.
fn dialect_30(source: &Map<String, Value>, out: &mut Map<String, Value>) {
    if source.get("nullable") == Some(&Value::Bool(true)) {
        match out.get_mut("type") {
            Some(Value::String(t)) => {
                let t = std::mem::take(t);
                out.insert("type".into(), serde_json::json!([t, "null"]));
            }
            Some(Value::Array(types)) if !types.iter().any(|t| t == "null") => {
                types.push(Value::from("null"));
            }
            _ => {}
        }
        if let Some(Value::Array(values)) = out.get_mut("enum")
            && !values.contains(&Value::Null)
        {
            values.push(Value::Null);
        }
    }
    for (flag, bound) in [
        ("exclusiveMinimum", "minimum"),
        ("exclusiveMaximum", "maximum"),
    ] {
        match out.get(flag) {
            Some(Value::Bool(true)) => {
                if let Some(limit) = out.remove(bound) {
                    out.insert(flag.into(), limit);
                } else {
                    out.remove(flag);
                }
            }
            Some(Value::Bool(false)) => {
                out.remove(flag);
            }
            _ => {}
        }
    }
}

/// The last segment of a `$ref`, for a description.
fn name_of(reference: &str) -> &str {
    reference.rsplit('/').next().unwrap_or(reference)
}

/// `%XX` escapes of a URI fragment decoded (JSON pointers in `$ref`s may
/// carry them).
fn percent_decode(s: &str) -> String {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'%'
            && let Some(hex) = s.get(i + 1..i + 3)
            && let Ok(b) = u8::from_str_radix(hex, 16)
        {
            out.push(b);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn local_refs_are_inlined_and_siblings_laid_over() {
        let doc = json!({"openapi": "3.1.0", "components": {"schemas": {
            "Pet": {"type": "object", "properties": {"name": {"type": "string"}, "tag": {"$ref": "#/components/schemas/Tag"}}},
            "Tag": {"type": "string", "x-internal": true, "example": "dog"}
        }}});
        let r = Resolver::new(&doc);
        let s = r.schema(
            &json!({"$ref": "#/components/schemas/Pet", "description": "a pet"}),
            Direction::Request,
        );
        assert_eq!(
            s,
            json!({"type": "object", "description": "a pet", "properties": {"name": {"type": "string"}, "tag": {"type": "string"}}})
        );
    }

    #[test]
    fn a_recursive_schema_is_cut_off_and_a_missing_ref_accepts_anything() {
        let doc = json!({"openapi": "3.1.0", "components": {"schemas": {
            "Node": {"type": "object", "properties": {"children": {"type": "array", "items": {"$ref": "#/components/schemas/Node"}}}}
        }}});
        let r = Resolver::new(&doc);
        let s = r.schema(
            &json!({"$ref": "#/components/schemas/Node"}),
            Direction::Response,
        );
        let inner = &s["properties"]["children"]["items"];
        assert!(
            inner["description"]
                .as_str()
                .unwrap()
                .contains("Node again"),
            "{s}"
        );
        assert!(inner.get("properties").is_none());
        let s = r.schema(
            &json!({"$ref": "#/components/schemas/Nope"}),
            Direction::Response,
        );
        assert_eq!(s, json!({}));
    }

    #[test]
    fn refs_that_multiply_stay_within_the_budget() {
        // Each level refers to the one below twice: 2^30 copies if inlined
        // naively.
        let mut schemas = Map::new();
        for i in 0..30 {
            schemas.insert(
                format!("L{i}"),
                json!({"type": "object", "properties": {
                    "a": {"$ref": format!("#/components/schemas/L{}", i + 1)},
                    "b": {"$ref": format!("#/components/schemas/L{}", i + 1)}
                }}),
            );
        }
        schemas.insert("L30".into(), json!({"type": "string"}));
        let doc = json!({"openapi": "3.1.0", "components": {"schemas": schemas}});
        let r = Resolver::new(&doc);
        let s = r.schema(
            &json!({"$ref": "#/components/schemas/L0"}),
            Direction::Request,
        );
        let size = serde_json::to_string(&s).unwrap().len();
        assert!(size < 2_000_000, "{size} bytes");
    }

    #[test]
    fn openapi_30_nullable_and_exclusive_bounds_become_json_schema() {
        let doc = json!({"openapi": "3.0.3"});
        let r = Resolver::new(&doc);
        let s = r.schema(
            &json!({"type": "integer", "nullable": true, "minimum": 0, "exclusiveMinimum": true, "maximum": 9, "exclusiveMaximum": false}),
            Direction::Request,
        );
        assert_eq!(
            s,
            json!({"type": ["integer", "null"], "exclusiveMinimum": 0, "maximum": 9})
        );
        let s = r.schema(
            &json!({"type": "string", "enum": ["a"], "nullable": true}),
            Direction::Request,
        );
        assert_eq!(s, json!({"type": ["string", "null"], "enum": ["a", null]}));
    }

    #[test]
    fn read_only_properties_leave_requests_and_write_only_ones_responses() {
        let doc = json!({"openapi": "3.1.0"});
        let r = Resolver::new(&doc);
        let s = json!({"type": "object", "required": ["id", "password", "name"], "properties": {
            "id": {"type": "integer", "readOnly": true},
            "password": {"type": "string", "writeOnly": true},
            "name": {"type": "string"}
        }});
        let req = r.schema(&s, Direction::Request);
        assert_eq!(req["required"], json!(["password", "name"]));
        assert!(req["properties"].get("id").is_none());
        let res = r.schema(&s, Direction::Response);
        assert_eq!(res["required"], json!(["id", "name"]));
        assert!(res["properties"].get("password").is_none());
    }
}
