//! A legacy upstream's own requests through `toolwire gateway`: the
//! TypeScript SDK v1 server of `tests/interop/legacy-server.mjs` (on the
//! pinned Node 22) sends `sampling/createMessage`, `roots/list` and
//! `elicitation/create` during its calls, and withdraws an elicitation it
//! no longer waits for (`notifications/cancelled`). Downstream, toolwire's
//! client in both eras: a modern client answers `input_required`, a legacy
//! client real requests, and a legacy client is told of the withdrawal.

use super::auth::harness::{node, repo_root};
use super::gateway::{scratch, write_config};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Duration;
use toolwire::proto::types::{
    ClientCapabilities, CreateMessageResult, ElicitResult, ElicitationCapability, ListRootsResult,
    ResultOrInputRequired,
};
use toolwire::{Client, ClientBuilder, InputError, ProtocolMode, RequestOptions, ToolCall};

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

/// A gateway configuration with the TypeScript SDK v1 server as `ts`.
pub(super) fn config(name: &str) -> String {
    let script = repo_root().join("tests/interop/legacy-server.mjs");
    let dir = scratch(name);
    write_config(
        &dir,
        &format!(
            "[upstreams.ts]\ncommand = [{:?}, {:?}, \"stdio\"]\nprotocol = \"legacy\"\n",
            node().display().to_string(),
            script.display().to_string()
        ),
    )
}

fn sampled() -> CreateMessageResult {
    serde_json::from_value(json!({
        "role": "assistant",
        "content": {"type": "text", "text": "hello from the client's model"},
        "model": "test-model"
    }))
    .expect("a sampling result")
}

fn roots() -> ListRootsResult {
    serde_json::from_value(json!({"roots": [{"uri": "file:///work", "name": "work"}]}))
        .expect("roots")
}

/// A client of the gateway over stdio in `mode`, answering sampling and
/// roots.
fn client(config: &str, mode: ProtocolMode, builder: ClientBuilder) -> Client {
    let mut command = tokio::process::Command::new(BIN);
    command.args(["gateway", "--config", config]);
    builder
        .with_protocol_mode(mode)
        .with_sampling(|_key: String, _params| async { Ok(sampled()) })
        .with_roots(|_key: String, _params| async { Ok(roots()) })
        .spawn(command)
        .expect("spawn the gateway")
}

pub(super) fn text(result: &toolwire::proto::types::CallToolResult) -> String {
    let v = serde_json::to_value(&result.content).expect("content");
    v[0]["text"].as_str().unwrap_or_default().to_owned()
}

#[tokio::test]
async fn sampling_and_roots_of_a_legacy_upstream_reach_clients_of_both_eras() {
    let config = config("relay-both");
    for mode in [ProtocolMode::Modern, ProtocolMode::Legacy] {
        let c = client(&config, mode, ClientBuilder::new());
        let r = c
            .call_tool_with(ToolCall::new("ts__sample").with_argument("prompt", json!("hi")))
            .await
            .unwrap_or_else(|e| panic!("{mode:?}: sample: {e}"));
        assert_eq!(
            text(&r),
            "model said: hello from the client's model",
            "{mode:?}"
        );
        let r = c
            .call_tool_with(ToolCall::new("ts__roots"))
            .await
            .unwrap_or_else(|e| panic!("{mode:?}: roots: {e}"));
        assert_eq!(text(&r), "roots: file:///work", "{mode:?}");
        let _ = c.close().await;
    }
}

#[tokio::test]
async fn a_modern_client_gets_sampling_as_input_required_under_its_key() {
    let config = config("relay-modern");
    let c = client(&config, ProtocolMode::Modern, ClientBuilder::new());
    let ResultOrInputRequired::InputRequired(ir) = c
        .call_tool_once(ToolCall::new("ts__sample").with_argument("prompt", json!("hi")))
        .await
        .expect("round 1")
    else {
        panic!("the upstream's sampling request comes down as input_required")
    };
    let requests = serde_json::to_value(&ir.input_requests).expect("requests");
    assert_eq!(
        requests["sampling"]["method"], "sampling/createMessage",
        "{requests}"
    );
    assert_eq!(
        requests["sampling"]["params"]["messages"][0]["content"]["text"],
        "hi"
    );
    let _ = c.close().await;
}

#[tokio::test]
async fn an_upstream_that_withdraws_its_elicitation_withdraws_it_downstream() {
    let config = config("relay-withdraw");
    // A legacy client whose person never answers: it is told of the
    // withdrawal (its handler is dropped), and gets the upstream's result.
    let dropped = Arc::new(AtomicBool::new(false));
    let flag = Arc::clone(&dropped);
    let builder = ClientBuilder::new().with_elicitation(move |_key: String, _params| {
        let flag = Arc::clone(&flag);
        async move {
            struct SetOnDrop(Arc<AtomicBool>);
            impl Drop for SetOnDrop {
                fn drop(&mut self) {
                    self.0.store(true, Ordering::SeqCst);
                }
            }
            let _guard = SetOnDrop(flag);
            std::future::pending::<()>().await;
            Err::<ElicitResult, _>(InputError::new("never"))
        }
    });
    let legacy = client(&config, ProtocolMode::Legacy, builder);
    let r = tokio::time::timeout(
        Duration::from_secs(30),
        legacy.call_tool_with(
            ToolCall::new("ts__hurried_confirm")
                .with_argument("action", json!("go"))
                .with_argument("ms", json!(500)),
        ),
    )
    .await
    .expect("the call ends once the upstream gives up")
    .expect("a result");
    assert_eq!(text(&r), "withdrawn: go");
    assert!(
        dropped.load(Ordering::SeqCst),
        "the gateway withdrew the elicitation/create it sent the legacy client"
    );
    let _ = legacy.close().await;

    // A modern client cannot be told; its late retry gets what the
    // upstream did instead, its answer dropped.
    let modern = client(&config, ProtocolMode::Modern, ClientBuilder::new());
    let elicit = ClientCapabilities {
        elicitation: Some(ElicitationCapability::default()),
        ..ClientCapabilities::default()
    };
    let call = ToolCall::new("ts__hurried_confirm")
        .with_argument("action", json!("ship"))
        .with_argument("ms", json!(300))
        .with_options(RequestOptions::new().with_client_capabilities(&elicit));
    let ResultOrInputRequired::InputRequired(ir) =
        modern.call_tool_once(call.clone()).await.expect("round 1")
    else {
        panic!("the upstream's elicitation comes down as input_required")
    };
    tokio::time::sleep(Duration::from_millis(1200)).await;
    let mut answers = serde_json::Map::new();
    answers.insert(
        "elicitation".into(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    let ResultOrInputRequired::Complete(done) = modern
        .call_tool_once(call.retry(&ir, answers))
        .await
        .expect("the late retry")
    else {
        panic!("complete")
    };
    assert_eq!(text(&done), "withdrawn: ship");
    let _ = modern.close().await;
}
