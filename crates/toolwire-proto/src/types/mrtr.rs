//! Multi round-trip requests (MRTR): the `input_required` interim result, the
//! input requests it carries and the input responses a retry sends back
//! (schema `InputRequiredResult`, `InputRequest`, `InputRequests`,
//! `InputResponses`, `InputResponseRequestParams`).
//!
//! Spec: basic/patterns/mrtr.mdx

use super::common::{Meta, RequestMeta, ResultType};
use super::elicitation::ElicitRequestParams;
use super::methods::{CreateMessageRequest, ElicitRequest, ListRootsRequest, RequestMethod};
use super::roots::ListRootsRequestParams;
use super::sampling::CreateMessageRequestParams;
use serde::de::{self, DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize, Serializer};
use serde_json::Value;
use std::collections::BTreeMap;

/// A request for input the server needs from the client, adjacently tagged by
/// `method` and `params` (schema `InputRequest`).
#[derive(Debug, Clone, PartialEq)]
pub enum InputRequest {
    /// `elicitation/create`: ask the user (form or URL mode).
    Elicit(ElicitRequestParams),
    /// `sampling/createMessage`: ask the client's model.
    CreateMessage(CreateMessageRequestParams),
    /// `roots/list`: ask for the client's roots. `params` is omitted when empty.
    ListRoots(ListRootsRequestParams),
}

impl InputRequest {
    /// The method name of this request.
    pub fn method(&self) -> &'static str {
        match self {
            Self::Elicit(_) => ElicitRequest::METHOD,
            Self::CreateMessage(_) => CreateMessageRequest::METHOD,
            Self::ListRoots(_) => ListRootsRequest::METHOD,
        }
    }

    /// A `roots/list` request without parameters.
    pub fn list_roots() -> Self {
        Self::ListRoots(ListRootsRequestParams::default())
    }
}

impl From<ElicitRequestParams> for InputRequest {
    fn from(p: ElicitRequestParams) -> Self {
        Self::Elicit(p)
    }
}

impl From<CreateMessageRequestParams> for InputRequest {
    fn from(p: CreateMessageRequestParams) -> Self {
        Self::CreateMessage(p)
    }
}

impl From<ListRootsRequestParams> for InputRequest {
    fn from(p: ListRootsRequestParams) -> Self {
        Self::ListRoots(p)
    }
}

#[derive(Serialize)]
struct OutInputRequest<'a, P> {
    method: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    params: Option<&'a P>,
}

impl Serialize for InputRequest {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        let method = self.method();
        match self {
            Self::Elicit(p) => OutInputRequest {
                method,
                params: Some(p),
            }
            .serialize(s),
            Self::CreateMessage(p) => OutInputRequest {
                method,
                params: Some(p),
            }
            .serialize(s),
            Self::ListRoots(p) => OutInputRequest {
                method,
                params: (p != &ListRootsRequestParams::default()).then_some(p),
            }
            .serialize(s),
        }
    }
}

#[derive(Deserialize)]
struct InInputRequest {
    method: String,
    #[serde(default)]
    params: Option<Value>,
}

fn params<T: DeserializeOwned, E: de::Error>(method: &str, params: Option<Value>) -> Result<T, E> {
    let params = params.unwrap_or_else(|| Value::Object(serde_json::Map::new()));
    serde_json::from_value(params)
        .map_err(|e| E::custom(format!("invalid params of {method}: {e}")))
}

impl<'de> Deserialize<'de> for InputRequest {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let raw = InInputRequest::deserialize(d)?;
        let m = raw.method.as_str();
        if m == ElicitRequest::METHOD {
            params(m, raw.params).map(Self::Elicit)
        } else if m == CreateMessageRequest::METHOD {
            params(m, raw.params).map(Self::CreateMessage)
        } else if m == ListRootsRequest::METHOD {
            params(m, raw.params).map(Self::ListRoots)
        } else {
            Err(de::Error::custom(format!(
                "unknown input request method `{m}`"
            )))
        }
    }
}

/// Input requests keyed by a server-chosen key (schema `InputRequests`).
pub type InputRequests = BTreeMap<String, InputRequest>;

/// Input responses keyed like the requests they answer (schema
/// `InputResponses`).
///
/// Each value is an `ElicitResult`, `CreateMessageResult` or
/// `ListRootsResult`; it stays raw JSON so the server type-checks each entry
/// against the request it made, with [`parse_input_response`].
pub type InputResponses = serde_json::Map<String, Value>;

/// Parses the input response under `key` as `T`; `None` if there is none.
pub fn parse_input_response<T: DeserializeOwned>(
    responses: &InputResponses,
    key: &str,
) -> Option<Result<T, serde_json::Error>> {
    responses.get(key).map(|v| T::deserialize(v))
}

/// An interim result asking the client for input before the request can
/// complete (schema `InputRequiredResult`, `resultType: "input_required"`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputRequiredResult {
    /// Always `input_required`.
    pub result_type: ResultType,
    /// What the client must provide, keyed for the retry's `inputResponses`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_requests: Option<InputRequests>,
    /// Opaque state the client echoes back on the retry.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// Result `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Default for InputRequiredResult {
    fn default() -> Self {
        Self::new()
    }
}

impl InputRequiredResult {
    /// An `input_required` result with no requests and no state yet.
    pub fn new() -> Self {
        Self {
            result_type: ResultType::InputRequired,
            input_requests: None,
            request_state: None,
            meta: None,
        }
    }

