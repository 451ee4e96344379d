//! A `tools/call` result written out by hand: the bytes serde_json writes
//! for a [`CallToolResult`], without serde's walk over the members every
//! call has. The result type and a plain text block go in as literals, and
//! a string with nothing to escape is copied as it is; serde_json writes
//! everything else (other blocks, `structuredContent`, `_meta`, a string
//! with an escape). `tests` compares the two over generated results.

use toolwire_proto::types::{CallToolResult, ContentBlock, ResultType, TextContent};

/// Writes `result` as `serde_json::to_writer` would.
pub(crate) fn call_result(out: &mut Vec<u8>, result: &CallToolResult) -> serde_json::Result<()> {
    out.extend_from_slice(br#"{"resultType":"#);
    match result.result_type {
        ResultType::Complete => out.extend_from_slice(br#""complete""#),
        other => serde_json::to_writer(&mut *out, &other)?,
    }
    out.extend_from_slice(br#","content":["#);
    for (i, block) in result.content.iter().enumerate() {
        if i > 0 {
            out.push(b',');
        }
        match block {
            ContentBlock::Text(TextContent {
                text,
                annotations: None,
                meta: None,
            }) => {
                out.extend_from_slice(br#"{"type":"text","text":"#);
                string(out, text)?;
                out.push(b'}');
            }
            other => serde_json::to_writer(&mut *out, other)?,
        }
    }
    out.push(b']');
    if let Some(structured) = &result.structured_content {
        out.extend_from_slice(br#","structuredContent":"#);
        serde_json::to_writer(&mut *out, structured)?;
    }
    match result.is_error {
        Some(true) => out.extend_from_slice(br#","isError":true"#),
        Some(false) => out.extend_from_slice(br#","isError":false"#),
        None => {}
    }
    if let Some(meta) = &result.meta {
        out.extend_from_slice(br#","_meta":"#);
        serde_json::to_writer(&mut *out, meta)?;
    }
    out.push(b'}');
    Ok(())
}

/// `s` as a JSON string: copied between quotes when nothing in it is
/// escaped, else written by serde_json.
fn string(out: &mut Vec<u8>, s: &str) -> serde_json::Result<()> {
    if needs_escape(s.as_bytes()) {
        return serde_json::to_writer(out, s);
    }
    out.reserve(s.len() + 2);
    out.push(b'"');
    out.extend_from_slice(s.as_bytes());
    out.push(b'"');
    Ok(())
}

/// Whether JSON escapes a byte of `s`: a control character, a quote or a
/// backslash (serde_json escapes nothing else; other bytes, UTF-8 included,
/// go as they are). Sixteen bytes at a time with no early exit inside, a
/// loop the compiler turns into vector compares.
fn needs_escape(s: &[u8]) -> bool {
    let mut chunks = s.chunks_exact(16);
    for chunk in &mut chunks {
        if chunk.iter().fold(false, |any, &b| any | escaped(b)) {
            return true;
        }
    }
    chunks.remainder().iter().any(|&b| escaped(b))
}

const fn escaped(b: u8) -> bool {
    (b < 0x20) | (b == b'"') | (b == b'\\')
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use serde_json::json;
    use toolwire_proto::types::{Annotations, ImageContent, Meta, Role};

    fn written(result: &CallToolResult) -> Vec<u8> {
        let mut out = Vec::new();
        call_result(&mut out, result).expect("writes");
        out
    }

    fn assert_same(result: &CallToolResult) {
        let want = serde_json::to_vec(result).expect("serde_json writes it");
        assert_eq!(
            String::from_utf8_lossy(&written(result)),
            String::from_utf8_lossy(&want)
        );
    }

    /// Every byte serde_json escapes, and the ones around them it does not.
    #[test]
    fn escapes_are_found_at_every_position() {
        for b in 0u8..0x80 {
            for at in [0, 7, 15, 16, 31, 40] {
                let mut s = "x".repeat(41);
                s.replace_range(at..=at, char::from(b).encode_utf8(&mut [0; 4]));
                let want = serde_json::to_string(&s).expect("a string") != format!("\"{s}\"");
                assert_eq!(needs_escape(s.as_bytes()), want, "byte {b:#x} at {at}");
                assert_same(&CallToolResult::text(s));
            }
        }
    }

    #[test]
    fn the_members_a_result_can_have_are_written_as_serde_json_writes_them() {
        let annotated = ContentBlock::Text(TextContent {
            text: "noted".into(),
            annotations: Some(Annotations {
                audience: Some(vec![Role::User]),
                priority: Some(0.5),
                last_modified: None,
            }),
            meta: None,
        });
        let mut meta = Meta::new();
        meta.insert("k".into(), json!({"a": [1, "é\n"]}));
        let with_meta = ContentBlock::Text(TextContent {
            text: "m".into(),
            annotations: None,
            meta: Some(meta.clone()),
        });
        let image = ContentBlock::Image(ImageContent::new("aGk=", "image/png"));
        for result in [
            CallToolResult::new(Vec::new()),
            CallToolResult::text(""),
            CallToolResult::text("hello, benchmark"),
            CallToolResult::text("ünïcødé ✓ and \"quotes\" \\ \t"),
            CallToolResult::error_text("bad"),
            CallToolResult::structured(json!({"sum": 3.75, "s": "a\"b"})),
            CallToolResult {
                is_error: Some(false),
                meta: Some(meta),
                ..CallToolResult::new(vec![annotated, with_meta, image, ContentBlock::text("t")])
            },
            CallToolResult {
                result_type: ResultType::InputRequired,
                ..CallToolResult::text("x")
            },
        ] {
            assert_same(&result);
        }
    }

    proptest! {
        #[test]
        fn any_text_blocks_are_written_as_serde_json_writes_them(
            texts in proptest::collection::vec(any::<String>(), 0..4),
            is_error in proptest::option::of(any::<bool>()),
        ) {
            let result = CallToolResult {
                is_error,
                ..CallToolResult::new(texts.into_iter().map(ContentBlock::text).collect())
            };
            let want = serde_json::to_vec(&result).expect("serde_json writes it");
            prop_assert_eq!(written(&result), want);
        }
    }
}
