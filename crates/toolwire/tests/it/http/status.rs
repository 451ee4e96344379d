//! One test per HTTP status the transport sends, and the JSON-RPC error that
//! goes with it.

use super::TestServer;
use super::client::{Open, Req, Resp, call_body, meta};
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
        assert_eq!(resp.json()["id"], 1, "the id is echoed: {}", resp.text());
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
        assert_eq!(resp.json()["id"], 1, "the id is echoed: {}", resp.text());
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
    assert_eq!(resp.code(), -32600);
    assert_eq!(resp.json()["id"], 1, "the id is echoed: {}", resp.text());
    // An id that is not there, or not readable, is not echoed.
    let mut no_id = Req::call("echo", json!({ "text": "x" })).set("Host", "evil.example.com");
    no_id.body = b"{not json".to_vec();
    let resp = no_id.send(s.addr).await;
    assert_eq!(resp.status, 403);
    assert!(resp.json().get("id").is_none(), "{}", resp.text());
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
    assert_eq!(resp.json()["id"], 1, "the id is echoed: {}", resp.text());
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

/// Sends raw bytes and parses the answer.
async fn raw(addr: std::net::SocketAddr, bytes: &[u8]) -> Resp {
    super::client::exchange(addr, bytes.to_vec()).await
}

/// A complete `tools/call` request with the given extra head lines and no
/// `Host` of its own unless `extra` has one.
fn head_with(extra: &str, body: &[u8]) -> Vec<u8> {
    let mut out = format!(
        "POST /mcp HTTP/1.1\r\n{extra}Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
        body.len()
    )
    .into_bytes();
    out.extend_from_slice(body);
    out
}

fn echo_body() -> Vec<u8> {
    serde_json::to_vec(&call_body(json!(5), "echo", json!({ "text": "x" }))).expect("json")
}

#[tokio::test(flavor = "multi_thread")]
async fn missing_repeated_or_unreadable_host_is_400_not_403() {
    let s = TestServer::start().await;
    let any = TestServer::with(HttpConfig::new().with_any_host()).await;
    for server in [&s, &any] {
        for extra in [
            "",
            "Host: localhost\r\nHost: localhost\r\n",
            "Host: user@localhost\r\n",
        ] {
            let resp = raw(server.addr, &head_with(extra, &echo_body())).await;
            assert_eq!(resp.status, 400, "{extra:?}: {}", resp.text());
            assert_eq!(resp.code(), -32600);
            assert_eq!(resp.json()["id"], 5, "{}", resp.text());
        }
    }
    // A foreign host is still 403, and HTTP/1.0 needs no Host where no
    // list has to check it.
    let resp = raw(
        s.addr,
        &head_with("Host: evil.example.com\r\n", &echo_body()),
    )
    .await;
    assert_eq!(resp.status, 403);
    let mut old = head_with("", &echo_body());
    old.splice(0..18, b"POST /mcp HTTP/1.0".iter().copied());
    assert_eq!(raw(any.addr, &old).await.status, 200);
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn compressed_body_is_415_with_accept_encoding_identity() {
    let s = TestServer::start().await;
    // The gzip magic and some bytes: not something toolwire decodes.
    let gzipped = vec![
        0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0xab, 0xae, 0x05, 0x00,
    ];
    for coding in ["gzip", "br", "deflate", "identity, gzip", "zstd"] {
        let mut req = Req::call("echo", json!({ "text": "x" })).set("Content-Encoding", coding);
        req.body = gzipped.clone();
        let resp = req.send(s.addr).await;
        assert_eq!(resp.status, 415, "{coding}: {}", resp.text());
        assert_eq!(resp.header("accept-encoding"), Some("identity"), "{coding}");
        assert_eq!(resp.code(), -32600);
    }
    // identity is no coding at all.
    let resp = Req::call("echo", json!({ "text": "x" }))
        .set("Content-Encoding", "identity")
        .send(s.addr)
        .await;
    assert_eq!(resp.status, 200, "{}", resp.text());
}

/// `body` as one chunk, then the last chunk.
fn chunked(body: &[u8]) -> Vec<u8> {
    let mut out = format!("{:x}\r\n", body.len()).into_bytes();
    out.extend_from_slice(body);
    out.extend_from_slice(b"\r\n0\r\n\r\n");
    out
}

#[tokio::test(flavor = "multi_thread")]
async fn transfer_codings_other_than_chunked_are_refused() {
    let s = TestServer::start().await;
    let head = |te: &str| {
        format!(
            "POST /mcp HTTP/1.1\r\nHost: {}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: echo\r\nTransfer-Encoding: {te}\r\nConnection: close\r\n\r\n",
            s.addr
        )
        .into_bytes()
    };
    // The body is plain JSON although it claims to be gzipped: served as
    // is before, which is the silent misreading the check prevents.
    for (te, status) in [
        ("gzip, chunked", 501),
        ("x-custom, chunked", 501),
        ("chunked, chunked", 400),
    ] {
        let mut bytes = head(te);
        bytes.extend_from_slice(&chunked(&echo_body()));
        let resp = raw(s.addr, &bytes).await;
        assert_eq!(resp.status, status, "{te}: {}", resp.text());
        assert_eq!(resp.code(), -32600, "{te}");
    }
    // A last coding other than chunked never reaches the service: hyper
    // answers 400, as RFC 9112 §6.3 says (the length is unknowable).
    let mut bytes = head("gzip");
    bytes.extend_from_slice(&echo_body());
    assert_eq!(raw(s.addr, &bytes).await.status, 400);
    // chunked alone is served.
    let mut bytes = head("chunked");
    bytes.extend_from_slice(&chunked(&echo_body()));
    let resp = raw(s.addr, &bytes).await;
    assert_eq!(resp.status, 200, "{}", resp.text());
    s.assert_healthy().await;
}
