//! A line-oriented driver for a spawned `toolwire serve` process.

use serde_json::{Value, json};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

pub(crate) const VERSION: &str = "2026-07-28";

/// The `_meta` every request carries.
pub(crate) fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": {"name": "toolwire-tests", "version": "0"}
    })
}

pub(crate) struct Proc {
    pub(crate) child: Child,
    stdin: Option<ChildStdin>,
    lines: Lines<BufReader<ChildStdout>>,
}

impl Proc {
    pub(crate) fn spawn() -> Self {
        Self::spawn_with(&[], &[])
    }

    /// `toolwire serve ARGS…` with extra environment variables.
    pub(crate) fn spawn_with(args: &[&str], envs: &[(&str, &str)]) -> Self {
        let mut all = vec!["serve"];
        all.extend_from_slice(args);
        Self::spawn_command(&all, envs)
    }

    /// `toolwire ARGS…` (a command that serves stdio) with extra
    /// environment variables.
    pub(crate) fn spawn_command(args: &[&str], envs: &[(&str, &str)]) -> Self {
        let mut child = Command::new(env!("CARGO_BIN_EXE_toolwire"))
            .args(args)
            .env_remove("TOOLWIRE_STATE_KEYS")
            .envs(envs.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .kill_on_drop(true)
            .spawn()
            .expect("spawn toolwire");
        let stdin = child.stdin.take();
        let stdout = child.stdout.take().expect("stdout");
        Self {
            child,
            stdin,
            lines: BufReader::new(stdout).lines(),
        }
    }

    pub(crate) async fn send_raw(&mut self, line: &str) {
        let stdin = self.stdin.as_mut().expect("stdin open");
        stdin.write_all(line.as_bytes()).await.expect("write");
        stdin.write_all(b"\n").await.expect("write");
        stdin.flush().await.expect("flush");
    }

    pub(crate) async fn send(&mut self, msg: &Value) {
        self.send_raw(&msg.to_string()).await;
    }

    /// Sends a request with the standard `_meta` merged into `params`.
    pub(crate) async fn request(&mut self, id: i64, method: &str, mut params: Value) {
        let m = params
            .as_object_mut()
            .expect("params object")
            .entry("_meta")
            .or_insert_with(|| json!({}));
        for (k, v) in meta().as_object().expect("meta").clone() {
            m.as_object_mut()
                .expect("meta object")
                .entry(k)
                .or_insert(v);
        }
        self.send(&json!({"jsonrpc": "2.0", "id": id, "method": method, "params": params}))
            .await;
    }

    pub(crate) fn close_stdin(&mut self) {
        self.stdin = None;
    }

    /// The next message, or `None` after `wait` of silence or at EOF.
    pub(crate) async fn next_within(&mut self, wait: Duration) -> Option<Value> {
        match tokio::time::timeout(wait, self.lines.next_line()).await {
            Ok(Ok(Some(line))) => Some(
                serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}")),
            ),
            _ => None,
        }
    }

    pub(crate) async fn next(&mut self) -> Value {
        self.next_within(Duration::from_secs(10))
            .await
            .expect("a message within 10 s")
    }

    /// Reads until the response with `id`, returning it and the notifications seen before it.
    pub(crate) async fn response(&mut self, id: i64) -> (Value, Vec<Value>) {
        let mut notes = Vec::new();
        loop {
            let m = self.next().await;
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return (m, notes);
            }
            notes.push(m);
        }
    }

    pub(crate) async fn call(&mut self, id: i64, method: &str, params: Value) -> Value {
        self.request(id, method, params).await;
        self.response(id).await.0
    }

    /// Every message that arrives before `wait` of silence.
    pub(crate) async fn drain(&mut self, wait: Duration) -> Vec<Value> {
        let mut seen = Vec::new();
        while let Some(m) = self.next_within(wait).await {
            seen.push(m);
        }
        seen
    }

    /// Sends SIGTERM to the server.
    pub(crate) fn terminate(&self) {
        let pid = self.child.id().expect("still running");
        let status = std::process::Command::new("kill")
            .args(["-TERM", &pid.to_string()])
            .status()
            .expect("run kill");
        assert!(status.success(), "kill -TERM {pid}");
    }
}
