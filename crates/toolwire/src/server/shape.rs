//! The result shape of an era ([`Shape`]): the 2026-07-28 schema, or an
//! initialize-based revision's, which the pipeline encodes results and
//! errors for (`RpcError::into_shape`, `server/outcome.rs`) from the typed
//! value, never from an encoded reply.
//!
//! A legacy result has no `resultType`, `ttlMs`, `cacheScope` or
//! `serverInfo` `_meta` (the empty results of `ping` and `logging/setLevel`
//! must be exactly `{}`); `structuredContent` and `outputSchema` only where
//! the negotiated schema has them (2025-06-18 on) and only as objects, which
//! those schemas require.
//!
//! Spec (2025-11-25): schema.ts `CallToolResult.structuredContent`,
//! `Tool.outputSchema` (`type: "object"`).

use serde_json::{Map, Value};
use toolwire_proto::meta::SERVER_INFO_KEY;

/// The result shape of an era: the 2026-07-28 schema, or a legacy one at
/// the negotiated version. Cheap to copy into the code that encodes results.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Shape {
    /// 2026-07-28.
    Modern,
    /// The negotiated initialize-based revision.
    Legacy(&'static str),
}

impl Shape {
    /// A complete (2026-07-28) result, as a value, in this shape's schema.
    pub(crate) fn result(self, result: Value) -> Value {
        match self {
            Self::Modern => result,
            Self::Legacy(version) => legacy_result(version, result),
        }
    }
}

/// The revision that introduced structured tool output.
const STRUCTURED_SINCE: &str = "2025-06-18";

/// Strips the 2026-only members from a result, for the schema of
/// `version`.
fn legacy_result(version: &str, mut result: Value) -> Value {
    let Some(obj) = result.as_object_mut() else {
        return result;
    };
    obj.remove("resultType");
    obj.remove("ttlMs");
    obj.remove("cacheScope");
    if let Some(Value::Object(meta)) = obj.get_mut("_meta") {
        meta.remove(SERVER_INFO_KEY);
        if meta.is_empty() {
            obj.remove("_meta");
        }
    }
    // ISO dates compare as strings.
    let structured = version >= STRUCTURED_SINCE;
    if obj
        .get("structuredContent")
        .is_some_and(|s| !structured || !s.is_object())
    {
        obj.remove("structuredContent");
    }
    if let Some(Value::Array(tools)) = obj.get_mut("tools") {
        for tool in tools.iter_mut().filter_map(Value::as_object_mut) {
            strip_output_schema(tool, structured);
        }
    }
    result
}

fn strip_output_schema(tool: &mut Map<String, Value>, structured: bool) {
    let keep = structured
        && tool
            .get("outputSchema")
            .is_some_and(|s| s.get("type").and_then(Value::as_str) == Some("object"));
    if !keep {
        tool.remove("outputSchema");
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn result_drops_2026_members_and_non_object_structured_content() {
        let v = legacy_result(
            "2025-11-25",
            json!({"resultType":"complete","ttlMs":1,"cacheScope":"public",
                   "_meta":{"io.modelcontextprotocol/serverInfo":{}},
                   "content":[],"structuredContent":[1,2]}),
        );
        assert_eq!(v, json!({"content":[]}));
        let v = legacy_result(
            "2025-11-25",
            json!({"content":[],"structuredContent":{"a":1}}),
        );
        assert_eq!(v["structuredContent"], json!({"a":1}));
        let v = legacy_result(
            "2025-03-26",
            json!({"content":[],"structuredContent":{"a":1}}),
        );
        assert!(v.get("structuredContent").is_none());
    }

    #[test]
    fn empty_results_stay_empty() {
        assert_eq!(
            legacy_result("2025-11-25", json!({"resultType":"complete"})),
            json!({})
        );
    }

    #[test]
    fn modern_results_are_left_as_they_are() {
        let v = json!({"resultType":"complete","ttlMs":1,"content":[]});
        assert_eq!(Shape::Modern.result(v.clone()), v);
    }
}
