//! Messages in the one spelling nearly every peer writes them, read
//! without the general envelope decoder: a result response
//! `{"jsonrpc":"2.0","id":ID,"result":RESULT}`, and a request's head
//! `{"jsonrpc":"2.0","id":ID,"method":"METHOD","params":`.
//!
//! The general decoder reads any member order, repeated and unknown members,
//! and the ids JSON spells in other ways, for which it goes through serde's
//! machinery: a key read and matched per member, the id as a `Value`, the
//! version as a raw value. The messages a peer actually sends are nearly
//! always compact and in this order (toolwire's own writers, serde's derive,
//! the Python SDK's models, rmcp). For them the envelope is a fixed head,
//! an id, a fixed separator, and the rest up to the closing brace.
//!
//! These readers answer only when sure, and `None` otherwise, from a
//! leading space to a member after the last one: the general decoder then
//! reads the message. For every message they accept, it gives the same
//! answer (`tests::the_plain_reader_agrees_with_the_general_decoder`, and
//! the server's own test of its request reader).

use super::{RequestId, Response};
use serde_json::value::RawValue;

/// What comes before the id.
const HEAD: &[u8] = br#"{"jsonrpc":"2.0","id":"#;
/// What comes between a response's id and its result.
const RESULT: &[u8] = br#","result":"#;
/// What comes between a request's id and its method name.
const METHOD: &[u8] = br#","method":""#;
/// What comes between a request's method name and its params.
const PARAMS: &[u8] = br#"","params":"#;
/// Integer ids of at most this many digits fit in an `i64`.
const MAX_DIGITS: usize = 18;

/// The response `bytes` spell in the plain form, or `None` for the general
/// decoder to read.
pub(super) fn read(bytes: &[u8]) -> Option<Response> {
    let rest = bytes.strip_prefix(HEAD)?;
    let (id, rest) = id(rest)?;
    let result = trim(last_member(rest.strip_prefix(RESULT)?)?);
    // An MCP result is an object. (The general decoder takes a `null`
    // result for an absent one, and other values as they are.)
    if result.first() != Some(&b'{') {
        return None;
    }
    // One JSON value, and nothing after it: a member after `result` (or a
    // second `result`) makes this fail, and the general decoder answers.
    let result: Box<RawValue> = serde_json::from_slice(result).ok()?;
    Some(Response {
        id: Some(id),
        outcome: Ok(result),
    })
}

/// A request spelled `{"jsonrpc":"2.0","id":ID,"method":"METHOD","params":PARAMS}`,
/// split at its members: `ID` a non-negative integer of at most 18 digits
/// or a string with nothing escaped, `METHOD` a string with nothing
/// escaped.
///
/// What this returns as `params` is the text between `"params":` and the
/// closing brace (which may be followed by JSON whitespace). It is not
/// checked: it is the message's `params` exactly when it is one JSON value
/// and nothing else, surrounding whitespace aside. A caller that reads it
/// as one value to its end (`serde_json::Deserializer::end`) has read the
/// message the general decoder would.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PlainRequest<'a> {
    /// The request's id.
    pub id: RequestId,
    /// The method's name.
    pub method: &'a str,
    /// The `params` member's text, unchecked (see above).
    pub params: &'a str,
}

impl<'a> PlainRequest<'a> {
    /// Splits `text`, or `None` when it is not spelled so.
    pub fn split(text: &'a str) -> Option<Self> {
        let bytes = text.as_bytes();
        let (id, rest) = id(bytes.strip_prefix(HEAD)?)?;
        let rest = rest.strip_prefix(METHOD)?;
        let method_len = unescaped_len(rest)?;
        let after = rest[method_len..].strip_prefix(PARAMS)?;
        let params_len = last_member(after)?.len();
        // Every cut above is next to an ASCII byte, so on a boundary.
        let (method, params) = (bytes.len() - rest.len(), bytes.len() - after.len());
        Some(Self {
            id,
            method: &text[method..method + method_len],
            params: &text[params..params + params_len],
        })
    }
}

/// The last member's value and what may follow it before the closing
/// brace: `bytes` without the brace and the whitespace after it.
fn last_member(bytes: &[u8]) -> Option<&[u8]> {
    let end = bytes.len() - bytes.iter().rev().take_while(|b| is_space(**b)).count();
    bytes[..end].strip_suffix(b"}")
}

/// `bytes` without JSON's whitespace at either end.
fn trim(bytes: &[u8]) -> &[u8] {
    let start = bytes.iter().take_while(|b| is_space(**b)).count();
    let end = bytes.len()
        - bytes[start..]
            .iter()
            .rev()
            .take_while(|b| is_space(**b))
            .count();
    &bytes[start..end]
}

