//! One test per HTTP status the transport sends, and the JSON-RPC error that
//! goes with it.

use super::TestServer;
use super::client::{Open, Req, call_body, meta};
use serde_json::json;
use std::time::Duration;
use toolwire::HttpConfig;

#[tokio::test(flavor = "multi_thread")]
async fn call_is_200_with_one_json_message() {
    let s = TestServer::start().await;
    let resp = Req::call("echo", json!({ "text": "hi" }))
        .send(s.addr)
        .await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    assert!(resp.content_type().starts_with("application/json"));
    let v = resp.json();
    assert_eq!(v["id"], 1);
    assert_eq!(v["result"]["content"][0]["text"], "hi");
    assert_eq!(v["result"]["resultType"], "complete");
    assert!(resp.header("mcp-session-id").is_none());
}

#[tokio::test(flavor = "multi_thread")]
async fn discover_and_list_are_200() {
    let s = TestServer::start().await;
    for method in ["server/discover", "tools/list"] {
        let body =
            json!({ "jsonrpc": "2.0", "id": "a", "method": method, "params": { "_meta": meta() } });
        let resp = Req::post(&body).send(s.addr).await;
        assert_eq!(resp.status, 200, "{method}: {}", resp.text());
        assert_eq!(resp.json()["id"], "a");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn notification_is_202_with_no_body() {
    let s = TestServer::start().await;
    let body = json!({
        "jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": { "requestId": 1, "_meta": meta() }
    });
    let resp = Req::post(&body).send(s.addr).await;
    assert_eq!(resp.status, 202);
    assert!(resp.body.is_empty(), "{}", resp.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn client_response_is_400_invalid_request_echoing_its_id() {
    let s = TestServer::start().await;
    let body = json!({ "jsonrpc": "2.0", "id": 9, "result": {} });
    let resp = Req::post(&body).send(s.addr).await;
    assert_eq!(resp.status, 400);
    assert_eq!(resp.code(), -32600);
    assert_eq!(resp.json()["id"], 9);
}

#[tokio::test(flavor = "multi_thread")]
async fn unparseable_body_is_400_parse_error_without_id() {
    let s = TestServer::start().await;
    let mut req = Req::call("echo", json!({}));
    req.body = b"{not json".to_vec();
    let resp = req.send(s.addr).await;
    assert_eq!(resp.status, 400);
    assert_eq!(resp.code(), -32700);
    assert!(resp.json().get("id").is_none(), "{}", resp.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn batch_is_400_invalid_request() {
    let s = TestServer::start().await;
    let batch = json!([call_body(json!(1), "echo", json!({ "text": "a" }))]);
    let resp = Req::post(&batch)
        .set("Mcp-Method", "tools/call")
        .send(s.addr)
        .await;
    assert_eq!(resp.status, 400);
    assert_eq!(resp.code(), -32600);
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_meta_is_400_invalid_params_echoing_the_id() {
    let s = TestServer::start().await;
    let body = json!({ "jsonrpc": "2.0", "id": 101, "method": "tools/list", "params": {} });
    let resp = Req::post(&body).send(s.addr).await;
    assert_eq!(resp.status, 400);
    assert_eq!(resp.code(), -32602);
    assert_eq!(resp.json()["id"], 101);
}

#[tokio::test(flavor = "multi_thread")]
async fn unsupported_version_is_400_with_supported_list() {
    let s = TestServer::start().await;
    let mut body = json!({ "jsonrpc": "2.0", "id": 104, "method": "tools/list", "params": { "_meta": meta() } });
    body["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"] = json!("v999.0.0");
    let resp = Req::post(&body)
        .set("MCP-Protocol-Version", "v999.0.0")
        .send(s.addr)
        .await;
    assert_eq!(resp.status, 400);
    assert_eq!(resp.code(), -32022);
    let v = resp.json();
    assert_eq!(v["id"], 104);
    assert_eq!(v["error"]["data"]["requested"], "v999.0.0");
    assert_eq!(v["error"]["data"]["supported"][0], "2026-07-28");
}

#[tokio::test(flavor = "multi_thread")]
async fn unknown_and_removed_methods_are_404_method_not_found() {
    let s = TestServer::start().await;
    for method in ["unknown/method", "initialize", "ping", "logging/setLevel"] {
        let body =
            json!({ "jsonrpc": "2.0", "id": 500, "method": method, "params": { "_meta": meta() } });
        let resp = Req::post(&body).send(s.addr).await;
        assert_eq!(resp.status, 404, "{method}");
        assert_eq!(resp.code(), -32601, "{method}");
        assert_eq!(resp.json()["id"], 500);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn wrong_path_is_404_with_empty_body() {
    let s = TestServer::start().await;
    let mut req = Req::call("echo", json!({ "text": "x" }));
    req.path = "/other".into();
    let resp = req.send(s.addr).await;
    assert_eq!(resp.status, 404);
    assert!(resp.body.is_empty());
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_path_is_served() {
    let s = TestServer::with(HttpConfig::new().with_path("api/v1/mcp")).await;
    let mut req = Req::call("echo", json!({ "text": "x" }));
    req.path = "/api/v1/mcp".into();
    assert_eq!(req.send(s.addr).await.status, 200);
    assert_eq!(
        Req::call("echo", json!({ "text": "x" }))
            .send(s.addr)
            .await
            .status,
        404
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn get_and_delete_are_405_allowing_post() {
    let s = TestServer::start().await;
    for method in ["GET", "DELETE", "PUT"] {
        let resp = Req::raw(method, "/mcp", Vec::new())
            .add("Accept", "text/event-stream")
            .add("Mcp-Session-Id", "abc")
            .add("MCP-Protocol-Version", "2026-07-28")
            .send(s.addr)
            .await;
        assert_eq!(resp.status, 405, "{method}");
        assert_eq!(resp.header("allow"), Some("POST"));
        assert!(resp.header("mcp-session-id").is_none());
        // Without a session id there is no legacy session either.
        let resp = Req::raw(method, "/mcp", Vec::new())
            .add("Accept", "text/event-stream")
            .send(s.addr)
            .await;
        assert_eq!(resp.status, 405, "{method}");
    }
    // A legacy GET or DELETE naming an unknown session is 404.
    for method in ["GET", "DELETE"] {
        let resp = Req::raw(method, "/mcp", Vec::new())
            .add("Accept", "text/event-stream")
            .add("Mcp-Session-Id", "abc")
            .send(s.addr)
            .await;
        assert_eq!(resp.status, 404, "{method}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn accept_without_both_types_is_406() {
    let s = TestServer::start().await;
    let call = || Req::call("echo", json!({ "text": "x" }));
    for accept in [
        "application/json",
        "text/event-stream",
        "text/html",
        "application/json, text/event-stream;q=0",
    ] {
        let resp = call().set("Accept", accept).send(s.addr).await;
        assert_eq!(resp.status, 406, "{accept}");
        assert_eq!(resp.code(), -32600);
    }
    assert_eq!(call().without("Accept").send(s.addr).await.status, 406);
    for accept in [
        "text/event-stream, application/json",
        "TEXT/EVENT-STREAM;q=0.5,application/json;q=1",
    ] {
        assert_eq!(
            call().set("Accept", accept).send(s.addr).await.status,
            200,
            "{accept}"
        );
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn non_json_content_type_is_415() {
    let s = TestServer::start().await;
    let call = || Req::call("echo", json!({ "text": "x" }));
    for ct in ["text/plain", "application/x-www-form-urlencoded"] {
        let resp = call().set("Content-Type", ct).send(s.addr).await;
        assert_eq!(resp.status, 415, "{ct}");
    }
    assert_eq!(
        call().without("Content-Type").send(s.addr).await.status,
        415
    );
    let resp = call()
        .set("Content-Type", "application/json; charset=utf-8")
        .send(s.addr)
        .await;
    assert_eq!(resp.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_host_is_403() {
    let s = TestServer::start().await;
    let resp = Req::call("echo", json!({ "text": "x" }))
        .set("Host", "evil.example.com")
        .send(s.addr)
        .await;
    assert_eq!(resp.status, 403);
    assert!(resp.json().get("id").is_none());
    for host in ["localhost:1234", "[::1]:80"] {
        let resp = Req::call("echo", json!({ "text": "x" }))
            .set("Host", host)
            .send(s.addr)
            .await;
        assert_eq!(resp.status, 200, "{host}");
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn foreign_origin_is_403_and_local_origin_is_served() {
    let s = TestServer::start().await;
    let call = || Req::call("echo", json!({ "text": "x" }));
    let resp = call()
        .set("Origin", "http://evil.example.com")
        .send(s.addr)
        .await;
    assert_eq!(resp.status, 403);
    // The DNS-rebinding probe: attacker host and origin together.
    let resp = call()
        .set("Host", "evil.example.com")
        .set("Origin", "http://evil.example.com")
        .send(s.addr)
        .await;
    assert_eq!(resp.status, 403);
    let origin = format!("http://localhost:{}", s.addr.port());
    let resp = call().set("Origin", &origin).send(s.addr).await;
    assert_eq!(resp.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn configured_allow_lists_replace_the_defaults() {
    let config = HttpConfig::new()
        .with_allowed_hosts(["mcp.example.com"])
        .with_allowed_origins(["https://app.example.com"]);
    let s = TestServer::with(config).await;
    let call = || Req::call("echo", json!({ "text": "x" }));
    assert_eq!(call().send(s.addr).await.status, 403);
    let ok = call()
        .set("Host", "mcp.example.com:443")
        .set("Origin", "https://app.example.com")
        .send(s.addr)
        .await;
    assert_eq!(ok.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn declared_oversized_body_is_413_before_it_is_read() {
    let s = TestServer::start().await;
    // Only the head is sent: the server must answer without waiting for 9 MiB.
    let req = Req::call("echo", json!({ "text": "x" }));
    let mut open = Open::send_head(s.addr, &req, 9 * 1024 * 1024).await;
    open.read_until(b"\r\n\r\n", Duration::from_secs(5)).await;
    let resp = open.finish(Duration::from_secs(5)).await;
    assert_eq!(resp.status, 413);
    assert_eq!(resp.code(), -32600);
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn concurrency_limit_is_503_with_retry_after() {
    let s = TestServer::with(HttpConfig::new().with_max_concurrent_requests(Some(1))).await;
    let slow = Open::send(s.addr, &Req::call("sleep", json!({ "ms": 1000 }))).await;
    tokio::time::sleep(Duration::from_millis(300)).await;
    let resp = Req::call("echo", json!({ "text": "x" })).send(s.addr).await;
    assert_eq!(resp.status, 503);
    assert_eq!(resp.header("retry-after"), Some("1"));
    assert_eq!(resp.code(), -32603);
    let slow = slow.finish(Duration::from_secs(5)).await;
    assert_eq!(slow.status, 200);
    // The permit is back.
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn request_timeout_is_504_and_cancels_the_handler() {
    let config = HttpConfig::new().with_request_timeout(Some(Duration::from_millis(200)));
    let s = TestServer::with(config).await;
    let resp = Req::call("hold", json!({ "tag": "timeout" }))
        .send(s.addr)
        .await;
    assert_eq!(resp.status, 504);
    assert_eq!(resp.code(), -32603);
    assert_eq!(resp.json()["id"], 1);
    assert!(s.dropped("timeout", Duration::from_secs(2)).await);
}

#[tokio::test(flavor = "multi_thread")]
async fn same_id_on_concurrent_requests_is_fine() {
    let s = TestServer::start().await;
    let calls = (0..16).map(|i| {
        let addr = s.addr;
        tokio::spawn(async move {
            let text = format!("call {i}");
            let resp = Req::call("echo", json!({ "text": text })).send(addr).await;
            (text, resp)
        })
    });
    for call in calls {
        let (text, resp) = call.await.expect("task");
        assert_eq!(resp.status, 200);
        let v = resp.json();
        assert_eq!(v["id"], 1);
        assert_eq!(v["result"]["content"][0]["text"], text.as_str());
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn panicking_handler_is_500_internal_error() {
    let s = TestServer::start().await;
    let resp = Req::call("explode", json!({})).send(s.addr).await;
    assert_eq!(resp.status, 500, "{}", resp.text());
    assert_eq!(resp.code(), -32603);
    assert_eq!(resp.json()["id"], 1);
    s.assert_healthy().await;
}
