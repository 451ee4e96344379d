//! Early answers drain the body they leave unread: a client that writes its
//! whole body before it reads anything (Python's `http.client` does) reads
//! the `404`, `405` or `503` instead of a reset. Each test writes a body
//! larger than the loopback socket buffers can hold, from a plain blocking
//! `std::net::TcpStream`, and only then reads.

use super::TestServer;
use super::client::{Req, Resp};
use serde_json::json;
use std::io::{Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::time::Duration;
use toolwire::HttpConfig;

/// Larger than what the kernel buffers between the two ends absorb while
/// the server reads nothing, and under the drain limit (16 MiB).
const BODY: usize = 12 * 1024 * 1024;

/// `req`'s head with a `BODY`-byte `tools/call` body after it.
fn with_big_body(req: &Req, addr: SocketAddr) -> Vec<u8> {
    let mut bytes = req.head(addr, Some(BODY));
    let head = br#"{"jsonrpc":"2.0","id":5,"method":"tools/call","params":{"name":"echo","arguments":{"text":""#;
    let tail = br#""}}}"#;
    bytes.extend_from_slice(head);
    bytes.resize(bytes.len() + BODY - head.len() - tail.len(), b'a');
    bytes.extend_from_slice(tail);
    bytes
}

/// Writes all of `bytes`, then reads the answer to the end. Panics if
/// writing or reading fails (a reset, a broken pipe).
async fn write_all_then_read(addr: SocketAddr, bytes: Vec<u8>) -> Resp {
    tokio::task::spawn_blocking(move || {
        let mut stream = TcpStream::connect(addr).expect("connect");
        stream
            .set_write_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        stream
            .set_read_timeout(Some(Duration::from_secs(20)))
            .expect("timeout");
        if let Err(e) = stream.write_all(&bytes) {
            panic!("writing the body failed: {e}");
        }
        let mut buf = Vec::new();
        if let Err(e) = stream.read_to_end(&mut buf) {
            panic!("reading the answer failed after {} bytes: {e}", buf.len());
        }
        Resp::parse(&buf)
            .unwrap_or_else(|| panic!("unreadable response: {:?}", String::from_utf8_lossy(&buf)))
    })
    .await
    .expect("the blocking client")
}

#[tokio::test(flavor = "multi_thread")]
async fn a_404_for_an_unknown_path_is_read_after_a_whole_body() {
    let s = TestServer::start().await;
    let req = Req::raw("POST", "/elsewhere", Vec::new());
    let resp = write_all_then_read(s.addr, with_big_body(&req, s.addr)).await;
    assert_eq!(resp.status, 404, "{}", resp.text());
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_404_for_an_unknown_session_is_read_after_a_whole_body() {
    let s = TestServer::start().await;
    let req = Req::raw("DELETE", "/mcp", Vec::new())
        .set("MCP-Protocol-Version", "2025-11-25")
        .set("Mcp-Session-Id", "no-such-session");
    let resp = write_all_then_read(s.addr, with_big_body(&req, s.addr)).await;
    assert_eq!(resp.status, 404, "{}", resp.text());
    assert!(resp.text().contains("Session not found"), "{}", resp.text());
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_405_is_read_after_a_whole_body() {
    let s = TestServer::start().await;
    let req = Req::raw("PUT", "/mcp", Vec::new());
    let resp = write_all_then_read(s.addr, with_big_body(&req, s.addr)).await;
    assert_eq!(resp.status, 405, "{}", resp.text());
    assert_eq!(resp.header("allow"), Some("POST"), "{:?}", resp.headers);
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_503_at_admission_is_read_after_a_whole_body() {
    let config = HttpConfig::new()
        .with_max_concurrent_requests(Some(1))
        .with_max_body_bytes(2 * BODY);
    let s = TestServer::with(config).await;
    // The one request slot, held by a call that never ends.
    let held = Req::call("hold", json!({"tag": "slot"}));
    let mut bytes = held.head(s.addr, Some(held.body.len()));
    bytes.extend_from_slice(&held.body);
    let mut holder = tokio::net::TcpStream::connect(s.addr)
        .await
        .expect("connect");
    tokio::io::AsyncWriteExt::write_all(&mut holder, &bytes)
        .await
        .expect("write");
    tokio::time::sleep(Duration::from_millis(300)).await;

    let req = Req::call("echo", json!({}));
    let resp = write_all_then_read(s.addr, with_big_body(&req, s.addr)).await;
    assert_eq!(resp.status, 503, "{}", resp.text());
    assert_eq!(resp.header("retry-after"), Some("1"), "{:?}", resp.headers);
    assert_eq!(resp.code(), -32603);
    drop(holder);
    tokio::time::sleep(Duration::from_millis(300)).await;
    s.assert_healthy().await;
}
