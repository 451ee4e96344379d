//! The MRTR driver on the wire: answers, exact state echo, fresh ids, no
//! leaking into other requests, the round cap, and manual mode.

use super::fake::{FakeStdio, plain_tool, result, text_result, tools_page};
use crate::client::{ClientBuilder, ClientError, InputError, ToolCall};
use serde_json::{Map, Value, json};
use std::sync::{Arc, Mutex};
use toolwire_proto::types::{
    ElicitAction, ElicitRequestParams, ElicitResult, ResultOrInputRequired,
};

/// A state string that only survives an exact, byte-for-byte echo.
const STATE: &str = "  s\u{e9}\u{2603} \"q\"\\n\t==  ";

fn ask(req: &Value, state: Option<&str>) -> Value {
    let mut r = json!({
        "resultType": "input_required",
        "inputRequests": {"confirm": {"method": "elicitation/create", "params": {
            "message": "Sure?",
            "requestedSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}}
        }}}
    });
    if let Some(s) = state {
        r["requestState"] = Value::from(s);
    }
    result(req, r)
}

fn mrtr_server(req: &Value) -> Vec<Value> {
    let p = &req["params"];
    match (req["method"].as_str(), p["name"].as_str()) {
        (Some("tools/list"), _) => vec![result(
            req,
            tools_page(
                json!([
                    plain_tool("with_state"),
                    plain_tool("no_state"),
                    plain_tool("other")
                ]),
                60_000,
            ),
        )],
        (_, Some("with_state")) if p.get("inputResponses").is_none() => vec![ask(req, Some(STATE))],
        (_, Some("no_state")) if p.get("inputResponses").is_none() => vec![ask(req, None)],
        _ => vec![result(req, text_result("done"))],
    }
}

fn accepting() -> ClientBuilder {
    ClientBuilder::new().with_elicitation(|key: String, p: ElicitRequestParams| async move {
        let ElicitRequestParams::Form(form) = p else {
            return Err(InputError::new("form only"));
        };
        assert_eq!(key, "confirm");
        assert_eq!(form.message, "Sure?");
        let mut content = Map::new();
        content.insert("ok".into(), Value::Bool(true));
        Ok(ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
        })
    })
}

#[tokio::test]
async fn retry_echoes_state_exactly_with_a_new_id() {
    let fake = FakeStdio::start(accepting(), mrtr_server);
    let r = fake
        .client
        .call_tool("with_state", json!({"a": 1}))
        .await
        .expect("completes");
    assert_eq!(r.content.len(), 1);
    let calls = fake.requests("tools/call");
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0]["id"], calls[1]["id"]);
    assert!(calls[0]["params"].get("requestState").is_none());
    assert!(calls[0]["params"].get("inputResponses").is_none());
    assert_eq!(calls[1]["params"]["requestState"], STATE);
    assert_eq!(calls[1]["params"]["arguments"], json!({"a": 1}));
    assert_eq!(
        calls[1]["params"]["inputResponses"],
        json!({"confirm": {"action": "accept", "content": {"ok": true}}})
    );
    // The retry still carries the full `_meta`.
    assert_eq!(
        calls[1]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {}})
    );
}

#[tokio::test]
async fn retry_omits_state_when_none_was_given_and_other_calls_stay_clean() {
    let fake = FakeStdio::start(accepting(), mrtr_server);
    let c = fake.client.clone();
    let (a, b) = tokio::join!(
        c.call_tool("no_state", json!({})),
        c.call_tool("other", json!({}))
    );
    a.expect("no_state");
    b.expect("other");
    let calls = fake.requests("tools/call");
    for call in &calls {
        let p = &call["params"];
        match p["name"].as_str() {
            Some("no_state") => assert!(p.get("requestState").is_none(), "{call}"),
            Some("other") => {
                assert!(p.get("requestState").is_none(), "{call}");
                assert!(p.get("inputResponses").is_none(), "{call}");
            }
            _ => panic!("unexpected {call}"),
        }
    }
    assert_eq!(calls.len(), 3);
}

#[tokio::test]
async fn the_round_cap_stops_a_server_that_keeps_asking() {
    let fake = FakeStdio::start(accepting().with_max_input_rounds(3), |req| {
        if req["method"] == "tools/list" {
            return vec![result(req, tools_page(json!([plain_tool("loop")]), 60_000))];
        }
        vec![ask(req, Some("again"))]
    });
    let err = fake
        .client
        .call_tool("loop", json!({}))
        .await
        .expect_err("capped");
    assert!(matches!(err, ClientError::TooManyRounds(3)), "{err}");
    assert_eq!(fake.requests("tools/call").len(), 4);
}

#[tokio::test]
async fn manual_mode_hands_the_input_required_result_to_the_caller() {
    let fake = FakeStdio::start(ClientBuilder::new(), mrtr_server);
    let call = ToolCall::new("with_state");
    let ResultOrInputRequired::InputRequired(ir) = fake
        .client
        .call_tool_once(call.clone())
        .await
        .expect("round 1")
    else {
        panic!("expected input_required")
    };
    assert_eq!(ir.request_state.as_deref(), Some(STATE));
    let mut answers = Map::new();
    answers.insert("confirm".into(), json!({"action": "decline"}));
    let done = fake
        .client
        .call_tool_once(call.retry(&ir, answers))
        .await
        .expect("round 2");
    assert!(matches!(done, ResultOrInputRequired::Complete(_)));
    let calls = fake.requests("tools/call");
    assert_eq!(calls[1]["params"]["requestState"], STATE);
    assert_eq!(
        calls[1]["params"]["inputResponses"]["confirm"]["action"],
        "decline"
    );
}

