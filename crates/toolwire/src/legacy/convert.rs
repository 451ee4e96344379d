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

use crate::server::Reply;
use serde_json::{Map, Value};
use toolwire_proto::meta::SERVER_INFO_KEY;
use toolwire_proto::types::RequestMethod as _;
use toolwire_proto::types::{ElicitRequest, ReadResourceRequest};
use toolwire_proto::{ErrorCode, ErrorObject, RequestId};

/// The revision that introduced structured tool output.
const STRUCTURED_SINCE: &str = "2025-06-18";

/// The revision that added `mode` to `elicitation/create` (URL mode).
const ELICIT_MODE_SINCE: &str = "2025-11-25";

/// `-32002`: the legacy "resource not found".
const RESOURCE_NOT_FOUND: ErrorCode = ErrorCode(-32002);

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

/// The legacy form of an error the pipeline produced for `method`.
pub(crate) fn error(method: &str, mut error: ErrorObject) -> ErrorObject {
    if error.code == ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY {
        error.code = ErrorCode::INVALID_REQUEST;
        error.message = format!(
            "{}; the capabilities the client declared in initialize do not include it",
            error.message
        );
    } else if error.code == ErrorCode::INVALID_PARAMS
        && method == ReadResourceRequest::METHOD
        && error.data.as_ref().is_some_and(|d| d.get("uri").is_some())
    {
        error.code = RESOURCE_NOT_FOUND;
    }
    error
}

/// The params of a server-to-client request of the MRTR shim, in the
/// negotiated revision: before 2025-11-25 a form elicitation has no `mode`
/// (a URL-mode one is left as it is; the capability gate only lets it
/// through to a client that declared it).
pub(crate) fn input_request(version: &str, method: &str, params: Option<&Value>) -> Option<Value> {
    let mut params = params.cloned();
    if version < ELICIT_MODE_SINCE
        && method == ElicitRequest::METHOD
        && let Some(Value::Object(p)) = &mut params
        && p.get("mode").and_then(Value::as_str) == Some("form")
    {
        p.remove("mode");
    }
    params
}

/// Encodes a result for the legacy peer.
pub(crate) fn reply(version: &str, id: &RequestId, value: Value) -> Reply {
    Reply::result(id, &result(version, value))
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

    #[test]
    fn form_elicitations_lose_mode_before_2025_11_25() {
        let form = json!({"mode":"form","message":"Sure?","requestedSchema":{"type":"object"}});
        let old = input_request("2025-06-18", "elicitation/create", Some(&form));
        assert_eq!(
            old,
            Some(json!({"message":"Sure?","requestedSchema":{"type":"object"}}))
        );
        let new = input_request("2025-11-25", "elicitation/create", Some(&form));
        assert_eq!(new.as_ref(), Some(&form));
        let url =
            json!({"mode":"url","message":"Go","url":"https://example.com","elicitationId":"e"});
        let kept = input_request("2025-06-18", "elicitation/create", Some(&url));
        assert_eq!(kept.as_ref(), Some(&url));
        let roots = input_request("2025-03-26", "roots/list", None);
        assert_eq!(roots, None);
    }

    #[test]
    fn missing_capability_is_invalid_request() {
        let e = error(
            "tools/call",
            ErrorObject::new(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY, "missing"),
        );
        assert_eq!(e.code, ErrorCode::INVALID_REQUEST);
    }
}
