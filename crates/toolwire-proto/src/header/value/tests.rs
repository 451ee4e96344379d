//! Unit tests of header-value encoding, argument extraction and comparison.

use super::*;
use PrimitiveKind::{Boolean as Bool, Integer as Int, String as Str};
use serde_json::json;

fn path(segments: &[&str]) -> Vec<String> {
    segments.iter().map(|s| (*s).to_owned()).collect()
}

// ---- value encoding ----

/// The table of `#value-encoding`: (original, encoded header value).
const SPEC_ENCODING_EXAMPLES: [(&str, &str); 5] = [
    ("us-west1", "us-west1"),
    ("Hello, 世界", "=?base64?SGVsbG8sIOS4lueVjA==?="),
    (" padded ", "=?base64?IHBhZGRlZCA=?="),
    ("line1\nline2", "=?base64?bGluZTEKbGluZTI=?="),
    ("=?base64?literal?=", "=?base64?PT9iYXNlNjQ/bGl0ZXJhbD89?="),
];

#[test]
fn spec_encoding_examples_encode_as_documented() {
    for (original, encoded) in SPEC_ENCODING_EXAMPLES {
        assert_eq!(encode_header_value(original), encoded, "{original:?}");
    }
}

#[test]
fn spec_encoding_examples_decode_to_the_original() {
    for (original, encoded) in SPEC_ENCODING_EXAMPLES {
        assert_eq!(decode_header_value(encoded).as_deref(), Ok(original));
    }
}

#[test]
fn safe_ascii_is_borrowed_unchanged() {
    for v in [
        "",
        "a",
        "a b",
        "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~",
        "=?base64?",
        "?=",
        "=?base64",
    ] {
        assert!(
            matches!(encode_header_value(v), Cow::Borrowed(s) if s == v),
            "{v:?}"
        );
    }
}

#[test]
fn leading_or_trailing_space_is_encoded() {
    assert_eq!(encode_header_value(" a"), "=?base64?IGE=?=");
    assert_eq!(encode_header_value("a "), "=?base64?YSA=?=");
    assert_eq!(encode_header_value(" "), "=?base64?IA==?=");
}

#[test]
fn control_characters_including_tab_are_encoded() {
    for v in ["a\tb", "a\rb", "\0", "a\u{7f}"] {
        assert!(encode_header_value(v).starts_with(SENTINEL_PREFIX), "{v:?}");
    }
}

#[test]
fn sentinel_look_alikes_are_encoded() {
    for v in [
        "=?base64??=",
        "=?base64?=",
        "=?BASE64?abc?=",
        "=?Base64?x?=",
    ] {
        let encoded = encode_header_value(v);
        assert!(encoded.starts_with(SENTINEL_PREFIX), "{v:?}");
        assert_eq!(decode_header_value(&encoded), Ok(v.to_owned()));
    }
}

#[test]
fn decode_trims_surrounding_spaces_and_tabs() {
    assert_eq!(
        decode_header_value(" \tus-west1\t "),
        Ok("us-west1".to_owned())
    );
    assert_eq!(
        decode_header_value("  =?base64?IGE=?= "),
        Ok(" a".to_owned())
    );
}

#[test]
fn decode_keeps_inner_spaces_and_tabs() {
    assert_eq!(decode_header_value("a \tb"), Ok("a \tb".to_owned()));
}

#[test]
fn decode_rejects_characters_http_does_not_allow() {
    for (raw, ch, index) in [
        ("a\nb", '\n', 1),
        ("a\rb", '\r', 1),
        ("\0", '\0', 0),
        ("x\u{7f}", '\u{7f}', 1),
        ("世界", '世', 0),
    ] {
        assert_eq!(
            decode_header_value(raw),
            Err(HeaderValueError::InvalidChar { ch, index }),
            "{raw:?}"
        );
    }
}

#[test]
fn sentinel_markers_are_case_sensitive_when_decoding() {
    assert_eq!(
        decode_header_value("=?BASE64?YQ==?="),
        Ok("=?BASE64?YQ==?=".to_owned())
    );
}

