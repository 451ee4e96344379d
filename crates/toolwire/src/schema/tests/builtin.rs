//! The built-in validator keyword by keyword: each test states the exact
//! report and also checks that jsonschema gives the same one.

use super::check_both;
use serde_json::{Value, json};

fn ok(schema: Value, instance: Value) {
    assert_eq!(check_both(&schema, &instance), Ok(()), "{instance}");
}

fn fails(schema: Value, instance: Value, report: &str) {
    assert_eq!(
        check_both(&schema, &instance),
        Err(report.to_owned()),
        "{instance}"
    );
}

#[test]
fn type_names_the_expected_type() {
    fails(
        json!({"type": "string"}),
        json!(1),
        "\n- at (root): 1 is not of type \"string\"",
    );
    fails(
        json!({"type": "object"}),
        json!([]),
        "\n- at (root): [] is not of type \"object\"",
    );
    fails(
        json!({"type": "null"}),
        json!(false),
        "\n- at (root): false is not of type \"null\"",
    );
    ok(json!({"type": "boolean"}), json!(true));
    ok(json!({"type": "array"}), json!([1]));
}

#[test]
fn type_lists_name_types_in_jsonschema_order() {
    fails(
        json!({"type": ["string", "null"]}),
        json!(1),
        "\n- at (root): 1 is not of types \"null\", \"string\"",
    );
    fails(
        json!({"type": ["object", "array", "boolean"]}),
        json!("x"),
        "\n- at (root): \"x\" is not of types \"boolean\", \"array\", \"object\"",
    );
    // A one-name list reads as the name.
    fails(
        json!({"type": ["integer"]}),
        json!("x"),
        "\n- at (root): \"x\" is not of type \"integer\"",
    );
    ok(json!({"type": ["string", "null"]}), json!(null));
}

#[test]
fn integer_accepts_whole_floats() {
    for whole in [
        json!(1.0),
        json!(-0.0),
        json!(1e20),
        json!(-1e300),
        json!(u64::MAX),
        json!(i64::MIN),
    ] {
        ok(json!({"type": "integer"}), whole);
    }
    fails(
        json!({"type": "integer"}),
        json!(1.5),
        "\n- at (root): 1.5 is not of type \"integer\"",
    );
    fails(
        json!({"type": ["integer", "string"]}),
        json!(0.1),
        "\n- at (root): 0.1 is not of types \"integer\", \"string\"",
    );
    ok(json!({"type": ["integer", "number"]}), json!(0.1));
    ok(json!({"type": "number"}), json!(7));
}

#[test]
fn const_compares_by_json_value() {
    ok(json!({"const": 1}), json!(1.0));
    ok(json!({"const": {"a": [1, 2.5]}}), json!({"a": [1.0, 2.5]}));
    fails(
        json!({"const": 1}),
        json!(2),
        "\n- at (root): 1 was expected",
    );
    fails(
        json!({"const": {"a": "é"}}),
        json!({"a": "e"}),
        "\n- at (root): {\"a\":\"é\"} was expected",
    );
    fails(
        json!({"const": 9007199254740993u64}),
        json!(9007199254740992.0),
        "\n- at (root): 9007199254740993 was expected",
    );
    fails(
        json!({"const": [1]}),
        json!([1, 1]),
        "\n- at (root): [1] was expected",
    );
}

#[test]
fn enum_spells_out_three_options_at_most() {
    fails(
        json!({"enum": ["a"]}),
        json!("x"),
        "\n- at (root): \"x\" is not one of \"a\"",
    );
    fails(
        json!({"enum": ["a", null]}),
        json!("x"),
        "\n- at (root): \"x\" is not one of \"a\" or null",
    );
    fails(
        json!({"enum": ["a", "b", "c"]}),
        json!(1),
        "\n- at (root): 1 is not one of \"a\", \"b\" or \"c\"",
    );
    fails(
        json!({"enum": ["a", "b", "c", "d", "e"]}),
        json!("x"),
        "\n- at (root): \"x\" is not one of \"a\", \"b\" or 3 other candidates",
    );
    ok(json!({"enum": [1, "b", [2]]}), json!(1.0));
    ok(json!({"enum": [1, "b", [2]]}), json!([2.0]));
}

