//! A deliberately small HTTP/1.1 client over a raw `TcpStream`, so tests can
//! send exactly the bytes they mean (duplicate headers, odd casing, broken
//! bodies) and read streams incrementally.

use serde_json::{Value, json};
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;

/// A request under construction. Headers keep their order and casing.
#[derive(Debug, Clone)]
pub(crate) struct Req {
    pub(crate) method: String,
    pub(crate) path: String,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

pub(crate) const VERSION: &str = "2026-07-28";

/// `_meta` with the required members.
pub(crate) fn meta() -> Value {
    json!({
        "io.modelcontextprotocol/protocolVersion": VERSION,
        "io.modelcontextprotocol/clientCapabilities": {},
        "io.modelcontextprotocol/clientInfo": { "name": "it", "version": "1.0.0" }
    })
}

/// A `tools/call` body.
pub(crate) fn call_body(id: Value, tool: &str, args: Value) -> Value {
    json!({
        "jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": { "name": tool, "arguments": args, "_meta": meta() }
    })
}

impl Req {
    /// A POST to `/mcp` with every header a conforming client sends, derived
    /// from the body.
    pub(crate) fn post(body: &Value) -> Self {
        let mut req = Self::raw("POST", "/mcp", serde_json::to_vec(body).unwrap_or_default());
        req.headers
            .push(("Content-Type".into(), "application/json".into()));
        req.headers.push((
            "Accept".into(),
            "application/json, text/event-stream".into(),
        ));
        req.headers
            .push(("MCP-Protocol-Version".into(), VERSION.into()));
        if let Some(method) = body["method"].as_str() {
            req.headers.push(("Mcp-Method".into(), method.into()));
        }
        if let Some(name) = body["params"]["name"]
            .as_str()
            .or(body["params"]["uri"].as_str())
        {
            req.headers.push(("Mcp-Name".into(), name.into()));
        }
        req
    }

    /// A `tools/call` with id 1.
    pub(crate) fn call(tool: &str, args: Value) -> Self {
        Self::post(&call_body(json!(1), tool, args))
    }

    /// A request with no headers but `Host` and `Connection: close` (added
    /// when sent).
    pub(crate) fn raw(method: &str, path: &str, body: Vec<u8>) -> Self {
        Self {
            method: method.into(),
            path: path.into(),
            headers: Vec::new(),
            body,
        }
    }