#[test]
fn decode_rejects_bad_base64() {
    for raw in [
        "=?base64?not base64?=",
        "=?base64?YQ?=",
        "=?base64?YQ=?=",
        "=?base64?Y?=",
        "=?base64?YR==?=",
        "=?base64?-_==?=",
        "=?base64?=",
    ] {
        assert!(
            matches!(
                decode_header_value(raw),
                Err(HeaderValueError::InvalidBase64 { .. })
            ),
            "{raw:?}"
        );
    }
}

#[test]
fn decode_rejects_payload_that_is_not_utf8() {
    // 0xFF 0xFE
    assert_eq!(
        decode_header_value("=?base64?//4=?="),
        Err(HeaderValueError::InvalidUtf8 { valid_up_to: 0 })
    );
}

#[test]
fn decode_of_empty_payload_is_empty_string() {
    assert_eq!(decode_header_value("=?base64??="), Ok(String::new()));
    assert_eq!(decode_header_value(""), Ok(String::new()));
}

// ---- argument extraction ----

#[test]
fn lookup_path_follows_nested_objects() {
    let args = json!({ "target": { "tenant": "acme" }, "n": 1 });
    assert_eq!(
        lookup_path(&args, &path(&["target", "tenant"])),
        Some(&json!("acme"))
    );
    assert_eq!(lookup_path(&args, &path(&["n"])), Some(&json!(1)));
    assert_eq!(lookup_path(&args, &[]), Some(&args));
}

#[test]
fn lookup_path_is_none_when_absent_or_not_an_object() {
    let args = json!({ "target": "flat", "list": [{ "id": 1 }] });
    assert_eq!(lookup_path(&args, &path(&["missing"])), None);
    assert_eq!(lookup_path(&args, &path(&["target", "tenant"])), None);
    assert_eq!(lookup_path(&args, &path(&["list", "0"])), None);
    assert_eq!(lookup_path(&json!(null), &path(&["a"])), None);
}

#[test]
fn lookup_path_returns_explicit_null() {
    assert_eq!(
        lookup_path(&json!({ "a": null }), &path(&["a"])),
        Some(&Value::Null)
    );
}

#[test]
fn param_header_value_follows_the_type_conversion_rules() {
    let cases = [
        (json!("us-west1"), Str, Some("us-west1")),
        (
            json!("Hello, 世界"),
            Str,
            Some("=?base64?SGVsbG8sIOS4lueVjA==?="),
        ),
        (json!(""), Str, Some("")),
        (json!(42), Int, Some("42")),
        (json!(-7), Int, Some("-7")),
        (json!(42.0), Int, Some("42")),
        (json!(-0.0), Int, Some("0")),
        (
            json!(9_007_199_254_740_991_i64),
            Int,
            Some("9007199254740991"),
        ),
        (
            json!(-9_007_199_254_740_991_i64),
            Int,
            Some("-9007199254740991"),
        ),
        (json!(true), Bool, Some("true")),
        (json!(false), Bool, Some("false")),
        (json!(null), Str, None),
        (json!(null), Int, None),
        (json!(null), Bool, None),
    ];
    for (value, kind, expected) in cases {
        assert_eq!(
            param_header_value(&value, kind),
            Ok(expected.map(str::to_owned)),
            "{value} as {kind}"
        );
    }
}

#[test]
fn param_header_value_rejects_integers_outside_the_safe_range() {
    for value in [
        json!(9_007_199_254_740_992_i64),
        json!(-9_007_199_254_740_992_i64),
        json!(u64::MAX),
        json!(i64::MIN),
        json!(1e300),
        json!(9_007_199_254_740_992.0),
    ] {
        assert!(
            matches!(
                param_header_value(&value, Int),
                Err(ParamValueError::IntegerOutOfRange { .. })
            ),
            "{value}"
        );
    }
}

#[test]
fn param_header_value_rejects_values_of_the_wrong_type() {
    let cases = [
        (json!(42.5), Int),
        (json!("42"), Int),
        (json!(1), Bool),
        (json!("true"), Bool),
        (json!(5), Str),
        (json!(["a"]), Str),
        (json!({}), Str),
    ];
    for (value, kind) in cases {
        assert!(
            matches!(param_header_value(&value, kind), Err(ParamValueError::WrongType { expected, .. }) if expected == kind),
            "{value} as {kind}"
        );
    }
}

// ---- server-side comparison ----

