//! Rate limits over a real socket: `429` with `Retry-After` and the
//! `-31429` error past a burst, served again after the wait, other
//! clients (by address) unaffected, every MRTR round and every invocation
//! method counted, and the caller table bounded.
//!
//! Other loopback addresses (127.0.0.2, ...) stand for other clients.

use super::TestServer;
use super::client::{Req, Resp, call_body, meta};
use serde_json::{Value, json};
use std::net::IpAddr;
use std::time::Duration;
use toolwire::{HttpConfig, RateLimit, ServerConfig};

async fn limited(config: ServerConfig) -> TestServer {
    TestServer::with_server(config, HttpConfig::new()).await
}

fn ip(last: u8) -> IpAddr {
    IpAddr::from([127, 0, 0, last])
}

fn echo(id: u64) -> Req {
    Req::post(&call_body(json!(id), "echo", json!({"text": "hi"})))
}

/// Asserts a rate-limited answer to request `id`; returns `retryAfterMs`.
fn assert_limited(resp: &Resp, id: u64) -> u64 {
    assert_eq!(resp.status, 429, "{}", resp.text());
    let v = resp.json();
    assert_eq!(v["id"], id, "{v}");
    assert_eq!(v["error"]["code"], -31429, "{v}");
    let ms = v["error"]["data"]["retryAfterMs"]
        .as_u64()
        .unwrap_or_else(|| panic!("no retryAfterMs: {v}"));
    let secs: u64 = resp
        .header("retry-after")
        .unwrap_or_else(|| panic!("no Retry-After: {:?}", resp.headers))
        .parse()
        .expect("Retry-After in seconds");
    assert_eq!(secs, ms.div_ceil(1000).max(1), "{v}");
    ms
}

#[tokio::test(flavor = "multi_thread")]
async fn a_burst_over_the_limit_gets_429_and_the_wait_then_is_served() {
    // Two at once, then one every 500 ms.
    let s = limited(ServerConfig::default().with_rate_limit(RateLimit::per_second(2))).await;
    for id in 1..=2 {
        let resp = echo(id).send(s.addr).await;
        assert_eq!(resp.status, 200, "{}", resp.text());
    }
    let resp = echo(3).send(s.addr).await;
    let wait = assert_limited(&resp, 3);
    assert!((1..=500).contains(&wait), "a token every 500 ms: {wait}");
    assert_eq!(resp.header("retry-after"), Some("1"));
    // Lists are not invocations: still served.
    let list = Req::post(&json!({
        "jsonrpc": "2.0", "id": 4, "method": "tools/list", "params": {"_meta": meta()}
    }))
    .send(s.addr)
    .await;
    assert_eq!(list.status, 200, "{}", list.text());
    tokio::time::sleep(Duration::from_millis(wait)).await;
    let resp = echo(5).send(s.addr).await;
    assert_eq!(resp.status, 200, "served after the wait: {}", resp.text());
    assert_eq!(resp.json()["result"]["content"][0]["text"], "hi");
}

#[tokio::test(flavor = "multi_thread")]
async fn another_client_address_has_its_own_bucket() {
    let s = limited(ServerConfig::default().with_rate_limit(RateLimit::per_minute(1))).await;
    assert_eq!(echo(1).send_from(s.addr, ip(1)).await.status, 200);
    assert_limited(&echo(2).send_from(s.addr, ip(1)).await, 2);
    let other = echo(3).send_from(s.addr, ip(2)).await;
    assert_eq!(other.status, 200, "{}", other.text());
    assert_limited(&echo(4).send_from(s.addr, ip(1)).await, 4);
}

