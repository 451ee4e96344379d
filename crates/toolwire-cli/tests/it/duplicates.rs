//! Requests whose `params` repeat a member name (issue 14), over the real
//! binary: refused with `-32602` naming the member, on stdio and HTTP, in
//! both eras. serde_json keeps the last value, a gateway may keep the first:
//! the two would disagree about the request.

use crate::demo_inputs::serve_http;
use crate::support::{Proc, VERSION};
use serde_json::{Value, json};
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

const META: &str = r#""_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}"#;
const LEGACY: &str = "2025-11-25";

/// `params` bodies (without `_meta`) that repeat a name, and the name.
fn repeated() -> Vec<(String, &'static str)> {
    vec![
        (
            r#""name":"regional_echo","arguments":{"region":"us","region":"eu","text":"hi"}"#
                .to_owned(),
            "region",
        ),
        (
            r#""name":"echo","arguments":{"text":"a"},"name":"regional_echo""#.to_owned(),
            "name",
        ),
        (
            r#""name":"echo","arguments":{"text":"a","deep":[{"k":{"x":1,"x":2}}]}"#.to_owned(),
            "x",
        ),
        (
            r#""name":"echo","arguments":{"text":"a"},"ext":{"y":1,"\u0079":2}"#.to_owned(),
            "y",
        ),
    ]
}

fn assert_refused(r: &Value, name: &str) {
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains(&format!("duplicate member \"{name}\"")),
        "{message}"
    );
}

#[tokio::test]
async fn repeated_member_names_are_refused_on_stdio_in_both_eras() {
    let mut p = Proc::spawn();
    for (id, (params, name)) in (1..).zip(repeated()) {
        p.send_raw(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{params},{META}}}}}"#
        ))
        .await;
        let r = p.next().await;
        assert_eq!(r["id"], id, "{r}");
        assert_refused(&r, name);
    }
    // In `_meta` too.
    p.send_raw(
        r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{"roots":{},"roots":{}}}}}"#,
    )
    .await;
    assert_refused(&p.next().await, "roots");
    // The same names once each are served.
    p.send_raw(&format!(
        r#"{{"jsonrpc":"2.0","id":10,"method":"tools/call","params":{{"name":"regional_echo","arguments":{{"region":"eu","text":"hi"}},{META}}}}}"#
    ))
    .await;
    assert_eq!(p.next().await["result"]["content"][0]["text"], "eu: hi");

    // A legacy session on another process.
    let mut p = Proc::spawn();
    p.send(
        &json!({"jsonrpc": "2.0", "id": 0, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}}),
    )
    .await;
    assert_eq!(p.next().await["result"]["protocolVersion"], LEGACY);
    p.send(&json!({"jsonrpc": "2.0", "method": "notifications/initialized"}))
        .await;
    for (id, (params, name)) in (1..).zip(repeated()) {
        p.send_raw(&format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"tools/call","params":{{{params}}}}}"#
        ))
        .await;
        let r = p.next().await;
        assert_eq!(r["id"], id, "{r}");
        assert_refused(&r, name);
    }
}

/// One raw POST to `/mcp`: the status, the response's `Mcp-Session-Id` and
/// its JSON body.
async fn post(addr: &str, headers: &str, body: &str) -> (u16, Option<String>, Value) {
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         {headers}Content-Length: {}\r\n\r\n{body}",
        body.len()
    );
    let mut stream = TcpStream::connect(addr).await.expect("connect");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("a response in time")
        .expect("read");
    let raw = String::from_utf8(raw).expect("UTF-8 response");
    let (head, body) = raw.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let session = head.lines().find_map(|l| {
        let (name, value) = l.split_once(':')?;
        name.eq_ignore_ascii_case("mcp-session-id")
            .then(|| value.trim().to_owned())
    });
    let json = match (body.find('{'), body.rfind('}')) {
        (Some(start), Some(end)) => serde_json::from_str(&body[start..=end]).expect("JSON"),
        _ => Value::Null,
    };
    (status, session, json)
}

#[tokio::test]
async fn repeated_member_names_are_refused_over_http_in_both_eras() {
    let (_child, addr) = serve_http().await;
    let modern = format!("MCP-Protocol-Version: {VERSION}\r\nMcp-Method: tools/call\r\n");
    for (params, name) in repeated() {
        // The headers name the tool and region the body's last values give.
        let target = if params.contains("regional_echo") {
            "Mcp-Name: regional_echo\r\nMcp-Param-Region: eu\r\n"
        } else {
            "Mcp-Name: echo\r\n"
        };
        let body = format!(
            r#"{{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{{{params},{META}}}}}"#
        );
        let (status, _, r) = post(&addr, &format!("{modern}{target}"), &body).await;
        assert_eq!(status, 400, "{r}");
        assert_eq!(r["id"], 7, "{r}");
        assert_refused(&r, name);
    }

    let init = json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": LEGACY, "capabilities": {},
        "clientInfo": {"name": "t", "version": "0"}}})
    .to_string();
    let (status, session, r) = post(&addr, "", &init).await;
    assert_eq!(status, 200, "{r}");
    let session = session.expect("an Mcp-Session-Id");
    let legacy = format!("MCP-Protocol-Version: {LEGACY}\r\nMcp-Session-Id: {session}\r\n");
    let (status, _, _) = post(
        &addr,
        &legacy,
        r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#,
    )
    .await;
    assert!(status == 202 || status == 200, "{status}");
    for (params, name) in repeated() {
        let body =
            format!(r#"{{"jsonrpc":"2.0","id":8,"method":"tools/call","params":{{{params}}}}}"#);
        let (_, _, r) = post(&addr, &legacy, &body).await;
        assert_eq!(r["id"], 8, "{r}");
        assert_refused(&r, name);
    }
}