#[test]
fn matching_strings_are_accepted_exactly() {
    assert_eq!(
        header_matches_value("us-west1", &json!("us-west1"), Str),
        Ok(())
    );
    assert_eq!(header_matches_value("", &json!(""), Str), Ok(()));
    assert_eq!(
        header_matches_value(
            "=?base64?SGVsbG8sIOS4lueVjA==?=",
            &json!("Hello, 世界"),
            Str
        ),
        Ok(())
    );
}

#[test]
fn string_comparison_is_case_sensitive() {
    assert_eq!(
        header_matches_value("US-WEST1", &json!("us-west1"), Str),
        Err(HeaderValueError::Mismatch {
            kind: Str,
            header: "US-WEST1".to_owned(),
            body: "\"us-west1\"".to_owned(),
        })
    );
}

#[test]
fn plain_sentinel_look_alike_does_not_match_its_literal_body() {
    // A conforming client would have encoded it, so a plain one decodes
    // to something else.
    assert!(header_matches_value("=?base64?YQ==?=", &json!("=?base64?YQ==?="), Str).is_err());
}

#[test]
fn integers_compare_numerically() {
    for (header, body) in [
        ("42", json!(42)),
        ("42", json!(42.0)),
        ("42.0", json!(42)),
        ("4.2e1", json!(42)),
        ("420E-1", json!(42)),
        ("-7", json!(-7)),
        ("0", json!(0)),
        ("-0", json!(0)),
        ("0.000", json!(-0.0)),
        ("9007199254740991", json!(9_007_199_254_740_991_i64)),
        ("-9007199254740991", json!(-9_007_199_254_740_991_i64)),
        ("=?base64?NDI=?=", json!(42)),
    ] {
        assert_eq!(
            header_matches_value(header, &body, Int),
            Ok(()),
            "{header} vs {body}"
        );
    }
}

/// The spec compares integer headers numerically, so every decimal spelling
/// of the body's value matches, a sign and leading zeros included; `042` is
/// decimal forty-two, never octal thirty-four.
// Spec: basic/transports/streamable-http.mdx#server-validation
#[test]
fn integer_headers_compare_numerically_both_ways() {
    for (header, body) in [
        ("042", json!(42)),
        ("+42", json!(42)),
        ("+042", json!(42)),
        ("0042.000", json!(42.0)),
        ("+4.2e1", json!(42)),
        ("-042", json!(-42)),
        ("-0", json!(0)),
        ("+0", json!(0)),
        ("000", json!(0)),
        ("+09007199254740991", json!(9_007_199_254_740_991_i64)),
    ] {
        assert_eq!(
            header_matches_value(header, &body, Int),
            Ok(()),
            "{header} vs {body}"
        );
    }
    assert_eq!(
        header_matches_value("042", &json!(34), Int),
        Err(HeaderValueError::Mismatch {
            kind: Int,
            header: "042".to_owned(),
            body: "34".to_owned(),
        })
    );
    assert!(header_matches_value("+42", &json!(-42), Int).is_err());
    assert_eq!(
        header_matches_value("+09007199254740992", &json!(1), Int),
        Err(HeaderValueError::IntegerOutOfRange {
            header: "+09007199254740992".to_owned()
        })
    );
}

#[test]
fn different_integers_mismatch() {
    assert_eq!(
        header_matches_value("43", &json!(42), Int),
        Err(HeaderValueError::Mismatch {
            kind: Int,
            header: "43".to_owned(),
            body: "42".to_owned(),
        })
    );
    assert!(header_matches_value("-42", &json!(42), Int).is_err());
}

#[test]
fn non_integer_headers_are_rejected() {
    for header in [
        "", "abc", "42.5", "4 2", "0x2A", "1e", "1.", ".5", "--1", "NaN", "inf", "1e-1", "+", "-",
        "++42", "+-42", "-+42", "1_000", "4,2", "0o52", "042.5",
    ] {
        assert_eq!(
            header_matches_value(header, &json!(42), Int),
            Err(HeaderValueError::NotAnInteger {
                header: header.to_owned()
            }),
            "{header:?}"
        );
    }
}

