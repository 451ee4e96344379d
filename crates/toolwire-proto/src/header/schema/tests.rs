//! Unit tests of the `x-mcp-header` schema rules.

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
        (Some(json!(["string"])), "[\"string\"]"),
        (
            Some(json!(["string", "integer"])),
            "[\"string\",\"integer\"]",
        ),
        (Some(json!(["number", "null"])), "[\"number\",\"null\"]"),
        (Some(json!(["null", "null"])), "[\"null\",\"null\"]"),
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
fn nullable_primitives_are_accepted() {
    for (ty, kind) in [
        (json!(["string", "null"]), PrimitiveKind::String),
        (json!(["null", "integer"]), PrimitiveKind::Integer),
        (json!(["boolean", "null"]), PrimitiveKind::Boolean),
    ] {
        let params =
            validate_x_mcp_headers(&one_property(json!({"type": ty, "x-mcp-header": "H"})))
                .expect("a nullable primitive is allowed");
        assert_eq!(params.len(), 1);
        assert_eq!(params[0].kind, kind);
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
