//! The capability gate: which client capability each input request needs,
//! which of a handler's requests may be sent, and the `-32021` error that
//! lists the missing ones.
//!
//! Spec: basic/patterns/mrtr.mdx#server-requirements-basic-workflow — a
//! server MUST NOT send an input request the client has not declared support
//! for. Spec: client/elicitation.mdx#capabilities — modes are declared apart
//! (`form`, `url`); an empty `elicitation` object means form only.

use super::Pending;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use toolwire_proto::types::{ClientCapabilities, ElicitRequestParams, InputRequest, InputRequests};
use toolwire_proto::{ErrorCode, ErrorObject};

/// The input requests of `pending` the client declared it can answer.
/// `-32021` if a required one needs a capability the client lacks, or if
/// every one had to be dropped.
pub(crate) fn admit(
    caps: &ClientCapabilities,
    pending: BTreeMap<String, Pending>,
) -> Result<InputRequests, ErrorObject> {
    let mut requests = InputRequests::new();
    let mut missing = Map::new();
    let mut dropped = Map::new();
    for (key, pending) in pending {
        // Spec: basic/patterns/mrtr.mdx#server-requirements-basic-workflow
        // — never send an input request the client has not declared.
        if supports(caps, &pending.request) {
            requests.insert(key, pending.request);
        } else if pending.optional {
            add_needed(&mut dropped, &pending.request);
        } else {
            add_needed(&mut missing, &pending.request);
        }
    }
    if !missing.is_empty() {
        return Err(missing_error(missing));
    }
    if requests.is_empty() && !dropped.is_empty() {
        return Err(missing_error(dropped));
    }
    Ok(requests)
}

/// Whether the client declared what `request` needs.
pub(crate) fn supports(caps: &ClientCapabilities, request: &InputRequest) -> bool {
    match request {
        InputRequest::Elicit(ElicitRequestParams::Form(_)) => caps.supports_elicitation_form(),
        InputRequest::Elicit(ElicitRequestParams::Url(_)) => caps.supports_elicitation_url(),
        InputRequest::CreateMessage(p) => {
            caps.supports_sampling()
                && (p.tools.is_none() && p.tool_choice.is_none() || caps.supports_sampling_tools())
        }
        InputRequest::ListRoots(_) => caps.supports_roots(),
    }
}

/// Adds the capability object `request` needs to `needed`, merging with what
/// is already there: `{"elicitation": {"form": {}}}`, `{"sampling": {}}`,
/// `{"sampling": {"tools": {}}}` or `{"roots": {}}`.
pub(crate) fn add_needed(needed: &mut Map<String, Value>, request: &InputRequest) {
    let (name, sub) = match request {
        InputRequest::Elicit(ElicitRequestParams::Form(_)) => ("elicitation", Some("form")),
        InputRequest::Elicit(ElicitRequestParams::Url(_)) => ("elicitation", Some("url")),
        InputRequest::CreateMessage(p) if p.tools.is_some() || p.tool_choice.is_some() => {
            ("sampling", Some("tools"))
        }
        InputRequest::CreateMessage(_) => ("sampling", None),
        InputRequest::ListRoots(_) => ("roots", None),
    };
    let entry = needed
        .entry(name)
        .or_insert_with(|| Value::Object(Map::new()));
    if let (Some(sub), Value::Object(obj)) = (sub, entry) {
        obj.entry(sub).or_insert_with(|| Value::Object(Map::new()));
    }
}

/// `-32021` with `data.requiredCapabilities`: an object of capability
/// objects, as the client would declare them.
pub(crate) fn missing_error(needed: Map<String, Value>) -> ErrorObject {
    let names: Vec<String> = needed
        .iter()
        .map(|(name, v)| match v.as_object() {
            Some(sub) if !sub.is_empty() => {
                let subs: Vec<&str> = sub.keys().map(String::as_str).collect();
                format!("{name} ({})", subs.join(", "))
            }
            _ => name.clone(),
        })
        .collect();
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("missing required client capability: {}", names.join(", ")),
    )
    .with_data(serde_json::json!({ "requiredCapabilities": needed }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use toolwire_proto::types::{
        CreateMessageRequestParams, ElicitRequestFormParams, ElicitRequestUrlParams,
        ElicitRequestedSchema, ToolChoice,
    };

    fn caps(v: Value) -> ClientCapabilities {
        serde_json::from_value(v).expect("caps")
    }

    fn form() -> InputRequest {
        InputRequest::Elicit(
            ElicitRequestFormParams::new("q", ElicitRequestedSchema::default()).into(),
        )
    }

    fn url() -> InputRequest {
        InputRequest::Elicit(ElicitRequestUrlParams::new("q", "https://example.com").into())
    }

    #[test]
    fn elicitation_modes_are_gated_apart() {
        assert!(supports(&caps(json!({"elicitation": {}})), &form()));
        assert!(!supports(&caps(json!({"elicitation": {}})), &url()));
        assert!(supports(&caps(json!({"elicitation": {"url": {}}})), &url()));
        assert!(!supports(
            &caps(json!({"elicitation": {"url": {}}})),
            &form()
        ));
        assert!(!supports(&caps(json!({"sampling": {}})), &form()));
    }

    #[test]
    fn sampling_with_tools_needs_the_tools_sub_capability() {
        let plain = InputRequest::CreateMessage(CreateMessageRequestParams::default());
        let with_tools = InputRequest::CreateMessage(CreateMessageRequestParams {
            tool_choice: Some(ToolChoice::default()),
            ..CreateMessageRequestParams::default()
        });
        assert!(supports(&caps(json!({"sampling": {}})), &plain));
        assert!(!supports(&caps(json!({"sampling": {}})), &with_tools));
        assert!(supports(
            &caps(json!({"sampling": {"tools": {}}})),
            &with_tools
        ));
        assert!(!supports(&caps(json!({})), &InputRequest::list_roots()));
    }

    #[test]
    fn needed_capabilities_merge_into_objects() {
        let mut needed = Map::new();
        for r in [form(), url(), InputRequest::list_roots(), form()] {
            add_needed(&mut needed, &r);
        }
        let e = missing_error(needed);
        assert_eq!(e.code, ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY);
        assert_eq!(
            e.data,
            Some(json!({"requiredCapabilities": {
                "elicitation": {"form": {}, "url": {}},
                "roots": {}
            }}))
        );
        assert!(
            e.message.contains("elicitation (form, url)"),
            "{}",
            e.message
        );
    }
}
