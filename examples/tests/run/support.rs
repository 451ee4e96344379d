//! Starting an example binary and reading what it prints; a raw HTTP/1.1
//! request for the checks a client library would hide (status codes).

use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};

/// How long any one step may take before the test fails instead of hanging.
pub const STEP: Duration = Duration::from_secs(60);

/// An example server that was started and printed its URL. The process is
/// killed when this is dropped (a test that failed half-way).
pub struct Running {
    pub child: Child,
    /// The URL from the first line of stdout (`listening on URL`).
    pub url: String,
}

impl Running {
    /// Starts `program ARGS` and waits for `listening on URL` on stdout.
    pub async fn start(program: &str, args: &[&str]) -> Self {
        let mut child = Command::new(program)
            .args(args)
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .kill_on_drop(true)
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {program}: {e}"));
        let stdout = child.stdout.take().expect("stdout is piped");
        let mut line = String::new();
        let mut stdout = BufReader::new(stdout);
        let read = stdout.read_line(&mut line);
        tokio::time::timeout(STEP, read)
            .await
            .expect("the example printed its URL in time")
            .expect("stdout is readable");
        let url = line
            .trim_end()
            .strip_prefix("listening on ")
            .unwrap_or_else(|| panic!("first line {line:?} is not `listening on URL`"))
            .to_owned();
        Self { child, url }
    }

    /// `host:port` of the URL.
    pub fn authority(&self) -> &str {
        let rest = self.url.strip_prefix("http://").expect("an http URL");
        rest.split('/').next().expect("split yields one item")
    }

    /// Sends SIGTERM and returns whether the process then exited
    /// successfully (a graceful shutdown).
    pub async fn terminate(mut self) -> bool {
        let pid = self.child.id().expect("still running").to_string();
        // The shell's own `kill`: no dependency for one signal.
        let sent = Command::new("sh")
            .args(["-c", &format!("kill -TERM {pid}")])
            .status()
            .await
            .expect("kill runs");
        assert!(sent.success(), "kill -TERM {pid} failed");
        let status = tokio::time::timeout(STEP, self.child.wait())
            .await
            .expect("the example exits after SIGTERM")
            .expect("wait works");
        status.success()
    }
}

/// Runs `program ARGS` to completion; its stdout, checking it succeeded.
pub async fn run_to_end(program: &str, args: &[&str]) -> String {
    let output = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output();
    let output = tokio::time::timeout(STEP, output)
        .await
        .expect("the example finished in time")
        .unwrap_or_else(|e| panic!("cannot run {program}: {e}"));
    let stdout = String::from_utf8(output.stdout).expect("UTF-8 output");
    assert!(
        output.status.success(),
        "{program} {args:?} failed: {}\nstdout:\n{stdout}\nstderr:\n{}",
        output.status,
        String::from_utf8_lossy(&output.stderr)
    );
    stdout
}

/// The body of a `tools/list` request at 2026-07-28.
pub const TOOLS_LIST: &str = r#"{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28","io.modelcontextprotocol/clientCapabilities":{}}}}"#;

/// One HTTP/1.1 request on a fresh connection to `authority`, with `host`
/// as the `Host` header; the status code and the body.
pub async fn request(
    authority: &str,
    method: &str,
    path: &str,
    host: &str,
    body: &str,
) -> (u16, String) {
    let exchange = async {
        let mut stream = TcpStream::connect(authority).await.expect("connects");
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {host}\r\nAccept: application/json, text/event-stream\r\n\
             Content-Type: application/json\r\nMCP-Protocol-Version: 2026-07-28\r\n\
             Mcp-Method: tools/list\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{body}",
            body.len()
        );
        stream.write_all(head.as_bytes()).await.expect("writes");
        let mut response = Vec::new();
        stream.read_to_end(&mut response).await.expect("reads");
        String::from_utf8(response).expect("UTF-8 response")
    };
    let response = tokio::time::timeout(STEP, exchange)
        .await
        .expect("the server answered in time");
    let (head, body) = response.split_once("\r\n\r\n").expect("a head and a body");
    let status = head
        .split(' ')
        .nth(1)
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| panic!("no status in {head:?}"));
    (status, body.to_owned())
}
