//! Entry points for the fuzz targets in `fuzz/` (feature `fuzzing`): thin
//! wrappers that take the fuzzer's bytes, drive one internal input path, and
//! panic when one of its contracts breaks. Not a stable API.
//!
//! Each function is total over its input: a panic means a bug, either one
//! reachable from input (the input paths must never panic) or a broken
//! contract asserted here (a fast path that disagrees with its general path,
//! two validators that disagree, a forged state that opens).

use crate::legacy;
use crate::mrtr::StateKeys;
use crate::mrtr::seal::{self, Binding};
use crate::schema::{CompiledSchema, EngineKind};
use crate::server::{Accepted, Prepared, Reply, Server, ServerConfig};
use crate::uri_template::UriTemplate;
use bytes::Bytes;
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};
use toolwire_proto::header::{
    PrimitiveKind, decode_header_value, encode_header_value, header_matches_value,
    param_header_value, validate_x_mcp_headers,
};
use toolwire_proto::{MAX_DEPTH, Message};

fn server() -> &'static Server {
    static SERVER: OnceLock<Server> = OnceLock::new();
    SERVER.get_or_init(|| Server::new(ServerConfig::new("fuzz", "0.0.0")))
}

/// A legacy session for the legacy-era path of [`decode_and_prepare`].
fn legacy_session() -> &'static Arc<legacy::Session> {
    static SESSION: OnceLock<Arc<legacy::Session>> = OnceLock::new();
    SESSION.get_or_init(|| Arc::new(legacy::Session::new("2025-11-25", Default::default(), None)))
}

/// The request a [`Prepared`] holds, as text, without the bytes it was read
/// from (those differ between the two paths by design); and the arguments
/// MRTR would read back from those bytes.
fn describe(mut p: Prepared) -> (String, Option<Value>) {
    let raw = p.params.raw.take();
    let text = format!(
        "{:?} {:?} {:?} {:?} {:?}",
        p.id, p.method, p.params, p.meta, p.who
    );
    (text, raw.map(|r| r.arguments()))
}

/// The JSON-RPC decoder and both prepare paths, modern and legacy.
///
/// Decodes with `Message::from_slice`, prepares a request with
/// `Server::prepare`, runs the legacy era checks, and asserts the contract
/// of `Server::prepare_message` (ARCHITECTURE.md): whenever the one-pass
/// decoder answers, the general path gives the same request (and the same
/// arguments to bind a sealed state to); when it declines, it hands the
/// bytes back untouched. Checked at the usual depth bound and a small one.
pub fn decode_and_prepare(data: &[u8]) {
    for depth in [MAX_DEPTH, 3] {
        decode_and_prepare_at(data, depth);
    }
}

fn decode_and_prepare_at(data: &[u8], depth: usize) {
    let server = server();
    let general = Message::from_slice_with_max_depth(data, depth);
    let general_prepared = match general {
        Err(e) => {
            let _ = toolwire_proto::encode_error(e.id(), &e.to_error_object());
            None
        }
        Ok(Message::Request(req)) => {
            // The legacy era: the same request inside a legacy session (the
            // era decided from the parsed `_meta`, an `initialize` opening
            // a session).
            if let Ok(Message::Request(again)) = Message::from_slice_with_max_depth(data, depth)
                && let Accepted::Initialize(id, init) =
                    server.accept(again, Some(legacy::for_pipeline(legacy_session())))
            {
                let _ = legacy::open(server, &id, *init);
            }
            Some(match server.accept(req, None) {
                Accepted::Request(p) => Ok(p),
                Accepted::Refused(reply, _) | Accepted::NoSession(reply) => Err(reply),
                Accepted::Initialize(id, _) => Err(Reply::error(
                    Some(&id),
                    &toolwire_proto::ErrorObject::invalid_params("params._meta is required"),
                )),
            })
        }
        Ok(Message::Notification(n)) => {
            let _ = server.notification(&n);
            None
        }
        Ok(Message::Response(r)) => {
            result_matches_the_message(data, &r);
            None
        }
    };
    match server.prepare_message(Bytes::copy_from_slice(data), depth) {
        Err(back) => assert_eq!(&back[..], data, "prepare_message changed the bytes"),
        Ok(fast) => {
            let general = match general_prepared {
                Some(Ok(p)) => p,
                Some(Err(reply)) => panic!(
                    "the fast path answered but the general path refused: {:?}",
                    String::from_utf8_lossy(reply.body())
                ),
                None => panic!("the fast path answered but the message is not a request"),
            };
            assert_eq!(
                describe(fast),
                describe(general),
                "the fast path and the general path disagree"
            );
        }
    }
}

