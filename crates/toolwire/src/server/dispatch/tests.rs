//! `prepare_message`, the one-pass decoder, against the general path it
//! stands in for: `Message::from_slice_with_max_depth` then `prepare`.

use super::Prepared;
use crate::{Server, ServerConfig};
use bytes::Bytes;
use proptest::prelude::*;
use toolwire_proto::{MAX_DEPTH, Message};

/// What both paths must agree on, as text (the raw source differs by
/// design: the params member against the whole message).
fn summary(mut p: Prepared) -> String {
    let arguments = p.params.raw.take().map(|r| r.arguments());
    format!(
        "{:?} {:?} {:?} {:?} {:?}",
        p.id, p.method, p.params, p.meta, arguments
    )
}

/// The general path's prepared request, if it makes one.
fn general(server: &Server, bytes: &[u8]) -> Option<Prepared> {
    match Message::from_slice_with_max_depth(bytes, MAX_DEPTH) {
        Ok(Message::Request(req)) => server.prepare(req).ok(),
        _ => None,
    }
}

/// Checks the contract on `text`: when the fast path answers, the general
/// path answers the same. Returns whether the fast path answered.
fn agrees(text: &str) -> Result<bool, String> {
    let server = Server::new(ServerConfig::new("t", "1"));
    let bytes = Bytes::copy_from_slice(text.as_bytes());
    let Ok(fast) = server.prepare_message(bytes, MAX_DEPTH) else {
        return Ok(false);
    };
    let Some(slow) = general(&server, text.as_bytes()) else {
        return Err(format!(
            "fast path accepted what the general path refuses: {text}"
        ));
    };
    let (fast, slow) = (summary(fast), summary(slow));
    if fast == slow {
        Ok(true)
    } else {
        Err(format!("{text}\n fast: {fast}\n slow: {slow}"))
    }
}

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;

#[test]
fn usual_requests_take_the_fast_path() {
    for text in [
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"echo","arguments":{{"text":"hi"}},{META}}}}}"#
        ),
        format!(r#"{{"method":"tools/list","params":{{{META}}},"id":"a\"b","jsonrpc":"2.0"}}"#),
        format!(
            r#" {{ "jsonrpc" : "2.0" , "id" : 2.0 , "method" : "x/unknown" , "params" : {{ {META} , "cursor" : "c" }} }} "#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":-7,"method":"tools/call","params":{{"name":"n","arguments":null,"inputResponses":null,"requestState":"s",{META}}}}}"#
        ),
        format!(
            r#"{{"jsonrpc":"2.0","id":3,"method":"tools\/call","params":{{"name":"\u00e9",{META}}}}}"#
        ),
    ] {
        assert_eq!(agrees(&text), Ok(true), "{text}");
    }
}

