//! Shaping the pipeline's (2026-07-28) replies for a legacy peer.
//!
//! Results: no `resultType`, `ttlMs`, `cacheScope` or `serverInfo` `_meta`
//! (the empty results of `ping` and `logging/setLevel` must be exactly `{}`);
//! `structuredContent` and `outputSchema` only where the negotiated schema
//! has them (2025-06-18 on) and only as objects, which those schemas require.
//! Errors: `-32021` does not exist before 2026-07-28 and becomes `-32600`;
//! an unknown resource is `-32002`. The shim's server-to-client requests:
//! a form `elicitation/create` has no `mode` before 2025-11-25.
//!
//! Spec (2025-11-25): schema.ts `CallToolResult.structuredContent`,
//! `Tool.outputSchema` (`type: "object"`); server/resources.mdx#error-handling;
//! (2025-06-18) schema.ts `ElicitRequest`.

use crate::server::{Outcome, Reply};
use serde_json::{Map, Value};
use toolwire_proto::RequestId;
use toolwire_proto::meta::SERVER_INFO_KEY;
use toolwire_proto::types::{InputRequest, ListRootsRequestParams};

/// The revision that introduced structured tool output.
const STRUCTURED_SINCE: &str = "2025-06-18";

/// The revision that added `mode` to `elicitation/create` (URL mode).
const ELICIT_MODE_SINCE: &str = "2025-11-25";

/// Strips the 2026-only members from a result.
pub(crate) fn result(version: &str, mut result: Value) -> Value {
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

/// The params of a server-to-client request of the MRTR shim, in the
/// negotiated revision: before 2025-11-25 a form elicitation has no `mode`
/// (a URL-mode one is left as it is; the capability gate only lets it
/// through to a client that declared it). `None` for a `roots/list` without
/// params.
pub(crate) fn input_request(version: &str, request: &InputRequest) -> Option<Value> {
    let mut params = match request {
        InputRequest::Elicit(p) => serde_json::to_value(p).ok(),
        InputRequest::CreateMessage(p) => serde_json::to_value(p).ok(),
        InputRequest::ListRoots(p) if *p == ListRootsRequestParams::default() => None,
        InputRequest::ListRoots(p) => serde_json::to_value(p).ok(),
    };
    if version < ELICIT_MODE_SINCE
        && matches!(request, InputRequest::Elicit(_))
        && let Some(Value::Object(p)) = &mut params
        && p.get("mode").and_then(Value::as_str) == Some("form")
    {
        p.remove("mode");
    }
    params
}

/// A complete result encoded for a legacy peer at `version`.
pub(crate) fn encode_result(
    version: &str,
    id: &RequestId,
    value: &(impl serde::Serialize + ?Sized),
) -> Outcome {
    let value = serde_json::to_value(value).unwrap_or_else(|_| Value::Object(Map::new()));
    Outcome::Complete(Reply::result(id, &result(version, value)).into_body())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn result_drops_2026_members_and_non_object_structured_content() {
        let v = result(
            "2025-11-25",
            json!({"resultType":"complete","ttlMs":1,"cacheScope":"public",
                   "_meta":{"io.modelcontextprotocol/serverInfo":{}},
                   "content":[],"structuredContent":[1,2]}),
        );
        assert_eq!(v, json!({"content":[]}));
        let v = result(
            "2025-11-25",
            json!({"content":[],"structuredContent":{"a":1}}),
        );
        assert_eq!(v["structuredContent"], json!({"a":1}));
        let v = result(
            "2025-03-26",
            json!({"content":[],"structuredContent":{"a":1}}),
        );
        assert!(v.get("structuredContent").is_none());
    }

    #[test]
    fn empty_results_stay_empty() {
        assert_eq!(
            result("2025-11-25", json!({"resultType":"complete"})),
            json!({})
        );
    }

    fn typed(method: &str, params: Value) -> InputRequest {
        serde_json::from_value(json!({"method": method, "params": params})).expect("input request")
    }

    #[test]
    fn form_elicitations_lose_mode_before_2025_11_25() {
        let form = json!({"mode":"form","message":"Sure?",
                          "requestedSchema":{"type":"object","properties":{}}});
        let request = typed("elicitation/create", form.clone());
        let old = input_request("2025-06-18", &request);
        assert_eq!(
            old,
            Some(json!({"message":"Sure?","requestedSchema":{"type":"object","properties":{}}}))
        );
        let new = input_request("2025-11-25", &request);
        assert_eq!(new.as_ref(), Some(&form));
        let url = json!({"mode":"url","message":"Go","url":"https://example.com"});
        let kept = input_request("2025-06-18", &typed("elicitation/create", url.clone()));
        assert_eq!(kept.as_ref(), Some(&url));
        let roots = input_request("2025-03-26", &InputRequest::list_roots());
        assert_eq!(roots, None);
    }
}
