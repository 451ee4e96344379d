//! Abusive input: the server answers cleanly, never buffers past its limits,
//! and keeps serving everyone else.

use super::TestServer;
use super::client::{Open, Req, exchange};
use serde_json::json;
use std::time::{Duration, Instant};
use tokio::io::AsyncWriteExt;
use tokio::net::TcpStream;
use toolwire::HttpConfig;

const NINE_MIB: usize = 9 * 1024 * 1024;

/// A `tools/call` body padded to `size` bytes with a long string argument.
fn padded_call(size: usize) -> Vec<u8> {
    let head = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}},"arguments":{"text":""#;
    let tail = br#""}}}"#;
    let mut body = head.to_vec();
    body.resize(size - tail.len(), b'a');
    body.extend_from_slice(tail);
    body
}

#[tokio::test(flavor = "multi_thread")]
async fn nine_mib_body_is_413_and_the_server_stays_healthy() {
    let s = TestServer::start().await;
    let mut req = Req::call("echo", json!({}));
    req.body = padded_call(NINE_MIB);
    let resp = req.send(s.addr).await;
    assert_eq!(resp.status, 413, "{}", resp.text());
    assert_eq!(resp.code(), -32600);
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn nine_mib_chunked_body_is_413_without_buffering_it() {
    let s = TestServer::start().await;
    let req = Req::call("echo", json!({})).add("Transfer-Encoding", "chunked");
    let mut bytes = req.head(s.addr, None);
    for chunk in padded_call(NINE_MIB).chunks(64 * 1024) {
        bytes.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        bytes.extend_from_slice(chunk);
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(b"0\r\n\r\n");
    let resp = exchange(s.addr, bytes).await;
    assert_eq!(resp.status, 413, "{}", resp.text());
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn body_just_under_the_limit_is_served() {
    let s = TestServer::with(HttpConfig::new().with_max_body_bytes(64 * 1024)).await;
    let mut req = Req::call("echo", json!({}));
    req.body = padded_call(64 * 1024);
    assert_eq!(req.send(s.addr).await.status, 200);
    req.body = padded_call(64 * 1024 + 1);
    assert_eq!(req.send(s.addr).await.status, 413);
}

#[tokio::test(flavor = "multi_thread")]
async fn two_hundred_thousand_nested_brackets_are_a_quick_clean_400() {
    let s = TestServer::start().await;
    let mut body = br#"{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"name":"echo","arguments":{"text":"#.to_vec();
    body.extend(std::iter::repeat_n(b'[', 200_000));
    body.extend(std::iter::repeat_n(b']', 200_000));
    body.extend_from_slice(b"}}}");
    let mut req = Req::call("echo", json!({}));
    req.body = body;
    let started = Instant::now();
    let resp = req.send(s.addr).await;
    assert!(
        started.elapsed() < Duration::from_secs(2),
        "took {:?}",
        started.elapsed()
    );
    assert_eq!(resp.status, 400);
    assert_eq!(resp.code(), -32700);
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn nesting_within_the_limit_still_parses() {
    let s = TestServer::with(HttpConfig::new().with_max_json_depth(8)).await;
    let deep = json!({ "text": "x", "extra": [[[[1]]]] });
    let resp = Req::call("echo", deep).send(s.addr).await;
    assert_ne!(resp.status, 400, "{}", resp.text());
    let deeper = json!({ "text": "x", "extra": [[[[[[1]]]]]] });
    let resp = Req::call("echo", deeper).send(s.addr).await;
    assert_eq!(resp.status, 400);
    assert_eq!(resp.code(), -32700);
}

#[tokio::test(flavor = "multi_thread")]
async fn half_sent_body_times_out_while_others_are_served() {
    let config = HttpConfig::new().with_read_timeout(Duration::from_millis(400));
    let s = TestServer::with(config).await;
    let req = Req::call("echo", json!({ "text": "slow" }));
    let mut slow = Open::send_head(s.addr, &req, req.body.len()).await;
    slow.stream.write_all(&req.body[..10]).await.expect("write");
    // Others are served while the body hangs.
    for _ in 0..3 {
        s.assert_healthy().await;
    }
    let started = Instant::now();
    let resp = slow.finish(Duration::from_secs(5)).await;
    assert!(started.elapsed() < Duration::from_secs(2));
    assert_eq!(resp.status, 408);
    assert_eq!(resp.code(), -32600);
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn half_sent_head_is_dropped_while_others_are_served() {
    let config = HttpConfig::new().with_read_timeout(Duration::from_millis(400));
    let s = TestServer::with(config).await;
    let mut slow = TcpStream::connect(s.addr).await.expect("connect");
    slow.write_all(b"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ")
        .await
        .expect("write");
    s.assert_healthy().await;
    let open = Open {
        stream: slow,
        buf: Vec::new(),
    };
    assert!(
        open.closed_within(Duration::from_secs(3)).await,
        "the slow head was not cut"
    );
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn garbage_bytes_do_not_hurt() {
    let s = TestServer::start().await;
    let mut stream = TcpStream::connect(s.addr).await.expect("connect");
    let _ = stream
        .write_all(&[0xff, 0x00, b'\r', b'\n', 0x80, b'G'])
        .await;
    let _ = stream.write_all(b"\r\n\r\n").await;
    drop(stream);
    let mut req = Req::call("echo", json!({}));
    req.body = vec![0xff; 1000];
    let resp = req.send(s.addr).await;
    assert_eq!(resp.status, 400);
    s.assert_healthy().await;
}
