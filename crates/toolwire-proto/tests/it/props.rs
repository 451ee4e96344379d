//! Property tests: the codec and the header rules never panic, and header values round-trip.

use proptest::prelude::*;
use serde_json::{Number, Value};
use toolwire_proto::Message;
use toolwire_proto::header::{
    PrimitiveKind, decode_header_value, encode_header_value, header_matches_value, lookup_path,
    param_header_value, validate_x_mcp_headers,
};

/// Object keys biased towards JSON Schema keywords, so that generated values
/// often look like schemas with annotations in odd places.
fn key() -> impl Strategy<Value = String> {
    let keywords = prop::sample::select(vec![
        "properties",
        "x-mcp-header",
        "type",
        "items",
        "prefixItems",
        "anyOf",
        "oneOf",
        "allOf",
        "not",
        "if",
        "then",
        "else",
        "$defs",
        "$ref",
        "additionalProperties",
        "patternProperties",
        "const",
        "default",
        "a",
        "b",
    ]);
    prop_oneof![
        4 => keywords.prop_map(str::to_owned),
        1 => any::<String>(),
    ]
}

/// Leaf values, biased towards schema type names and header-like strings.
fn leaf() -> impl Strategy<Value = Value> {
    let words = prop::sample::select(vec![
        "string", "integer", "boolean", "number", "object", "array", "null", "Region", "region",
        "", "A B", "x\r\n",
    ]);
    prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(|f| Number::from_f64(f).map_or(Value::Null, Value::Number)),
        words.prop_map(|w| Value::String(w.to_owned())),
        any::<String>().prop_map(Value::String),
    ]
}

/// Arbitrary JSON values, a few levels deep.
fn json_value() -> impl Strategy<Value = Value> {
    leaf().prop_recursive(8, 128, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::vec((key(), inner), 0..6)
                .prop_map(|entries| Value::Object(entries.into_iter().collect())),
        ]
    })
}

/// Strings that stress the encoder: arbitrary text, plus ASCII made of
/// spaces, tabs and pieces of the sentinel.
fn header_text() -> impl Strategy<Value = String> {
    prop_oneof![
        any::<String>(),
        "[ \t=?a-zA-Z0-9+/]{0,24}",
        "(=\\?(base64|BASE64)\\?)?[ -~]{0,12}(\\?=)?",
        "[\\x00-\\x7f]{0,16}",
    ]
}

fn is_field_value_char(b: u8) -> bool {
    b == b'\t' || (0x20..=0x7e).contains(&b)
}

proptest! {
    #[test]
    fn message_from_slice_never_panics_on_bytes(bytes in prop::collection::vec(any::<u8>(), 0..512)) {
        let _ = Message::from_slice(&bytes);
    }

    #[test]
    fn message_from_slice_never_panics_on_json(value in json_value()) {
        let bytes = serde_json::to_vec(&value).unwrap_or_default();
        let _ = Message::from_slice(&bytes);
    }

    #[test]
    fn decode_header_value_never_panics(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let _ = decode_header_value(&String::from_utf8_lossy(&bytes));
    }

    #[test]
    fn decode_header_value_never_panics_on_sentinels(raw in "[ \t]?=\\?base64\\?[A-Za-z0-9+/= ]{0,24}\\?=[ \t]?") {
        let _ = decode_header_value(&raw);
    }

    #[test]
    fn encoded_values_round_trip(text in header_text()) {
        let encoded = encode_header_value(&text);
        prop_assert_eq!(decode_header_value(&encoded), Ok(text));
    }

    #[test]
    fn encoded_values_are_valid_header_values(text in header_text()) {
        let encoded = encode_header_value(&text);
        let bytes = encoded.as_bytes();
        prop_assert!(bytes.iter().all(|&b| is_field_value_char(b)), "{:?}", encoded);
        prop_assert!(!bytes.first().is_some_and(|b| matches!(b, b' ' | b'\t')), "{:?}", encoded);
        prop_assert!(!bytes.last().is_some_and(|b| matches!(b, b' ' | b'\t')), "{:?}", encoded);
    }

    #[test]
    fn sent_strings_match_their_body_value(text in header_text()) {
        let value = Value::String(text);
        let sent = param_header_value(&value, PrimitiveKind::String);
        prop_assert!(matches!(&sent, Ok(Some(_))), "{:?}", sent);
        if let Ok(Some(sent)) = sent {
            prop_assert_eq!(header_matches_value(&sent, &value, PrimitiveKind::String), Ok(()));
        }
    }

    #[test]
    fn sent_safe_integers_match_their_body_value(n in -(1_i64 << 53) + 1..(1_i64 << 53)) {
        for value in [Value::from(n), Value::from(n as f64)] {
            let sent = param_header_value(&value, PrimitiveKind::Integer);
            prop_assert_eq!(&sent, &Ok(Some(n.to_string())));
            prop_assert_eq!(header_matches_value(&n.to_string(), &value, PrimitiveKind::Integer), Ok(()));
        }
    }

    #[test]
    fn header_matches_value_never_panics(raw in header_text(), value in leaf()) {
        for kind in [PrimitiveKind::String, PrimitiveKind::Integer, PrimitiveKind::Boolean] {
            let _ = header_matches_value(&raw, &value, kind);
            let _ = param_header_value(&value, kind);
        }
    }

    #[test]
    fn validate_x_mcp_headers_never_panics(schema in json_value()) {
        if let Ok(params) = validate_x_mcp_headers(&schema) {
            // Whatever is accepted is usable as a header name, unique, and deterministic.
            prop_assert_eq!(validate_x_mcp_headers(&schema), Ok(params.clone()));
            let mut seen = std::collections::HashSet::new();
            for param in &params {
                prop_assert!(!param.header.is_empty());
                prop_assert!(param.header.bytes().all(|b| b.is_ascii_graphic()));
                prop_assert!(seen.insert(param.header.to_ascii_lowercase()));
                prop_assert!(!param.path.is_empty());
            }
        }
    }

    #[test]
    fn validate_x_mcp_headers_never_panics_on_object_schemas(props in prop::collection::vec((key(), json_value()), 0..6)) {
        let schema = serde_json::json!({
            "type": "object",
            "properties": Value::Object(props.into_iter().collect()),
        });
        if let Ok(params) = validate_x_mcp_headers(&schema) {
            for param in &params {
                // Every accepted path leads through the schema's properties.
                let mut node = &schema;
                for name in &param.path {
                    node = &node["properties"][name];
                }
                prop_assert_eq!(node.get("x-mcp-header").and_then(Value::as_str), Some(param.header.as_str()));
                let args = Value::Null;
                prop_assert_eq!(lookup_path(&args, &param.path), None);
            }
        }
    }
}
