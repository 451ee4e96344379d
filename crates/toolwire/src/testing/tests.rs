//! Unit tests of the test kit: `TestClient` against in-process servers.

use super::*;
use crate::{ElicitAnswer, InputRequired, RequestContext, ServerConfig, Tool, ToolResult};
use toolwire_proto::ErrorCode;
use toolwire_proto::types::{
    LoggingMessageNotification, ProgressNotification, ToolListChangedNotification,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    confirm: bool,
}

/// `echo`, a `confirm` that asks first, and a `work` that reports progress
/// and logs.
fn server() -> Server {
    let server = Server::new(ServerConfig::new("kit", "1.0.0"));
    let echo = Tool::builder("echo")
        .input::<Echo>()
        .handler(|e: Echo, _| async move { e.text })
        .expect("echo");
    let confirm = Tool::builder("confirm")
        .input_schema(json!({"type": "object"}))
        .handler(|_: Value, cx: RequestContext| async move {
            Ok::<ToolResult, crate::ToolError>(match cx.input::<ElicitAnswer<Confirm>>("ok")? {
                Some(ElicitAnswer::Accept(c)) if c.confirm => ToolResult::text("confirmed"),
                Some(_) => ToolResult::text("declined"),
                None => InputRequired::new().elicit::<Confirm>("ok", "Sure?").into(),
            })
        })
        .expect("confirm");
    let work = Tool::builder("work")
        .input_schema(json!({"type": "object"}))
        .handler(|_: Value, cx: RequestContext| async move {
            cx.report_progress(1.0, Some(2.0), None);
            cx.log(LoggingLevel::Info, Some("work"), json!("halfway"));
            cx.report_progress(2.0, Some(2.0), None);
            "done"
        })
        .expect("work");
    for tool in [echo, confirm, work] {
        server.add_tool(tool).expect("registered");
    }
    server
}

fn text(r: &CallToolResult) -> &str {
    r.content[0].as_text().expect("a text block")
}

#[tokio::test]
async fn a_call_goes_through_the_pipeline_and_protocol_errors_keep_their_code() {
    let client = TestClient::new(&server());
    let r = client
        .call_tool("echo", json!({"text": "hi"}))
        .await
        .expect("call");
    assert_eq!(text(&r), "hi");
    let e = client
        .call_tool("nope", json!({}))
        .await
        .expect_err("unknown");
    assert_eq!(e.code(), Some(ErrorCode::INVALID_PARAMS), "{e}");
    // Arguments that fail the schema are a tool execution error.
    let r = client.call_tool("echo", json!({})).await.expect("call");
    assert_eq!(r.is_error, Some(true));
    let discovered = client.discover().await.expect("discover");
    assert_eq!(discovered.supported_versions, ["2026-07-28"]);
    let listed = client.listed_tool("confirm").await.expect("list");
    assert!(listed.is_some());
}

#[tokio::test]
async fn input_required_is_answered_from_the_script_or_returned_round_by_round() {
    let client = TestClient::new(&server())
        .answer_elicitation(|_| json!({"action": "accept", "content": {"confirm": true}}));
    assert!(client.declared_capabilities().elicitation.is_some());
    let r = client.call_tool("confirm", json!({})).await.expect("call");
    assert_eq!(text(&r), "confirmed");

    client.queue_answer(json!({"action": "decline"}));
    let r = client.call_tool("confirm", json!({})).await.expect("call");
    assert_eq!(text(&r), "declined", "the queued answer comes first");

    let ResultOrInputRequired::InputRequired(ir) = client
        .call_tool_once("confirm", json!({}))
        .await
        .expect("round 1")
    else {
        panic!("input_required expected");
    };
    let keys: Vec<_> = ir.input_requests.iter().flatten().map(|(k, _)| k).collect();
    assert_eq!(keys, ["ok"]);
    let answers = json!({"ok": {"action": "accept", "content": {"confirm": false}}});
    let done = client
        .call_tool_retry("confirm", json!({}), ir.request_state.as_deref(), answers)
        .await
        .expect("round 2");
    let ResultOrInputRequired::Complete(r) = done else {
        panic!("complete expected");
    };
    assert_eq!(text(&r), "declined");
    let snapshot = redacted(&ir);
    assert_eq!(snapshot["requestState"], "[requestState]");

    let bare = TestClient::new(&server());
    let e = bare
        .call_tool("confirm", json!({}))
        .await
        .expect_err("-32021");
    assert_eq!(
        e.code(),
        Some(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY)
    );
    let asking = TestClient::new(&server()).with_capabilities(ClientCapabilities {
        elicitation: Some(Default::default()),
        ..ClientCapabilities::default()
    });
    let e = asking
        .call_tool("confirm", json!({}))
        .await
        .expect_err("no answer");
    assert!(
        matches!(e, TestError::Unanswered { ref key, .. } if key == "ok"),
        "{e}"
    );
}

