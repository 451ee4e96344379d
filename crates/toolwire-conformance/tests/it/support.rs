//! Drivers for a spawned `conformance-server`: line-oriented over stdio, and
//! a minimal HTTP/1.1 client for `--http`.

use serde_json::{Map, Value, json};
use std::net::SocketAddr;
use std::process::Stdio as ChildStdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader, Lines};
use tokio::net::TcpStream;
use tokio::process::{Child, ChildStdin, ChildStdout, Command};

pub(crate) const VERSION: &str = "2026-07-28";

/// The `_meta` of a request from a client with `caps`.
pub(crate) fn meta(caps: &Value) -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": caps,
        "io.modelcontextprotocol/clientInfo": {"name": "toolwire-conformance-tests", "version": "0"}
    })
}

/// `params` with `_meta` for `caps` merged in (members already there win).
pub(crate) fn with_meta(mut params: Value, caps: &Value) -> Value {
    let obj = params.as_object_mut().expect("params object");
    let m = obj
        .entry("_meta")
        .or_insert_with(|| Value::Object(Map::new()));
    for (k, v) in meta(caps).as_object().expect("meta").clone() {
        m.as_object_mut()
            .expect("meta object")
            .entry(k)
            .or_insert(v);
    }
    params
}

/// The client capabilities the suite usually declares.
pub(crate) fn all_caps() -> Value {
    json!({"sampling": {}, "elicitation": {}, "roots": {"listChanged": true}})
}

fn command(args: &[&str]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_conformance-server"));
    c.args(args)
        .stdin(ChildStdio::piped())
        .stdout(ChildStdio::piped())
        .stderr(ChildStdio::inherit())
        .kill_on_drop(true);
    c
}

/// `conformance-server --stdio`.
pub(crate) struct Stdio {
    _child: Child,
    stdin: ChildStdin,
    lines: Lines<BufReader<ChildStdout>>,
    next_id: i64,
}

impl Stdio {
    pub(crate) fn spawn() -> Self {
        let mut child = command(&["--stdio"])
            .spawn()
            .expect("spawn conformance-server");
        let stdin = child.stdin.take().expect("stdin");
        let stdout = child.stdout.take().expect("stdout");
        Self {
            _child: child,
            stdin,
            lines: BufReader::new(stdout).lines(),
            next_id: 1,
        }
    }

    async fn next(&mut self) -> Value {
        let line = tokio::time::timeout(Duration::from_secs(10), self.lines.next_line())
            .await
            .expect("a message within 10 s")
            .expect("read")
            .expect("not EOF");
        serde_json::from_str(&line).unwrap_or_else(|e| panic!("bad line {line:?}: {e}"))
    }

    /// Sends a request with the suite's usual capabilities; returns the
    /// response and the notifications that came before it.
    pub(crate) async fn request_with(
        &mut self,
        method: &str,
        params: Value,
        caps: &Value,
    ) -> (Value, Vec<Value>) {
        let id = self.next_id;
        self.next_id += 1;
        let msg = json!({"jsonrpc": "2.0", "id": id, "method": method, "params": with_meta(params, caps)});
        let mut line = msg.to_string();
        line.push('\n');
        self.stdin.write_all(line.as_bytes()).await.expect("write");
        self.stdin.flush().await.expect("flush");
        let mut notes = Vec::new();
        loop {
            let m = self.next().await;
            if m.get("id") == Some(&json!(id)) && m.get("method").is_none() {
                return (m, notes);
            }
            notes.push(m);
        }
    }

    /// The response to `method` from a client with the usual capabilities.
    pub(crate) async fn call(&mut self, method: &str, params: Value) -> Value {
        self.request_with(method, params, &all_caps()).await.0
    }

    /// The `result` of `method`, failing on an error.
    pub(crate) async fn result(&mut self, method: &str, params: Value) -> Value {
        let r = self.call(method, params).await;
        assert!(r.get("error").is_none(), "{method} failed: {r}");
        r["result"].clone()
    }
}

/// `conformance-server --http 127.0.0.1:0`.
pub(crate) struct Http {
    _child: Child,
    pub(crate) addr: SocketAddr,
}

/// One HTTP response.
#[derive(Debug)]
pub(crate) struct Response {
    pub(crate) status: u16,
    pub(crate) content_type: String,
    pub(crate) body: String,
}

