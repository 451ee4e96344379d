//! Fair sharing and bounded resources over real sockets: per-client request,
//! stream, session and connection limits (a second client, from another
//! loopback address, is still served), `503` with `Retry-After` for a full
//! listener table, the connection cap, early expiry of unused legacy
//! sessions, and the write timeout.

use super::TestServer;
use super::client::{Req, Resp, call_body};
use serde_json::{Value, json};
use std::net::{Ipv4Addr, SocketAddr};
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpSocket, TcpStream};
use toolwire::{HttpConfig, ServerConfig, Tool};

/// The first client's address (the other tests' too) and a second one.
const A: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 1);
const B: Ipv4Addr = Ipv4Addr::new(127, 0, 0, 2);

async fn connect_from(ip: Ipv4Addr, addr: SocketAddr) -> TcpStream {
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .bind((ip, 0).into())
        .expect("bind a loopback address");
    socket.connect(addr).await.expect("connect")
}

/// Sends `req` from `ip` and reads the whole response.
async fn send_from(ip: Ipv4Addr, addr: SocketAddr, req: &Req) -> Resp {
    let mut stream = connect_from(ip, addr).await;
    let mut bytes = req.head(addr, Some(req.body.len()));
    bytes.extend_from_slice(&req.body);
    stream.write_all(&bytes).await.expect("write");
    let mut buf = Vec::new();
    let read = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut buf)).await;
    assert!(read.is_ok(), "no response within 20 s");
    Resp::parse(&buf)
        .unwrap_or_else(|| panic!("unreadable response: {:?}", String::from_utf8_lossy(&buf)))
}

/// Sends `req` from `ip` and keeps the connection open, unread.
async fn hold_from(ip: Ipv4Addr, addr: SocketAddr, req: &Req) -> TcpStream {
    let mut stream = connect_from(ip, addr).await;
    let mut bytes = req.head(addr, Some(req.body.len()));
    bytes.extend_from_slice(&req.body);
    stream.write_all(&bytes).await.expect("write");
    stream
}

fn echo() -> Req {
    Req::call("echo", json!({"text": "hi"}))
}

fn hold(tag: &str) -> Req {
    Req::call("hold", json!({"tag": tag}))
}

fn listen_req() -> Req {
    Req::post(
        &json!({"jsonrpc":"2.0","id":7,"method":"subscriptions/listen","params":{
        "_meta": super::client::meta(),
        "notifications": {"toolsListChanged": true}}}),
    )
}

fn assert_busy(resp: &Resp) {
    assert_eq!(resp.status, 503, "{}", resp.text());
    assert_eq!(resp.header("retry-after"), Some("1"), "{:?}", resp.headers);
    assert_eq!(resp.code(), -32603);
}

/// Lets requests sent on open connections reach the server.
async fn settle() {
    tokio::time::sleep(Duration::from_millis(300)).await;
}

