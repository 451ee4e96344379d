//! Shaping the MRTR shim's server-to-client requests for a legacy peer: a
//! form `elicitation/create` has no `mode` before 2025-11-25. (Results and
//! errors are shaped by the pipeline, `server/shape.rs` and
//! `server/outcome.rs`, from the negotiated version.)
//!
//! Spec (2025-06-18): schema.ts `ElicitRequest`.

use serde_json::Value;
use toolwire_proto::types::{InputRequest, ListRootsRequestParams};

/// The revision that added `mode` to `elicitation/create` (URL mode).
const ELICIT_MODE_SINCE: &str = "2025-11-25";

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

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

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
