//! A keep-alive HTTP/1.1 client of one MCP endpoint, and what /proc says
//! of a process (CPU on core, resident memory): the measuring side of
//! `bench-tasks` and `bench-scale`.

use serde_json::{Value, json};
use std::time::Duration;

use crate::PROTOCOL_VERSION;

/// One keep-alive HTTP/1.1 connection to an MCP endpoint (`/mcp`).
pub struct Http {
    send: hyper::client::conn::http1::SendRequest<http_body_util::Full<bytes::Bytes>>,
    url: String,
}

impl Http {
    /// Connects to `addr` (`ip:port`).
    pub async fn connect(addr: &str) -> Self {
        let stream = tokio::net::TcpStream::connect(addr).await.expect("connect");
        stream.set_nodelay(true).expect("nodelay");
        let (send, conn) =
            hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
                .await
                .expect("handshake");
        tokio::spawn(conn);
        Self {
            send,
            url: format!("http://{addr}/mcp"),
        }
    }

    /// A 2026-07-28 request from a client with `capabilities`, with
    /// `Mcp-Name: name` when `name` is not empty; its result (an error
    /// answer panics).
    pub async fn post(
        &mut self,
        method: &str,
        name: &str,
        params: Value,
        capabilities: Value,
    ) -> Value {
        use http_body_util::BodyExt as _;
        let mut params = params;
        params["_meta"] = json!({
            "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
            "io.modelcontextprotocol/clientCapabilities": capabilities,
        });
        let body = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let mut req = hyper::Request::post(&self.url)
            .header("Host", "127.0.0.1")
            .header("Content-Type", "application/json")
            .header("Accept", "application/json, text/event-stream")
            .header("MCP-Protocol-Version", PROTOCOL_VERSION)
            .header("Mcp-Method", method);
        if !name.is_empty() {
            req = req.header("Mcp-Name", name);
        }
        let req = req
            .body(http_body_util::Full::new(bytes::Bytes::from(
                body.to_string(),
            )))
            .expect("request");
        self.send.ready().await.expect("ready");
        let resp = self.send.send_request(req).await.expect("response");
        let bytes = resp.into_body().collect().await.expect("body").to_bytes();
        let v: Value = serde_json::from_slice(&bytes).expect("JSON");
        assert!(v.get("error").is_none(), "{v}");
        v["result"].clone()
    }
}

/// Time on a CPU of every thread of process `pid` (`/proc/PID/task/*/schedstat`,
/// nanoseconds), or of this thread when `pid` is `None`.
pub fn cpu(pid: Option<u32>) -> Duration {
    let on_cpu = |path: &std::path::Path| -> u64 {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|s| s.split_whitespace().next()?.parse().ok())
            .unwrap_or(0)
    };
    let ns = match pid {
        None => on_cpu("/proc/thread-self/schedstat".as_ref()),
        Some(pid) => std::fs::read_dir(format!("/proc/{pid}/task"))
            .map(|dir| {
                dir.flatten()
                    .map(|t| on_cpu(&t.path().join("schedstat")))
                    .sum()
            })
            .unwrap_or(0),
    };
    Duration::from_nanos(ns)
}

/// Resident memory of process `pid` (this one when `None`), in bytes,
/// from `/proc/PID/status` (`VmRSS`, or `VmHWM` for the peak).
pub fn rss(pid: Option<u32>, peak: bool) -> u64 {
    let path = match pid {
        Some(pid) => format!("/proc/{pid}/status"),
        None => "/proc/self/status".to_owned(),
    };
    let key = if peak { "VmHWM:" } else { "VmRSS:" };
    std::fs::read_to_string(path)
        .ok()
        .and_then(|status| {
            status
                .lines()
                .find_map(|l| l.strip_prefix(key))
                .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok())
        })
        .unwrap_or(0)
        * 1024
}