#[tokio::test(flavor = "multi_thread")]
async fn one_client_at_its_request_share_is_refused_while_another_is_served() {
    let s = TestServer::with(
        HttpConfig::new()
            .with_max_requests_per_client(4)
            .with_max_concurrent_requests(Some(16)),
    )
    .await;
    let mut held = Vec::new();
    for i in 0..4 {
        held.push(hold_from(A, s.addr, &hold(&format!("a{i}"))).await);
    }
    settle().await;
    assert_busy(&send_from(A, s.addr, &echo()).await);
    let other = send_from(B, s.addr, &echo()).await;
    assert_eq!(other.status, 200, "{}", other.text());
    assert_eq!(other.json()["result"]["content"][0]["text"], "hi");
    // Given back when the held calls end.
    drop(held);
    settle().await;
    assert_eq!(send_from(A, s.addr, &echo()).await.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn slow_request_bodies_count_against_the_clients_share() {
    let s = TestServer::with(HttpConfig::new().with_max_requests_per_client(3)).await;
    let mut slow = Vec::new();
    for _ in 0..3 {
        let mut stream = connect_from(A, s.addr).await;
        // The head promises a body that never comes.
        stream
            .write_all(&echo().head(s.addr, Some(100)))
            .await
            .expect("write");
        slow.push(stream);
    }
    settle().await;
    assert_busy(&send_from(A, s.addr, &echo()).await);
    assert_eq!(send_from(B, s.addr, &echo()).await.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn a_full_listener_table_is_503_with_retry_after() {
    let s = TestServer::with_server(
        ServerConfig::new("bounds", "0").with_max_listeners(2),
        HttpConfig::new(),
    )
    .await;
    let mut open = Vec::new();
    for ip in [A, B] {
        let mut stream = hold_from(ip, s.addr, &listen_req()).await;
        let mut buf = [0_u8; 512];
        let n = stream.read(&mut buf).await.expect("the acknowledgment");
        assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
        open.push(stream);
    }
    let refused = send_from(A, s.addr, &listen_req()).await;
    assert_busy(&refused);
    assert_eq!(refused.json()["id"], 7);
    assert_eq!(refused.json()["error"]["data"]["maxListeners"], 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn one_client_cannot_hold_every_stream() {
    let s = TestServer::with(HttpConfig::new().with_max_streams_per_client(2)).await;
    let mut open = Vec::new();
    for _ in 0..2 {
        open.push(hold_from(A, s.addr, &listen_req()).await);
    }
    settle().await;
    assert_busy(&send_from(A, s.addr, &listen_req()).await);
    let mut other = hold_from(B, s.addr, &listen_req()).await;
    let mut buf = [0_u8; 512];
    let n = other.read(&mut buf).await.expect("read");
    assert!(
        String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"),
        "{}",
        String::from_utf8_lossy(&buf[..n])
    );
    // A closed stream gives its slot back.
    drop(open.pop());
    settle().await;
    let mut again = hold_from(A, s.addr, &listen_req()).await;
    let n = again.read(&mut buf).await.expect("read");
    assert!(String::from_utf8_lossy(&buf[..n]).starts_with("HTTP/1.1 200"));
}

#[tokio::test(flavor = "multi_thread")]
async fn connections_over_the_per_address_cap_are_closed() {
    let s = TestServer::with(HttpConfig::new().with_max_connections_per_client(3)).await;
    let mut idle = Vec::new();
    for _ in 0..3 {
        idle.push(connect_from(A, s.addr).await);
    }
    settle().await;
    // The fourth from the same address is closed without an answer.
    let mut fourth = connect_from(A, s.addr).await;
    let _ = fourth.write_all(&echo().head(s.addr, Some(0))).await;
    let mut buf = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), fourth.read_to_end(&mut buf)).await;
    assert!(buf.is_empty(), "{}", String::from_utf8_lossy(&buf));
    assert_eq!(send_from(B, s.addr, &echo()).await.status, 200);
    drop(idle);
    settle().await;
    assert_eq!(send_from(A, s.addr, &echo()).await.status, 200);
}

#[tokio::test(flavor = "multi_thread")]
async fn at_the_connection_cap_new_connections_wait_for_a_free_one() {
    let s = TestServer::with(HttpConfig::new().with_max_connections(Some(2))).await;
    let first = connect_from(A, s.addr).await;
    let _second = connect_from(B, s.addr).await;
    settle().await;
    let waiting = tokio::spawn({
        let addr = s.addr;
        async move {
            let started = Instant::now();
            let resp = send_from(Ipv4Addr::new(127, 0, 0, 3), addr, &echo()).await;
            (resp.status, started.elapsed())
        }
    });
    tokio::time::sleep(Duration::from_millis(700)).await;
    assert!(!waiting.is_finished(), "served past the connection cap");
    drop(first);
    let (status, waited) = waiting.await.expect("joined");
    assert_eq!(status, 200);
    assert!(waited >= Duration::from_millis(600), "{waited:?}");
}

fn initialize_body() -> Value {
    json!({"jsonrpc":"2.0","id":0,"method":"initialize","params":{
        "protocolVersion":"2025-11-25","capabilities":{},
        "clientInfo":{"name":"bounds","version":"1"}}})
}

fn initialize() -> Req {
    Req::post(&initialize_body()).without("MCP-Protocol-Version")
}

fn in_session(sid: &str, body: &Value) -> Req {
    Req::post(body)
        .without("Mcp-Method")
        .without("Mcp-Name")
        .set("MCP-Protocol-Version", "2025-11-25")
        .set("Mcp-Session-Id", sid)
}

fn ping() -> Value {
    json!({"jsonrpc":"2.0","id":1,"method":"ping"})
}

#[tokio::test(flavor = "multi_thread")]
async fn one_address_cannot_take_every_legacy_session() {
    let s = TestServer::with(HttpConfig::new().with_max_sessions_per_client(2)).await;
    for _ in 0..2 {
        assert_eq!(send_from(A, s.addr, &initialize()).await.status, 200);
    }
    let refused = send_from(A, s.addr, &initialize()).await;
    assert_busy(&refused);
    assert_eq!(refused.json()["id"], 0);
    let other = send_from(B, s.addr, &initialize()).await;
    assert_eq!(other.status, 200, "{}", other.text());
}

#[tokio::test(flavor = "multi_thread")]
async fn sessions_never_used_after_initialize_expire_within_the_init_timeout() {
    let s = TestServer::with(
        HttpConfig::new()
            .with_max_sessions(3)
            .with_session_init_timeout(Duration::from_millis(500)),
    )
    .await;
    let sid = |r: &Resp| r.header("mcp-session-id").expect("session id").to_owned();
    let used = sid(&send_from(A, s.addr, &initialize()).await);
    assert_eq!(
        send_from(A, s.addr, &in_session(&used, &ping()))
            .await
            .status,
        200
    );
    let unused = sid(&send_from(A, s.addr, &initialize()).await);
    let _flood = sid(&send_from(A, s.addr, &initialize()).await);
    assert_busy(&send_from(B, s.addr, &initialize()).await);
    tokio::time::sleep(Duration::from_millis(700)).await;
    // The unused sessions are gone, the used one lives on.
    let legit = send_from(B, s.addr, &initialize()).await;
    assert_eq!(legit.status, 200, "{}", legit.text());
    assert_eq!(
        send_from(A, s.addr, &in_session(&unused, &ping()))
            .await
            .status,
        404
    );
    assert_eq!(
        send_from(A, s.addr, &in_session(&used, &ping()))
            .await
            .status,
        200
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn a_client_that_does_not_read_is_cut_off_after_the_write_timeout() {
    const BIG: usize = 32 * 1024 * 1024;
    let s =
        TestServer::with(HttpConfig::new().with_write_timeout(Duration::from_millis(500))).await;
    s.server
        .add_tool(
            Tool::builder("big")
                .input_schema(json!({"type": "object"}))
                .handler(|_: Value, _| async move { "x".repeat(BIG) })
                .expect("valid tool"),
        )
        .expect("registered");
    let socket = TcpSocket::new_v4().expect("socket");
    socket
        .set_recv_buffer_size(4096)
        .expect("small receive buffer");
    let mut stream = socket.connect(s.addr).await.expect("connect");
    let req = Req::post(&call_body(json!(1), "big", json!({})));
    let mut bytes = req.head(s.addr, Some(req.body.len()));
    bytes.extend_from_slice(&req.body);
    stream.write_all(&bytes).await.expect("write");
    // Once the response has started (building it takes a while), read
    // nothing for longer than the write timeout, then everything.
    let mut got = vec![0_u8; 64];
    tokio::time::timeout(Duration::from_secs(60), stream.read_exact(&mut got))
        .await
        .expect("the response starts")
        .expect("read");
    tokio::time::sleep(Duration::from_secs(2)).await;
    let _ = tokio::time::timeout(Duration::from_secs(20), stream.read_to_end(&mut got)).await;
    assert!(
        got.len() < BIG,
        "the whole {} bytes arrived: the server waited for the reader",
        got.len()
    );
    s.assert_healthy().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_unread_legacy_get_stream_that_falls_too_far_behind_is_closed() {
    const STREAMS: usize = 4;
    const FLOOD: Duration = Duration::from_secs(6);
    let s = TestServer::with(HttpConfig::new().with_session_stream_queue(4)).await;
    let mut streams = Vec::new();
    for _ in 0..STREAMS {
        let resp = send_from(A, s.addr, &initialize()).await;
        let sid = resp
            .header("mcp-session-id")
            .expect("session id")
            .to_owned();
        let subscribe = json!({"jsonrpc":"2.0","id":1,"method":"resources/subscribe",
            "params":{"uri":"test://flood"}});
        let done = send_from(A, s.addr, &in_session(&sid, &subscribe)).await;
        assert_eq!(done.status, 200, "{}", done.text());
        let socket = TcpSocket::new_v4().expect("socket");
        socket
            .set_recv_buffer_size(4096)
            .expect("small receive buffer");
        let mut stream = socket.connect(s.addr).await.expect("connect");
        let head = format!(
            "GET /mcp HTTP/1.1\r\nHost: {}\r\nAccept: text/event-stream\r\nMCP-Protocol-Version: 2025-11-25\r\nMcp-Session-Id: {sid}\r\n\r\n",
            s.addr
        );
        stream
            .write_all(head.as_bytes())
            .await
            .expect("open the GET stream");
        streams.push(stream);
    }
    settle().await;
    // A subscribed resource (with a 64 KiB URI) is updated, and the tool
    // list changes, as fast as the server can publish, while no stream is
    // read: more than the kernel's buffers and the queue hold.
    let bus = s.server.notification_bus().clone();
    let flood = tokio::spawn(async move {
        let uri = format!("test://flood/{}", "u".repeat(64 * 1024));
        let started = Instant::now();
        while started.elapsed() < FLOOD {
            for _ in 0..10 {
                bus.publish(toolwire::ListChanged::Tools.into());
                bus.publish(toolwire::BusEvent::ResourceUpdated { uri: uri.clone() });
            }
            tokio::task::yield_now().await;
        }
    });
    flood.await.expect("flood");
    // Each stream delivers what was already on its way, then ends (the
    // last chunk of the chunked body), instead of holding a backlog for a
    // reader that does not read.
    for mut stream in streams {
        let mut got = Vec::new();
        let mut chunk = vec![0_u8; 64 * 1024];
        loop {
            match tokio::time::timeout(Duration::from_secs(2), stream.read(&mut chunk)).await {
                Ok(Ok(n)) if n > 0 => got.extend_from_slice(&chunk[..n]),
                _ => break,
            }
        }
        assert!(
            got.starts_with(b"HTTP/1.1 200"),
            "{:?}",
            String::from_utf8_lossy(&got[..got.len().min(200)])
        );
        assert!(
            got.ends_with(b"\r\n0\r\n\r\n"),
            "the stream is still open after {} bytes",
            got.len()
        );
    }
    s.assert_healthy().await;
}
