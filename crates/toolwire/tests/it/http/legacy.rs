//! Legacy (2025-11-25) sessions on the same endpoint as stateless
//! 2026-07-28 requests: the handshake, the session rules, both eras at once,
//! expiry and the session limit, and cancellation.

use super::TestServer;
use super::client::{Open, Req, Resp, call_body};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use toolwire::HttpConfig;

/// A legacy POST: no `_meta` version key, the legacy version header, and the
/// session id when there is one.
fn legacy(body: &Value, session: Option<&str>) -> Req {
    let mut req = Req::post(body)
        .without("Mcp-Method")
        .without("Mcp-Name")
        .set("MCP-Protocol-Version", "2025-11-25");
    if let Some(id) = session {
        req = req.set("Mcp-Session-Id", id);
    }
    req
}

fn initialize_body() -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-06-18",
        "capabilities":{"elicitation":{}},
        "clientInfo":{"name":"legacy-it","version":"1.0.0"}}})
}

async fn initialize(s: &TestServer) -> String {
    let resp = Req::post(&initialize_body())
        .without("MCP-Protocol-Version")
        .send(s.addr)
        .await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    let v = resp.json();
    assert_eq!(v["result"]["protocolVersion"], "2025-06-18");
    assert!(v["result"].get("resultType").is_none());
    let id = resp
        .header("mcp-session-id")
        .expect("a session id")
        .to_owned();
    assert!(id.bytes().all(|b| (0x21..=0x7e).contains(&b)), "{id}");
    let done = legacy(
        &json!({"jsonrpc":"2.0","method":"notifications/initialized"}),
        Some(&id),
    )
    .send(s.addr)
    .await;
    assert_eq!(done.status, 202);
    id
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_session_serves_legacy_results_beside_modern_requests() {
    let s = TestServer::start().await;
    let sid = initialize(&s).await;

    let ping = legacy(&json!({"jsonrpc":"2.0","id":1,"method":"ping"}), Some(&sid))
        .send(s.addr)
        .await;
    assert_eq!(ping.status, 200);
    assert_eq!(ping.json()["result"], json!({}));

    let body = json!({"jsonrpc":"2.0","id":2,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":"old"}}});
    let legacy_req = legacy(&body, Some(&sid));
    // A modern request naming the same session is served statelessly.
    let modern_req = Req::call("echo", json!({"text":"new"})).set("Mcp-Session-Id", &sid);
    let (old, new) = tokio::join!(legacy_req.send(s.addr), modern_req.send(s.addr));
    assert_eq!(old.status, 200);
    let old = old.json();
    assert_eq!(old["result"]["content"][0]["text"], "old");
    assert!(old["result"].get("resultType").is_none(), "{old}");
    assert_eq!(new.status, 200);
    assert_eq!(new.json()["result"]["resultType"], "complete");

    // JSON-RPC errors travel with 200 on the legacy path.
    let unknown = legacy(
        &json!({"jsonrpc":"2.0","id":3,"method":"no/such"}),
        Some(&sid),
    )
    .send(s.addr)
    .await;
    assert_eq!(unknown.status, 200);
    assert_eq!(unknown.code(), -32601);

    // Legacy-only methods stay unknown to modern requests.
    let modern_ping = Req::post(&json!({"jsonrpc":"2.0","id":4,"method":"ping",
        "params":{"_meta": super::client::meta()}}))
    .send(s.addr)
    .await;
    assert_eq!(modern_ping.status, 404);

    // Progress goes on the call's own stream, before the result.
    let progress = legacy(
        &json!({"jsonrpc":"2.0","id":5,"method":"tools/call","params":{
            "name":"countdown","arguments":{"steps":2,"interval_ms":1},
            "_meta":{"progressToken":"p1"}}}),
        Some(&sid),
    )
    .send(s.addr)
    .await;
    let events = progress.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0]["params"]["progressToken"], "p1");
    assert_eq!(
        events[2]["result"]["content"][0]["text"],
        "done after 2 steps"
    );

    // DELETE ends the session (200, which every SDK's client reads as
    // success; the Python SDK's refuses 202); its id is then unknown.
    let deleted = Req::raw("DELETE", "/mcp", Vec::new())
        .add("Mcp-Session-Id", &sid)
        .send(s.addr)
        .await;
    assert_eq!(deleted.status, 200);
    assert!(deleted.body.is_empty(), "{}", deleted.text());
    let after = legacy(&json!({"jsonrpc":"2.0","id":6,"method":"ping"}), Some(&sid))
        .send(s.addr)
        .await;
    assert_eq!(after.status, 404);
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_session_is_400_and_unknown_session_is_404() {
    let s = TestServer::start().await;
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    assert_eq!(legacy(&ping, None).send(s.addr).await.status, 400);
    assert_eq!(legacy(&ping, Some("nope")).send(s.addr).await.status, 404);
    // A modern request without a session is unaffected.
    let modern = Req::post(&call_body(json!(2), "echo", json!({"text":"x"})))
        .send(s.addr)
        .await;
    assert_eq!(modern.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_expire_when_idle_and_are_bounded() {
    let config = HttpConfig::new()
        .with_max_sessions(1)
        .with_session_idle_timeout(Duration::from_millis(300));
    let s = TestServer::with(config).await;
    let sid = initialize(&s).await;
    // At the limit: a second session is refused.
    let refused = Req::post(&initialize_body())
        .without("MCP-Protocol-Version")
        .send(s.addr)
        .await;
    assert_eq!(refused.status, 503);
    tokio::time::sleep(Duration::from_millis(500)).await;
    let ping = json!({"jsonrpc":"2.0","id":1,"method":"ping"});
    assert_eq!(legacy(&ping, Some(&sid)).send(s.addr).await.status, 404);
    // The expired session made room.
    let _again = initialize(&s).await;
}

/// A legacy `notifications/cancelled` naming the request `id`.
fn cancelled(id: i64) -> Value {
    json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":id,"reason":"the user changed their mind"}})
}

/// Reads an open response to its end, which must come within two seconds.
async fn ended(open: Open) -> Resp {
    let started = Instant::now();
    let resp = open.finish(Duration::from_secs(5)).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "the stream did not end: {}",
        resp.text()
    );
    resp
}

#[tokio::test(flavor = "multi_thread")]
async fn notifications_cancelled_cancels_the_named_request_and_sends_no_response() {
    let s = TestServer::start().await;
    let sid = initialize(&s).await;
    let hold = json!({"jsonrpc":"2.0","id":7,"method":"tools/call","params":{
        "name":"hold","arguments":{"tag":"legacy-cancel","notify":true},
        "_meta":{"progressToken":"h"}}});
    let mut open = Open::send(s.addr, &legacy(&hold, Some(&sid))).await;
    open.read_until(b"holding", Duration::from_secs(2)).await;

    // Another id of the session is in flight: refused, the first unharmed.
    let twin = legacy(&hold, Some(&sid)).send(s.addr).await;
    assert_eq!(twin.status, 200);
    assert_eq!(twin.code(), -32600, "{}", twin.text());
    // Unknown ids, and a modern notification, cancel nothing.
    let other = legacy(&cancelled(8), Some(&sid)).send(s.addr).await;
    assert_eq!(other.status, 202);
    let modern = Req::post(&json!({"jsonrpc":"2.0","method":"notifications/cancelled",
        "params":{"requestId":7,"_meta":super::client::meta()}}))
    .set("Mcp-Session-Id", &sid)
    .send(s.addr)
    .await;
    assert_eq!(modern.status, 202);

    let cancel = legacy(&cancelled(7), Some(&sid)).send(s.addr).await;
    assert_eq!(cancel.status, 202);
    assert!(
        s.dropped("legacy-cancel", Duration::from_secs(2)).await,
        "the handler was dropped without its cancellation"
    );
    let resp = ended(open).await;
    assert_eq!(resp.status, 200);
    let events = resp.events();
    assert_eq!(
        events.len(),
        1,
        "no response after the progress: {events:?}"
    );
    assert_eq!(events[0]["method"], "notifications/progress");

    // The id is free again, and the session serves on.
    let again = legacy(&json!({"jsonrpc":"2.0","id":7,"method":"ping"}), Some(&sid))
        .send(s.addr)
        .await;
    assert_eq!(again.json()["result"], json!({}));
}

#[tokio::test(flavor = "multi_thread")]
async fn cancelling_a_call_withdraws_its_elicitation_on_the_same_stream() {
    let s = TestServer::start().await;
    let sid = initialize(&s).await;
    let call = json!({"jsonrpc":"2.0","id":8,"method":"tools/call",
        "params":{"name":"confirm","arguments":{}}});
    let mut open = Open::send(s.addr, &legacy(&call, Some(&sid))).await;
    open.read_until(b"elicitation/create", Duration::from_secs(2))
        .await;
    let cancel = legacy(&cancelled(8), Some(&sid)).send(s.addr).await;
    assert_eq!(cancel.status, 202);
    let events = ended(open).await.events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0]["method"], "elicitation/create");
    // The session speaks 2025-06-18, whose elicitation has no `mode`.
    assert_eq!(events[0]["params"]["message"], "Sure?");
    assert!(events[0]["params"].get("mode").is_none(), "{events:?}");
    // Spec (2025-11-25): basic/utilities/cancellation.mdx — the server's own
    // request is withdrawn, and the cancelled call gets no response.
    assert_eq!(
        events[1],
        json!({"jsonrpc":"2.0","method":"notifications/cancelled","params":{
            "requestId":events[0]["id"],
            "reason":"the request that needed it was cancelled"}})
    );
    // A late answer to the withdrawn request is accepted and dropped.
    let late = legacy(
        &json!({"jsonrpc":"2.0","id":events[0]["id"],"result":{"action":"decline"}}),
        Some(&sid),
    )
    .send(s.addr)
    .await;
    assert_eq!(late.status, 202);
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn closing_a_call_withdraws_its_elicitation_on_the_session_stream() {
    let s = TestServer::start().await;
    let sid = initialize(&s).await;
    let get = Req::raw("GET", "/mcp", Vec::new())
        .add("Accept", "text/event-stream")
        .add("Mcp-Session-Id", &sid)
        .add("MCP-Protocol-Version", "2025-06-18");
    let mut stream = Open::send(s.addr, &get).await;
    stream
        .read_until(b"text/event-stream", Duration::from_secs(2))
        .await;
    let call = json!({"jsonrpc":"2.0","id":9,"method":"tools/call",
        "params":{"name":"confirm","arguments":{}}});
    let mut open = Open::send(s.addr, &legacy(&call, Some(&sid))).await;
    open.read_until(b"elicitation/create", Duration::from_secs(2))
        .await;
    // The session's first server-to-client request has id 0.
    assert!(
        String::from_utf8_lossy(&open.buf).contains(r#""id":0,"method":"elicitation/create""#),
        "{}",
        String::from_utf8_lossy(&open.buf)
    );
    drop(open);
    stream
        .read_until(
            br#""method":"notifications/cancelled","params":{"reason":"the request that needed it was cancelled","requestId":0}"#,
            Duration::from_secs(2),
        )
        .await;
}

/// The era is decided by the parsed `_meta`, not by a substring: a legacy
/// call whose arguments contain the modern version key's text is still a
/// legacy call (it used to be served as modern and fail with `-32602`).
#[tokio::test(flavor = "multi_thread")]
async fn legacy_call_mentioning_the_modern_meta_key_stays_legacy() {
    let s = TestServer::start().await;
    let sid = initialize(&s).await;
    let text = "io.modelcontextprotocol/protocolVersion";
    let body = json!({"jsonrpc":"2.0","id":9,"method":"tools/call",
        "params":{"name":"echo","arguments":{"text":text}}});
    let resp = legacy(&body, Some(&sid)).send(s.addr).await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    let v = resp.json();
    assert_eq!(v["result"]["content"][0]["text"], text, "{v}");
    assert!(v["result"].get("resultType").is_none(), "{v}");
}
