//! `--protocol` and the era `discover` reports, over the real binary
//! against `toolwire serve` (which serves both eras) on stdio and HTTP.

use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

async fn run(args: &[&str]) -> (bool, String, String) {
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(BIN).args(args).stdin(Stdio::null()).output(),
    )
    .await
    .expect("finishes in time")
    .expect("runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// `toolwire serve --http 127.0.0.1:0 --allow-define` (the whole demo,
/// `define_tool` included) and its URL.
pub(crate) async fn http_server() -> (Child, String) {
    http_server_with(&["--allow-define"]).await
}

/// `toolwire serve --http 127.0.0.1:0 ARGS…` and its URL (`http://` or
/// `https://`).
pub(crate) async fn http_server_with(args: &[&str]) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn toolwire serve --http");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.expect("stderr line") {
            if let Some(i) = line.find("http://").or_else(|| line.find("https://")) {
                return line[i..].trim().to_owned();
            }
        }
        panic!("the server exited before printing its URL")
    })
    .await
    .expect("the server starts in time");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

fn serve_cmd() -> String {
    format!("'{BIN}' serve")
}

#[tokio::test]
async fn discover_reports_the_era_over_stdio() {
    let serve = serve_cmd();
    let (ok, out, err) = run(&["discover", "--stdio", &serve]).await;
    assert!(ok, "{err}");
    assert!(
        out.starts_with("era:          modern (2026-07-28)\n"),
        "{out}"
    );
    let (ok, out, err) = run(&["discover", "--stdio", &serve, "--protocol", "legacy"]).await;
    assert!(ok, "{err}");
    assert!(
        out.starts_with("era:          legacy (2025-11-25)\n"),
        "{out}"
    );
    assert!(out.contains("toolwire-demo"), "{out}");
    let (ok, out, err) = run(&[
        "discover",
        "--stdio",
        &serve,
        "--protocol",
        "legacy",
        "--json",
    ])
    .await;
    assert!(ok, "{err}");
    let d: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(d["era"], "legacy");
    assert_eq!(d["protocolVersion"], "2025-11-25");
    let (ok, _, err) = run(&["discover", "--stdio", &serve, "--protocol", "old"]).await;
    assert!(!ok);
    assert!(err.contains("auto"), "{err}");
}

#[tokio::test]
async fn legacy_calls_answer_real_elicitations() {
    let serve = serve_cmd();
    let (_server, url) = http_server().await;
    for target in [["--stdio", serve.as_str()], ["--", url.as_str()]] {
        let mut args = vec!["call", "--protocol", "legacy"];
        args.extend([
            "--input",
            r#"*={"confirm":true}"#,
            target[0],
            target[1],
            "confirm_action",
            "action=ship",
        ]);
        let (ok, out, err) = run(&args).await;
        assert!(ok, "{target:?}: {err}");
        assert_eq!(out, "confirmed: ship\n", "{target:?}");

        let args = vec![
            "list",
            "--protocol",
            "legacy",
            "--json",
            target[0],
            target[1],
        ];
        let (ok, out, err) = run(&args).await;
        assert!(ok, "{target:?}: {err}");
        let tools: Value = serde_json::from_str(&out).expect("JSON");
        assert!(
            tools
                .as_array()
                .expect("array")
                .iter()
                .any(|t| t["name"] == "echo")
        );
    }
    // auto stays modern against toolwire over HTTP.
    let (ok, out, err) = run(&["discover", &url]).await;
    assert!(ok, "{err}");
    assert!(
        out.starts_with("era:          modern (2026-07-28)\n"),
        "{out}"
    );
}
