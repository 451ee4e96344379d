//! `toolwire resources|templates|read|prompts|prompt|complete|listen` over
//! the real binary against `toolwire serve` (its demo resource, template
//! and prompt), in both eras, text and `--json`.

use super::era::http_server;
use serde_json::Value;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

pub(crate) async fn run(args: &[&str]) -> (bool, String, String) {
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(BIN)
            .args(args)
            .env("RUST_BACKTRACE", "0")
            .stdin(Stdio::null())
            .output(),
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

async fn ok(args: &[&str]) -> String {
    let (ok, out, err) = run(args).await;
    assert!(ok, "toolwire {args:?} failed: {err}");
    out
}

fn args(v: &[String]) -> Vec<&str> {
    v.iter().map(String::as_str).collect()
}

fn serve_cmd() -> String {
    format!("'{BIN}' serve")
}

#[tokio::test]
async fn every_feature_over_stdio_in_both_eras() {
    let serve = serve_cmd();
    for protocol in ["auto", "legacy"] {
        let t = ["--protocol", protocol, "--stdio", serve.as_str()];
        let with = |cmd: &str, rest: &[&'static str]| {
            let mut v = vec![cmd.to_owned()];
            v.extend(t.iter().map(|s| (*s).to_owned()));
            v.extend(rest.iter().map(|s| (*s).to_owned()));
            v
        };

        let out = ok(&args(&with("resources", &[]))).await;
        assert!(
            out.starts_with("demo://readme  readme [text/plain] (Read me)\n"),
            "{protocol}: {out}"
        );
        let list: Value =
            serde_json::from_str(&ok(&args(&with("resources", &["--json"]))).await).expect("JSON");
        assert_eq!(list[0]["uri"], "demo://readme", "{protocol}");

        let out = ok(&args(&with("templates", &[]))).await;
        assert!(
            out.starts_with("demo://greeting/{name}  greeting"),
            "{protocol}: {out}"
        );
        let list: Value =
            serde_json::from_str(&ok(&args(&with("templates", &["--json"]))).await).expect("JSON");
        assert_eq!(
            list[0]["uriTemplate"], "demo://greeting/{name}",
            "{protocol}"
        );

        assert_eq!(
            ok(&args(&with("read", &["demo://greeting/bob"]))).await,
            "Hello, bob!\n",
            "{protocol}"
        );
        let r: Value =
            serde_json::from_str(&ok(&args(&with("read", &["demo://readme", "--json"]))).await)
                .expect("JSON");
        assert_eq!(r["resultType"], "complete", "{protocol}");
        assert_eq!(r["contents"][0]["uri"], "demo://readme", "{protocol}");
        // -o writes the contents as they are, and says so on stderr.
        let file = std::env::temp_dir().join(format!(
            "toolwire-read-o-{}-{protocol}.txt",
            std::process::id()
        ));
        let mut read_o = with("read", &["demo://readme", "-o"]);
        read_o.push(file.to_str().expect("UTF-8 path").to_owned());
        let (good, out, err) = run(&args(&read_o)).await;
        assert!(good && out.is_empty(), "{protocol}: {err}");
        let written = std::fs::read_to_string(&file).expect("written");
        let _ = std::fs::remove_file(&file);
        assert_eq!(
            written,
            r["contents"][0]["text"].as_str().expect("text"),
            "{protocol}"
        );
        assert!(err.contains("toolwire: wrote"), "{protocol}: {err}");
        let (good, _, err) = run(&args(&with("read", &["demo://nope"]))).await;
        assert!(!good, "{protocol}");
        // The same error in both eras (legacy -32002 is mapped).
        assert!(err.contains("-32602"), "{protocol}: {err}");

        let out = ok(&args(&with("prompts", &[]))).await;
        assert!(
            out.contains(
                "greet\n    Asks the model to greet someone.\n    name (required) - Who to greet\n"
            ),
            "{protocol}: {out}"
        );
        let list: Value =
            serde_json::from_str(&ok(&args(&with("prompts", &["--json"]))).await).expect("JSON");
        assert_eq!(list[0]["arguments"][0]["name"], "name", "{protocol}");

        assert_eq!(
            ok(&args(&with("prompt", &["greet", "name=bob"]))).await,
            "user:\nPlease greet bob warmly.\n",
            "{protocol}"
        );
        let p: Value = serde_json::from_str(
            &ok(&args(&with("prompt", &["greet", "name=bob", "--json"]))).await,
        )
        .expect("JSON");
        assert_eq!(
            p["messages"][0]["content"]["text"], "Please greet bob warmly.",
            "{protocol}"
        );
        let (good, _, err) = run(&args(&with("prompt", &["greet"]))).await;
        assert!(!good, "{protocol}: a missing required argument");
        assert!(err.contains("greet"), "{protocol}: {err}");

        assert_eq!(
            ok(&args(&with("complete", &["--prompt", "greet", "name=al"]))).await,
            "alice\nalbert\n",
            "{protocol}"
        );
        let c: Value = serde_json::from_str(
            &ok(&args(&with(
                "complete",
                &["--template", "demo://greeting/{name}", "name=c", "--json"],
            )))
            .await,
        )
        .expect("JSON");
        assert_eq!(
            c["completion"]["values"],
            serde_json::json!(["carol"]),
            "{protocol}"
        );
    }
}

/// Runs `toolwire listen ARGS` until it prints `lines` lines, while `act`
/// changes the server; returns what it printed.
async fn listen_while(args: &[&str], lines: usize, act: impl AsyncFnOnce()) -> Vec<String> {
    let mut child = Command::new(BIN)
        .arg("listen")
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn listen");
    let mut err = BufReader::new(child.stderr.take().expect("stderr")).lines();
    // The subscription is open once it says so.
    let ready = tokio::time::timeout(Duration::from_secs(20), err.next_line())
        .await
        .expect("listening in time")
        .expect("stderr")
        .expect("a line");
    assert!(ready.starts_with("toolwire: listening"), "{ready}");
    act().await;
    let mut out = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut got = Vec::new();
    while got.len() < lines {
        let line = tokio::time::timeout(Duration::from_secs(10), out.next_line())
            .await
            .expect("a notification in time")
            .expect("stdout")
            .expect("a line");
        got.push(line);
    }
    // Interrupted, it stops cleanly.
    let pid = child.id().expect("pid");
    let _ = std::process::Command::new("kill")
        .args(["-INT", &pid.to_string()])
        .status();
    let status = tokio::time::timeout(Duration::from_secs(10), child.wait())
        .await
        .expect("stops in time")
        .expect("status");
    assert!(status.success(), "{status}");
    got
}

#[tokio::test]
async fn listen_prints_changes_until_interrupted_in_both_eras() {
    let (_server, url) = http_server().await;
    for (i, protocol) in ["auto", "legacy"].into_iter().enumerate() {
        let name = format!("late{i}");
        let define = [
            "call",
            url.as_str(),
            "define_tool",
            &format!("name={name}"),
            "text=hi",
        ]
        .map(str::to_owned);
        let got = listen_while(&["--protocol", protocol, "--tools", &url], 1, async || {
            let args: Vec<&str> = define.iter().map(String::as_str).collect();
            ok(&args).await;
        })
        .await;
        assert_eq!(got, ["tools/list_changed"], "{protocol}");
        let undefine = [
            "call",
            url.as_str(),
            "undefine_tool",
            &format!("name={name}"),
        ]
        .map(str::to_owned);
        let got = listen_while(&["--protocol", protocol, "--json", &url], 1, async || {
            let args: Vec<&str> = undefine.iter().map(String::as_str).collect();
            ok(&args).await;
        })
        .await;
        let note: Value = serde_json::from_str(&got[0]).expect("JSON line");
        assert_eq!(
            note["method"], "notifications/tools/list_changed",
            "{protocol}"
        );
    }
}
