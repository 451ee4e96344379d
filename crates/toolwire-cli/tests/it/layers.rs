//! `toolwire serve`'s middleware flags on the real binary: the audit log
//! (JSON lines, no arguments by default), a per-tool timeout and the
//! result-size cap.

use crate::support::Proc;
use serde_json::{Value, json};
use std::time::Duration;

fn text_of(r: &Value) -> &str {
    r["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default()
}

#[tokio::test]
async fn audit_log_timeout_and_size_cap_from_the_command_line() {
    let log = std::env::temp_dir().join(format!("toolwire-audit-{}.jsonl", std::process::id()));
    let _ = std::fs::remove_file(&log);
    let log_arg = log.to_string_lossy().into_owned();
    let mut p = Proc::spawn_with(
        &[
            "--audit-log",
            &log_arg,
            "--tool-timeout-ms",
            "countdown=150",
            "--max-result-bytes",
            "400",
        ],
        &[],
    );
    let r = p
        .call(
            1,
            "tools/call",
            json!({"name": "countdown", "arguments": {"steps": 20, "interval_ms": 100}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text_of(&r).contains("did not finish within 150 ms"), "{r}");
    let r = p
        .call(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(text_of(&r), "hi");
    let big = "y".repeat(500);
    let r = p
        .call(
            3,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": big}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(
        text_of(&r).contains("over this server's limit of 400 bytes"),
        "{r}"
    );
    p.close_stdin();
    let _ = tokio::time::timeout(Duration::from_secs(5), p.child.wait()).await;

    let written = std::fs::read_to_string(&log).expect("the audit log");
    let _ = std::fs::remove_file(&log);
    let lines: Vec<Value> = written
        .lines()
        .map(|l| serde_json::from_str(l).expect("a JSON line"))
        .collect();
    assert_eq!(lines.len(), 3, "{written}");
    let kinds: Vec<(&str, &str)> = lines
        .iter()
        .map(|l| {
            (
                l["name"].as_str().unwrap_or_default(),
                l["outcome"].as_str().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(
        kinds,
        [
            ("countdown", "tool_error"),
            ("echo", "complete"),
            ("echo", "tool_error")
        ]
    );
    for line in &lines {
        assert_eq!(line["method"], "tools/call");
        assert_eq!(line["protocolVersion"], "2026-07-28");
        assert!(line["durationUs"].is_u64(), "{line}");
        assert!(
            line.get("arguments").is_none(),
            "no arguments unless asked: {line}"
        );
    }
    assert!(!written.contains("hi"), "the arguments stay out: {written}");
}

/// `toolwire serve --http 127.0.0.1:0 ARGS…`: the child, the MCP URL and
/// the metrics URL, from what it prints on stderr.
async fn http_with_metrics(args: &[&str]) -> (tokio::process::Child, String, String) {
    use tokio::io::{AsyncBufReadExt, BufReader};
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .stdin(std::process::Stdio::null())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn toolwire serve --http");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let (mut mcp, mut metrics) = (None, None);
    tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.expect("stderr") {
            if let Some(url) = line.split("serving MCP at ").nth(1) {
                mcp = Some(url.trim().to_owned());
            }
            if let Some(url) = line.split("metrics at ").nth(1) {
                metrics = Some(url.trim().to_owned());
            }
            if mcp.is_some() && metrics.is_some() {
                return;
            }
        }
        panic!("toolwire exited before printing both URLs");
    })
    .await
    .expect("started in time");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, mcp.unwrap_or_default(), metrics.unwrap_or_default())
}

/// A plain GET of `url` (`http://HOST:PORT/PATH`): status and body.
async fn get(url: &str, method: &str) -> (u16, String) {
    use tokio::io::{AsyncReadExt, AsyncWriteExt};
    let rest = url.strip_prefix("http://").expect("http URL");
    let (host, path) = rest.split_once('/').expect("a path");
    let mut stream = tokio::net::TcpStream::connect(host).await.expect("connect");
    let request = format!("{method} /{path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n");
    stream.write_all(request.as_bytes()).await.expect("write");
    let mut raw = Vec::new();
    tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
        .await
        .expect("in time")
        .expect("read");
    let raw = String::from_utf8(raw).expect("UTF-8");
    let (head, body) = raw.split_once("\r\n\r\n").expect("head and body");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .expect("status");
    (status, body.to_owned())
}

#[tokio::test]
async fn metrics_are_scraped_from_their_own_listener() {
    let (_child, mcp, metrics) = http_with_metrics(&["--metrics", "127.0.0.1:0"]).await;
    assert_ne!(
        mcp.split('/').nth(2),
        metrics.split('/').nth(2),
        "its own listener"
    );
    let client = toolwire::ClientBuilder::new()
        .connect_http(&mcp)
        .expect("client");
    for text in ["a", "b"] {
        let r = client
            .call_tool("echo", json!({"text": text}))
            .await
            .expect("echo");
        assert_eq!(r.content.len(), 1);
    }
    // An unknown tool: an error, counted under a bounded label.
    assert!(client.call_tool("no_such_tool", json!({})).await.is_err());
    let (status, text) = get(&metrics, "GET").await;
    assert_eq!(status, 200, "{text}");
    let echo = "mcp_method_name=\"tools/call\",gen_ai_tool_name=\"echo\"";
    assert!(
        text.contains(&format!("mcp_server_requests_total{{{echo}}} 2\n")),
        "{text}"
    );
    assert!(
        text.contains(&format!(
            "mcp_server_operation_duration_seconds_count{{{echo}}} 2\n"
        )),
        "{text}"
    );
    assert!(
        text.contains(
            "mcp_server_errors_total{mcp_method_name=\"tools/call\",gen_ai_tool_name=\"_unknown\",error_type=\"-32602\"} 1\n"
        ),
        "{text}"
    );
    assert!(
        !text.contains("no_such_tool"),
        "client names stay out: {text}"
    );
    // Only GET /metrics.
    let other = metrics.replace("/metrics", "/other");
    assert_eq!(get(&other, "GET").await.0, 404);
    assert_eq!(get(&metrics, "POST").await.0, 405);
}
