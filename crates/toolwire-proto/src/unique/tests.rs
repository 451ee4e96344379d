//! Tests of `UniqueKeys`: repeated member names at any depth, escapes, and parity with serde_json.
use super::*;
use proptest::prelude::*;
use serde::Deserialize;
use serde_json::{Value, json};
use std::collections::BTreeMap;

fn refused<'a, T: Deserialize<'a> + fmt::Debug>(text: &'a str, name: &str) {
    let e = from_str_unique::<T>(text).expect_err(text);
    let want = format!("duplicate member {name:?}");
    assert!(e.to_string().contains(&want), "{text}: {e}");
}

#[test]
fn a_repeated_name_is_refused_at_any_depth() {
    for (text, name) in [
        (r#"{"region":"us","region":"eu"}"#, "region"),
        (r#"{"a":{"b":1,"c":2,"b":3}}"#, "b"),
        (r#"[1,{"x":[{"y":1,"y":1}]}]"#, "y"),
        (r#"{"a":1,"\u0061":2}"#, "a"),
        (r#"{"\n":1,"\n":2}"#, "\n"),
        (r#"{"":1,"":2}"#, ""),
    ] {
        refused::<Value>(text, name);
    }
}

#[test]
fn the_error_says_where() {
    let e = from_str_unique::<Value>(r#"{"region":"us","region":"eu"}"#).expect_err("dup");
    assert_eq!(e.line(), 1);
    assert!(e.column() >= 22, "{e}");
}

#[test]
fn names_past_the_inline_ones_are_checked() {
    let mut members: Vec<String> = (0..40).map(|i| format!("\"k{i}\":{i}")).collect();
    assert!(from_str_unique::<Value>(&format!("{{{}}}", members.join(","))).is_ok());
    for repeat in [0, 7, 8, 39] {
        members.push(format!("\"k{repeat}\":0"));
        refused::<Value>(&format!("{{{}}}", members.join(",")), &format!("k{repeat}"));
        members.pop();
    }
    // An escaped name among borrowed ones, either way round.
    refused::<Value>(r#"{"a":1,"b":2,"\u0062":3}"#, "b");
    refused::<Value>(r#"{"\u0062":1,"a":2,"b":3}"#, "b");
}

#[test]
fn the_same_name_in_different_objects_is_fine() {
    let text = r#"{"a":{"a":{"a":1}},"b":[{"a":1},{"a":2}],"c":{"b":1}}"#;
    let unique: Value = from_str_unique(text).expect("no repeats");
    assert_eq!(unique, serde_json::from_str::<Value>(text).expect("json"));
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
struct Typed {
    name: String,
    #[serde(default)]
    arguments: Option<Value>,
    #[serde(default)]
    nested: Option<Box<Typed>>,
    #[serde(default)]
    map: BTreeMap<String, u32>,
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
#[serde(tag = "type")]
enum Tagged {
    A { x: u32 },
    B(BTreeMap<String, Value>),
}

#[derive(Debug, Deserialize)]
#[allow(dead_code)]
#[serde(untagged)]
enum Untagged {
    N(u32),
    M(BTreeMap<String, Value>),
}

#[test]
fn typed_targets_are_checked_too() {
    refused::<Typed>(r#"{"name":"a","arguments":{"r":1,"r":2}}"#, "r");
    refused::<Typed>(r#"{"name":"a","nested":{"name":"b","name":"c"}}"#, "name");
    refused::<Typed>(r#"{"name":"a","map":{"k":1,"k":2}}"#, "k");
    // Members the type ignores are walked, not skipped.
    refused::<Typed>(r#"{"name":"a","extension":{"x":{"y":1,"y":2}}}"#, "y");
    refused::<Typed>(r#"{"name":"a","other":1,"other":2}"#, "other");
    refused::<Tagged>(r#"{"type":"B","k":1,"k":2}"#, "k");
    refused::<Tagged>(r#"{"type":"A","x":1,"x":2}"#, "x");
    refused::<Untagged>(r#"{"k":1,"k":2}"#, "k");
    refused::<Vec<Option<Typed>>>(r#"[null,{"name":"a","extension":[{"q":1,"q":1}]}]"#, "q");
    let t: Typed =
        from_str_unique(r#"{"name":"a","arguments":{"r":1},"ignored":{"y":[1,{"y":2}]}}"#)
            .expect("unique");
    assert_eq!(t.arguments, Some(json!({"r": 1})));
}

#[test]
fn trailing_characters_and_bad_json_fail_as_in_serde_json() {
    assert!(from_str_unique::<Value>(r#"{"a":1} x"#).is_err());
    assert!(from_str_unique::<Value>(r#"{"a":1"#).is_err());
    assert!(from_str_unique::<Typed>(r#"{"name":1}"#).is_err());
}

fn json_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<f64>()
            .prop_filter("finite", |f| f.is_finite())
            .prop_map(Value::from),
        "[a-z\u{e9}\"\\\\\n ]{0,6}".prop_map(Value::String),
    ];
    leaf.prop_recursive(4, 48, 12, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map("[a-z\"\\\\\u{e9}]{0,3}", inner, 0..12)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

proptest! {
    /// Without repeated names, the wrapper and `UniqueValue` read exactly
    /// what serde_json does.
    #[test]
    fn unique_documents_read_as_serde_json_reads_them(v in json_value()) {
        let text = serde_json::to_string(&v).expect("serialises");
        let read: Value = from_str_unique(&text).expect("no repeats");
        prop_assert_eq!(&read, &serde_json::from_str::<Value>(&text).expect("json"));
        let unique: UniqueValue = serde_json::from_str(&text).expect("no repeats");
        prop_assert_eq!(unique.0, read);
    }

    /// Arbitrary text never panics, and whatever the wrapper accepts,
    /// serde_json accepts with the same value.
    #[test]
    fn arbitrary_text_never_panics(text in "[{}\\[\\]\",:a-c0-9 \\\\u]{0,40}") {
        if let Ok(v) = from_str_unique::<Value>(&text) {
            prop_assert_eq!(Some(v), serde_json::from_str::<Value>(&text).ok());
        }
    }
}

/// What the server's one-pass decoder relies on (it reads `Params`, a
/// derived struct, without `UniqueKeys`): serde's derived visitor refuses a
/// repeated known field, with or without `deny_unknown_fields`, but skips
/// an unknown member unread, and a `#[serde(flatten)]` map keeps the last
/// of a repeated unknown name. Those are why the decoder refuses unknown
/// members and reads flattened types through `UniqueKeys`.
#[test]
fn derived_structs_refuse_repeated_known_fields_only() {
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Plain {
        a: Option<u32>,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    #[serde(deny_unknown_fields)]
    struct Strict {
        a: Option<u32>,
    }
    #[derive(Debug, Deserialize)]
    #[allow(dead_code)]
    struct Flat {
        a: Option<u32>,
        #[serde(flatten)]
        rest: serde_json::Map<String, Value>,
    }
    let text = r#"{"a":1,"a":2}"#;
    for e in [
        serde_json::from_str::<Plain>(text).expect_err(text),
        serde_json::from_str::<Strict>(text).expect_err(text),
    ] {
        assert!(e.to_string().contains("duplicate field `a`"), "{e}");
    }
    assert!(serde_json::from_str::<Plain>(r#"{"x":1,"x":2}"#).is_ok());
    assert!(serde_json::from_str::<Plain>(r#"{"x":{"y":1,"y":2}}"#).is_ok());
    let flat: Flat = serde_json::from_str(r#"{"x":1,"x":2}"#).expect("kept");
    assert_eq!(flat.rest["x"], 2);
    refused::<Flat>(r#"{"x":1,"x":2}"#, "x");
}

#[test]
fn unique_value_refuses_repeats_and_otherwise_reads_as_value() {
    for (text, name) in [
        (r#"{"region":"us","region":"eu"}"#, "region"),
        (r#"[1,{"x":[{"y":1,"y":1}]}]"#, "y"),
        (r#"{"a":1,"\u0061":2}"#, "a"),
    ] {
        let e = serde_json::from_str::<UniqueValue>(text).expect_err(text);
        assert!(
            e.to_string()
                .contains(&format!("duplicate member {name:?}")),
            "{e}"
        );
    }
    let text = r#"{"a":[1,-2,2.5,1e300,null,true,"s\n"],"b":{"a":{}}}"#;
    let read: UniqueValue = serde_json::from_str(text).expect("unique");
    assert_eq!(read.0, serde_json::from_str::<Value>(text).expect("json"));
}

/// `_meta` and its client capabilities refuse repeated names on their own,
/// without `UniqueKeys` (the one-pass decoder reads them so).
#[test]
fn request_meta_refuses_repeated_names_by_itself() {
    use crate::types::RequestMeta;
    let v = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
    let c = r#""io.modelcontextprotocol/clientCapabilities""#;
    for text in [
        format!(r#"{{{v},{v}}}"#),
        format!(r#"{{{v},"k":1,"k":2}}"#),
        format!(r#"{{{v},"k":{{"q":1,"q":2}}}}"#),
        format!(r#"{{{v},"baggage":[{{"q":1,"q":2}}]}}"#),
        format!(
            r#"{{{v},"io.modelcontextprotocol/clientInfo":{{"name":"c","version":"1","i":{{"q":1,"q":2}}}}}}"#
        ),
        format!(r#"{{{c}:{{"roots":{{}},"roots":{{}}}}}}"#),
        format!(r#"{{{c}:{{"z":1,"z":2}}}}"#),
        format!(r#"{{{c}:{{"roots":{{"l":1,"l":2}}}}}}"#),
        format!(r#"{{{c}:{{"elicitation":{{"form":{{"q":1,"q":2}}}}}}}}"#),
        format!(r#"{{{c}:{{"experimental":{{"e":{{}},"e":{{}}}}}}}}"#),
    ] {
        let e = serde_json::from_str::<RequestMeta>(&text).expect_err(&text);
        assert!(e.to_string().contains("duplicate"), "{text}: {e}");
    }
    let text = format!(
        r#"{{{v},{c}:{{"roots":{{"listChanged":true}},"z":{{"a":1}}}},"k":{{"q":1}},"traceparent":"00-x"}}"#
    );
    let meta: RequestMeta = serde_json::from_str(&text).expect("no repeats");
    assert_eq!(meta.other["k"], json!({"q": 1}));
}
