//! The bound on a legacy upstream's calls held open for a downstream
//! answer (one per upstream: a legacy server's request does not say which
//! call it belongs to), with the TypeScript SDK v1 server of
//! `tests/interop/legacy-server.mjs` behind `toolwire gateway`: calls past
//! it that ask for input are refused with an error naming the upstream,
//! everything else is still served, and the next call may ask once the
//! held one is answered.

use super::gateway_relay::{config, text};
use serde_json::json;
use std::time::Duration;
use toolwire::proto::types::{ClientCapabilities, ElicitationCapability, ResultOrInputRequired};
use toolwire::{ProtocolMode, RequestOptions, ToolCall};

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

fn confirm(action: &str) -> ToolCall {
    let elicit = ClientCapabilities {
        elicitation: Some(ElicitationCapability::default()),
        ..ClientCapabilities::default()
    };
    ToolCall::new("ts__confirm")
        .with_argument("action", json!(action))
        .with_options(RequestOptions::new().with_client_capabilities(&elicit))
}

#[tokio::test]
async fn calls_past_the_hold_bound_are_refused_naming_the_upstream() {
    let config = config("held-bound");
    let mut command = tokio::process::Command::new(BIN);
    command.args(["gateway", "--config", &config]);
    let c = toolwire::ClientBuilder::new()
        .with_protocol_mode(ProtocolMode::Modern)
        .spawn(command)
        .expect("spawn the gateway");
    let first = confirm("first");
    let ResultOrInputRequired::InputRequired(ir) =
        c.call_tool_once(first.clone()).await.expect("round 1")
    else {
        panic!("the upstream's elicitation comes down as input_required")
    };
    // Past the bound, at once: each is refused, naming the upstream. The
    // upstream passes the gateway's refusal on as its call's isError text.
    let more: Vec<_> = (0..3)
        .map(|i| {
            let c = c.clone();
            tokio::spawn(async move { c.call_tool_once(confirm(&format!("more-{i}"))).await })
        })
        .collect();
    for task in more {
        let r = tokio::time::timeout(Duration::from_secs(20), task)
            .await
            .expect("refused in time")
            .expect("the call's task");
        let Ok(ResultOrInputRequired::Complete(r)) = r else {
            panic!("refused, not held: {r:?}")
        };
        assert_eq!(r.is_error, Some(true), "{r:?}");
        let t = text(&r);
        assert!(
            t.contains("upstream \"ts\" already has a call waiting for its client's answer"),
            "{t}"
        );
        assert!(t.contains("Try again once that call is answered"), "{t}");
    }
    // Everything else is served meanwhile.
    let r = c
        .call_tool_with(
            ToolCall::new("ts__add")
                .with_argument("a", json!(2))
                .with_argument("b", json!(3)),
        )
        .await
        .expect("add");
    assert_eq!(text(&r), "5");
    let mut answers = serde_json::Map::new();
    answers.insert(
        "elicitation".into(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    let ResultOrInputRequired::Complete(done) = c
        .call_tool_once(first.retry(&ir, answers))
        .await
        .expect("round 2")
    else {
        panic!("complete")
    };
    assert_eq!(text(&done), "confirmed: first");
    // The bound is free again.
    let next = confirm("next");
    let ResultOrInputRequired::InputRequired(ir) =
        c.call_tool_once(next.clone()).await.expect("next round 1")
    else {
        panic!("held again")
    };
    let mut answers = serde_json::Map::new();
    answers.insert("elicitation".into(), json!({"action": "decline"}));
    let ResultOrInputRequired::Complete(done) = c
        .call_tool_once(next.retry(&ir, answers))
        .await
        .expect("next round 2")
    else {
        panic!("complete")
    };
    assert_eq!(text(&done), "not confirmed: next");
    let _ = c.close().await;
}
