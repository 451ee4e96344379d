//! Unit tests of compiled schemas: bounds, dialects, which engine a schema
//! runs on, and the built-in validator against jsonschema.

mod builtin;
mod differential;
mod props;

use super::*;
use serde_json::json;

/// Compiles `schema` with the default engine choice, which must be the
/// built-in validator, and with jsonschema alone.
fn engines(schema: &Value) -> (CompiledSchema, CompiledSchema) {
    let builtin = CompiledSchema::compile(schema)
        .unwrap_or_else(|e| panic!("{schema} does not compile: {e}"));
    assert_eq!(builtin.engine(), EngineKind::Builtin, "{schema}");
    let reference = CompiledSchema::compile_with_jsonschema(schema)
        .unwrap_or_else(|e| panic!("jsonschema refuses {schema}: {e}"));
    (builtin, reference)
}

/// Asserts both engines give `check` the same answer, and returns it.
fn same(
    (builtin, reference): &(CompiledSchema, CompiledSchema),
    schema: &Value,
    instance: &Value,
) -> Result<(), String> {
    let got = builtin.check(instance);
    let want = reference.check(instance);
    assert_eq!(
        got, want,
        "built-in and jsonschema disagree\nschema:   {schema}\ninstance: {instance}"
    );
    got
}

/// [`same`] for one instance.
fn check_both(schema: &Value, instance: &Value) -> Result<(), String> {
    same(&engines(schema), schema, instance)
}

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

#[test]
fn serde_json_is_built_as_the_builtin_assumes() {
    // Sorted maps (no `preserve_order`): the built-in walks members in the
    // order jsonschema does, and finds duplicates by sorting.
    let v: Value = serde_json::from_str(r#"{"b": 1, "a": 2, "c": 3}"#).expect("json");
    let keys: Vec<&String> = v.as_object().expect("object").keys().collect();
    assert_eq!(keys, ["a", "b", "c"]);
    // No `arbitrary_precision`: every number is a u64, i64 or finite f64.
    assert!(serde_json::from_str::<Value>("1e400").is_err());
    let n: Value = serde_json::from_str("18446744073709551616").expect("json");
    assert!(n.is_f64());
    assert!(simple::plain_serde_json());
}

#[test]
fn subset_schemas_run_on_the_builtin() {
    for schema in [
        json!({}),
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "title": "T", "description": "d", "$comment": "c", "default": {}, "examples": [{}],
            "deprecated": false, "readOnly": false, "writeOnly": false,
            "type": "object",
            "properties": {
                "a": {"type": ["integer", "null"], "format": "int32", "minimum": -5, "maximum": 5,
                      "exclusiveMinimum": -6, "exclusiveMaximum": 6.5, "multipleOf": 2},
                "b": {"type": "string", "format": "email", "minLength": 1, "maxLength": 3,
                      "enum": ["x", "y"], "const": "x"},
                "c": {"type": "array", "items": {"type": "boolean"}, "minItems": 1,
                      "maxItems": 2, "uniqueItems": true},
                "d": {"type": "object", "additionalProperties": {"type": "number"},
                      "minProperties": 1, "maxProperties": 2},
                "e": true,
                "f": false
            },
            "required": ["a"],
            "additionalProperties": false
        }),
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"a": {"type": "array", "items": {"const": 1}}},
            "additionalProperties": {"type": "string"}
        }),
    ] {
        let s = CompiledSchema::compile(&schema).expect("compiles");
        assert_eq!(s.engine(), EngineKind::Builtin, "{schema}");
    }
}

