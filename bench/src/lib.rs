//! Shared pieces of the benchmark harness: the three request paths and their
//! exact request bytes, the tool set's input/output types, the hyper accept
//! loop used by the floor and rmcp servers, and the `--http ADDR | --stdio`
//! command line every server binary takes.
//!
//! Every request is a 2026-07-28 request: `_meta` carries
//! `io.modelcontextprotocol/protocolVersion` and
//! `io.modelcontextprotocol/clientCapabilities`, and the HTTP requests carry
//! `MCP-Protocol-Version`, `Mcp-Method`, `Mcp-Name` (for `tools/call`),
//! `Content-Type: application/json` and
//! `Accept: application/json, text/event-stream`.

pub mod auth;
pub mod client;

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use std::error::Error;
use std::io;
use tokio::net::TcpListener;

/// The protocol revision every request speaks.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// The text the `echo` path sends (and expects back).
pub const ECHO_TEXT: &str = "hello, benchmark";

/// Description strings shared by the three servers, so that `tools/list`
/// answers have (nearly) the same size everywhere.
pub mod describe {
    /// `echo`.
    pub const ECHO: &str = "Echoes the given text back.";
    /// `add`.
    pub const ADD: &str = "Adds two numbers and returns their sum as structured content.";
    /// `noop`.
    pub const NOOP: &str = "Does nothing and returns an empty text block.";
}

// `echo`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct EchoInput {
    /// The text to echo back.
    pub text: String,
}

// `add`'s input.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct AddInput {
    /// The first addend.
    pub a: f64,
    /// The second addend.
    pub b: f64,
}

// `add`'s output (`structuredContent`).
#[derive(Debug, Serialize, JsonSchema)]
pub struct AddOutput {
    /// `a + b`.
    pub sum: f64,
}

// `noop`'s input: no members.
#[derive(Debug, Deserialize, JsonSchema)]
pub struct NoopInput {}

/// One benchmarked request path.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Path {
    /// `tools/call` of `echo {text}`.
    Echo,
    /// `tools/call` of `add {a, b}` (structured output, output schema).
    Add,
    /// `tools/list` (three tools).
    List,
}

impl Path {
    /// All paths, in report order.
    pub const ALL: [Path; 3] = [Path::Echo, Path::Add, Path::List];

    /// The short name used in reports and on the command line.
    pub fn name(self) -> &'static str {
        match self {
            Path::Echo => "echo",
            Path::Add => "add",
            Path::List => "list",
        }
    }

    /// Parses [`Path::name`].
    pub fn parse(s: &str) -> Option<Path> {
        Path::ALL.into_iter().find(|p| p.name() == s)
    }

    /// The JSON-RPC method.
    pub fn method(self) -> &'static str {
        match self {
            Path::Echo | Path::Add => "tools/call",
            Path::List => "tools/list",
        }
    }

    /// The tool name, for `tools/call`.
    pub fn tool(self) -> Option<&'static str> {
        match self {
            Path::Echo => Some("echo"),
            Path::Add => Some("add"),
            Path::List => None,
        }
    }

    /// A substring every correct response body contains (checked on every
    /// response by the load generator).
    pub fn expect(self) -> &'static [u8] {
        match self {
            Path::Echo => b"hello, benchmark",
            // 1.5 + 2.25, in structuredContent and mirrored as text.
            Path::Add => b"3.75",
            Path::List => b"\"noop\"",
        }
    }

    /// The JSON-RPC request with the given id, compact, without a newline.
    pub fn body(self, id: u64) -> Vec<u8> {
        let meta = format!(
            r#""_meta":{{"io.modelcontextprotocol/protocolVersion":"{PROTOCOL_VERSION}","io.modelcontextprotocol/clientCapabilities":{{}}}}"#
        );
        let params = match self {
            Path::Echo => {
                format!(r#"{{"name":"echo","arguments":{{"text":"{ECHO_TEXT}"}},{meta}}}"#)
            }
            Path::Add => format!(r#"{{"name":"add","arguments":{{"a":1.5,"b":2.25}},{meta}}}"#),
            Path::List => format!("{{{meta}}}"),
        };
        format!(
            r#"{{"jsonrpc":"2.0","id":{id},"method":"{}","params":{params}}}"#,
            self.method()
        )
        .into_bytes()
    }

    /// The whole HTTP/1.1 request (keep-alive) for `host` (`ip:port`),
    /// with `Authorization: Bearer` when a token is given.
    pub fn http_request(self, host: &str, bearer: Option<&str>) -> Vec<u8> {
        let body = self.body(1);
        let mut head = format!(
            "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
             Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {PROTOCOL_VERSION}\r\n\
             Mcp-Method: {}\r\n",
            self.method()
        );
        if let Some(tool) = self.tool() {
            head.push_str(&format!("Mcp-Name: {tool}\r\n"));
        }
        if let Some(token) = bearer {
            head.push_str(&format!("Authorization: Bearer {token}\r\n"));
        }
        head.push_str(&format!("Content-Length: {}\r\n\r\n", body.len()));
        let mut out = head.into_bytes();
        out.extend_from_slice(&body);
        out
    }
}

/// How a server binary was asked to serve.
#[derive(Debug, Clone)]
pub enum Mode {
    /// Streamable HTTP on this address (`127.0.0.1:0` picks a port). The
    /// bound address is printed on stdout as `listening <addr>`.
    Http(String),
    /// Newline-delimited JSON-RPC on stdin/stdout.
    Stdio,
}

/// Parses `--http ADDR` or `--stdio` (and returns the remaining flags).
pub fn parse_mode() -> (Mode, Vec<String>) {
    let mut args = std::env::args().skip(1);
    let mut mode = None;
    let mut rest = Vec::new();
    while let Some(a) = args.next() {
        match a.as_str() {
            "--http" => mode = Some(Mode::Http(args.next().unwrap_or_else(|| usage()))),
            "--stdio" => mode = Some(Mode::Stdio),
            _ => rest.push(a),
        }
    }
    (mode.unwrap_or_else(|| usage()), rest)
}

fn usage() -> ! {
    eprintln!("usage: <server> --http 127.0.0.1:PORT | --stdio");
    std::process::exit(2)
}

/// Binds a loopback listener and announces its address on stdout.
pub async fn bind(addr: &str) -> io::Result<TcpListener> {
    let listener = TcpListener::bind(addr).await?;
    let local = listener.local_addr()?;
    if !local.ip().is_loopback() {
        return Err(io::Error::other(
            "the benchmark servers bind to loopback only",
        ));
    }
    println!("listening {local}");
    Ok(listener)
}

type BoxError = Box<dyn Error + Send + Sync>;

/// The plain hyper HTTP/1.1 accept loop (keep-alive, `TCP_NODELAY`, one task
/// per connection) used by the floor and rmcp servers.
pub async fn serve_http1<S, B>(listener: TcpListener, svc: S) -> io::Result<()>
where
    S: hyper::service::Service<http::Request<hyper::body::Incoming>, Response = http::Response<B>>
        + Clone
        + Send
        + 'static,
    S::Future: Send + 'static,
    S::Error: Into<BoxError>,
    B: http_body::Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<BoxError>,
{
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let svc = svc.clone();
        tokio::spawn(async move {
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(hyper_util::rt::TokioIo::new(stream), svc)
                .await;
        });
    }
}