/// JSON's whitespace, which is narrower than ASCII's (no form feed).
fn is_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | b'\r')
}

/// The length of a string's text up to its closing quote, when nothing in
/// it is escaped or a control character (which JSON refuses unescaped).
fn unescaped_len(bytes: &[u8]) -> Option<usize> {
    let end = bytes
        .iter()
        .position(|&b| b == b'"' || b == b'\\' || b < 0x20)?;
    (bytes[end] == b'"').then_some(end)
}

/// A non-negative integer id of at most [`MAX_DIGITS`] digits, or a string
/// id with nothing to unescape, and the bytes after it.
fn id(bytes: &[u8]) -> Option<(RequestId, &[u8])> {
    match *bytes.first()? {
        b'"' => {
            let body = &bytes[1..];
            let end = unescaped_len(body)?;
            let text = std::str::from_utf8(&body[..end]).ok()?;
            Some((RequestId::String(text.into()), &body[end + 1..]))
        }
        // JSON allows no leading zero: `0` stands alone, and whatever
        // follows it must be the separator.
        b'0' => Some((RequestId::Number(0), &bytes[1..])),
        b'1'..=b'9' => {
            let digits = bytes.iter().take_while(|b| b.is_ascii_digit()).count();
            if digits > MAX_DIGITS {
                return None;
            }
            let n = bytes[..digits]
                .iter()
                .fold(0i64, |n, &d| n * 10 + i64::from(d - b'0'));
            Some((RequestId::Number(n), &bytes[digits..]))
        }
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::super::{Message, decode_general};
    use super::*;

    fn plain(text: &str) -> Option<(RequestId, String)> {
        read(text.as_bytes()).map(|r| {
            let raw = r.outcome.expect("a result");
            (r.id.expect("an id"), raw.get().to_owned())
        })
    }

    #[test]
    fn the_plain_form_is_read_with_its_id_and_its_result() {
        assert_eq!(
            plain(r#"{"jsonrpc":"2.0","id":7,"result":{"resultType":"complete"}}"#),
            Some((RequestId::Number(7), r#"{"resultType":"complete"}"#.into()))
        );
        assert_eq!(
            plain(r#"{"jsonrpc":"2.0","id":"a-1","result":{"a": [1, 2]}}  "#),
            Some((RequestId::from("a-1"), r#"{"a": [1, 2]}"#.into()))
        );
        assert_eq!(
            plain("{\"jsonrpc\":\"2.0\",\"id\":0,\"result\": {} \n}\n"),
            Some((RequestId::Number(0), "{}".into()))
        );
        assert_eq!(
            plain(r#"{"jsonrpc":"2.0","id":999999999999999999,"result":{}}"#),
            Some((RequestId::Number(999_999_999_999_999_999), "{}".into()))
        );
        assert_eq!(
            plain(r#"{"jsonrpc":"2.0","id":"é","result":{"}":"}"}}"#),
            Some((RequestId::from("é"), r#"{"}":"}"}"#.into()))
        );
    }

    #[test]
    fn every_other_spelling_is_left_to_the_general_decoder() {
        for text in [
            r#" {"jsonrpc":"2.0","id":7,"result":{}}"#,
            r#"{"id":7,"jsonrpc":"2.0","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{},"x":1}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{},"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":{}}}"#,
            r#"{"jsonrpc":"2.0","id":07,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":-7,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7.0,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":1e3,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":9999999999999999999,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":"a\"b","result":{}}"#,
            r#"{"jsonrpc":"2.0","id":null,"result":{}}"#,
            r#"{"jsonrpc":"2.0","id":7,"error":{"code":1,"message":"m"}}"#,
            r#"{"jsonrpc":"2.0","id":7,"method":"m"}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":null}"#,
            r#"{"jsonrpc":"2.0","id":7,"result":[]}"#,
        ] {
            assert_eq!(plain(text), None, "{text}");
        }
        // Not UTF-8 in the id, or in the result.
        assert!(read(b"{\"jsonrpc\":\"2.0\",\"id\":\"\xff\",\"result\":{}}").is_none());
        assert!(read(b"{\"jsonrpc\":\"2.0\",\"id\":1,\"result\":{\"\xff\":1}}").is_none());
    }

    #[test]
    fn a_plain_request_is_split_at_its_members() {
        let text = r#"{"jsonrpc":"2.0","id":12,"method":"tools/call","params":{"name":"x"} }"#;
        assert_eq!(
            PlainRequest::split(text),
            Some(PlainRequest {
                id: RequestId::Number(12),
                method: "tools/call",
                params: r#"{"name":"x"} "#,
            })
        );
        let text = r#"{"jsonrpc":"2.0","id":"é","method":"ü","params":{}}"#;
        let split = PlainRequest::split(text).expect("split");
        assert_eq!((split.method, split.params), ("ü", "{}"));
        // The params are not checked: reading them to their end is.
        let text = r#"{"jsonrpc":"2.0","id":1,"method":"m","params":{}"#;
        assert_eq!(PlainRequest::split(text).expect("split").params, "{");
        for text in [
            r#"{"jsonrpc":"2.0","id":1,"method":"tools\/call","params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"method":5,"params":{}}"#,
            r#"{"jsonrpc":"2.0","id":1,"params":{},"method":"m"}"#,
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\",\"params\":{}}\u{c}",
            "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\u{1}\",\"params\":{}}",
        ] {
            assert_eq!(PlainRequest::split(text), None, "{text}");
        }
    }

    #[test]
    fn a_plain_response_decodes_the_same_through_from_slice() {
        let text = r#"{"jsonrpc":"2.0","id":3,"result":{"content":[]}}"#;
        let Ok(Message::Response(r)) = Message::from_slice(text.as_bytes()) else {
            panic!("a response")
        };
        assert_eq!(r.id, Some(RequestId::Number(3)));
        assert_eq!(r.outcome.expect("a result").get(), r#"{"content":[]}"#);
    }

    /// Every response made of one piece from each place (the plain form's
    /// own pieces and near misses of each): whenever the plain reader
    /// answers, the general decoder answers the same, and `from_slice`
    /// answers as the general decoder whatever the bytes.
    #[test]
    fn the_plain_reader_agrees_with_the_general_decoder() {
        let heads = [
            r#"{"jsonrpc":"2.0","id":"#,
            r#" {"jsonrpc":"2.0","id":"#,
            r#"{"jsonrpc":"1.0","id":"#,
            r#"{"id":"#,
        ];
        let ids = [
            "0",
            "7",
            "07",
            "-1",
            "1.0",
            "1e2",
            "123456789012345678",
            "1234567890123456789",
            r#""abc""#,
            r#""a\"b""#,
            r#""""#,
            "null",
            "{}",
        ];
        let separators = [
            r#","result":"#,
            r#","result" :"#,
            r#","error":"#,
            r#","method":"#,
            r#","result":{},"result":"#,
        ];
        let results = [
            "{}",
            " {} ",
            "[]",
            "null",
            "1",
            r#""}""#,
            r#"{"a":[1,{"b":"}"}]}"#,
            r#"{"a":1,"a":2}"#,
            r#"{"code":-32000,"message":"m"}"#,
            r#""m""#,
            "",
            "{",
            "tru",
            "\u{c}{}",
            "\t{}\r\n",
        ];
        let tails = [
            "}",
            " }\n",
            "}}",
            "",
            r#","x":1}"#,
            r#","jsonrpc":"2.0"}"#,
            "]",
            // A form feed is ASCII's whitespace, not JSON's.
            "}\u{c}",
            "\u{c}}",
        ];
        let mut read_plainly = 0;
        for head in heads {
            for id in ids {
                for separator in separators {
                    for result in results {
                        for tail in tails {
                            let text = format!("{head}{id}{separator}{result}{tail}");
                            let general = decode_general(text.as_bytes());
                            if let Some(fast) = read(text.as_bytes()) {
                                read_plainly += 1;
                                let Ok(Message::Response(r)) = &general else {
                                    panic!("read plainly: {text:?}; generally: {general:?}");
                                };
                                assert_eq!(&fast.id, &r.id, "{text}");
                                let (Ok(a), Ok(b)) = (&fast.outcome, &r.outcome) else {
                                    panic!("not both results: {text:?}");
                                };
                                assert_eq!(a.get(), b.get(), "{text}");
                            }
                            let through = Message::from_slice(text.as_bytes());
                            assert_eq!(format!("{through:?}"), format!("{general:?}"), "{text}");
                        }
                    }
                }
            }
        }
        // Valid ids (0, 7, the 18 digits, "abc", "") times whole objects
        // (six) times the two closings the reader takes, and the five
        // ids again where a lone `{` meets the tail `}}`.
        assert_eq!(read_plainly, 5 * 6 * 2 + 5);
    }
}