    /// Replaces every header named `name` (ignoring case) with one value.
    pub(crate) fn set(mut self, name: &str, value: &str) -> Self {
        self = self.without(name);
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Adds a header, keeping existing ones of the same name.
    pub(crate) fn add(mut self, name: &str, value: &str) -> Self {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// Removes every header named `name` (ignoring case).
    pub(crate) fn without(mut self, name: &str) -> Self {
        self.headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        self
    }

    /// The head, with `Host` (unless set) and `Content-Length`.
    pub(crate) fn head(&self, addr: SocketAddr, content_length: Option<usize>) -> Vec<u8> {
        let mut out = format!("{} {} HTTP/1.1\r\n", self.method, self.path);
        if !self
            .headers
            .iter()
            .any(|(n, _)| n.eq_ignore_ascii_case("host"))
        {
            out.push_str(&format!("Host: {addr}\r\n"));
        }
        for (name, value) in &self.headers {
            out.push_str(&format!("{name}: {value}\r\n"));
        }
        if let Some(len) = content_length {
            out.push_str(&format!("Content-Length: {len}\r\n"));
        }
        out.push_str("Connection: close\r\n\r\n");
        out.into_bytes()
    }

    /// Sends the request and reads the whole response.
    pub(crate) async fn send(&self, addr: SocketAddr) -> Resp {
        let mut bytes = self.head(addr, Some(self.body.len()));
        bytes.extend_from_slice(&self.body);
        exchange(addr, bytes).await
    }

    /// [`send`](Self::send) from the local address `from` (any of
    /// 127.0.0.0/8 is loopback on Linux): another client, as the server
    /// sees it.
    pub(crate) async fn send_from(&self, addr: SocketAddr, from: std::net::IpAddr) -> Resp {
        let mut bytes = self.head(addr, Some(self.body.len()));
        bytes.extend_from_slice(&self.body);
        let socket = tokio::net::TcpSocket::new_v4().expect("socket");
        socket
            .bind(SocketAddr::new(from, 0))
            .expect("bind the source");
        let stream = socket.connect(addr).await.expect("connect");
        exchange_on(stream, bytes).await
    }
}

/// Writes `bytes` while reading the response until the server closes.
/// A write error (the server refused the rest of the body) is not fatal.
pub(crate) async fn exchange(addr: SocketAddr, bytes: Vec<u8>) -> Resp {
    let stream = TcpStream::connect(addr).await.expect("connect");
    exchange_on(stream, bytes).await
}

/// [`exchange`] on a connected stream.
async fn exchange_on(stream: TcpStream, bytes: Vec<u8>) -> Resp {
    let (mut reader, mut writer) = stream.into_split();
    let write = tokio::spawn(async move {
        let _ = writer.write_all(&bytes).await;
        writer
    });
    let mut buf = Vec::new();
    let mut chunk = vec![0_u8; 64 * 1024];
    let read = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            match reader.read(&mut chunk).await {
                Ok(0) | Err(_) => break,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
    })
    .await;
    assert!(read.is_ok(), "no complete response within 20 s");
    let _ = write.await;
    Resp::parse(&buf)
        .unwrap_or_else(|| panic!("unreadable response: {:?}", String::from_utf8_lossy(&buf)))
}

/// A parsed response.
#[derive(Debug, Clone)]
pub(crate) struct Resp {
    pub(crate) status: u16,
    pub(crate) headers: Vec<(String, String)>,
    pub(crate) body: Vec<u8>,
}

impl Resp {
    /// Parses a complete response (chunked or not).
    pub(crate) fn parse(raw: &[u8]) -> Option<Self> {
        let end = find(raw, b"\r\n\r\n")?;
        let head = std::str::from_utf8(&raw[..end]).ok()?;
        let mut lines = head.split("\r\n");
        let status = lines.next()?.split(' ').nth(1)?.parse().ok()?;
        let headers: Vec<(String, String)> = lines
            .filter_map(|l| l.split_once(':'))
            .map(|(n, v)| (n.trim().to_owned(), v.trim().to_owned()))
            .collect();
        let rest = &raw[end + 4..];
        let chunked = headers
            .iter()
            .any(|(n, v)| n.eq_ignore_ascii_case("transfer-encoding") && v.contains("chunked"));
        let body = if chunked {
            dechunk(rest)
        } else {
            rest.to_vec()
        };
        Some(Self {
            status,
            headers,
            body,
        })
    }

    /// The first value of a header.
    pub(crate) fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    pub(crate) fn content_type(&self) -> &str {
        self.header("content-type").unwrap_or_default()
    }

    /// The body as one JSON value (a plain `application/json` response).
    pub(crate) fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "body is not JSON ({e}): {:?}",
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    /// The error code of a JSON error body.
    pub(crate) fn code(&self) -> i64 {
        self.json()["error"]["code"]
            .as_i64()
            .unwrap_or_else(|| panic!("no error code: {}", self.text()))
    }

    pub(crate) fn text(&self) -> String {
        String::from_utf8_lossy(&self.body).into_owned()
    }