/// A result response, whichever reader read it (the plain one or the
/// general one), holds what the message's own members hold: `jsonrpc` is
/// `"2.0"`, the id is its `id` and the result its `result`, read here
/// apart, as a `Value`.
fn result_matches_the_message(data: &[u8], response: &toolwire_proto::Response) {
    let Ok(raw) = &response.outcome else {
        return;
    };
    let message: Value = serde_json::from_slice(data).expect("a decoded message is JSON");
    assert_eq!(message["jsonrpc"], "2.0", "the version");
    let id = response.id.as_ref().expect("a result response has an id");
    let read: toolwire_proto::RequestId =
        serde_json::from_value(message["id"].clone()).expect("the id reads");
    assert_eq!(&read, id, "the id");
    let result: Value = serde_json::from_str(raw.get()).expect("the result is JSON");
    assert_eq!(message["result"], result, "the result");
}

/// The header-value decoder and the `x-mcp-header` rules.
///
/// The input is split at its first NUL: before it, a header value (as
/// UTF-8, lossily); after it, a JSON value used both as an `inputSchema`
/// for [`validate_x_mcp_headers`] and as a body value to compare with the
/// header. Asserts that encoding round-trips through decoding, that a value
/// a client would send for a body value matches that body value, and that
/// decoding twice changes nothing further for a plain value.
pub fn header(data: &[u8]) {
    let (head, tail) = split_nul(data);
    let raw = String::from_utf8_lossy(head);
    let decoded = decode_header_value(&raw);
    let encoded = encode_header_value(&raw);
    assert_eq!(
        decode_header_value(&encoded).as_deref(),
        Ok(&*raw),
        "decode(encode(v)) != v"
    );
    if let Ok(d) = &decoded {
        let again = encode_header_value(d);
        assert_eq!(decode_header_value(&again).as_deref(), Ok(d.as_str()));
    }
    let Ok(value) = serde_json::from_slice::<Value>(tail) else {
        return;
    };
    if let Ok(params) = validate_x_mcp_headers(&value) {
        for p in &params {
            assert!(!p.header_name().is_empty());
        }
    }
    for kind in [
        PrimitiveKind::String,
        PrimitiveKind::Integer,
        PrimitiveKind::Boolean,
    ] {
        let _ = header_matches_value(&raw, &value, kind);
        if let Ok(Some(sent)) = param_header_value(&value, kind) {
            assert_eq!(
                header_matches_value(&sent, &value, kind),
                Ok(()),
                "the header a client sends for {value} as {kind:?} does not match it"
            );
        }
    }
}

/// The URI template parser and matcher.
///
/// The input is split at its first NUL: a template, then a URI. Parses the
/// template, matches the URI, and asserts that matched values expand back
/// to the same URI as themselves (matching is the inverse of expansion),
/// and that no variable of an operator that yields one path segment
/// (`{x}`, `{/x}`, `{.x}`, `{;x}`) yields a `/`. The URI's text is also used
/// as the value of every variable: its expansion must match again with the
/// same expansion.
pub fn uri_template(data: &[u8]) {
    let (head, tail) = split_nul(data);
    let (Ok(template), Ok(uri)) = (std::str::from_utf8(head), std::str::from_utf8(tail)) else {
        return;
    };
    let Ok(t) = UriTemplate::parse(template) else {
        return;
    };
    assert_eq!(t.to_string(), template);
    check_fixed_point(&t, uri);
    let expanded = t.expand(|_| Some(uri));
    check_fixed_point(&t, &expanded);
}

fn check_fixed_point(t: &UriTemplate, uri: &str) {
    let Some(vars) = t.match_uri(uri) else {
        return;
    };
    for (name, value) in &vars {
        assert!(t.has_variable(name), "{name} is not a variable of {t}");
        if t.yields_segment(name) {
            assert!(
                !value.contains('/'),
                "{t} matched {uri} with {name} = {value:?}"
            );
        }
    }
    let first = t.expand(|n| vars.get(n).map(String::as_str));
    let again: BTreeMap<String, String> = t
        .match_uri(&first)
        .unwrap_or_else(|| panic!("{t}: the expansion {first:?} of {vars:?} does not match"));
    let second = t.expand(|n| again.get(n).map(String::as_str));
    assert_eq!(first, second, "{t}: expansion is not stable");
}

