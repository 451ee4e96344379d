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