#[test]
fn schemas_outside_the_subset_fall_back_to_jsonschema() {
    let d7 = "http://json-schema.org/draft-07/schema#";
    for schema in [
        json!({"$ref": "#/$defs/a", "$defs": {"a": {"type": "string"}}}),
        json!({"$schema": d7, "definitions": {"a": {}}, "properties": {"p": {"$ref": "#/definitions/a"}}}),
        json!({"$id": "https://example.com/s", "type": "object"}),
        json!({"type": "string", "pattern": "^a"}),
        json!({"type": "object", "patternProperties": {"^a": {}}}),
        json!({"anyOf": [{"type": "string"}, {"type": "null"}]}),
        json!({"oneOf": [{"type": "string"}]}),
        json!({"allOf": [{"type": "string"}]}),
        json!({"not": {"type": "string"}}),
        json!({"if": {"type": "string"}, "then": {"minLength": 1}}),
        json!({"type": "array", "prefixItems": [{"type": "string"}]}),
        json!({"type": "array", "contains": {"type": "string"}}),
        json!({"type": "object", "propertyNames": {"maxLength": 3}}),
        json!({"type": "object", "dependentRequired": {"a": ["b"]}}),
        json!({"type": "object", "dependentSchemas": {"a": {}}}),
        json!({"type": "object", "unevaluatedProperties": false}),
        json!({"type": "array", "unevaluatedItems": false}),
        json!({"type": "string", "contentMediaType": "application/json"}),
        // draft-07 asserts `format` by default.
        json!({"$schema": d7, "type": "string", "format": "email"}),
        // draft-07 tuple `items`.
        json!({"$schema": d7, "type": "array", "items": [{"type": "string"}]}),
        // `$schema` below the root.
        json!({"properties": {"a": {"$schema": "https://json-schema.org/draft/2020-12/schema"}}}),
        // Unknown keywords (jsonschema ignores them; falling back is always safe).
        json!({"type": "string", "x-kind": "name"}),
        json!({"type": "string", "nullable": true}),
        // Valid, but printed or judged in ways the built-in does not copy.
        json!({"type": "string", "minLength": 2.0}),
        json!({"type": "number", "multipleOf": 0.5}),
        json!({"type": "number", "multipleOf": 9007199254740994u64}),
        json!({"enum": []}),
        json!({"type": "integer", "maximum": 10, "properties": {"a": {"x-unknown": 1}}}),
    ] {
        let s = CompiledSchema::compile(&schema)
            .unwrap_or_else(|e| panic!("{schema} does not compile: {e}"));
        assert_eq!(s.engine(), EngineKind::Jsonschema, "{schema}");
    }
}

#[test]
fn malformed_keywords_are_reported_by_jsonschema() {
    for schema in [
        json!({"type": "strnig"}),
        json!({"type": 5}),
        json!({"type": []}),
        json!({"type": ["string", "string"]}),
        json!({"type": ["string", 5]}),
        json!({"required": 5}),
        json!({"required": [5]}),
        json!({"required": ["a", "a"]}),
        json!({"minimum": "x"}),
        json!({"exclusiveMaximum": true}),
        json!({"minLength": -1}),
        json!({"maxItems": "3"}),
        json!({"minProperties": 1.5}),
        json!({"multipleOf": 0}),
        json!({"multipleOf": -2}),
        json!({"enum": 5}),
        json!({"uniqueItems": "yes"}),
        json!({"properties": []}),
        json!({"properties": {"a": 5}}),
        json!({"additionalProperties": 5}),
        json!({"items": 3}),
        json!({"format": 5}),
        json!({"title": 5}),
        json!({"description": ["x"]}),
        json!({"$comment": 1}),
        json!({"examples": 5}),
        json!({"deprecated": "yes"}),
        json!({"readOnly": 1}),
        json!({"properties": {"a": {"type": "strnig"}}}),
        json!({"items": {"required": [1]}}),
        json!({"additionalProperties": {"minimum": "0"}}),
    ] {
        let err = CompiledSchema::compile(&schema).expect_err(&schema.to_string());
        assert!(matches!(err, SchemaError::Invalid(_)), "{schema}: {err:?}");
    }
}

#[test]
fn schemars_nested_structs_use_refs_and_fall_back() {
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Inner {
        x: i32,
    }
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Outer {
        inner: Inner,
    }
    let schema = schemars::schema_for!(Outer).to_value();
    let s = CompiledSchema::compile(&schema).expect("compiles");
    assert_eq!(s.engine(), EngineKind::Jsonschema, "{schema}");
}