#[test]
fn anything_unusual_takes_the_general_path() {
    for text in [
        // Not "2.0" byte for byte, though equal as a string.
        format!(r#"{{"jsonrpc":"\u0032.0","id":1,"method":"tools/list","params":{{{META}}}}}"#),
        format!(r#"{{"jsonrpc":"1.0","id":1,"method":"tools/list","params":{{{META}}}}}"#),
        format!(r#"{{"id":1,"method":"tools/list","params":{{{META}}}}}"#),
        // A notification, a response, an extension member.
        format!(r#"{{"jsonrpc":"2.0","method":"tools/list","params":{{{META}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","result":{{}},"params":{{{META}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","x":1,"params":{{{META}}}}}"#),
        // Bad ids.
        format!(r#"{{"jsonrpc":"2.0","id":null,"method":"tools/list","params":{{{META}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1.5,"method":"tools/list","params":{{{META}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":18446744073709551615,"method":"tools/list","params":{{{META}}}}}"#),
        // `_meta` missing, incomplete or wrong; legacy params.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":5,"io.modelcontextprotocol/clientCapabilities":{}}}}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"initialize","params":{"protocolVersion":"2025-11-25","capabilities":{},"clientInfo":{"name":"c","version":"1"}}}"#.to_owned(),
        // Duplicate members, trailing bytes, a batch, too deep.
        format!(r#"{{"jsonrpc":"2.0","id":1,"id":2,"method":"tools/list","params":{{{META}}}}}"#),
        format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}} x"#),
        format!(r#"[{{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{{{META}}}}}]"#),
        format!(
            r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{"name":"n","arguments":{{"a":{}1{}}},{META}}}}}"#,
            "[".repeat(MAX_DEPTH),
            "]".repeat(MAX_DEPTH)
        ),
        // Params that are not an object.
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":"x"}"#.to_owned(),
        r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":[]}"#.to_owned(),
    ] {
        assert_eq!(agrees(&text), Ok(false), "{text}");
    }
}

#[test]
fn a_repeated_member_name_anywhere_in_params_takes_the_general_path() {
    let caps = r#""io.modelcontextprotocol/clientCapabilities""#;
    let version = r#""io.modelcontextprotocol/protocolVersion":"2026-07-28""#;
    for params in [
        format!(r#""name":"a","name":"b",{META}"#),
        format!(r#""arguments":{{"r":"us","r":"eu"}},{META}"#),
        format!(r#""arguments":{{"d":[{{"k":{{"x":1,"x":2}}}}]}},{META}"#),
        format!(r#""arguments":{{"a":1,"\u0061":2}},{META}"#),
        format!(r#""other":{{"y":1,"y":2}},{META}"#),
        format!(r#""other":1,"other":2,{META}"#),
        format!(r#""inputResponses":{{"k":{{"v":1,"v":2}}}},{META}"#),
        format!(r#""ref":{{"t":1,"t":2}},{META}"#),
        format!(r#""argument":{{"t":1,"t":2}},{META}"#),
        format!(r#""context":{{"t":1,"t":2}},{META}"#),
        format!(r#""notifications":{{"toolsListChanged":true,"toolsListChanged":true}},{META}"#),
        format!(r#""notifications":{{"x":{{"t":1,"t":2}}}},{META}"#),
        format!(r#""_meta":{{{version},{version},{caps}:{{}}}}"#),
        format!(r#""_meta":{{{version},{caps}:{{}},"k":1,"k":2}}"#),
        format!(r#""_meta":{{{version},{caps}:{{}},"k":{{"q":1,"q":2}}}}"#),
        format!(r#""_meta":{{{version},{caps}:{{}},"traceparent":{{"q":1,"q":2}}}}"#),
        format!(
            r#""_meta":{{{version},{caps}:{{}},"io.modelcontextprotocol/clientInfo":{{"name":"c","version":"1","x":{{"q":1,"q":2}}}}}}"#
        ),
        format!(r#""_meta":{{{version},{caps}:{{"roots":{{}},"roots":{{}}}}}}"#),
        format!(r#""_meta":{{{version},{caps}:{{"roots":{{"l":1,"l":2}}}}}}"#),
        format!(r#""_meta":{{{version},{caps}:{{"z":1,"z":2}}}}"#),
        format!(r#""_meta":{{{version},{caps}:{{"elicitation":{{"form":{{"q":1,"q":2}}}}}}}}"#),
        format!(r#""_meta":{{{version},{caps}:{{"experimental":{{"e":{{}},"e":{{}}}}}}}}"#),
    ] {
        let text =
            format!(r#"{{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{{{params}}}}}"#);
        assert_eq!(agrees(&text), Ok(false), "{text}");
        // The general path names the member.
        let server = Server::new(ServerConfig::new("t", "1"));
        match Message::from_slice_with_max_depth(text.as_bytes(), MAX_DEPTH) {
            Ok(Message::Request(req)) => {
                let refused = server.prepare(req).expect_err(&text);
                let body = String::from_utf8_lossy(refused.body()).into_owned();
                assert!(body.contains("duplicate member"), "{text}: {body}");
            }
            other => panic!("{text}: {other:?}"),
        }
    }
}

/// One member of a generated envelope, as JSON text, or nothing.
fn member(name: &'static str, values: Vec<&'static str>) -> impl Strategy<Value = String> {
    prop::sample::select(values).prop_map(move |v| {
        if v.is_empty() {
            String::new()
        } else {
            format!(r#""{name}":{v}"#)
        }
    })
}

fn params() -> impl Strategy<Value = String> {
    // Valid choices are repeated so that the fast path is reached often.
    let valid = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
    let meta = prop::sample::select(vec![
        "",
        valid,
        valid,
        valid,
        r#""_meta":{"io.modelcontextprotocol/clientCapabilities":{"roots":{}},"io.modelcontextprotocol/protocolVersion":"2025-11-25","progressToken":7}"#,
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}"#,
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":[]}"#,
        r#""_meta":null"#,
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"z":1,"z":2}}"#,
        r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{},"k":{"q":1,"q":2}}"#,
    ]);
    let rest = prop::collection::vec(
        prop::sample::select(vec![
            r#""name":"echo""#,
            r#""name":5"#,
            r#""arguments":{"text":"hi","n":[1,2.5,null]}"#,
            r#""arguments":null"#,
            r#""arguments":[1]"#,
            r#""cursor":"abc""#,
            r#""inputResponses":{"a":{"action":"accept"}}"#,
            r#""inputResponses":null"#,
            r#""requestState":"s""#,
            r#""uri":"file:///x""#,
            r#""notifications":{"toolsListChanged":true}"#,
            r#""other":{"deep":[[[]]]}"#,
            r#""arguments":{"text":"hi","text":"ho"}"#,
            r#""arguments":{"n":[{"x":1,"x":2}]}"#,
            r#""other":{"y":1,"y":2}"#,
        ]),
        0..4,
    );
    (meta, rest).prop_map(|(meta, rest)| {
        let mut members: Vec<&str> = rest;
        if !meta.is_empty() {
            members.push(meta);
        }
        format!("{{{}}}", members.join(","))
    })
}

fn envelope() -> impl Strategy<Value = String> {
    let params = prop_oneof![
        4 => params().prop_map(|p| format!(r#""params":{p}"#)),
        1 => member("params", vec!["", "null", "[]", "\"x\"", "5"]),
    ];
    (
        member(
            "jsonrpc",
            vec![
                r#""2.0""#,
                r#""2.0""#,
                r#""2.0""#,
                r#""2.0""#,
                r#""1.0""#,
                r#""\u0032.0""#,
                "2",
                "",
            ],
        ),
        member(
            "id",
            vec![
                "1", "1", "1", "-3", "2.0", "2.5", r#""s""#, "null", "{}", "1e400", "",
            ],
        ),
        member(
            "method",
            vec![
                r#""tools/call""#,
                r#""tools/list""#,
                r#""x""#,
                r#""tools\/list""#,
                "1",
                "",
            ],
        ),
        params,
        member("result", vec!["", "", "", "", "", "{}"]),
        member("extra", vec!["", "", "", "", "", "1"]),
        prop::sample::select(vec!["", "", " ", "\n", " x"]),
    )
        .prop_shuffle_members()
}

/// Shuffling the members of the envelope (order must not matter).
trait ShuffleMembers {
    fn prop_shuffle_members(self) -> BoxedStrategy<String>;
}

impl<S> ShuffleMembers for S
where
    S: Strategy<Value = (String, String, String, String, String, String, &'static str)> + 'static,
{
    fn prop_shuffle_members(self) -> BoxedStrategy<String> {
        self.prop_flat_map(|(a, b, c, d, e, f, tail)| {
            let members: Vec<String> = [a, b, c, d, e, f]
                .into_iter()
                .filter(|m| !m.is_empty())
                .collect();
            Just(members)
                .prop_shuffle()
                .prop_map(move |m| format!("{{{}}}{tail}", m.join(",")))
        })
        .boxed()
    }
}

proptest! {
    #[test]
    fn fast_path_agrees_with_the_general_path(text in envelope()) {
        prop_assert!(agrees(&text).is_ok(), "{}", agrees(&text).unwrap_err());
    }

    #[test]
    fn the_plain_spelling_reads_as_the_general_path_reads_it(text in plain_envelope()) {
        prop_assert!(agrees(&text).is_ok(), "{}", agrees(&text).unwrap_err());
    }
}

/// A fixed sample of 2,000 texts from `strategy`: the properties above are
/// only worth something if their generators reach each path often, which
/// the tests below count.
fn sample(strategy: impl Strategy<Value = String>) -> impl Iterator<Item = String> {
    use proptest::strategy::ValueTree;
    use proptest::test_runner::TestRunner;
    let mut runner = TestRunner::deterministic();
    (0..2000).map(move |_| strategy.new_tree(&mut runner).expect("tree").current())
}

#[test]
fn generated_envelopes_reach_both_paths() {
    let (mut fast, mut general) = (0, 0);
    for text in sample(envelope()) {
        match agrees(&text) {
            Ok(true) => fast += 1,
            Ok(false) => general += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(fast > 20 && general > 20, "fast {fast}, general {general}");
}

/// An envelope in the plain spelling (`jsonrpc`, `id`, `method`, `params`,
/// compact), which the fast path splits by hand, with near misses at each
/// place.
fn plain_envelope() -> impl Strategy<Value = String> {
    let id = prop::sample::select(vec![
        "1",
        "0",
        "42",
        "123456789012345678",
        "1234567890123456789",
        "07",
        "-3",
        "2.0",
        r#""s""#,
        r#""""#,
        r#""a\"b""#,
        "null",
    ]);
    let method = prop::sample::select(vec![
        r#""tools/call""#,
        r#""tools/list""#,
        r#""x""#,
        r#""tools\/list""#,
        "1",
    ]);
    let params = prop_oneof![
        6 => params(),
        3 => Just(format!(r#"{{"name":"echo","arguments":{{"text":"hi"}},{META}}}"#)),
        1 => prop::sample::select(vec!["null", "[]", "5", "", "{", "{}}"]).prop_map(String::from),
    ];
    let tail = prop::sample::select(vec![
        "}",
        "}",
        "}",
        "} ",
        "}\n",
        " }\r\n",
        "}\u{c}",
        "}}",
        r#","extra":1}"#,
        "",
    ]);
    (id, method, params, tail).prop_map(|(id, method, params, tail)| {
        format!(r#"{{"jsonrpc":"2.0","id":{id},"method":{method},"params":{params}{tail}"#)
    })
}

#[test]
fn generated_plain_envelopes_reach_the_hand_split() {
    let (mut split, mut general) = (0, 0);
    for text in sample(plain_envelope()) {
        match agrees(&text) {
            Ok(true) if toolwire_proto::PlainRequest::split(&text).is_some() => split += 1,
            Ok(_) => general += 1,
            Err(e) => panic!("{e}"),
        }
    }
    assert!(
        split > 100 && general > 100,
        "split {split}, general {general}"
    );
}
