//! The built-in validator against jsonschema on a table of subset schemas
//! (schemars output for common Rust types, and hand-written ones) and, for
//! each, many instances derived from it: a valid sample, every property
//! replaced by each value of a pool of awkward values, each required name
//! removed, undeclared members added. Every `check` result must match
//! jsonschema's exactly.

use super::{engines, same};
use schemars::JsonSchema;
use serde_json::{Map, Value, json};

#[allow(dead_code)]
mod types {
    use schemars::JsonSchema;

    #[derive(JsonSchema)]
    pub(super) struct Echo {
        pub(super) text: String,
    }

    /// Plain numbers and flags.
    #[derive(JsonSchema)]
    pub(super) struct Numbers {
        /// A float.
        pub(super) f: f64,
        pub(super) i: i32,
        pub(super) u: u32,
        pub(super) small: u8,
        pub(super) big: i64,
        pub(super) b: bool,
    }

    #[derive(JsonSchema)]
    pub(super) struct Optional {
        pub(super) name: Option<String>,
        pub(super) count: Option<u32>,
        pub(super) ratio: Option<f64>,
        pub(super) flag: Option<bool>,
    }

    #[derive(JsonSchema)]
    pub(super) struct Lists {
        pub(super) tags: Vec<String>,
        pub(super) scores: Vec<f64>,
        pub(super) ids: Vec<u32>,
        pub(super) maybe: Option<Vec<String>>,
        pub(super) grid: Vec<Vec<i32>>,
    }

    #[derive(JsonSchema)]
    pub(super) enum Mode {
        Fast,
        Slow,
        Careful,
        Reckless,
    }

    #[derive(JsonSchema)]
    pub(super) struct Inner {
        pub(super) x: i32,
        pub(super) label: Option<String>,
    }

    #[derive(JsonSchema)]
    pub(super) struct Outer {
        pub(super) inner: Inner,
        pub(super) many: Vec<Inner>,
        pub(super) mode: Mode,
    }

    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(super) struct Strict {
        pub(super) a: String,
        pub(super) b: Option<i64>,
    }

    #[derive(JsonSchema)]
    #[serde(deny_unknown_fields)]
    pub(super) struct StrictOne {
        pub(super) only: u16,
    }

    #[derive(JsonSchema)]
    pub(super) struct Defaults {
        #[serde(default)]
        pub(super) n: u32,
        #[serde(default)]
        pub(super) names: Vec<String>,
        pub(super) s: String,
    }

    #[derive(JsonSchema)]
    pub(super) struct Renamed {
        #[serde(rename = "a/b~c")]
        pub(super) odd: String,
        #[serde(rename = "ключ")]
        pub(super) key: char,
    }

    #[derive(JsonSchema)]
    pub(super) struct Empty {}
}

fn schemars_of<T: JsonSchema>() -> Value {
    let mut v = schemars::schema_for!(T).to_value();
    if let Some(obj) = v.as_object_mut() {
        obj.remove("title");
    }
    v
}

/// schemars output with subschemas inlined instead of `$ref`s, for types
/// whose plain output needs `$defs`.
fn schemars_inlined<T: JsonSchema>() -> Value {
    let generator = schemars::generate::SchemaSettings::draft2020_12()
        .with(|s| s.inline_subschemas = true)
        .into_generator();
    generator.into_root_schema_for::<T>().to_value()
}