#[test]
fn numeric_bounds_compare_exactly() {
    ok(json!({"minimum": 1}), json!(1.0));
    ok(json!({"minimum": 1}), json!("not a number"));
    fails(
        json!({"minimum": 9007199254740993u64}),
        json!(9007199254740992.0),
        "\n- at (root): 9007199254740992.0 is less than the minimum of 9007199254740993",
    );
    fails(
        json!({"maximum": 1.5}),
        json!(2),
        "\n- at (root): 2 is greater than the maximum of 1.5",
    );
    fails(
        json!({"exclusiveMinimum": -1}),
        json!(-1.0),
        "\n- at (root): -1.0 is less than or equal to the minimum of -1",
    );
    fails(
        json!({"exclusiveMaximum": 0}),
        json!(-0.0),
        "\n- at (root): -0.0 is greater than or equal to the maximum of 0",
    );
    fails(
        json!({"maximum": -9223372036854775808i64}),
        json!(18446744073709551615u64),
        "\n- at (root): 18446744073709551615 is greater than the maximum of -9223372036854775808",
    );
    fails(
        json!({"minimum": 0, "maximum": 10, "exclusiveMinimum": 0, "exclusiveMaximum": 10}),
        json!(0),
        "\n- at (root): 0 is less than or equal to the minimum of 0",
    );
}

#[test]
fn multiple_of_whole_divisors() {
    ok(json!({"multipleOf": 3}), json!(9));
    ok(json!({"multipleOf": 3}), json!(-9));
    ok(json!({"multipleOf": 3}), json!(9.0));
    ok(json!({"multipleOf": 4}), json!(1e20));
    fails(
        json!({"multipleOf": 3}),
        json!(10),
        "\n- at (root): 10 is not a multiple of 3",
    );
    fails(
        json!({"multipleOf": 2}),
        json!(2.5),
        "\n- at (root): 2.5 is not a multiple of 2",
    );
    fails(
        json!({"multipleOf": 3}),
        json!(1e20),
        "\n- at (root): 1e+20 is not a multiple of 3",
    );
    // Past 2^53 a float is judged on its shortest decimal text.
    for f in [
        9007199254740994.0,
        18014398509481988.0,
        9999999999999998.0,
        1.2345678901234568e17,
    ] {
        for m in [3u64, 4, 7, 1 << 20, 9007199254740992] {
            let _ = check_both(&json!({"multipleOf": m}), &json!(f));
        }
    }
}

#[test]
fn lengths_count_code_points() {
    ok(json!({"minLength": 2}), json!("🎉🎉"));
    ok(json!({"maxLength": 2}), json!("日本"));
    ok(json!({"minLength": 2}), json!(12));
    fails(
        json!({"minLength": 2}),
        json!("é"),
        "\n- at (root): \"é\" is shorter than 2 characters",
    );
    fails(
        json!({"maxLength": 1}),
        json!("ab"),
        "\n- at (root): \"ab\" is longer than 1 character",
    );
    fails(
        json!({"minLength": 1}),
        json!(""),
        "\n- at (root): \"\" is shorter than 1 character",
    );
    // Both bounds can fail at once.
    fails(
        json!({"minLength": 3, "maxLength": 1}),
        json!("ab"),
        "\n- at (root): \"ab\" is shorter than 3 characters\n- at (root): \"ab\" is longer than 1 character",
    );
}

#[test]
fn item_and_property_counts() {
    fails(
        json!({"minItems": 1}),
        json!([]),
        "\n- at (root): [] has less than 1 item",
    );
    fails(
        json!({"maxItems": 2}),
        json!([1, 2, 3]),
        "\n- at (root): [1,2,3] has more than 2 items",
    );
    fails(
        json!({"minProperties": 2}),
        json!({"a": 1}),
        "\n- at (root): {\"a\":1} has less than 2 properties",
    );
    fails(
        json!({"maxProperties": 1}),
        json!({"a": 1, "b": 2}),
        "\n- at (root): {\"a\":1,\"b\":2} has more than 1 property",
    );
    ok(json!({"minItems": 3, "minProperties": 3}), json!("x"));
}

#[test]
fn required_reports_each_missing_name_in_schema_order() {
    fails(
        json!({"required": ["b", "a", "c"]}),
        json!({"c": 1}),
        "\n- at (root): \"b\" is a required property\n- at (root): \"a\" is a required property",
    );
    fails(
        json!({"required": ["say \"hi\""]}),
        json!({}),
        "\n- at (root): \"say \\\"hi\\\"\" is a required property",
    );
    ok(json!({"required": ["a"]}), json!([1]));
    ok(json!({"required": []}), json!({}));
}