#[tokio::test]
async fn progress_and_logs_are_collected_in_order() {
    let client = TestClient::new(&server())
        .with_progress()
        .with_log_level(LoggingLevel::Debug);
    let r = client.call_tool("work", json!({})).await.expect("call");
    assert_eq!(text(&r), "done");
    let got = client.take_notifications();
    let methods: Vec<_> = got.iter().map(|n| n.method.as_str()).collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/message",
            "notifications/progress"
        ]
    );
    let first = got[0]
        .params_as::<ProgressNotification>()
        .expect("progress");
    assert_eq!(first.progress, 1.0);
    assert!(got[1].is::<LoggingMessageNotification>());
    assert!(client.take_notifications().is_empty(), "taken");

    // Without the opt-ins, nothing is sent.
    let quiet = TestClient::new(&server());
    quiet.call_tool("work", json!({})).await.expect("call");
    assert!(quiet.take_notifications().is_empty());
}

#[tokio::test]
async fn listen_sees_registry_changes_and_the_closing_result() {
    let server = server();
    let client = TestClient::new(&server);
    let mut tools = client
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .expect("listen");
    assert_eq!(
        tools.acknowledgment().method,
        "notifications/subscriptions/acknowledged"
    );
    assert!(tools.try_next().is_none(), "nothing published yet");
    server.remove_tool("echo");
    let n = tools.next_notification().await.expect("list_changed");
    assert!(n.is::<ToolListChangedNotification>(), "{n:?}");
    server.shutdown();
    let closed = tools.next().await.expect("closing result");
    assert!(matches!(closed, ListenItem::Closed(_)), "{closed:?}");
}

#[tokio::test]
async fn a_legacy_session_answers_the_shims_requests_from_the_script() {
    let server = server();
    let client = TestClient::legacy(&server, "2025-06-18")
        .await
        .expect("initialize")
        .answer_elicitation(|_| json!({"action": "accept", "content": {"confirm": true}}));
    assert_eq!(
        client.initialize_result().expect("legacy")["protocolVersion"],
        "2025-06-18"
    );
    let r = client.call_tool("confirm", json!({})).await.expect("call");
    assert_eq!(text(&r), "confirmed");
    let raw = client
        .request(
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "x"}}),
        )
        .await
        .expect("raw");
    assert!(raw.get("resultType").is_none(), "legacy shape: {raw}");
    assert_eq!(
        client.request("ping", json!({})).await.expect("ping"),
        json!({})
    );

    server.remove_tool("echo");
    tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let got = client.take_notifications();
            if got.iter().any(|n| n.is::<ToolListChangedNotification>()) {
                break;
            }
            tokio::task::yield_now().await;
        }
    })
    .await
    .expect("the session hears of the change");
}

#[tokio::test]
async fn an_unanswered_legacy_request_fails_the_call() {
    let client = TestClient::legacy(&server(), "2025-11-25")
        .await
        .expect("initialize");
    let e = client
        .call_tool("confirm", json!({}))
        .await
        .expect_err("no answer");
    assert_eq!(e.code(), Some(ErrorCode::INTERNAL_ERROR), "{e}");
}

#[cfg(feature = "http")]
#[tokio::test]
async fn headers_are_checked_as_over_http() {
    let client = TestClient::new(&server());
    let params = json!({"name": "echo", "arguments": {"text": "hi"}});
    let good = [
        ("MCP-Protocol-Version", "2026-07-28"),
        ("Mcp-Method", "tools/call"),
        ("Mcp-Name", "echo"),
    ];
    let r = client
        .request_with_headers("tools/call", params.clone(), &good)
        .await
        .expect("matching headers");
    assert_eq!(r["content"][0]["text"], "hi");
    let bad = [good[0], good[1], ("Mcp-Name", "other")];
    let e = client
        .request_with_headers("tools/call", params, &bad)
        .await
        .expect_err("mismatch");
    assert_eq!(e.code(), Some(ErrorCode::HEADER_MISMATCH), "{e}");
}

#[cfg(feature = "auth")]
#[tokio::test]
async fn a_grant_without_the_tools_scope_is_forbidden_and_filtered() {
    let server = Server::new(ServerConfig::new("kit", "1.0.0"));
    let admin = Tool::builder("admin")
        .scopes(["admin"])
        .input_schema(json!({"type": "object"}))
        .handler(|_: Value, cx: RequestContext| async move {
            format!("hello {}", cx.principal().unwrap_or("nobody"))
        })
        .expect("admin");
    server.add_tool(admin).expect("registered");
    let reader = TestClient::new(&server).with_grant("alice", ["read"]);
    let e = reader.call_tool("admin", json!({})).await.expect_err("403");
    assert!(
        matches!(e, TestError::Forbidden { ref scopes } if scopes == &["admin"]),
        "{e}"
    );
    assert!(reader.list_tools().await.expect("list").tools.is_empty());
    let admin = TestClient::new(&server).with_grant("bob", ["admin"]);
    let r = admin.call_tool("admin", json!({})).await.expect("allowed");
    assert_eq!(text(&r), "hello bob");
}
