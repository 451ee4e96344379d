//! Legacy sessions over Streamable HTTP against the real server on a
//! loopback socket: `Mcp-Session-Id`, elicitation on the request's stream,
//! the GET stream, DELETE on close, and a new session after a 404.

use super::server::{accept_all, server, text};
use crate::client::{ChangeNotification, ClientBuilder, ProtocolEra, ProtocolMode};
use crate::{HttpConfig, Server, Tool};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpListener;
use tokio::sync::oneshot;
use toolwire_proto::types::SubscriptionFilter;

/// Serves `server` on `addr` until the returned sender fires or drops.
async fn serve_on(server: &Server, addr: &str) -> (SocketAddr, oneshot::Sender<()>) {
    let listener = TcpListener::bind(addr).await.expect("bind");
    let local = listener.local_addr().expect("addr");
    let (stop, stopped) = oneshot::channel::<()>();
    let srv = server.clone();
    let config = HttpConfig::new().with_shutdown_grace(Duration::from_millis(10));
    tokio::spawn(async move {
        crate::serve_http_on(srv, listener, config, async {
            let _ = stopped.await;
        })
        .await
    });
    (local, stop)
}

/// The status of a raw POST of `tools/list` in session `sid`.
async fn status_in_session(addr: SocketAddr, sid: &str) -> u16 {
    let body = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list"}"#;
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMcp-Session-Id: {sid}\r\nMCP-Protocol-Version: 2025-11-25\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    let mut stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut head = vec![0; 12];
    stream.read_exact(&mut head).await.expect("status line");
    String::from_utf8_lossy(&head[9..12])
        .parse()
        .expect("status")
}

#[tokio::test]
async fn auto_stays_modern_with_toolwire_over_http() {
    let server = server(60_000, Arc::default());
    let (addr, _stop) = serve_on(&server, "127.0.0.1:0").await;
    let c = ClientBuilder::new()
        .connect_http(&format!("http://{addr}/mcp"))
        .expect("client");
    c.list_tools().await.expect("list");
    assert_eq!(c.era(), Some(ProtocolEra::Modern));
    assert_eq!(c.session_id(), None);
}

#[tokio::test]
async fn legacy_session_over_http() {
    let server = server(60_000, Arc::default());
    let (addr, _stop) = serve_on(&server, "127.0.0.1:0").await;
    let c = accept_all()
        .with_protocol_mode(ProtocolMode::Legacy)
        .connect_http(&format!("http://{addr}/mcp"))
        .expect("client");
    assert_eq!(c.list_tools().await.expect("list").len(), 5);
    assert_eq!(c.era(), Some(ProtocolEra::Legacy));
    assert_eq!(c.protocol_version(), "2025-11-25");
    let sid = c.session_id().expect("a session id");
    // elicitation/create arrives on the call's stream and is answered by
    // a POST in the session.
    let r = c
        .call_tool("confirm", json!({"text": "ship"}))
        .await
        .expect("confirm");
    assert_eq!(text(&r), "confirmed: ship");
    // List changes arrive on the GET stream.
    let mut sub = c
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .expect("listen");
    // Give the GET stream a moment to open before the change.
    tokio::time::sleep(Duration::from_millis(200)).await;
    server
        .add_tool(
            Tool::builder("late")
                .input_schema(json!({"type": "object"}))
                .handler(|_: Value, _| async { "late" })
                .expect("late"),
        )
        .expect("add");
    let note = tokio::time::timeout(Duration::from_secs(5), sub.next())
        .await
        .expect("in time")
        .expect("open")
        .expect("ok");
    assert_eq!(note, ChangeNotification::ToolsListChanged);
    assert_eq!(c.list_tools().await.expect("list").len(), 6);
    assert_eq!(status_in_session(addr, &sid).await, 200);
    // close ends the session with DELETE.
    c.close().await.expect("close");
    assert_eq!(status_in_session(addr, &sid).await, 404);
}

#[tokio::test]
async fn a_forgotten_session_is_initialised_again_once() {
    let first = server(60_000, Arc::default());
    let (addr, stop) = serve_on(&first, "127.0.0.1:0").await;
    let c = ClientBuilder::new()
        .with_protocol_mode(ProtocolMode::Legacy)
        .connect_http(&format!("http://{addr}/mcp"))
        .expect("client");
    c.list_tools().await.expect("list");
    let old = c.session_id().expect("session");
    // A restarted server knows no sessions: the next request gets 404.
    drop(stop);
    tokio::time::sleep(Duration::from_millis(100)).await;
    let second = server(60_000, Arc::default());
    let (_, _stop) = serve_on(&second, &addr.to_string()).await;
    let r = c
        .call_tool("echo", json!({"text": "again"}))
        .await
        .expect("after a new initialize");
    assert_eq!(text(&r), "again");
    let new = c.session_id().expect("session");
    assert_ne!(old, new);
}

#[tokio::test]
async fn a_legacy_subscription_ends_when_the_get_stream_cannot_be_reopened() {
    let server = server(60_000, Arc::default());
    let (addr, stop) = serve_on(&server, "127.0.0.1:0").await;
    let c = accept_all()
        .with_protocol_mode(ProtocolMode::Legacy)
        .connect_http(&format!("http://{addr}/mcp"))
        .expect("client");
    let mut sub = c
        .listen(SubscriptionFilter {
            tools_list_changed: Some(true),
            ..SubscriptionFilter::default()
        })
        .await
        .expect("listen");
    // Let the GET stream open, then take the server away: the stream ends
    // and every reopening is refused.
    tokio::time::sleep(Duration::from_millis(200)).await;
    drop(stop);
    let end = tokio::time::timeout(Duration::from_secs(20), sub.next())
        .await
        .expect("the subscription hears of it")
        .expect("an item");
    assert!(
        matches!(&end, Err(crate::client::ClientError::Transport(m)) if m.contains("could not be reopened")),
        "{end:?}"
    );
}
