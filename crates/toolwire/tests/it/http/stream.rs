//! Response mode (JSON unless the handler actually notifies), the shape of
//! SSE streams, and cancellation when the client goes away.

use super::TestServer;
use super::client::{Open, Req, call_body, sse_events};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use toolwire::HttpConfig;

/// A `tools/call` whose `_meta` also carries `extra`.
fn call_with_meta(tool: &str, args: Value, extra: Value) -> Req {
    let mut body = call_body(json!(7), tool, args);
    if let (Some(meta), Some(extra)) = (body["params"]["_meta"].as_object_mut(), extra.as_object())
    {
        meta.extend(extra.clone());
    }
    Req::post(&body)
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_is_streamed_as_sse_before_the_result() {
    let s = TestServer::start().await;
    let req = call_with_meta(
        "countdown",
        json!({ "steps": 3, "interval_ms": 20 }),
        json!({ "progressToken": "tok" }),
    );
    let resp = req.send(s.addr).await;
    assert_eq!(resp.status, 200);
    assert!(
        resp.content_type().starts_with("text/event-stream"),
        "{}",
        resp.content_type()
    );
    assert_eq!(resp.header("x-accel-buffering"), Some("no"));
    assert_eq!(resp.header("cache-control"), Some("no-cache"));
    let events = resp.events();
    assert_eq!(events.len(), 4, "{events:?}");
    for (i, event) in events[..3].iter().enumerate() {
        assert_eq!(event["method"], "notifications/progress");
        assert_eq!(event["params"]["progressToken"], "tok");
        assert_eq!(event["params"]["progress"], json!((i + 1) as f64));
        assert!(
            event.get("id").is_none(),
            "no request on the stream: {event}"
        );
    }
    let last = &events[3];
    assert_eq!(last["id"], 7);
    assert_eq!(last["result"]["content"][0]["text"], "done after 3 steps");
}

#[tokio::test(flavor = "multi_thread")]
async fn progress_token_without_progress_is_plain_json() {
    let s = TestServer::start().await;
    let req = call_with_meta(
        "echo",
        json!({ "text": "quiet" }),
        json!({ "progressToken": 1 }),
    );
    let resp = req.send(s.addr).await;
    assert_eq!(resp.status, 200);
    assert!(resp.content_type().starts_with("application/json"));
    assert_eq!(resp.json()["result"]["content"][0]["text"], "quiet");
}

#[tokio::test(flavor = "multi_thread")]
async fn enabled_log_level_streams_and_disabled_level_does_not() {
    let s = TestServer::start().await;
    let args = json!({ "steps": 2, "interval_ms": 1 });
    let level = |l: &str| json!({ "io.modelcontextprotocol/logLevel": l });
    let resp = call_with_meta("countdown", args.clone(), level("debug"))
        .send(s.addr)
        .await;
    assert!(resp.content_type().starts_with("text/event-stream"));
    let events = resp.events();
    assert_eq!(events.len(), 3, "{events:?}");
    assert!(
        events[..2]
            .iter()
            .all(|e| e["method"] == "notifications/message")
    );
    assert_eq!(events[2]["id"], 7);
    // The tool logs at debug only: with `error` nothing is emitted.
    let resp = call_with_meta("countdown", args.clone(), level("error"))
        .send(s.addr)
        .await;
    assert!(resp.content_type().starts_with("application/json"));
    // Without a logLevel, no log message is ever sent.
    let resp = Req::call("countdown", args).send(s.addr).await;
    assert!(resp.content_type().starts_with("application/json"));
    assert_eq!(
        resp.json()["result"]["content"][0]["text"],
        "done after 2 steps"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn notifications_arrive_while_the_handler_runs() {
    let s = TestServer::start().await;
    let req = call_with_meta(
        "sleep",
        json!({ "ms": 800, "notify": true }),
        json!({ "progressToken": "t" }),
    );
    let mut open = Open::send(s.addr, &req).await;
    open.read_until(b"notifications/progress", Duration::from_secs(2))
        .await;
    // The progress event was written while the handler was still sleeping.
    let so_far = String::from_utf8_lossy(&open.buf).into_owned();
    assert!(
        !so_far.contains("slept"),
        "progress was held back: {so_far}"
    );
    let resp = open.finish(Duration::from_secs(5)).await;
    let events = resp.events();
    assert_eq!(
        events
            .last()
            .map(|e| e["result"]["content"][0]["text"].clone()),
        Some(json!("slept"))
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn idle_stream_sends_keep_alive_comments() {
    let config = HttpConfig::new().with_sse_keep_alive(Some(Duration::from_millis(40)));
    let s = TestServer::with(config).await;
    let req = call_with_meta(
        "sleep",
        json!({ "ms": 300, "notify": true }),
        json!({ "progressToken": "t" }),
    );
    let resp = req.send(s.addr).await;
    let text = resp.text();
    let comments = text.lines().filter(|l| l.starts_with(':')).count();
    assert!(comments >= 2, "expected keep-alive comments: {text:?}");
    // Comments do not disturb the events.
    assert_eq!(sse_events(&text).len(), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn disconnect_cancels_a_plain_request() {
    let s = TestServer::start().await;
    let open = Open::send(s.addr, &Req::call("hold", json!({ "tag": "plain" }))).await;
    tokio::time::sleep(Duration::from_millis(150)).await;
    drop(open);
    // The token fired before the handler was dropped.
    assert!(s.dropped("plain", Duration::from_secs(3)).await);
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn disconnect_cancels_a_streaming_request() {
    let s = TestServer::start().await;
    let req = call_with_meta(
        "hold",
        json!({ "tag": "sse", "notify": true }),
        json!({ "progressToken": 5 }),
    );
    let mut open = Open::send(s.addr, &req).await;
    open.read_until(b"notifications/progress", Duration::from_secs(2))
        .await;
    drop(open);
    assert!(s.dropped("sse", Duration::from_secs(3)).await);
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn timeout_mid_stream_ends_with_an_error_event() {
    let config = HttpConfig::new().with_request_timeout(Some(Duration::from_millis(200)));
    let s = TestServer::with(config).await;
    let req = call_with_meta(
        "hold",
        json!({ "tag": "late", "notify": true }),
        json!({ "progressToken": 5 }),
    );
    let resp = req.send(s.addr).await;
    assert_eq!(resp.status, 200);
    let events = resp.events();
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[1]["id"], 7);
    assert_eq!(events[1]["error"]["code"], -32603);
    assert!(s.dropped("late", Duration::from_secs(2)).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_lets_in_flight_requests_finish() {
    let s = TestServer::start().await;
    let addr = s.addr;
    let slow = Open::send(addr, &Req::call("sleep", json!({ "ms": 300 }))).await;
    tokio::time::sleep(Duration::from_millis(50)).await;
    let finished = tokio::spawn(slow.finish(Duration::from_secs(5)));
    let mut s = s;
    s.shutdown(Duration::from_secs(5)).await;
    let resp = finished.await.expect("task");
    assert_eq!(resp.status, 200);
    assert_eq!(resp.json()["result"]["content"][0]["text"], "slept");
    assert!(
        tokio::net::TcpStream::connect(addr).await.is_err(),
        "still accepting"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn shutdown_cancels_what_outlives_the_grace_period() {
    let config = HttpConfig::new().with_shutdown_grace(Duration::from_millis(200));
    let mut s = TestServer::with(config).await;
    let held = Open::send(s.addr, &Req::call("hold", json!({ "tag": "grace" }))).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    s.shutdown(Duration::from_secs(3)).await;
    let took = started.elapsed();
    assert!(
        took >= Duration::from_millis(150),
        "returned before the grace period: {took:?}"
    );
    assert!(s.dropped("grace", Duration::from_secs(1)).await);
    drop(held);
}