/// The built-in schema validator against `jsonschema`.
///
/// An input with a NUL is a schema, then an instance, each JSON. An input
/// without one drives a generator instead: its bytes pick keywords and
/// values of the built-in subset (most mutated JSON no longer parses, and
/// the generator keeps every input meaningful). When the built-in
/// validator takes the schema, both engines must give the instance the
/// same verdict.
pub fn schema(data: &[u8]) {
    let (schema, instance) = if data.contains(&0) {
        let (head, tail) = split_nul(data);
        let (Ok(schema), Ok(instance)) = (
            serde_json::from_slice::<Value>(head),
            serde_json::from_slice::<Value>(tail),
        ) else {
            return;
        };
        (schema, instance)
    } else {
        let mut g = Gen(data);
        let mut schema = g.schema(0);
        if g.byte().is_multiple_of(8)
            && let Value::Object(m) = &mut schema
        {
            m.insert(
                "$schema".into(),
                json!("http://json-schema.org/draft-07/schema#"),
            );
        }
        (schema, g.value(0))
    };
    let Ok(compiled) = CompiledSchema::compile(&schema) else {
        return;
    };
    let _ = compiled.check(&instance);
    if compiled.engine() != EngineKind::Builtin {
        return;
    }
    let reference = CompiledSchema::compile_with_jsonschema(&schema).unwrap_or_else(|e| {
        panic!("the built-in validator took {schema}, jsonschema refuses: {e}")
    });
    let got = compiled.check(&instance);
    let want = reference.check(&instance);
    assert_eq!(
        got.is_ok(),
        want.is_ok(),
        "verdicts differ\nschema:   {schema}\ninstance: {instance}\nbuilt-in: {got:?}\njsonschema: {want:?}"
    );
}

/// Schemas and instances from bytes (zeros once they run out).
struct Gen<'a>(&'a [u8]);

impl Gen<'_> {
    fn byte(&mut self) -> u8 {
        let (&b, rest) = self.0.split_first().unwrap_or((&0, &[]));
        self.0 = rest;
        b
    }

    fn pick<T: Clone>(&mut self, from: &[T]) -> T {
        from[usize::from(self.byte()) % from.len()].clone()
    }

    fn number(&mut self) -> Value {
        self.pick(&[
            json!(0),
            json!(1),
            json!(-1),
            json!(2),
            json!(3),
            json!(42),
            json!(0.5),
            json!(1.0),
            json!(-0.0),
            json!(2.5),
            json!(42.0),
            json!(1e308),
            json!(-1e308),
            json!(9_007_199_254_740_993_i64),
            json!(u64::MAX),
            json!(i64::MIN),
            json!(1e-7),
            json!(0.1),
            json!(0.3),
        ])
    }

    fn name(&mut self) -> String {
        self.pick(&["a", "b", "c", "", "é"]).to_owned()
    }

    fn value(&mut self, depth: usize) -> Value {
        let limit = if depth > 3 { 4 } else { 7 };
        match self.byte() % limit {
            0 => Value::Null,
            1 => Value::Bool(self.byte().is_multiple_of(2)),
            2 | 3 => self.number(),
            4 => json!(self.pick(&["", "a", "ab", "abc", "é", "😀😀", "1", "2020-01-01"])),
            5 => {
                let n = self.byte() % 4;
                Value::Array((0..n).map(|_| self.value(depth + 1)).collect())
            }
            _ => {
                let n = self.byte() % 4;
                let mut m = serde_json::Map::new();
                for _ in 0..n {
                    let k = self.name();
                    m.insert(k, self.value(depth + 1));
                }
                Value::Object(m)
            }
        }
    }

    fn schema(&mut self, depth: usize) -> Value {
        if depth > 0 && self.byte().is_multiple_of(8) {
            return Value::Bool(self.byte().is_multiple_of(2));
        }
        let types = [
            "string", "integer", "number", "boolean", "null", "array", "object",
        ];
        let mut m = serde_json::Map::new();
        let count = self.byte() % 6;
        for _ in 0..count {
            let (key, value) = match self.byte() % 20 {
                0 => ("type", json!(self.pick(&types))),
                1 => ("type", json!([self.pick(&types), self.pick(&types)])),
                2 => ("minimum", self.number()),
                3 => ("maximum", self.number()),
                4 => ("exclusiveMinimum", self.number()),
                5 => ("exclusiveMaximum", self.number()),
                6 => (
                    "multipleOf",
                    self.pick(&[json!(1), json!(2), json!(3), json!(0.5), json!(2.0)]),
                ),
                7 => (
                    self.pick(&[
                        "minLength",
                        "maxLength",
                        "minItems",
                        "maxItems",
                        "minProperties",
                        "maxProperties",
                    ]),
                    json!(self.byte() % 4),
                ),
                8 => {
                    let n = 1 + self.byte() % 3;
                    (
                        "enum",
                        Value::Array((0..n).map(|_| self.value(1)).collect()),
                    )
                }
                9 => ("const", self.value(1)),
                10 => {
                    let n = self.byte() % 3;
                    (
                        "required",
                        Value::Array((0..n).map(|_| json!(self.name())).collect()),
                    )
                }
                11 | 12 if depth < 3 => {
                    let n = 1 + self.byte() % 3;
                    let mut props = serde_json::Map::new();
                    for _ in 0..n {
                        let k = self.name();
                        props.insert(k, self.schema(depth + 1));
                    }
                    ("properties", Value::Object(props))
                }
                13 if depth < 3 => ("additionalProperties", self.schema(depth + 1)),
                14 if depth < 3 => ("items", self.schema(depth + 1)),
                15 => ("uniqueItems", json!(self.byte().is_multiple_of(2))),
                16 => ("description", json!("d")),
                17 => ("format", json!(self.pick(&["date", "email", "uint32"]))),
                18 => ("default", self.value(1)),
                _ => ("title", json!("t")),
            };
            m.insert(key.to_owned(), value);
        }
        Value::Object(m)
    }
}