    /// Adds an input request under `key`.
    #[must_use]
    pub fn with_input_request(
        mut self,
        key: impl Into<String>,
        request: impl Into<InputRequest>,
    ) -> Self {
        self.input_requests
            .get_or_insert_with(InputRequests::new)
            .insert(key.into(), request.into());
        self
    }

    /// Sets the request state.
    #[must_use]
    pub fn with_request_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }
}

/// The MRTR members shared by retried requests (schema
/// `InputResponseRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct InputResponseRequestParams {
    /// Answers to the input requests of an earlier `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The `requestState` of an earlier `input_required` result, echoed back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// The request `_meta` (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The result of a request that supports MRTR (`tools/call`, `prompts/get`,
/// `resources/read`): the final result or an [`InputRequiredResult`], told
/// apart by `resultType`.
#[derive(Debug, Clone, PartialEq)]
pub enum ResultOrInputRequired<R> {
    /// `resultType: "complete"` (or absent): the final result.
    Complete(R),
    /// `resultType: "input_required"`.
    InputRequired(InputRequiredResult),
}

impl<R: Serialize> Serialize for ResultOrInputRequired<R> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        match self {
            Self::Complete(r) => r.serialize(s),
            Self::InputRequired(r) => r.serialize(s),
        }
    }
}

impl<'de, R: DeserializeOwned> Deserialize<'de> for ResultOrInputRequired<R> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let kind = match v.get("resultType") {
            None => ResultType::Complete,
            Some(t) => ResultType::deserialize(t).map_err(de::Error::custom)?,
        };
        match kind {
            ResultType::Complete => R::deserialize(v).map(Self::Complete),
            ResultType::InputRequired => {
                InputRequiredResult::deserialize(v).map(Self::InputRequired)
            }
            // Spec: extensions/tasks#capability-negotiation — a task handle
            // is only valid where the extension was declared, which this
            // type does not cover.
            ResultType::Task => Err(de::Error::custom(
                "a task handle (resultType \"task\") where a result or input_required was expected",
            )),
        }
        .map_err(de::Error::custom)
    }
}

impl<R> From<InputRequiredResult> for ResultOrInputRequired<R> {
    fn from(r: InputRequiredResult) -> Self {
        Self::InputRequired(r)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::elicitation::{ElicitRequestUrlParams, UrlMode};
    use crate::types::tools::CallToolResult;
    use serde_json::json;

    #[test]
    fn input_request_is_adjacently_tagged_by_method_and_params() {
        let r = InputRequest::Elicit(ElicitRequestParams::Url(ElicitRequestUrlParams {
            mode: UrlMode::Url,
            message: "Set your key".into(),
            url: "https://example.com/k".into(),
        }));
        let v = serde_json::to_value(&r).expect("serialises");
        assert_eq!(
            v,
            json!({
                "method": "elicitation/create",
                "params": {"mode": "url", "message": "Set your key", "url": "https://example.com/k"}
            })
        );
        assert_eq!(
            serde_json::from_value::<InputRequest>(v).expect("parses"),
            r
        );
    }

    #[test]
    fn list_roots_without_params_round_trips() {
        let v = json!({"method": "roots/list"});
        let r: InputRequest = serde_json::from_value(v.clone()).expect("parses");
        assert_eq!(r, InputRequest::list_roots());
        assert_eq!(serde_json::to_value(&r).expect("serialises"), v);
    }

    #[test]
    fn input_request_rejects_unknown_method_and_bad_params() {
        let unknown = json!({"method": "tools/call", "params": {}});
        assert!(serde_json::from_value::<InputRequest>(unknown).is_err());
        let bad = json!({"method": "sampling/createMessage", "params": {"messages": 1}});
        let err = serde_json::from_value::<InputRequest>(bad).expect_err("bad params");
        assert!(err.to_string().contains("sampling/createMessage"), "{err}");
    }

    #[test]
    fn input_required_result_builder_sets_result_type() {
        let r = InputRequiredResult::new()
            .with_input_request("roots", InputRequest::list_roots())
            .with_request_state("s1");
        assert_eq!(
            serde_json::to_value(&r).expect("serialises"),
            json!({
                "resultType": "input_required",
                "inputRequests": {"roots": {"method": "roots/list"}},
                "requestState": "s1"
            })
        );
    }

    #[test]
    fn result_or_input_required_dispatches_on_result_type() {
        let done: ResultOrInputRequired<CallToolResult> =
            serde_json::from_value(json!({"resultType": "complete", "content": []}))
                .expect("complete");
        assert!(matches!(done, ResultOrInputRequired::Complete(_)));
        let more: ResultOrInputRequired<CallToolResult> =
            serde_json::from_value(json!({"resultType": "input_required", "requestState": "x"}))
                .expect("input required");
        assert!(matches!(more, ResultOrInputRequired::InputRequired(_)));
        let legacy: ResultOrInputRequired<CallToolResult> =
            serde_json::from_value(json!({"content": []})).expect("legacy");
        assert!(matches!(legacy, ResultOrInputRequired::Complete(_)));
    }

    #[test]
    fn input_responses_parse_lazily() {
        let responses: InputResponses =
            serde_json::from_value(json!({"k": {"action": "decline"}})).expect("map");
        let r: crate::types::elicitation::ElicitResult = parse_input_response(&responses, "k")
            .expect("present")
            .expect("valid");
        assert_eq!(r.action, crate::types::elicitation::ElicitAction::Decline);
        assert!(parse_input_response::<CallToolResult>(&responses, "nope").is_none());
    }
}