    /// The SSE events' data, each parsed as JSON. Asserts that every event
    /// is exactly one `data:` line.
    pub(crate) fn events(&self) -> Vec<Value> {
        sse_events(&self.text())
    }
}

/// Splits an SSE body into events and parses each one's data.
pub(crate) fn sse_events(text: &str) -> Vec<Value> {
    let mut out = Vec::new();
    for block in text.split("\n\n") {
        let lines: Vec<&str> = block
            .lines()
            .filter(|l| !l.is_empty() && !l.starts_with(':'))
            .collect();
        if lines.is_empty() {
            continue;
        }
        assert_eq!(lines.len(), 1, "an event must be one data line: {block:?}");
        let data = lines[0]
            .strip_prefix("data: ")
            .unwrap_or_else(|| panic!("not a data line: {:?}", lines[0]));
        out.push(
            serde_json::from_str(data)
                .unwrap_or_else(|e| panic!("event data is not JSON ({e}): {data}")),
        );
    }
    out
}

fn find(hay: &[u8], needle: &[u8]) -> Option<usize> {
    hay.windows(needle.len()).position(|w| w == needle)
}

/// Decodes a chunked body, tolerating a missing final chunk.
pub(crate) fn dechunk(mut rest: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(line_end) = find(rest, b"\r\n") {
        let size_text = std::str::from_utf8(&rest[..line_end]).unwrap_or("0");
        let size = usize::from_str_radix(size_text.split(';').next().unwrap_or("0").trim(), 16)
            .unwrap_or(0);
        rest = &rest[line_end + 2..];
        if size == 0 || rest.len() < size {
            out.extend_from_slice(&rest[..size.min(rest.len())]);
            break;
        }
        out.extend_from_slice(&rest[..size]);
        rest = rest.get(size + 2..).unwrap_or_default();
    }
    out
}

/// An open connection whose response is read bit by bit.
pub(crate) struct Open {
    pub(crate) stream: TcpStream,
    pub(crate) buf: Vec<u8>,
}

impl Open {
    /// Connects and sends `req`.
    pub(crate) async fn send(addr: SocketAddr, req: &Req) -> Self {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        let mut bytes = req.head(addr, Some(req.body.len()));
        bytes.extend_from_slice(&req.body);
        stream.write_all(&bytes).await.expect("write");
        Self {
            stream,
            buf: Vec::new(),
        }
    }

    /// Connects and sends only the head of `req`, declaring `length` bytes
    /// of body.
    pub(crate) async fn send_head(addr: SocketAddr, req: &Req, length: usize) -> Self {
        let mut stream = TcpStream::connect(addr).await.expect("connect");
        stream
            .write_all(&req.head(addr, Some(length)))
            .await
            .expect("write");
        Self {
            stream,
            buf: Vec::new(),
        }
    }

    /// Reads until `needle` has arrived (or panics after `within`).
    pub(crate) async fn read_until(&mut self, needle: &[u8], within: Duration) {
        let mut chunk = vec![0_u8; 16 * 1024];
        let done = tokio::time::timeout(within, async {
            while find(&self.buf, needle).is_none() {
                match self.stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => return false,
                    Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                }
            }
            true
        })
        .await;
        assert_eq!(
            done,
            Ok(true),
            "{:?} did not arrive; got {:?}",
            String::from_utf8_lossy(needle),
            String::from_utf8_lossy(&self.buf)
        );
    }

    /// Whether the server closes the connection within `within` (whatever
    /// it sends first).
    pub(crate) async fn closed_within(mut self, within: Duration) -> bool {
        let mut chunk = vec![0_u8; 16 * 1024];
        tokio::time::timeout(within, async {
            loop {
                match self.stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(_) => {}
                }
            }
        })
        .await
        .is_ok()
    }

    /// Reads to the end and parses the response.
    pub(crate) async fn finish(mut self, within: Duration) -> Resp {
        let mut chunk = vec![0_u8; 16 * 1024];
        let _ = tokio::time::timeout(within, async {
            loop {
                match self.stream.read(&mut chunk).await {
                    Ok(0) | Err(_) => break,
                    Ok(n) => self.buf.extend_from_slice(&chunk[..n]),
                }
            }
        })
        .await;
        Resp::parse(&self.buf)
            .unwrap_or_else(|| panic!("unreadable: {:?}", String::from_utf8_lossy(&self.buf)))
    }
}
