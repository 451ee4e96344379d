//! The middleware seam on a real socket: a per-tool concurrency limit's
//! refusal is `503` with `Retry-After` while other tools are served, a
//! notifying call streams through the layers, a listen stream opens
//! through them, and a legacy session's calls pass them too.

use super::TestServer;
use super::client::{Open, Req, call_body, meta};
use serde_json::json;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolwire::middleware::{AuditLayer, AuditRecord, ConcurrencyLimitLayer, PerTool};

fn audited(s: &TestServer) -> Arc<Mutex<Vec<AuditRecord>>> {
    let records = Arc::new(Mutex::new(Vec::new()));
    let sink = Arc::clone(&records);
    let _ = s.server.clone().with_layer(AuditLayer::with_sink(move |r| {
        sink.lock().expect("lock").push(r.clone());
    }));
    records
}

fn outcomes(records: &Mutex<Vec<AuditRecord>>) -> Vec<(String, &'static str)> {
    records
        .lock()
        .expect("lock")
        .iter()
        .map(|r| {
            (
                r.name.clone().unwrap_or_else(|| r.method.clone()),
                r.outcome,
            )
        })
        .collect()
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_over_its_concurrency_limit_is_503_while_others_are_served() {
    let s = TestServer::start().await;
    let _ = s
        .server
        .clone()
        .with_layer(ConcurrencyLimitLayer::new(PerTool::none().tool("sleep", 1)));
    let records = audited(&s);
    let slow = Open::send(s.addr, &Req::call("sleep", json!({ "ms": 800 }))).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let refused = Req::call("sleep", json!({ "ms": 1 })).send(s.addr).await;
    assert_eq!(refused.status, 503, "{}", refused.text());
    assert_eq!(refused.header("retry-after"), Some("1"));
    assert_eq!(refused.code(), -32603);
    let other = Req::call("echo", json!({ "text": "x" })).send(s.addr).await;
    assert_eq!(other.status, 200);
    assert_eq!(other.json()["result"]["content"][0]["text"], "x");
    assert_eq!(slow.finish(Duration::from_secs(5)).await.status, 200);
    assert_eq!(
        outcomes(&records),
        [
            ("sleep".to_owned(), "error"),
            ("echo".to_owned(), "complete"),
            ("sleep".to_owned(), "complete"),
        ]
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn notifications_and_streams_pass_through_the_layers() {
    let s = TestServer::start().await;
    let records = audited(&s);
    // A call with a progress token: its progress streams ahead of the result.
    let mut body = call_body(
        json!(7),
        "countdown",
        json!({ "steps": 2, "interval_ms": 20 }),
    );
    body["params"]["_meta"]["progressToken"] = json!("tok");
    let resp = Req::post(&body).send(s.addr).await;
    assert_eq!(resp.status, 200);
    let events = resp.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert_eq!(events[0]["params"]["progressToken"], "tok");
    assert_eq!(
        events[2]["result"]["content"][0]["text"],
        "done after 2 steps"
    );

    // A listen stream opened through the layers.
    let listen = Req::post(&json!({
        "jsonrpc": "2.0", "id": 9, "method": "subscriptions/listen",
        "params": { "notifications": { "toolsListChanged": true }, "_meta": meta() }
    }));
    let mut open = Open::send(s.addr, &listen).await;
    open.read_until(
        b"notifications/subscriptions/acknowledged",
        Duration::from_secs(2),
    )
    .await;
    assert!(s.server.remove_tool("misfit"));
    open.read_until(b"notifications/tools/list_changed", Duration::from_secs(2))
        .await;
    drop(open);
    assert_eq!(
        outcomes(&records),
        [
            ("countdown".to_owned(), "complete"),
            ("subscriptions/listen".to_owned(), "stream"),
        ]
    );
}
