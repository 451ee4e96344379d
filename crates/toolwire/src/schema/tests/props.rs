//! Property tests: random instances, and random schemas built from the
//! built-in's keyword subset, checked by both engines; `check` must agree.

use super::{CompiledSchema, EngineKind};
use proptest::prelude::*;
use serde_json::{Map, Number, Value, json};

/// Names shared by generated schemas and instances, so they meet.
const KEYS: &[&str] = &["a", "b", "c", "text", "x~/y", "é"];
const TYPES: &[&str] = &[
    "null", "boolean", "integer", "number", "string", "array", "object",
];

fn key() -> impl Strategy<Value = String> {
    prop::sample::select(KEYS).prop_map(str::to_owned)
}

fn number() -> impl Strategy<Value = Value> {
    prop_oneof![
        (-5i64..20).prop_map(Value::from),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        (-100i32..100).prop_map(|i| Value::from(f64::from(i))),
        (-40i32..40).prop_map(|i| Value::from(f64::from(i) / 4.0)),
        any::<f64>().prop_filter_map("finite", |f| Number::from_f64(f).map(Value::Number)),
        prop::sample::select(vec![
            json!(9007199254740992u64),
            json!(9007199254740993u64),
            json!(9007199254740992.0),
            json!(18014398509481988.0),
            json!(1e20),
            json!(-0.0),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(0.1),
        ]),
    ]
}

fn scalar() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        number(),
        "[a-cé🎉~/\"]{0,5}".prop_map(Value::String),
        key().prop_map(Value::String),
    ]
}

