//! `subscriptions/listen` over HTTP: a long-lived SSE stream that starts
//! with the acknowledgment, carries the requested changes, sends keep-alives
//! while idle, and ends with the closing result on shutdown.

use super::TestServer;
use super::client::{Open, Req, meta};
use serde_json::{Value, json};
use std::time::Duration;
use toolwire::{HttpConfig, ServerConfig};

const ID: i64 = 1_764_000_000_000;

fn listen(filter: Value) -> Req {
    Req::post(&json!({
        "jsonrpc": "2.0", "id": ID, "method": "subscriptions/listen",
        "params": { "notifications": filter, "_meta": meta() }
    }))
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_streams_the_ack_changes_and_the_closing_result() {
    let mut s = TestServer::start().await;
    let mut open = Open::send(s.addr, &listen(json!({ "toolsListChanged": true }))).await;
    open.read_until(
        b"notifications/subscriptions/acknowledged",
        Duration::from_secs(2),
    )
    .await;
    assert!(s.server.remove_tool("sleep"));
    open.read_until(b"notifications/tools/list_changed", Duration::from_secs(2))
        .await;
    s.shutdown(Duration::from_secs(5)).await;
    let resp = open.finish(Duration::from_secs(2)).await;
    assert_eq!(resp.status, 200);
    assert!(resp.content_type().starts_with("text/event-stream"));
    assert_eq!(resp.header("x-accel-buffering"), Some("no"));
    let events = resp.events();
    assert_eq!(events.len(), 3, "{events:?}");
    let sub_id = |e: &Value| e["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"].clone();
    assert_eq!(
        events[0]["method"],
        "notifications/subscriptions/acknowledged"
    );
    assert_eq!(sub_id(&events[0]), json!(ID));
    assert_eq!(events[1]["method"], "notifications/tools/list_changed");
    assert_eq!(sub_id(&events[1]), json!(ID));
    assert_eq!(events[2]["id"], json!(ID));
    assert_eq!(events[2]["result"]["resultType"], "complete");
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_listen_stream_sends_keep_alives() {
    let config = HttpConfig::new().with_sse_keep_alive(Some(Duration::from_millis(30)));
    let s = TestServer::with(config).await;
    let mut open = Open::send(s.addr, &listen(json!({ "toolsListChanged": true }))).await;
    open.read_until(b"acknowledged", Duration::from_secs(2))
        .await;
    open.read_until(b":\n\n", Duration::from_secs(2)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn closing_a_listen_stream_frees_its_slot() {
    let server_config = ServerConfig::new("toolwire-it", "0.0.0").with_max_listeners(1);
    let s = TestServer::with_server(server_config, HttpConfig::new()).await;
    let filter = json!({ "toolsListChanged": true });
    let mut first = Open::send(s.addr, &listen(filter.clone())).await;
    first
        .read_until(b"acknowledged", Duration::from_secs(2))
        .await;
    let refused = listen(filter.clone()).send(s.addr).await;
    assert!(refused.json().get("error").is_some(), "{}", refused.text());
    drop(first);
    let mut reopened = false;
    for _ in 0..50 {
        tokio::time::sleep(Duration::from_millis(20)).await;
        let mut again = Open::send(s.addr, &listen(filter.clone())).await;
        again.read_until(b"\r\n\r\n", Duration::from_secs(2)).await;
        if String::from_utf8_lossy(&again.buf).starts_with("HTTP/1.1 200") {
            again
                .read_until(b"acknowledged", Duration::from_secs(2))
                .await;
            reopened = true;
            break;
        }
    }
    assert!(reopened, "the listener slot was not given back");
}

#[tokio::test(flavor = "multi_thread")]
async fn listen_is_not_limited_by_the_request_timeout() {
    let config = HttpConfig::new().with_request_timeout(Some(Duration::from_millis(100)));
    let s = TestServer::with(config).await;
    let mut open = Open::send(s.addr, &listen(json!({ "toolsListChanged": true }))).await;
    open.read_until(b"acknowledged", Duration::from_secs(2))
        .await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert!(s.server.remove_tool("echo"));
    open.read_until(b"notifications/tools/list_changed", Duration::from_secs(2))
        .await;
}
