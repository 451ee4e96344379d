//! The demo tools on awkward numbers (issue 14), over the real binary: an
//! integer-valued `priority` such as `42.0`, written any way in its
//! `Mcp-Param-Priority` header, and an `add` whose sum overflows.

use crate::support::{Proc, VERSION, meta};
use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().unwrap_or_default()
}

#[tokio::test]
async fn add_overflowing_to_infinity_is_a_tool_error() {
    let mut p = Proc::spawn();
    for (id, a, b) in [(1, 1e308, 1e308), (2, -1e308, -1e308)] {
        let r = p
            .call(
                id,
                "tools/call",
                json!({"name": "add", "arguments": {"a": a, "b": b}}),
            )
            .await;
        assert!(r.get("error").is_none(), "a protocol error: {r}");
        let result = &r["result"];
        assert_eq!(result["isError"], true, "{r}");
        assert!(text_of(result).contains("not a finite number"), "{r}");
        assert!(result.get("structuredContent").is_none(), "{r}");
    }
    // A large but finite sum is still a sum.
    let r = p
        .call(
            3,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 1e308, "b": 7.0e307}}),
        )
        .await;
    assert_eq!(
        r["result"]["structuredContent"],
        json!({"sum": 1.7e308}),
        "{r}"
    );
}

#[tokio::test]
async fn regional_echo_takes_an_integer_valued_priority() {
    let mut p = Proc::spawn();
    for (id, priority) in [
        (1, json!(42.0)),
        (2, json!(4.2e1)),
        (3, json!(-3.0)),
        (4, json!(7)),
    ] {
        let r = p
            .call(
                id,
                "tools/call",
                json!({"name": "regional_echo", "arguments": {"region": "eu", "priority": priority, "text": "hi"}}),
            )
            .await;
        assert_ne!(r["result"]["isError"], true, "{priority}: {r}");
        assert_eq!(text_of(&r["result"]), "eu: hi", "{priority}: {r}");
    }
    // A fractional priority is still refused, by the schema.
    let r = p
        .call(
            5,
            "tools/call",
            json!({"name": "regional_echo", "arguments": {"region": "eu", "priority": 42.5, "text": "hi"}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
}

/// `toolwire serve --http 127.0.0.1:0` and the address it listens on.
pub(crate) async fn serve_http() -> (Child, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .env_remove("TOOLWIRE_STATE_KEYS")
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn toolwire serve --http");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let addr = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.expect("stderr line") {
            if let Some(i) = line.find("http://") {
                let rest = &line[i + "http://".len()..];
                return rest.split('/').next().unwrap_or_default().to_owned();
            }
        }
        panic!("the server exited before printing its URL")
    })
    .await
    .expect("the server starts in time");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, addr)
}

/// One `regional_echo` call over HTTP with `Mcp-Param-Priority: header`;
/// the status and the JSON body.
async fn call_with_priority(addr: &str, priority: &Value, header: &str) -> (u16, Value) {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {
            "name": "regional_echo",
            "arguments": {"region": "eu", "priority": priority, "text": "hi"},
            "_meta": meta()
        }
    })
    .to_string();
    let request = format!(
        "POST /mcp HTTP/1.1\r\nHost: {addr}\r\nConnection: close\r\n\
         Content-Type: application/json\r\nAccept: application/json, text/event-stream\r\n\
         MCP-Protocol-Version: {VERSION}\r\nMcp-Method: tools/call\r\nMcp-Name: regional_echo\r\n\
         Mcp-Param-Region: eu\r\nMcp-Param-Priority: {header}\r\nContent-Length: {}\r\n\r\n{body}",
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
    let status = raw
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("a status line");
    let (_, body) = raw.split_once("\r\n\r\n").expect("a head and a body");
    // The body is JSON, possibly chunked: take the outermost object.
    let start = body.find('{').expect("a JSON body");
    let end = body.rfind('}').expect("a JSON body");
    (
        status,
        serde_json::from_str(&body[start..=end]).expect("JSON"),
    )
}

#[tokio::test]
async fn integer_headers_match_numerically_over_http() {
    let (_child, addr) = serve_http().await;
    for (priority, header) in [
        (json!(42.0), "42"),
        (json!(42), "042"),
        (json!(42), "+42"),
        (json!(42.0), "+042.0"),
        (json!(42), "4.2e1"),
    ] {
        let (status, v) = call_with_priority(&addr, &priority, header).await;
        assert_eq!(status, 200, "{priority} vs {header}: {v}");
        assert_eq!(
            text_of(&v["result"]),
            "eu: hi",
            "{priority} vs {header}: {v}"
        );
    }
    // 052 is fifty-two (decimal), not octal forty-two.
    let (status, v) = call_with_priority(&addr, &json!(42), "052").await;
    assert_eq!(status, 400, "{v}");
    assert_eq!(v["error"]["code"], -32020, "{v}");
}