fn schemas() -> Vec<Value> {
    let mut out = vec![
        schemars_of::<types::Echo>(),
        schemars_of::<types::Numbers>(),
        schemars_of::<types::Optional>(),
        schemars_of::<types::Lists>(),
        schemars_of::<types::Mode>(),
        schemars_inlined::<types::Outer>(),
        schemars_of::<types::Strict>(),
        schemars_of::<types::StrictOne>(),
        schemars_of::<types::Defaults>(),
        schemars_of::<types::Renamed>(),
        schemars_of::<types::Empty>(),
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        json!({
            "type": "object",
            "properties": {
                "a": {"type": "integer", "minimum": 0, "maximum": 100, "multipleOf": 5},
                "b": {"type": "number", "exclusiveMinimum": -1.5, "exclusiveMaximum": 1e3},
                "c": {"type": "string", "minLength": 2, "maxLength": 4},
                "d": {"enum": ["x", 1, null, [1], {"k": true}]},
                "e": {"const": {"k": [1, "two"]}},
                "f": {"type": "array", "items": {"type": "string"}, "uniqueItems": true, "minItems": 1},
                "g": {"type": "object", "minProperties": 1, "maxProperties": 2},
                "h": false,
                "i": true,
                "j": {"type": ["string", "integer", "null"]}
            },
            "required": ["a", "c", "e"]
        }),
        json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}},
            "required": ["a", "b"],
            "additionalProperties": false
        }),
        json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "integer"}, "c": {}},
            "required": ["a", "b"],
            "additionalProperties": false
        }),
        json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "required": ["z"],
            "additionalProperties": false
        }),
        json!({
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {"type": "boolean"}},
            "required": ["a", "b", "c"]
        }),
        json!({
            "type": "object",
            "properties": {"a": {"type": "string"}},
            "additionalProperties": {"type": "array", "items": {"type": "integer"}, "maxItems": 2}
        }),
        json!({"type": "object", "additionalProperties": false, "required": ["a"]}),
        json!({"type": "object", "additionalProperties": {"enum": [1, 2, 3, 4]}}),
        json!({"type": "array", "items": {"type": "object", "properties": {"a": {"type": "integer"}}, "required": ["a"]}, "minItems": 1, "maxItems": 3}),
        json!({"type": "array", "items": false}),
        json!({"type": "array", "items": true, "maxItems": 2, "minLength": 3}),
        json!({"type": ["array", "null"], "items": {"type": "number"}, "minItems": 2}),
        json!({"items": {"type": "number"}, "minItems": 2, "minLength": 3, "required": ["a"]}),
        json!({"type": "array", "items": {"type": "number"}, "uniqueItems": true}),
        json!({"type": "array", "items": {}, "minLength": 2, "maxProperties": 0}),
        json!({"minimum": 9007199254740993u64, "maximum": 18446744073709551615u64}),
        json!({"exclusiveMinimum": -9223372036854775808i64, "exclusiveMaximum": 1e19}),
        json!({"type": "number", "multipleOf": 7}),
        json!({"enum": [1, 2.5, "1", true, null]}),
        json!({"const": 1}),
        json!({"const": null}),
        json!({"type": "integer"}),
        json!({"type": "number", "maximum": 0}),
        json!({"type": "string", "format": "date-time", "maxLength": 3}),
        json!({
            "$schema": "http://json-schema.org/draft-07/schema#",
            "type": "object",
            "properties": {"n": {"type": "integer", "exclusiveMaximum": 10}, "s": {"type": "string"}},
            "required": ["n"],
            "additionalProperties": false
        }),
    ];
    // More properties and required names than jsonschema's small-map and
    // scanned-`required` limits (15 and 16).
    let wide: Map<String, Value> = (0..20)
        .map(|i| {
            (
                format!("p{i:02}"),
                json!({"type": ["integer", "string"], "maxLength": 2}),
            )
        })
        .collect();
    let names: Vec<String> = (0..18).map(|i| format!("p{i:02}")).collect();
    out.push(json!({"type": "object", "properties": wide, "required": names}));
    out.push(json!({"type": "object", "properties": wide, "additionalProperties": false, "required": ["p01", "p19"]}));
    out.push(json!({"type": "object", "properties": wide, "additionalProperties": false, "required": ["p03"]}));
    out.push(
        json!({"type": "object", "properties": wide, "additionalProperties": {"type": "boolean"}}),
    );
    out.push(json!({"type": "object", "properties": wide, "required": ["p00", "p05"]}));
    // Long string enums.
    let options: Vec<String> = (0..14).map(|i| format!("v{i}")).collect();
    out.push(json!({"type": "object", "properties": {"e": {"enum": options}, "n": {"enum": [null, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 1e20]}}}));
    // Deeply nested, well within the depth limit.
    let mut deep = json!({"type": "integer"});
    for _ in 0..20 {
        deep = json!({"type": "object", "properties": {"x": deep}, "required": ["x"]});
    }
    out.push(deep);
    out
}

/// Values that probe types, numeric forms, lengths and equality.
fn pool() -> Vec<Value> {
    vec![
        json!(null),
        json!(true),
        json!(false),
        json!(0),
        json!(1),
        json!(-1),
        json!(5),
        json!(7),
        json!(100),
        json!(1.0),
        json!(-0.0),
        json!(1.5),
        json!(0.1),
        json!(35.0),
        json!(1e3),
        json!(1e20),
        json!(1e300),
        json!(-1e300),
        json!(9007199254740992u64),
        json!(9007199254740993u64),
        json!(9007199254740992.0),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(i64::from(i32::MAX) + 1),
        json!(256),
        json!(""),
        json!("x"),
        json!("ab"),
        json!("abcd"),
        json!("abcde"),
        json!("é"),
        json!("日本語"),
        json!("🎉🎉"),
        json!("1"),
        json!("Fast"),
        json!("fast"),
        json!([]),
        json!([1]),
        json!([1, 1.0]),
        json!(["a", "b"]),
        json!(["a", "a"]),
        json!([1, "x", null]),
        json!([[1, 2], [3]]),
        json!([{"a": 1}, {"a": 1.0}]),
        json!({}),
        json!({"k": [1, "two"]}),
        json!({"k": [1.0, "two"]}),
        json!({"k": true}),
        json!({"a": 1}),
        json!({"a": "x", "b": 2}),
        json!({"x": 1, "label": null}),
    ]
}