#[tokio::test]
async fn without_handlers_input_required_is_returned_as_an_error() {
    let fake = FakeStdio::start(ClientBuilder::new(), mrtr_server);
    let err = fake
        .client
        .call_tool("with_state", json!({}))
        .await
        .expect_err("needs input");
    let ClientError::InputRequired(ir) = err else {
        panic!("expected InputRequired, got {err}")
    };
    assert!(ir.input_requests.is_some_and(|r| r.contains_key("confirm")));
    assert_eq!(fake.requests("tools/call").len(), 1);
}

#[tokio::test]
async fn an_input_kind_without_a_handler_fails_the_call() {
    let fake = FakeStdio::start(accepting(), |req| {
        if req["method"] == "tools/list" {
            return vec![result(
                req,
                tools_page(json!([plain_tool("roots")]), 60_000),
            )];
        }
        vec![result(
            req,
            json!({"resultType": "input_required",
                   "inputRequests": {"r": {"method": "roots/list"}}}),
        )]
    });
    let err = fake
        .client
        .call_tool("roots", json!({}))
        .await
        .expect_err("no roots handler");
    assert!(
        matches!(err, ClientError::UnsupportedInputRequest { ref key, method: "roots/list" } if key == "r"),
        "{err}"
    );
}

#[tokio::test]
async fn a_failing_handler_fails_the_call_without_a_retry() {
    let builder =
        ClientBuilder::new().with_elicitation(|_k: String, _p: ElicitRequestParams| async {
            Err::<ElicitResult, _>(InputError::new("no user here"))
        });
    let fake = FakeStdio::start(builder, mrtr_server);
    let err = fake
        .client
        .call_tool("with_state", json!({}))
        .await
        .expect_err("fails");
    assert!(
        matches!(err, ClientError::Input(ref e) if e.message() == "no user here"),
        "{err}"
    );
    assert_eq!(fake.requests("tools/call").len(), 1);
}

#[tokio::test]
async fn input_required_on_a_list_is_a_protocol_error() {
    let fake = FakeStdio::start(accepting(), |req| {
        vec![result(
            req,
            json!({"resultType": "input_required", "requestState": "x"}),
        )]
    });
    let err = fake.client.list_tools().await.expect_err("not allowed");
    assert!(matches!(err, ClientError::Protocol(_)), "{err}");
}

#[tokio::test]
async fn prompts_and_resources_are_driven_too_and_retries_are_not_cached() {
    let reads = Arc::new(Mutex::new(0));
    let count = Arc::clone(&reads);
    let fake = FakeStdio::start(accepting(), move |req| {
        let p = &req["params"];
        match req["method"].as_str() {
            Some("resources/read") => {
                *count.lock().expect("count") += 1;
                if p.get("inputResponses").is_none() {
                    return vec![ask(req, Some("r"))];
                }
                vec![result(
                    req,
                    json!({"resultType": "complete", "ttlMs": 60_000,
                    "cacheScope": "public", "contents": [{"uri": p["uri"], "text": "secret"}]}),
                )]
            }
            Some("prompts/get") if p.get("inputResponses").is_none() => vec![ask(req, None)],
            Some("prompts/get") => vec![result(req, json!({"messages": []}))],
            _ => Vec::new(),
        }
    });
    let c = &fake.client;
    assert_eq!(
        c.read_resource("file:///a")
            .await
            .expect("read")
            .contents
            .len(),
        1
    );
    assert_eq!(
        c.read_resource("file:///a")
            .await
            .expect("read")
            .contents
            .len(),
        1
    );
    // Two rounds each time: the retry's result was not cached.
    assert_eq!(*reads.lock().expect("count"), 4);
    c.get_prompt("p", Default::default()).await.expect("prompt");
    assert_eq!(fake.requests("prompts/get").len(), 2);
}

/// A handler type of the user's own, next to the closure impls.
struct AcceptEverything;

impl crate::client::InputHandler<toolwire_proto::types::ElicitRequest> for AcceptEverything {
    async fn handle(
        &self,
        _key: String,
        _params: ElicitRequestParams,
    ) -> Result<ElicitResult, InputError> {
        let mut content = Map::new();
        content.insert("ok".into(), Value::Bool(true));
        Ok(ElicitResult {
            action: ElicitAction::Accept,
            content: Some(content),
        })
    }
}

#[tokio::test]
async fn a_handler_struct_works_like_a_closure() {
    let fake = FakeStdio::start(
        ClientBuilder::new().with_elicitation(AcceptEverything),
        mrtr_server,
    );
    fake.client
        .call_tool("with_state", json!({}))
        .await
        .expect("completes");
    assert_eq!(
        fake.requests("tools/call")[1]["params"]["inputResponses"]["confirm"]["content"],
        json!({"ok": true})
    );
}
