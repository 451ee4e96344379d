//! Abusive input: the server answers cleanly, never buffers past its limits,
//! and keeps serving everyone else.

use super::TestServer;
use super::client::{Open, Req, Resp, exchange};
use serde_json::json;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
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

/// Writes all of `bytes` before reading anything, as Python's
/// `http.client` does, then reads the answer to the end.
async fn write_all_then_read(addr: std::net::SocketAddr, bytes: &[u8]) -> Resp {
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    let written = tokio::time::timeout(Duration::from_secs(20), stream.write_all(bytes)).await;
    assert!(
        matches!(written, Ok(Ok(()))),
        "writing the body failed: {written:?}"
    );
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut buf)).await;
    assert!(
        matches!(read, Ok(Ok(_))),
        "reading the answer failed after {} bytes: {read:?}",
        buf.len()
    );
    Resp::parse(&buf)
        .unwrap_or_else(|| panic!("unreadable response: {:?}", String::from_utf8_lossy(&buf)))
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_writes_all_nine_mib_before_reading_reads_the_413() {
    let s = TestServer::start().await;
    let mut req = Req::call("echo", json!({}));
    req.body = padded_call(NINE_MIB);
    let mut bytes = req.head(s.addr, Some(NINE_MIB));
    bytes.extend_from_slice(&req.body);
    let resp = write_all_then_read(s.addr, &bytes).await;
    assert_eq!(resp.status, 413, "{}", resp.text());
    assert_eq!(resp.code(), -32600);

    // The same when the limit is found while reading a chunked body.
    let req = Req::call("echo", json!({})).add("Transfer-Encoding", "chunked");
    let mut bytes = req.head(s.addr, None);
    for chunk in padded_call(NINE_MIB).chunks(64 * 1024) {
        bytes.extend_from_slice(format!("{:x}\r\n", chunk.len()).as_bytes());
        bytes.extend_from_slice(chunk);
        bytes.extend_from_slice(b"\r\n");
    }
    bytes.extend_from_slice(b"0\r\n\r\n");
    let resp = write_all_then_read(s.addr, &bytes).await;
    assert_eq!(resp.status, 413, "{}", resp.text());

    // And for a refusal from the head: the id is echoed too.
    let mut req = Req::call("echo", json!({})).set("Origin", "http://evil.example.com");
    req.body = padded_call(2 * 1024 * 1024);
    let mut bytes = req.head(s.addr, Some(req.body.len()));
    bytes.extend_from_slice(&req.body);
    let resp = write_all_then_read(s.addr, &bytes).await;
    assert_eq!(resp.status, 403, "{}", resp.text());
    assert_eq!(resp.json()["id"], 1);
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn after_a_drained_413_the_connection_serves_its_next_request() {
    let s = TestServer::start().await;
    let mut req = Req::call("echo", json!({}));
    req.body = padded_call(NINE_MIB);
    let mut stream = TcpStream::connect(s.addr).await.expect("connect");
    let mut bytes = req.head(s.addr, Some(NINE_MIB));
    // Kept alive: no `Connection: close`.
    let head = String::from_utf8(bytes)
        .expect("head")
        .replace("Connection: close\r\n", "");
    bytes = head.into_bytes();
    bytes.extend_from_slice(&req.body);
    stream.write_all(&bytes).await.expect("write 9 MiB");
    let echo = Req::call("echo", json!({ "text": "next" }));
    let mut next = echo.head(s.addr, Some(echo.body.len()));
    next.extend_from_slice(&echo.body);
    stream
        .write_all(&next)
        .await
        .expect("write the next request");
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut buf)).await;
    assert!(matches!(read, Ok(Ok(_))), "{read:?}");
    let text = String::from_utf8_lossy(&buf);
    assert!(text.starts_with("HTTP/1.1 413"), "{text}");
    let second = text
        .find("HTTP/1.1 200")
        .unwrap_or_else(|| panic!("no second answer: {text}"));
    assert!(text[second..].contains(r#""text":"next""#), "{text}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_body_that_never_ends_after_a_413_is_cut_off_in_bounded_time() {
    let config = HttpConfig::new().with_read_timeout(Duration::from_millis(800));
    let s = TestServer::with(config).await;
    let req = Req::call("echo", json!({}));
    // Declares 9 MiB, sends 1 MiB and then nothing.
    let mut open = Open::send_head(s.addr, &req, NINE_MIB).await;
    open.stream
        .write_all(&vec![b'a'; 1024 * 1024])
        .await
        .expect("write");
    let started = Instant::now();
    open.read_until(b"\r\n\r\n", Duration::from_secs(5)).await;
    assert!(
        open.buf.starts_with(b"HTTP/1.1 413"),
        "{:?}",
        String::from_utf8_lossy(&open.buf)
    );
    assert!(
        open.closed_within(Duration::from_secs(5)).await,
        "the connection was held open"
    );
    let took = started.elapsed();
    assert!(took < Duration::from_secs(3), "cut off after {took:?}");

    // The same for a drain past its byte limit: the server stops reading
    // and closes instead of swallowing an endless body.
    let config = HttpConfig::new().with_max_drain_bytes(64 * 1024);
    let s = TestServer::with(config).await;
    let mut open = Open::send_head(s.addr, &req, NINE_MIB).await;
    let started = Instant::now();
    let mut sent = 0_usize;
    let closed = tokio::time::timeout(Duration::from_secs(10), async {
        let chunk = vec![b'a'; 64 * 1024];
        while open.stream.write_all(&chunk).await.is_ok() {
            sent += chunk.len();
        }
    })
    .await;
    assert!(closed.is_ok(), "the server kept reading {sent} bytes");
    assert!(sent < NINE_MIB, "the server read all {sent} bytes");
    assert!(started.elapsed() < Duration::from_secs(5));
    s.assert_healthy().await;
}

/// Counts the `WARN` and `ERROR` events emitted on this thread.
struct CountWarnings(Arc<AtomicUsize>);

impl tracing::Subscriber for CountWarnings {
    fn enabled(&self, metadata: &tracing::Metadata<'_>) -> bool {
        *metadata.level() <= tracing::Level::WARN
    }
    fn new_span(&self, _: &tracing::span::Attributes<'_>) -> tracing::span::Id {
        tracing::span::Id::from_u64(1)
    }
    fn record(&self, _: &tracing::span::Id, _: &tracing::span::Record<'_>) {}
    fn record_follows_from(&self, _: &tracing::span::Id, _: &tracing::span::Id) {}
    fn event(&self, _: &tracing::Event<'_>) {
        self.0.fetch_add(1, Ordering::Relaxed);
    }
    fn enter(&self, _: &tracing::span::Id) {}
    fn exit(&self, _: &tracing::span::Id) {}
}

/// A client that can make a handler panic, or make it return output its
/// schema refuses, gets its error answer every time; the log gets a line
/// per interval, not one per request.
#[tokio::test]
async fn a_flood_of_failing_handlers_logs_a_bounded_number_of_lines() {
    const FLOOD: usize = 200;
    let lines = Arc::new(AtomicUsize::new(0));
    // The current-thread runtime runs the server on this thread, where the
    // counter is the subscriber.
    let _guard = tracing::subscriber::set_default(CountWarnings(Arc::clone(&lines)));
    let s = TestServer::start().await;
    // (The panic hook prints each panic too, into this test's captured
    // output: that is the test harness's, not the server's log.)
    for i in 0..FLOOD {
        let tool = if i % 2 == 0 { "explode" } else { "misfit" };
        let resp = Req::call(tool, json!({})).send(s.addr).await;
        assert_eq!(resp.status, 500, "{tool}: {}", resp.text());
        assert_eq!(resp.code(), -32603);
    }
    let logged = lines.load(Ordering::Relaxed);
    eprintln!("{logged} WARN/ERROR lines for {FLOOD} failing requests");
    assert!(
        logged <= 2,
        "{logged} WARN/ERROR lines for {FLOOD} failing requests"
    );
}