fn instance() -> impl Strategy<Value = Value> {
    scalar().prop_recursive(4, 40, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(key(), inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

fn type_keyword() -> impl Strategy<Value = Value> {
    prop_oneof![
        prop::sample::select(TYPES).prop_map(Value::from),
        prop::sample::subsequence(TYPES, 1..=3)
            .prop_shuffle()
            .prop_map(Value::from),
    ]
}

fn size() -> impl Strategy<Value = Option<u64>> {
    prop::option::weighted(0.2, 0u64..4)
}

fn bound() -> impl Strategy<Value = Option<Value>> {
    prop::option::weighted(0.2, number())
}

/// An object schema made of subset keywords, with `sub` for subschemas.
fn schema_object(sub: BoxedStrategy<Value>) -> impl Strategy<Value = Value> {
    let scalars = (
        prop::option::weighted(0.6, type_keyword()),
        prop::option::weighted(0.1, scalar()),
        prop::option::weighted(0.15, prop::collection::vec(scalar(), 1..6)),
        (bound(), bound(), bound(), bound()),
        prop::option::weighted(0.15, 1u64..8),
    );
    let sizes = (size(), size(), size(), size(), size(), size());
    let structure = (
        prop::option::weighted(0.3, prop::sample::subsequence(KEYS, 0..=3)),
        prop::option::weighted(0.2, any::<bool>()),
        prop::option::weighted(0.5, prop::collection::btree_map(key(), sub.clone(), 0..4)),
        prop::option::weighted(
            0.3,
            prop_oneof![any::<bool>().prop_map(Value::Bool), sub.clone()],
        ),
        prop::option::weighted(0.3, sub),
    );
    // Boxed parts keep each generation frame small (debug builds recurse deep here).
    (scalars.boxed(), sizes.boxed(), structure.boxed()).prop_map(
        |(
            (ty, constant, options, (min, max, xmin, xmax), multiple_of),
            (min_len, max_len, min_items, max_items, min_props, max_props),
            (required, unique, properties, additional, items),
        )| {
            let mut m = Map::new();
            let mut put = |k: &str, v: Option<Value>| {
                if let Some(v) = v {
                    m.insert(k.to_owned(), v);
                }
            };
            put("type", ty);
            put("const", constant);
            put("enum", options.map(Value::Array));
            put("minimum", min);
            put("maximum", max);
            put("exclusiveMinimum", xmin);
            put("exclusiveMaximum", xmax);
            put("multipleOf", multiple_of.map(Value::from));
            put("minLength", min_len.map(Value::from));
            put("maxLength", max_len.map(Value::from));
            put("minItems", min_items.map(Value::from));
            put("maxItems", max_items.map(Value::from));
            put("minProperties", min_props.map(Value::from));
            put("maxProperties", max_props.map(Value::from));
            put("required", required.map(Value::from));
            put("uniqueItems", unique.map(Value::Bool));
            put(
                "properties",
                properties.map(|p| Value::Object(p.into_iter().collect())),
            );
            put("additionalProperties", additional);
            put("items", items);
            put("description", Some(json!("generated")));
            Value::Object(m)
        },
    )
}

fn subschema() -> impl Strategy<Value = Value> {
    prop_oneof![
        Just(json!(true)),
        Just(json!(false)),
        Just(json!({})),
        type_keyword().prop_map(|t| json!({"type": t})),
    ]
    .prop_recursive(3, 24, 4, |inner| {
        prop_oneof![
            1 => Just(json!(false)),
            4 => schema_object(inner.boxed()),
        ]
    })
}

fn root_schema() -> impl Strategy<Value = Value> {
    (subschema().boxed(), any::<bool>()).prop_map(|(s, draft_07)| {
        let mut root = match s {
            Value::Object(m) => m,
            other => {
                let mut m = Map::new();
                m.insert("items".to_owned(), other);
                m
            }
        };
        if draft_07 {
            root.insert(
                "$schema".to_owned(),
                json!("http://json-schema.org/draft-07/schema#"),
            );
        }
        Value::Object(root)
    })
}

/// An instance shaped after `schema` often enough to get past `type`.
fn instances_for() -> impl Strategy<Value = Vec<Value>> {
    prop::collection::vec(instance(), 1..10)
}

fn fixed_schemas() -> Vec<Value> {
    vec![
        json!({"type": "object", "properties": {"text": {"type": "string"}}, "required": ["text"]}),
        json!({
            "type": "object",
            "properties": {
                "a": {"type": ["integer", "null"], "minimum": 0, "multipleOf": 3},
                "b": {"type": "array", "items": {"type": "string", "maxLength": 2}, "maxItems": 3},
                "c": {"enum": [1, "a", null, [1], {"a": 1}]}
            },
            "required": ["a", "b"],
            "additionalProperties": false
        }),
        json!({
            "type": "object",
            "properties": {"text": {"const": "x"}, "a": {"type": "object", "additionalProperties": {"type": "number"}}},
            "required": ["a"],
            "additionalProperties": false
        }),
        json!({"type": "array", "items": {"type": "object", "required": ["a"]}, "uniqueItems": true}),
        json!({"additionalProperties": {"type": "string"}, "minProperties": 2, "maxLength": 1}),
    ]
}

fn agree(schema: &Value, builtin: &CompiledSchema, reference: &CompiledSchema, instance: &Value) {
    assert_eq!(
        builtin.check(instance),
        reference.check(instance),
        "schema:   {schema}\ninstance: {instance}"
    );
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    #[test]
    fn random_instances_agree_on_fixed_schemas(instances in prop::collection::vec(instance(), 1..16)) {
        for schema in fixed_schemas() {
            let builtin = CompiledSchema::compile(&schema).expect("compiles");
            prop_assert_eq!(builtin.engine(), EngineKind::Builtin);
            let reference = CompiledSchema::compile_with_jsonschema(&schema).expect("compiles");
            for instance in &instances {
                agree(&schema, &builtin, &reference, instance);
                // Also as the value of each property.
                for k in ["a", "b", "text"] {
                    agree(&schema, &builtin, &reference, &json!({ k: instance.clone() }));
                }
            }
        }
    }

    #[test]
    fn random_subset_schemas_agree(schema in root_schema(), instances in instances_for()) {
        let reference = CompiledSchema::compile_with_jsonschema(&schema);
        let builtin = CompiledSchema::compile(&schema);
        match (&builtin, &reference) {
            (Ok(builtin), Ok(reference)) => {
                // The generator stays inside the subset, so nothing may fall back.
                prop_assert_eq!(builtin.engine(), EngineKind::Builtin, "{}", schema);
                for instance in &instances {
                    agree(&schema, builtin, reference, instance);
                }
            }
            _ => prop_assert!(false, "{schema}: built-in {builtin:?}, jsonschema {reference:?}"),
        }
    }

    #[test]
    fn unique_items_agree_on_long_arrays(items in prop::collection::vec(small_item(), 0..80)) {
        let schema = json!({"uniqueItems": true, "items": {"type": ["integer", "array", "object"]}});
        let builtin = CompiledSchema::compile(&schema).expect("compiles");
        prop_assert_eq!(builtin.engine(), EngineKind::Builtin);
        let reference = CompiledSchema::compile_with_jsonschema(&schema).expect("compiles");
        agree(&schema, &builtin, &reference, &Value::Array(items));
    }
}

/// Few distinct values in several spellings, so long arrays repeat some.
fn small_item() -> impl Strategy<Value = Value> {
    let n = (0i32..40).prop_flat_map(|i| {
        prop_oneof![
            Just(Value::from(i)),
            Just(Value::from(f64::from(i))),
            Just(Value::from(i + 1_000_000)),
        ]
    });
    prop_oneof![
        4 => n.clone(),
        1 => prop::collection::vec(n.clone(), 0..3).prop_map(Value::Array),
        1 => prop::collection::btree_map(key(), n, 0..3)
            .prop_map(|m| Value::Object(m.into_iter().collect())),
    ]
}