/// A value the schema probably accepts (not necessarily: the table compares
/// verdicts, it does not assume them).
fn sample(schema: &Value) -> Value {
    let Some(s) = schema.as_object() else {
        return json!(1);
    };
    if let Some(c) = s.get("const") {
        return c.clone();
    }
    if let Some(first) = s
        .get("enum")
        .and_then(Value::as_array)
        .and_then(|o| o.first())
    {
        return first.clone();
    }
    let ty = match s.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => ts.first().and_then(Value::as_str).unwrap_or("null"),
        _ if s.contains_key("properties") => "object",
        _ if s.contains_key("items") => "array",
        _ => "null",
    };
    match ty {
        "object" => {
            let mut m = Map::new();
            if let Some(props) = s.get("properties").and_then(Value::as_object) {
                for (k, sub) in props {
                    m.insert(k.clone(), sample(sub));
                }
            }
            Value::Object(m)
        }
        "array" => {
            let item = s.get("items").map_or(json!(1), sample);
            let n = s.get("minItems").and_then(Value::as_u64).unwrap_or(1);
            // Distinct copies would need more care; one keeps `uniqueItems` happy.
            Value::Array((0..n.min(1)).map(|_| item.clone()).collect())
        }
        "string" => json!("abc"),
        "integer" => json!(10),
        "number" => json!(2.5),
        "boolean" => json!(true),
        _ => Value::Null,
    }
}

/// Instances for one schema: the pool, then variations of a sample.
fn instances(schema: &Value) -> Vec<Value> {
    let pool = pool();
    let mut out = pool.clone();
    let base = sample(schema);
    out.push(base.clone());
    if let Value::Object(base) = &base {
        for key in base.keys() {
            for v in &pool {
                let mut m = base.clone();
                m.insert(key.clone(), v.clone());
                out.push(Value::Object(m));
            }
            let mut m = base.clone();
            m.remove(key);
            out.push(Value::Object(m));
        }
        for extra in ["zzz", "aaa", "a/b~c"] {
            let mut m = base.clone();
            m.insert(extra.to_owned(), json!(1));
            out.push(Value::Object(m));
        }
        let mut all_bad = Map::new();
        for key in base.keys() {
            all_bad.insert(key.clone(), json!([null]));
        }
        all_bad.insert("extra1".to_owned(), json!(1));
        all_bad.insert("extra2".to_owned(), json!(2));
        out.push(Value::Object(all_bad));
    }
    if let Value::Array(items) = &base {
        let item = items.first().cloned().unwrap_or(json!(1));
        for v in &pool {
            out.push(json!([item.clone(), v.clone()]));
            out.push(json!([v.clone()]));
        }
        out.push(json!([item.clone(), item]));
        out.push(Value::Array(vec![json!("x"); 12]));
    }
    // Nested objects: reach one level below each property.
    if let Some(props) = schema.get("properties").and_then(Value::as_object) {
        for (key, sub) in props {
            let inner = sample(sub);
            if let Value::Object(inner) = inner {
                for (ik, _) in inner.iter() {
                    for v in pool.iter().take(12) {
                        let mut m = inner.clone();
                        m.insert(ik.clone(), v.clone());
                        out.push(json!({ key.clone(): Value::Object(m) }));
                    }
                }
            }
        }
    }
    out
}

#[test]
fn builtin_matches_jsonschema_on_the_schema_table() {
    let mut compared = 0usize;
    let mut invalid = 0usize;
    for schema in schemas() {
        let pair = engines(&schema);
        for instance in instances(&schema) {
            compared += 1;
            if same(&pair, &schema, &instance).is_err() {
                invalid += 1;
            }
        }
    }
    // Both verdicts must be well represented.
    assert!(compared > 5_000, "{compared}");
    assert!(
        invalid > compared / 4 && invalid < compared * 19 / 20,
        "{invalid}/{compared}"
    );
}

#[test]
fn schemars_output_runs_on_the_builtin() {
    // `engines` asserts the engine; the table above includes these too.
    for schema in [
        schemars_of::<types::Numbers>(),
        schemars_of::<types::Optional>(),
        schemars_of::<types::Lists>(),
        schemars_of::<types::Mode>(),
        schemars_of::<types::Strict>(),
        schemars_of::<types::Defaults>(),
    ] {
        let _ = engines(&schema);
    }
}