#[tokio::test(flavor = "multi_thread")]
async fn each_mrtr_round_counts() {
    let s = limited(ServerConfig::default().with_rate_limit(RateLimit::per_minute(1))).await;
    let mut m = meta();
    m["io.modelcontextprotocol/clientCapabilities"] = json!({"elicitation": {"form": {}}});
    let call = |id: u64, params: Value| {
        let mut params = params;
        params["_meta"] = m.clone();
        Req::post(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/call", "params": params}))
    };
    let first = call(1, json!({"name": "confirm", "arguments": {}}))
        .send(s.addr)
        .await;
    let r1 = first.json();
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let retry = call(
        2,
        json!({
            "name": "confirm",
            "arguments": {},
            "requestState": r1["result"]["requestState"],
            "inputResponses": {"ok": {"action": "accept", "content": {"confirm": true}}},
        }),
    )
    .send(s.addr)
    .await;
    assert_limited(&retry, 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn prompts_reads_and_completions_count_like_calls() {
    let s = limited(ServerConfig::default().with_rate_limit(RateLimit::per_minute(1))).await;
    let requests = [
        ("prompts/get", json!({"name": "nope"})),
        ("resources/read", json!({"uri": "test://nothing"})),
        (
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
        ),
    ];
    for (n, (method, params)) in (10..).zip(requests) {
        let req = |id: u64| {
            let mut params = params.clone();
            params["_meta"] = meta();
            Req::post(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
        };
        let first = req(1).send_from(s.addr, ip(n)).await;
        assert_ne!(first.status, 429, "{method}: {}", first.text());
        assert_limited(&req(2).send_from(s.addr, ip(n)).await, 2);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn a_tool_with_its_own_limit_is_counted_apart() {
    let config = ServerConfig::default()
        .with_rate_limit(RateLimit::per_minute(100))
        .with_tool_rate_limit("echo", RateLimit::per_minute(1));
    let s = limited(config).await;
    assert_eq!(echo(1).send(s.addr).await.status, 200);
    assert_limited(&echo(2).send(s.addr).await, 2);
    let other = Req::call("sleep", json!({"ms": 0})).send(s.addr).await;
    assert_eq!(other.status, 200, "{}", other.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn a_flood_of_addresses_shares_one_bucket_past_the_table() {
    let config = ServerConfig::default()
        .with_rate_limit(RateLimit::per_minute(1))
        .with_rate_limit_keys(2);
    let s = limited(config).await;
    assert_eq!(echo(1).send_from(s.addr, ip(2)).await.status, 200);
    assert_eq!(echo(2).send_from(s.addr, ip(3)).await.status, 200);
    // The table is full of active callers: the next addresses share one
    // bucket, so the first of them is served and the rest are refused.
    assert_eq!(echo(3).send_from(s.addr, ip(4)).await.status, 200);
    for last in 5..30 {
        assert_limited(&echo(4).send_from(s.addr, ip(last)).await, 4);
    }
    // The tracked callers keep their own buckets.
    assert_limited(&echo(5).send_from(s.addr, ip(2)).await, 5);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_legacy_session_gets_the_error_with_200_like_its_other_errors() {
    let s = limited(ServerConfig::default().with_rate_limit(RateLimit::per_minute(1))).await;
    let init = Req::post(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "legacy-it", "version": "1.0.0"}}}),
    )
    .without("MCP-Protocol-Version")
    .send(s.addr)
    .await;
    assert_eq!(init.status, 200, "{}", init.text());
    let sid = init.header("mcp-session-id").expect("session").to_owned();
    let legacy = |body: Value| {
        Req::post(&body)
            .without("Mcp-Method")
            .without("Mcp-Name")
            .set("MCP-Protocol-Version", "2025-11-25")
            .set("Mcp-Session-Id", &sid)
    };
    let done = legacy(json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .send(s.addr)
        .await;
    assert_eq!(done.status, 202);
    let call = |id: u64| {
        legacy(json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
            "params": {"name": "echo", "arguments": {"text": "old"}}}))
    };
    let first = call(1).send(s.addr).await;
    assert_eq!(
        first.json()["result"]["content"][0]["text"],
        "old",
        "{}",
        first.text()
    );
    let second = call(2).send(s.addr).await;
    assert_eq!(second.status, 200, "{}", second.text());
    let v = second.json();
    assert_eq!(v["error"]["code"], -31429, "{v}");
    assert!(v["error"]["data"]["retryAfterMs"].as_u64().is_some(), "{v}");
}