/// What [`sealed_state`] opens against: a keyring, the binding, a fixed
/// clock, and one state sealed by the keyring's sealing key.
struct SealFixture {
    keys: StateKeys,
    binding: Binding,
    now: SystemTime,
    sealed: String,
    state: Value,
}

fn seal_fixture() -> &'static SealFixture {
    static FIXTURE: OnceLock<SealFixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let keys = StateKeys::from_keys([[7; 32], [9; 32]]).expect("two keys");
        let binding = Binding::new("tools/call", "fuzz", &json!({"a": 1}), Some("alice"));
        let now = UNIX_EPOCH + Duration::from_secs(2_000_000_000);
        let state = json!({"step": 2, "seen": ["x"]});
        let asked = vec!["name".to_owned()];
        let sealed = seal::seal(
            &keys,
            &binding,
            3,
            asked,
            &state,
            Duration::from_secs(600),
            now,
        )
        .expect("sealing works");
        SealFixture {
            keys,
            binding,
            now,
            sealed,
            state,
        }
    })
}

/// Opening arbitrary bytes as `requestState`.
///
/// The input, as text, must never open. Then the input edits a genuinely
/// sealed state (pairs of bytes: a position and a replacement character);
/// the edited state opens only if it is the original, and then to the
/// original state.
pub fn sealed_state(data: &[u8]) {
    let f = seal_fixture();
    let text = String::from_utf8_lossy(data);
    if text != f.sealed {
        assert!(
            seal::open(&f.keys, &f.binding, &text, f.now).is_err(),
            "arbitrary input opened as a sealed state"
        );
    }
    let mut edited = f.sealed.clone().into_bytes();
    for pair in data.chunks_exact(2) {
        let at = usize::from(pair[0]) % edited.len();
        edited[at] = pair[1];
    }
    let edited = String::from_utf8_lossy(&edited);
    match seal::open(&f.keys, &f.binding, &edited, f.now) {
        Ok(opened) => {
            assert_eq!(edited, f.sealed, "an edited state opened");
            assert_eq!((opened.round, &opened.state), (3, &f.state));
            assert_eq!(opened.asked, ["name"]);
        }
        Err(e) => assert_ne!(edited, f.sealed, "the original state failed to open: {e}"),
    }
}

/// The client's SSE parser.
///
/// Parses the input in one chunk, and again split at a point chosen by its
/// first byte: the events, or the refusal of an oversized one, must not
/// depend on how the bytes were chunked, and no event is over the limit.
pub fn sse(data: &[u8]) {
    use crate::client::transport::sse::SseParser;
    const LIMIT: usize = 64;
    let whole = SseParser::new(LIMIT).push(data);
    let cut = data
        .first()
        .map_or(0, |b| usize::from(*b) % (data.len() + 1));
    let mut p = SseParser::new(LIMIT);
    let split = p.push(&data[..cut]).and_then(|mut events| {
        events.extend(p.push(&data[cut..])?);
        Ok(events)
    });
    match (&whole, &split) {
        (Ok(a), Ok(b)) => {
            assert_eq!(a, b, "chunking changed the events");
            assert!(
                a.iter().all(|e| e.len() <= LIMIT),
                "an event over the limit"
            );
        }
        (Err(_), Err(_)) => {}
        _ => panic!("chunking changed the refusal: {whole:?} vs {split:?}"),
    }
}

/// The bytes before and after the first NUL (all of them, and nothing, if
/// there is none).
fn split_nul(data: &[u8]) -> (&[u8], &[u8]) {
    match data.iter().position(|&b| b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &[]),
    }
}

#[cfg(test)]
mod tests {
    /// The decode target's seeds pass it: AFL++ refuses to start from a seed
    /// that fails, so a change to the target or the decoders that a seed
    /// trips is found here first.
    #[test]
    fn the_decode_seeds_pass_the_decode_target() {
        let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../../fuzz/corpus/decode");
        let mut seeds = 0;
        for entry in std::fs::read_dir(&dir).expect("the decode corpus") {
            let path = entry.expect("an entry").path();
            super::decode_and_prepare(&std::fs::read(&path).expect("a seed"));
            seeds += 1;
        }
        assert!(seeds > 10, "{seeds} seeds in {}", dir.display());
    }
}
