//! How long a `toolwire` client command may take, and what it leaves
//! behind: progress keeps the idle `--timeout` from firing, `--max-time`
//! bounds the whole command, `--progress` prints progress for a log, and a
//! `--stdio` server that ignores the end of its input is stopped on a
//! timeout and on SIGTERM. Also `--input` answers checked against the form.

use super::features::run;
use std::process::Stdio;
use std::time::{Duration, Instant};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

fn serve_cmd() -> String {
    format!("'{BIN}' serve")
}

#[tokio::test]
async fn progress_restarts_the_timeout_and_max_time_bounds_the_call() {
    let serve = serve_cmd();
    // Four steps of 300 ms: 1.2 s in all, never 0.6 s without progress.
    let call = |extra: &'static [&'static str]| {
        let mut args = vec!["call", "--stdio", &serve, "--timeout", "0.6"];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["countdown", "steps=4", "interval_ms=300"]);
        args.into_iter().map(str::to_owned).collect::<Vec<_>>()
    };
    let args = call(&[]);
    let (ok, out, err) = run(&args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    assert!(ok, "{err}");
    assert!(out.contains("4"), "{out}");
    let args = call(&["--max-time", "0.8"]);
    let started = Instant::now();
    let (ok, _, err) = run(&args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    assert!(!ok);
    assert!(err.contains("--max-time"), "{err}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn progress_prints_lines_when_stderr_is_not_a_terminal() {
    let serve = serve_cmd();
    let count = ["countdown", "steps=2", "interval_ms=10"];
    let mut args = vec!["call", "--progress", "--stdio", &serve];
    args.extend_from_slice(&count);
    let (ok, _, err) = run(&args).await;
    assert!(ok, "{err}");
    assert!(err.contains("progress 1/2 (50%)"), "{err}");
    assert!(err.contains("progress 2/2 (100%)"), "{err}");
    let mut args = vec!["call", "--stdio", &serve];
    args.extend_from_slice(&count);
    let (ok, _, err) = run(&args).await;
    assert!(ok, "{err}");
    assert!(!err.contains("progress"), "{err}");
}

#[tokio::test]
async fn input_answers_are_checked_against_the_form() {
    let serve = serve_cmd();
    let confirm = |input: &str| {
        vec![
            "call".to_owned(),
            "--stdio".to_owned(),
            serve.clone(),
            "--input".to_owned(),
            input.to_owned(),
            "confirm_action".to_owned(),
            "action=deploy".to_owned(),
        ]
    };
    for (input, why) in [
        (
            r#"confirm={"confirm":"yes"}"#,
            r#"field "confirm": expected true or false, got "yes""#,
        ),
        (
            r#"confirm={"confirm":true,"force":1}"#,
            r#"field "force" is not in the form"#,
        ),
        (r#"confirm={}"#, r#"field "confirm" is required"#),
        // A legacy-style `*` answer is checked the same way.
        (r#"*={"confirm":1}"#, r#"--input *: field "confirm""#),
    ] {
        let args = confirm(input);
        let (ok, out, err) = run(&args.iter().map(String::as_str).collect::<Vec<_>>()).await;
        assert!(!ok, "{input}: {out}");
        assert!(err.contains(why), "{input}: {err}");
    }
    let args = confirm(r#"confirm={"confirm":true}"#);
    let (ok, out, err) = run(&args.iter().map(String::as_str).collect::<Vec<_>>()).await;
    assert!(ok, "{err}");
    assert_eq!(out, "confirmed: deploy\n");
    // A key the server never asks for is reported.
    let (ok, _, err) = run(&[
        "call",
        "--stdio",
        &serve,
        "--input",
        "nobody={}",
        "echo",
        "text=hi",
    ])
    .await;
    assert!(ok, "{err}");
    assert!(err.contains("never asked for --input nobody"), "{err}");
}

/// A `--stdio` server that writes its pid to `pid_file`, ignores SIGTERM
/// and the end of its input, and never answers.
fn stubborn(pid_file: &std::path::Path) -> String {
    format!(
        "sh -c 'echo $$ > {}; trap \"\" TERM; exec sleep 60'",
        pid_file.display()
    )
}

async fn pid_in(file: &std::path::Path) -> u32 {
    for _ in 0..200 {
        if let Ok(text) = std::fs::read_to_string(file)
            && let Ok(pid) = text.trim().parse()
        {
            return pid;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("the server never wrote {}", file.display());
}

/// Whether `pid` is gone (or a zombie nobody reaped yet) within a second.
async fn gone(pid: u32) -> bool {
    for _ in 0..40 {
        match std::fs::read_to_string(format!("/proc/{pid}/stat")) {
            Err(_) => return true,
            Ok(stat)
                if stat
                    .rsplit(')')
                    .next()
                    .is_some_and(|s| s.trim_start().starts_with('Z')) =>
            {
                return true;
            }
            Ok(_) => tokio::time::sleep(Duration::from_millis(25)).await,
        }
    }
    false
}

fn pid_file(name: &str) -> std::path::PathBuf {
    std::env::temp_dir().join(format!("toolwire-{name}-{}.pid", std::process::id()))
}

#[tokio::test]
async fn a_stubborn_stdio_server_is_stopped_soon_after_a_timeout() {
    let file = pid_file("timeout");
    let _ = std::fs::remove_file(&file);
    let server = stubborn(&file);
    let started = Instant::now();
    let (ok, _, err) = run(&["list", "--stdio", &server, "--timeout", "1"]).await;
    let took = started.elapsed();
    assert!(!ok);
    assert!(err.contains("no answer within"), "{err}");
    // One timeout for the probe and the handshake together, then a quarter
    // of it at each step of the shutdown.
    assert!(took < Duration::from_millis(2800), "{took:?}");
    assert!(
        gone(pid_in(&file).await).await,
        "the server outlived toolwire"
    );
    let _ = std::fs::remove_file(&file);
}

#[tokio::test]
async fn sigterm_stops_toolwire_and_its_stdio_server() {
    let file = pid_file("sigterm");
    let _ = std::fs::remove_file(&file);
    let server = stubborn(&file);
    let child = Command::new(BIN)
        .args(["list", "--stdio", &server, "--timeout", "60"])
        .env("RUST_BACKTRACE", "0")
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn toolwire");
    let pid = pid_in(&file).await;
    // Give toolwire time to install its signal handler and send its probe.
    tokio::time::sleep(Duration::from_millis(300)).await;
    let toolwire = child.id().expect("running");
    let status = std::process::Command::new("kill")
        .args(["-TERM", &toolwire.to_string()])
        .status()
        .expect("run kill");
    assert!(status.success());
    let out = tokio::time::timeout(Duration::from_secs(5), child.wait_with_output())
        .await
        .expect("toolwire stops within 5 s")
        .expect("output");
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("interrupted"), "{err}");
    assert!(gone(pid).await, "the server outlived toolwire");
    let _ = std::fs::remove_file(&file);
}