#[test]
fn unique_items_uses_json_equality() {
    fails(
        json!({"uniqueItems": true}),
        json!([1, 1.0]),
        "\n- at (root): [1,1.0] has non-unique elements",
    );
    fails(
        json!({"uniqueItems": true}),
        json!([{"a": 1, "b": [2]}, {"b": [2.0], "a": 1}]),
        "\n- at (root): [{\"a\":1,\"b\":[2]},{\"a\":1,\"b\":[2.0]}] has non-unique elements",
    );
    ok(
        json!({"uniqueItems": true}),
        json!([1, "1", [1], {"1": 1}, true, null]),
    );
    ok(json!({"uniqueItems": false}), json!([1, 1]));
    // Long arrays take the sorting path.
    let mut long: Vec<Value> = (0..100).map(|i| json!({"n": i})).collect();
    ok(json!({"uniqueItems": true}), Value::Array(long.clone()));
    long.push(json!({"n": 42.0}));
    let _ = check_both(&json!({"uniqueItems": true}), &Value::Array(long));
}

#[test]
fn property_errors_name_the_escaped_path() {
    fails(
        json!({"properties": {"a/b~c": {"type": "string"}}}),
        json!({"a/b~c": 1}),
        "\n- at /a~1b~0c: 1 is not of type \"string\"",
    );
    fails(
        json!({"properties": {"a": {"items": {"properties": {"b": {"type": "integer"}}}}}}),
        json!({"a": [{"b": 1}, {"b": 1.5}]}),
        "\n- at /a/1/b: 1.5 is not of type \"integer\"",
    );
    fails(
        json!({"properties": {"a": false}}),
        json!({"a": 1}),
        "\n- at /a: False schema does not allow 1",
    );
    ok(json!({"properties": {"a": false}}), json!({"b": 1}));
}

#[test]
fn additional_properties_false_lists_every_undeclared_member() {
    let schema = json!({"properties": {"a": {"type": "string"}}, "additionalProperties": false});
    fails(
        schema.clone(),
        json!({"a": 1, "b": 1, "c": 2}),
        "\n- at /a: 1 is not of type \"string\"\n- at (root): Additional properties are not allowed ('b', 'c' were unexpected)",
    );
    fails(
        schema,
        json!({"z's": 1}),
        "\n- at (root): Additional properties are not allowed ('z's' was unexpected)",
    );
}

#[test]
fn additional_properties_false_without_properties_blames_the_first_member() {
    fails(
        json!({"additionalProperties": false}),
        json!({"b": [1], "a": 2}),
        "\n- at (root): False schema does not allow 2",
    );
    fails(
        json!({"properties": {}, "additionalProperties": false}),
        json!({"b": [1], "a": 2}),
        "\n- at (root): Additional properties are not allowed ('a', 'b' were unexpected)",
    );
}

#[test]
fn one_required_name_beside_closed_properties_comes_last() {
    let schema = json!({
        "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
        "required": ["a"],
        "additionalProperties": false
    });
    fails(
        schema,
        json!({"b": 1, "x": 1}),
        "\n- at /b: 1 is not of type \"string\"\n- at (root): Additional properties are not allowed ('x' was unexpected)\n- at (root): \"a\" is a required property",
    );
    // jsonschema counts the name only as a declared property.
    fails(
        json!({"properties": {}, "required": ["x"], "additionalProperties": false}),
        json!({"x": 1}),
        "\n- at (root): Additional properties are not allowed ('x' was unexpected)\n- at (root): \"x\" is a required property",
    );
    // Two names run before the properties, as `required` always does.
    fails(
        json!({
            "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "required": ["a", "b"],
            "additionalProperties": false
        }),
        json!({"b": 1}),
        "\n- at (root): \"a\" is a required property\n- at /b: 1 is not of type \"string\"",
    );
}

#[test]
fn additional_properties_schema_checks_undeclared_members() {
    fails(
        json!({"properties": {"a": {"type": "string"}}, "additionalProperties": {"type": "integer"}}),
        json!({"a": 1, "b": "x", "c": 2}),
        "\n- at /a: 1 is not of type \"string\"\n- at /b: \"x\" is not of type \"integer\"",
    );
    fails(
        json!({"additionalProperties": {"minimum": 0}}),
        json!({"a": -1}),
        "\n- at /a: -1 is less than the minimum of 0",
    );
}

#[test]
fn items_checks_each_item() {
    fails(
        json!({"items": {"type": "string"}}),
        json!(["a", 1, "b", null]),
        "\n- at /1: 1 is not of type \"string\"\n- at /3: null is not of type \"string\"",
    );
    fails(
        json!({"items": false}),
        json!([1, 2]),
        "\n- at /0: False schema does not allow 1\n- at /1: False schema does not allow 2",
    );
    ok(json!({"items": false}), json!([]));
    ok(json!({"items": {"type": "string"}}), json!({"0": 1}));
}