#[test]
fn out_of_range_integer_headers_are_rejected() {
    for header in [
        "9007199254740992",
        "-9007199254740992",
        "1e16",
        "99999999999999999999",
        "1e1000000000000",
    ] {
        assert_eq!(
            header_matches_value(header, &json!(1), Int),
            Err(HeaderValueError::IntegerOutOfRange {
                header: header.to_owned()
            }),
            "{header:?}"
        );
    }
}

#[test]
fn integer_text_is_read_exactly() {
    assert_eq!(
        parse_integer_text("9007199254740991.0"),
        IntegerText::Integer(MAX_SAFE_INTEGER)
    );
    assert_eq!(
        parse_integer_text("9007199254740991.4"),
        IntegerText::NotAnInteger
    );
    assert_eq!(
        parse_integer_text("0e99999999999999999999"),
        IntegerText::Integer(0)
    );
    assert_eq!(
        parse_integer_text("1e-99999999999999999999"),
        IntegerText::NotAnInteger
    );
    assert_eq!(parse_integer_text("1.55e1"), IntegerText::NotAnInteger);
    assert_eq!(parse_integer_text("1.50e1"), IntegerText::Integer(15));
    assert_eq!(parse_integer_text("1.50e2"), IntegerText::Integer(150));
    assert_eq!(parse_integer_text("100e-2"), IntegerText::Integer(1));
    assert_eq!(parse_integer_text("1E+3"), IntegerText::Integer(1000));
}

#[test]
fn out_of_range_or_fractional_body_integers_are_rejected() {
    assert!(matches!(
        header_matches_value("9007199254740992", &json!(9_007_199_254_740_992_i64), Int),
        Err(HeaderValueError::Body(
            ParamValueError::IntegerOutOfRange { .. }
        ))
    ));
    assert!(matches!(
        header_matches_value("42", &json!(42.5), Int),
        Err(HeaderValueError::Body(ParamValueError::WrongType { .. }))
    ));
}

#[test]
fn booleans_match_only_lowercase() {
    assert_eq!(header_matches_value("true", &json!(true), Bool), Ok(()));
    assert_eq!(header_matches_value("false", &json!(false), Bool), Ok(()));
    assert!(matches!(
        header_matches_value("false", &json!(true), Bool),
        Err(HeaderValueError::Mismatch { .. })
    ));
    for header in ["True", "TRUE", "1", "yes", ""] {
        assert_eq!(
            header_matches_value(header, &json!(true), Bool),
            Err(HeaderValueError::NotABoolean {
                header: header.to_owned()
            }),
            "{header:?}"
        );
    }
}

#[test]
fn header_for_null_body_value_is_unexpected() {
    assert_eq!(
        header_matches_value("x", &Value::Null, Str),
        Err(HeaderValueError::UnexpectedHeader {
            header: "x".to_owned()
        })
    );
}

#[test]
fn body_of_the_wrong_type_is_reported_as_such() {
    assert_eq!(
        header_matches_value("42", &json!("42"), Int),
        Err(HeaderValueError::Body(ParamValueError::WrongType {
            expected: Int,
            found: "string",
        }))
    );
}

#[test]
fn undecodable_header_is_rejected_before_comparison() {
    assert!(matches!(
        header_matches_value("a\nb", &json!("a\nb"), Str),
        Err(HeaderValueError::InvalidChar { .. })
    ));
}

#[test]
fn what_a_client_sends_matches_on_the_server() {
    let cases = [
        (json!("us-west1"), Str),
        (json!(" padded "), Str),
        (json!("=?base64?literal?="), Str),
        (json!(""), Str),
        (json!(42.0), Int),
        (json!(-9_007_199_254_740_991_i64), Int),
        (json!(false), Bool),
    ];
    for (value, kind) in cases {
        let sent = match param_header_value(&value, kind) {
            Ok(Some(sent)) => sent,
            other => panic!("{value}: {other:?}"),
        };
        assert_eq!(header_matches_value(&sent, &value, kind), Ok(()), "{value}");
    }
}

#[test]
fn mismatch_message_says_what_differs() {
    let msg = HeaderValueError::Mismatch {
        kind: Str,
        header: "foo".to_owned(),
        body: "\"bar\"".to_owned(),
    }
    .to_string();
    assert!(
        msg.contains("\"foo\"") && msg.contains("\"bar\"") && msg.contains("does not match"),
        "{msg}"
    );
}
