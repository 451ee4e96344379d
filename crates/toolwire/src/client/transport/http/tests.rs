//! The Streamable HTTP transport's unit tests: the legacy GET stream's
//! resumption, and how a non-streaming reply is read.

use super::*;
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// A server whose GET stream sends one notification with an id and
/// ends; the second GET's `Last-Event-ID` is reported.
#[tokio::test]
async fn the_legacy_get_stream_resumes_with_last_event_id() {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let addr = listener.local_addr().expect("addr");
    let (seen_tx, mut seen_rx) = tokio::sync::mpsc::unbounded_channel::<String>();
    tokio::spawn(async move {
        for n in 0..2 {
            let Ok((mut sock, _)) = listener.accept().await else {
                return;
            };
            let mut head = Vec::new();
            let mut buf = [0u8; 1024];
            while !head.windows(4).any(|w| w == b"\r\n\r\n") {
                let Ok(read) = sock.read(&mut buf).await else {
                    return;
                };
                if read == 0 {
                    return;
                }
                head.extend_from_slice(&buf[..read]);
            }
            let head = String::from_utf8_lossy(&head).to_ascii_lowercase();
            let resumed = head
                .lines()
                .find_map(|l| l.strip_prefix("last-event-id: "))
                .unwrap_or("(none)")
                .to_owned();
            let _ = seen_tx.send(resumed);
            let event = format!(
                "id: ev-{n}\ndata: {{\"jsonrpc\":\"2.0\",\"method\":\"notifications/tools/list_changed\"}}\n\n"
            );
            let reply = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{event}",
                event.len()
            );
            let _ = sock.write_all(reply.as_bytes()).await;
        }
    });
    let transport = HttpTransport::new(&format!("http://{addr}/mcp"), &[], &[]).expect("transport");
    let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel();
    transport.inbound.install(tx);
    transport
        .start_legacy_session(Some("2025-11-25".into()))
        .await;
    assert_eq!(seen_rx.recv().await.expect("first GET"), "(none)");
    let resumed = tokio::time::timeout(std::time::Duration::from_secs(5), seen_rx.recv())
        .await
        .expect("a second GET in time")
        .expect("second GET");
    assert_eq!(resumed, "ev-0");
    let Some(super::super::Inbound::Notification { method, .. }) = rx.recv().await else {
        panic!("the notification reached the sink");
    };
    assert_eq!(method, "notifications/tools/list_changed");
}

fn uri() -> Uri {
    Uri::from_static("http://127.0.0.1/mcp")
}

#[test]
fn a_json_reply_that_is_not_json_blames_the_body_not_the_type() {
    let err = single_message(&uri(), StatusCode::OK, "application/json", b"{not json")
        .expect_err("invalid");
    let text = err.to_string();
    assert!(text.contains("not a JSON-RPC message"), "{text}");
    assert!(!text.contains("content type"), "{text}");
}

#[test]
fn other_replies_keep_their_meaning() {
    let err = single_message(&uri(), StatusCode::OK, "text/html", b"<html>").expect_err("type");
    assert!(
        err.to_string().contains("content type \"text/html\""),
        "{err}"
    );
    let body = br#"{"jsonrpc":"2.0","id":1,"error":{"code":-32022,"message":"no"}}"#;
    let Ok(Incoming::Response(Err(e))) =
        single_message(&uri(), StatusCode::BAD_REQUEST, "application/json", body)
    else {
        panic!("a JSON-RPC error on a 400 is the server's answer");
    };
    assert_eq!(e.code.0, -32022);
    let body = br#"{"jsonrpc":"2.0","error":{"code":-32000,"message":"Bad Request"},"id":null}"#;
    let Ok(Incoming::Response(Err(e))) =
        single_message(&uri(), StatusCode::BAD_REQUEST, "application/json", body)
    else {
        panic!("an error with a null id is still a JSON-RPC error");
    };
    assert_eq!(e.code.0, -32000);
    let err = single_message(&uri(), StatusCode::NOT_FOUND, "text/plain", b"Not Found")
        .expect_err("HTTP error");
    assert!(
        matches!(err, ClientError::Http { status: 404, .. }),
        "{err}"
    );
}