#[test]
fn fused_array_checks_report_in_items_place() {
    // jsonschema checks `type: array` with `items`, so a string instance
    // fails `minLength` before it fails `type`.
    fails(
        json!({"type": "array", "items": {}, "minLength": 2}),
        json!("a"),
        "\n- at (root): \"a\" is shorter than 2 characters\n- at (root): \"a\" is not of type \"array\"",
    );
    // `uniqueItems` (even false) undoes the fusion.
    fails(
        json!({"type": "array", "items": {}, "minLength": 2, "uniqueItems": false}),
        json!("a"),
        "\n- at (root): \"a\" is not of type \"array\"\n- at (root): \"a\" is shorter than 2 characters",
    );
    fails(
        json!({"type": "array", "items": {"type": "integer"}, "minItems": 3, "maxItems": 1}),
        json!([1, "x"]),
        "\n- at (root): [1,\"x\"] has less than 3 items\n- at (root): [1,\"x\"] has more than 1 item\n- at /1: \"x\" is not of type \"integer\"",
    );
    fails(
        json!({"type": "array", "items": {"type": "integer"}, "minProperties": 1}),
        json!({}),
        "\n- at (root): {} has less than 1 property\n- at (root): {} is not of type \"array\"",
    );
}

#[test]
fn keywords_report_in_jsonschema_priority_order() {
    fails(
        json!({
            "type": "integer", "const": 4, "enum": [5, 6], "minimum": 7, "maximum": 1,
            "exclusiveMinimum": 8, "exclusiveMaximum": 0, "multipleOf": 3
        }),
        json!(2.5),
        "\n- at (root): 2.5 is not of type \"integer\"\
         \n- at (root): 4 was expected\
         \n- at (root): 2.5 is not one of 5 or 6\
         \n- at (root): 2.5 is less than the minimum of 7\
         \n- at (root): 2.5 is greater than the maximum of 1\
         \n- at (root): 2.5 is less than or equal to the minimum of 8\
         \n- at (root): 2.5 is greater than or equal to the maximum of 0\
         \n- at (root): 2.5 is not a multiple of 3",
    );
    fails(
        json!({
            "type": "string", "maxProperties": 0, "required": ["a"],
            "properties": {"a": {"type": "string"}}, "minProperties": 3
        }),
        json!({"b": 1}),
        "\n- at (root): {\"b\":1} is not of type \"string\"\
         \n- at (root): {\"b\":1} has less than 3 properties\
         \n- at (root): {\"b\":1} has more than 0 properties\
         \n- at (root): \"a\" is a required property",
    );
}

#[test]
fn reports_stop_after_eight_errors() {
    let instance: Value = (0..20).map(|i| json!(i)).collect();
    let report = check_both(&json!({"items": {"type": "string"}}), &instance).expect_err("invalid");
    assert_eq!(report.matches("\n- at /").count(), 8, "{report}");
    assert!(report.ends_with("\n- at /7: 7 is not of type \"string\"\n- (more errors omitted)"));
    // Exactly eight errors need no such line.
    let instance: Value = (0..8).map(|i| json!(i)).collect();
    let report = check_both(&json!({"items": {"type": "string"}}), &instance).expect_err("invalid");
    assert!(!report.contains("omitted"), "{report}");
}

#[test]
fn format_is_an_annotation_in_2020_12() {
    ok(
        json!({"type": "string", "format": "email"}),
        json!("not an email"),
    );
    ok(json!({"type": "integer", "format": "uint32"}), json!(-1));
}

#[test]
fn draft_07_schemas_in_the_subset_run_on_the_builtin() {
    let schema = json!({
        "$schema": "http://json-schema.org/draft-07/schema#",
        "type": "object",
        "properties": {"n": {"type": "integer", "exclusiveMinimum": 0}},
        "required": ["n"]
    });
    ok(schema.clone(), json!({"n": 1}));
    fails(
        schema,
        json!({"n": 0}),
        "\n- at /n: 0 is less than or equal to the minimum of 0",
    );
}

#[test]
fn non_ascii_and_control_characters_print_as_json() {
    fails(
        json!({"properties": {"ключ": {"maxLength": 1}}}),
        json!({"ключ": "日本\n\"x\""}),
        "\n- at /ключ: \"日本\\n\\\"x\\\"\" is longer than 1 character",
    );
}

#[test]
fn x_mcp_header_is_an_annotation() {
    // Checked at registration (see `toolwire_proto::header`); jsonschema
    // ignores it like any unknown keyword, and so does the built-in.
    let schema = json!({
        "type": "object",
        "properties": {"region": {"type": "string", "x-mcp-header": "Region"}},
        "required": ["region"]
    });
    ok(schema.clone(), json!({"region": "us-west1"}));
    fails(
        schema,
        json!({"region": 5}),
        "\n- at /region: 5 is not of type \"string\"",
    );
}