impl Response {
    /// The JSON-RPC messages in the body: one JSON document, or the `data:`
    /// lines of an event stream.
    pub(crate) fn messages(&self) -> Vec<Value> {
        if self.content_type.starts_with("text/event-stream") {
            self.body
                .lines()
                .filter_map(|l| l.strip_prefix("data:"))
                .map(|d| serde_json::from_str(d.trim()).expect("JSON event"))
                .collect()
        } else if self.body.is_empty() {
            Vec::new()
        } else {
            vec![serde_json::from_str(&self.body).expect("JSON body")]
        }
    }

    /// The last message: the JSON-RPC response.
    pub(crate) fn response(&self) -> Value {
        self.messages().pop().expect("a response")
    }
}

impl Http {
    pub(crate) async fn spawn() -> Self {
        let mut child = command(&["--http", "127.0.0.1:0"])
            .spawn()
            .expect("spawn conformance-server");
        let stdout = child.stdout.take().expect("stdout");
        let mut lines = BufReader::new(stdout).lines();
        let line = tokio::time::timeout(Duration::from_secs(10), lines.next_line())
            .await
            .expect("listening within 10 s")
            .expect("read")
            .expect("a line");
        let url = line
            .strip_prefix("listening on http://")
            .expect("the address line");
        let addr = url
            .strip_suffix("/mcp")
            .expect("/mcp")
            .parse()
            .expect("address");
        Self {
            _child: child,
            addr,
        }
    }

    /// POSTs a request to `/mcp` with the standard headers.
    pub(crate) async fn post(&self, method: &str, params: Value, caps: &Value) -> Response {
        let mut headers = vec![("Mcp-Method".to_owned(), method.to_owned())];
        let name = match method {
            "tools/call" | "prompts/get" => params.get("name"),
            "resources/read" => params.get("uri"),
            _ => None,
        };
        if let Some(Value::String(n)) = name {
            headers.push(("Mcp-Name".to_owned(), n.clone()));
        }
        let body =
            json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": with_meta(params, caps)});
        self.raw(&self.addr.to_string(), &headers, &body.to_string())
            .await
    }

    /// POSTs `body` to `/mcp` with `Host: host` and extra headers.
    pub(crate) async fn raw(
        &self,
        host: &str,
        headers: &[(String, String)],
        body: &str,
    ) -> Response {
        let mut req = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: {VERSION}\r\nConnection: close\r\nContent-Length: {}\r\n",
            body.len()
        );
        for (k, v) in headers {
            req.push_str(&format!("{k}: {v}\r\n"));
        }
        req.push_str("\r\n");
        req.push_str(body);
        let mut stream = TcpStream::connect(self.addr).await.expect("connect");
        stream.write_all(req.as_bytes()).await.expect("send");
        let mut raw = Vec::new();
        tokio::time::timeout(Duration::from_secs(10), stream.read_to_end(&mut raw))
            .await
            .expect("a response within 10 s")
            .expect("read");
        parse_response(&raw)
    }
}

fn parse_response(raw: &[u8]) -> Response {
    let text = String::from_utf8(raw.to_vec()).expect("UTF-8 response");
    let (head, body) = text.split_once("\r\n\r\n").expect("head and body");
    let mut lines = head.split("\r\n");
    let status = lines
        .next()
        .and_then(|l| l.split(' ').nth(1))
        .and_then(|s| s.parse().ok())
        .expect("status line");
    let mut content_type = String::new();
    let mut chunked = false;
    for l in lines {
        let (k, v) = l.split_once(':').expect("header");
        match k.trim().to_ascii_lowercase().as_str() {
            "content-type" => content_type = v.trim().to_owned(),
            "transfer-encoding" => chunked = v.trim().eq_ignore_ascii_case("chunked"),
            _ => {}
        }
    }
    let body = if chunked {
        dechunk(body)
    } else {
        body.to_owned()
    };
    Response {
        status,
        content_type,
        body,
    }
}

fn dechunk(mut s: &str) -> String {
    let mut out = String::new();
    loop {
        let (size, rest) = s.split_once("\r\n").expect("chunk size");
        let size = usize::from_str_radix(size.split(';').next().unwrap_or("0").trim(), 16)
            .expect("hex chunk size");
        if size == 0 {
            return out;
        }
        out.push_str(&rest[..size]);
        s = &rest[size + 2..];
    }
}
