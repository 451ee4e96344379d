//! HTTPS (feature `tls`) on a real socket, with a CA made at test time:
//! the same calls, lists, streams and errors over HTTP/2 and HTTP/1.1
//! (chosen through ALPN) with a raw hyper + rustls client, toolwire's own
//! client, a certificate reload that new connections see while old ones
//! keep working, and handshakes bounded in time and counted against the
//! connection caps.

use super::TestServer;
use super::client::{VERSION, call_body, meta};
use bytes::Bytes;
use http::{Request, Response, StatusCode};
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::AsyncReadExt as _;
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use toolwire::{HttpConfig, TlsConfig};

/// A CA and a `localhost` certificate it signed, written as PEM files.
struct Pki {
    ca: CertificateDer<'static>,
    #[cfg_attr(not(feature = "client"), allow(dead_code))]
    ca_pem: String,
    cert: PathBuf,
    key: PathBuf,
}

/// A fresh CA named `name` and its leaf, in `dir`.
fn pki(dir: &Path, name: &str) -> Pki {
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name.push(DnType::CommonName, name);
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_cert = ca.self_signed(&ca_key).expect("CA cert");
    let key = KeyPair::generate().expect("leaf key");
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .expect("leaf params")
        .signed_by(&key, &Issuer::from_params(&ca, &ca_key))
        .expect("leaf");
    std::fs::create_dir_all(dir).expect("dir");
    let (cert, key_path) = (dir.join("cert.pem"), dir.join("key.pem"));
    std::fs::write(&cert, leaf.pem()).expect("write cert");
    std::fs::write(&key_path, key.serialize_pem()).expect("write key");
    Pki {
        ca: ca_cert.der().clone(),
        ca_pem: ca_cert.pem(),
        cert,
        key: key_path,
    }
}

fn temp_dir(test: &str) -> PathBuf {
    std::env::temp_dir().join(format!("toolwire-it-tls-{}-{test}", std::process::id()))
}

/// The test server over HTTPS with the PKI's certificate.
async fn start(pki: &Pki, config: HttpConfig) -> (TestServer, TlsConfig) {
    let tls = TlsConfig::from_pem_files(&pki.cert, &pki.key).expect("TLS config");
    let s = TestServer::with(config.with_tls(tls.clone())).await;
    (s, tls)
}

/// One side of an HTTP/2 or HTTP/1.1 connection.
enum Sender {
    H1(hyper::client::conn::http1::SendRequest<Full<Bytes>>),
    H2(hyper::client::conn::http2::SendRequest<Full<Bytes>>),
}

/// A client connection over TLS.
struct Conn {
    sender: Sender,
    addr: SocketAddr,
}

/// Connects trusting `ca` and offering `alpn`; what the server chose
/// decides the HTTP version.
async fn connect(
    addr: SocketAddr,
    ca: &CertificateDer<'static>,
    alpn: &[&[u8]],
) -> std::io::Result<Conn> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone()).expect("root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let tcp = TcpStream::connect(addr).await?;
    let name = ServerName::try_from("localhost").expect("name");
    let tls = TlsConnector::from(Arc::new(config))
        .connect(name, tcp)
        .await?;
    let h2 = tls.get_ref().1.alpn_protocol() == Some(b"h2");
    let io = TokioIo::new(tls);
    let sender = if h2 {
        let (sender, conn) = hyper::client::conn::http2::handshake(TokioExecutor::new(), io)
            .await
            .map_err(std::io::Error::other)?;
        tokio::spawn(conn);
        Sender::H2(sender)
    } else {
        let (sender, conn) = hyper::client::conn::http1::handshake(io)
            .await
            .map_err(std::io::Error::other)?;
        tokio::spawn(conn);
        Sender::H1(sender)
    };
    Ok(Conn { sender, addr })
}

impl Conn {
    fn is_h2(&self) -> bool {
        matches!(self.sender, Sender::H2(_))
    }

    /// A POST of `body` with the headers a conforming client sends, plus
    /// `extra` (which replace them).
    fn request(&self, body: &Value, extra: &[(&str, &str)]) -> Request<Full<Bytes>> {
        let authority = format!("localhost:{}", self.addr.port());
        let mut req = match self.sender {
            // HTTP/2 carries the authority in the URI.
            Sender::H2(_) => Request::post(format!("https://{authority}/mcp")),
            Sender::H1(_) => Request::post("/mcp").header("host", &authority),
        }
        .header("content-type", "application/json")
        .header("accept", "application/json, text/event-stream")
        .header("mcp-protocol-version", VERSION);
        if let Some(method) = body["method"].as_str() {
            req = req.header("mcp-method", method);
        }
        if let Some(name) = body["params"]["name"].as_str() {
            req = req.header("mcp-name", name);
        }
        let mut req = req
            .body(Full::new(Bytes::from(body.to_string())))
            .expect("request");
        for (name, value) in extra {
            req.headers_mut().insert(
                http::HeaderName::from_bytes(name.as_bytes()).expect("name"),
                value.parse().expect("value"),
            );
        }
        req
    }

    async fn open(&mut self, req: Request<Full<Bytes>>) -> Response<Incoming> {
        let sent = match &mut self.sender {
            Sender::H1(s) => {
                s.ready().await.expect("ready");
                s.send_request(req).await
            }
            Sender::H2(s) => {
                s.ready().await.expect("ready");
                s.send_request(req).await
            }
        };
        sent.expect("response")
    }

    /// Sends `body` and reads the whole response.
    async fn post(&mut self, body: &Value, extra: &[(&str, &str)]) -> (StatusCode, Value) {
        let res = self.open(self.request(body, extra)).await;
        let status = res.status();
        let bytes = res.into_body().collect().await.expect("body").to_bytes();
        let text = String::from_utf8_lossy(&bytes).into_owned();
        let value = match text.strip_prefix("data: ") {
            // An SSE response: its last event is the result.
            Some(_) => super::client::sse_events(&text).pop().expect("an event"),
            None => serde_json::from_str(&text).unwrap_or(Value::String(text)),
        };
        (status, value)
    }
}

/// Reads `body` until `needle` has arrived.
async fn read_until(body: &mut Incoming, needle: &str) -> String {
    let mut seen = String::new();
    let found = tokio::time::timeout(Duration::from_secs(5), async {
        while !seen.contains(needle) {
            let frame = body.frame().await.expect("a frame").expect("readable");
            if let Ok(data) = frame.into_data() {
                seen.push_str(&String::from_utf8_lossy(&data));
            }
        }
    })
    .await;
    assert!(found.is_ok(), "{needle:?} did not arrive: {seen:?}");
    seen
}

/// The representative exchanges, on one connection of either version.
async fn exchanges(conn: &mut Conn) {
    let version = if conn.is_h2() { "h2" } else { "http/1.1" };
    // A call.
    let (status, v) = conn
        .post(
            &call_body(json!(1), "echo", json!({"text": "over tls"})),
            &[],
        )
        .await;
    assert_eq!(status, 200, "{version}: {v}");
    assert_eq!(v["result"]["content"][0]["text"], "over tls", "{version}");
    // A list.
    let list =
        json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {"_meta": meta()}});
    let (status, v) = conn.post(&list, &[]).await;
    assert_eq!(status, 200, "{version}: {v}");
    assert!(
        v["result"]["tools"]
            .as_array()
            .is_some_and(|t| t.iter().any(|t| t["name"] == "echo")),
        "{version}: {v}"
    );
    // A streamed response: progress, then the result.
    let mut m = meta();
    m["progressToken"] = json!("p");
    let countdown = json!({"jsonrpc": "2.0", "id": 3, "method": "tools/call",
        "params": {"name": "countdown", "arguments": {"steps": 2, "interval_ms": 1}, "_meta": m}});
    let res = conn.open(conn.request(&countdown, &[])).await;
    assert_eq!(res.status(), 200, "{version}");
    assert_eq!(
        res.headers()["content-type"],
        "text/event-stream",
        "{version}"
    );
    let bytes = res.into_body().collect().await.expect("body").to_bytes();
    let events = super::client::sse_events(&String::from_utf8_lossy(&bytes));
    assert_eq!(
        events.first().map(|e| &e["method"]),
        Some(&json!("notifications/progress"))
    );
    assert_eq!(
        events.last().map(|e| &e["result"]["content"][0]["text"]),
        Some(&json!("done after 2 steps"))
    );
    // Errors: an unknown method, a header that disagrees with the body,
    // and a missing `Accept`.
    let unknown =
        json!({"jsonrpc": "2.0", "id": 4, "method": "nope/nope", "params": {"_meta": meta()}});
    let (status, v) = conn.post(&unknown, &[]).await;
    assert_eq!(
        (status.as_u16(), v["error"]["code"].as_i64()),
        (404, Some(-32601)),
        "{version}: {v}"
    );
    let (status, v) = conn
        .post(
            &call_body(json!(5), "echo", json!({"text": "x"})),
            &[("mcp-name", "other")],
        )
        .await;
    assert_eq!(
        (status.as_u16(), v["error"]["code"].as_i64()),
        (400, Some(-32020)),
        "{version}: {v}"
    );
    let (status, _) = conn
        .post(
            &call_body(json!(6), "echo", json!({"text": "x"})),
            &[("accept", "application/json")],
        )
        .await;
    assert_eq!(status, 406, "{version}");
    // A listen stream: the acknowledgment arrives while it stays open.
    let listen = json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta()}});
    let res = conn.open(conn.request(&listen, &[])).await;
    assert_eq!(res.status(), 200, "{version}");
    let mut body = res.into_body();
    read_until(&mut body, "notifications/subscriptions/acknowledged").await;
    drop(body);
}

#[tokio::test(flavor = "multi_thread")]
async fn https_serves_the_same_exchanges_over_http2_and_http1() {
    let dir = temp_dir("exchanges");
    let pki = pki(&dir, "toolwire test CA");
    let (s, _tls) = start(&pki, HttpConfig::new()).await;
    // Offered both, the server picks HTTP/2.
    let mut h2 = connect(s.addr, &pki.ca, &[b"h2", b"http/1.1"])
        .await
        .expect("h2");
    assert!(h2.is_h2(), "ALPN must choose h2");
    exchanges(&mut h2).await;
    // HTTP/2 multiplexes: two calls at once on the one connection.
    let (a, b) = (
        h2.request(&call_body(json!(10), "sleep", json!({"ms": 200})), &[]),
        h2.request(
            &call_body(json!(11), "echo", json!({"text": "beside"})),
            &[],
        ),
    );
    let Sender::H2(sender) = &h2.sender else {
        unreachable!()
    };
    let (mut s1, mut s2) = (sender.clone(), sender.clone());
    let started = std::time::Instant::now();
    let (ra, rb) = tokio::join!(s1.send_request(a), s2.send_request(b));
    assert_eq!(ra.expect("a").status(), 200);
    assert_eq!(rb.expect("b").status(), 200);
    assert!(started.elapsed() < Duration::from_secs(2));

    let mut h1 = connect(s.addr, &pki.ca, &[b"http/1.1"]).await.expect("h1");
    assert!(!h1.is_h2());
    exchanges(&mut h1).await;
    // No ALPN at all: HTTP/1.1.
    let mut plain = connect(s.addr, &pki.ca, &[]).await.expect("no ALPN");
    assert!(!plain.is_h2());
    let (status, _) = plain
        .post(&call_body(json!(1), "echo", json!({"text": "x"})), &[])
        .await;
    assert_eq!(status, 200);
    // Plain HTTP to the HTTPS port is not served.
    let mut raw = TcpStream::connect(s.addr).await.expect("connect");
    let req = super::client::Req::call("echo", json!({"text": "x"}));
    let mut bytes = req.head(s.addr, Some(req.body.len()));
    bytes.extend_from_slice(&req.body);
    tokio::io::AsyncWriteExt::write_all(&mut raw, &bytes)
        .await
        .expect("write");
    let mut answer = Vec::new();
    let _ = tokio::time::timeout(Duration::from_secs(5), raw.read_to_end(&mut answer)).await;
    assert!(!answer.starts_with(b"HTTP/1.1 200"), "{answer:?}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_reload_serves_new_connections_the_new_certificate_and_keeps_old_ones() {
    let dir = temp_dir("reload");
    let old = pki(&dir, "old CA");
    let (s, tls) = start(&old, HttpConfig::new()).await;
    let mut before = connect(s.addr, &old.ca, &[b"h2"]).await.expect("old");
    let mut before_h1 = connect(s.addr, &old.ca, &[b"http/1.1"])
        .await
        .expect("old h1");
    // New files in place, then the reload (what SIGHUP does in `toolwire serve`).
    let new = pki(&dir, "new CA");
    tls.reload().expect("reload");
    assert!(
        connect(s.addr, &old.ca, &[b"h2"]).await.is_err(),
        "a new connection gets the new certificate, which the old CA did not sign"
    );
    let mut after = connect(s.addr, &new.ca, &[b"h2"]).await.expect("new");
    let echo = call_body(json!(1), "echo", json!({"text": "renewed"}));
    assert_eq!(after.post(&echo, &[]).await.0, 200);
    // The connections opened before the reload keep working.
    assert_eq!(before.post(&echo, &[]).await.0, 200);
    assert_eq!(before_h1.post(&echo, &[]).await.0, 200);
    // A failed reload keeps serving the current certificate.
    std::fs::write(&new.key, "garbage").expect("write");
    assert!(tls.reload().is_err());
    assert!(connect(s.addr, &new.ca, &[b"h2"]).await.is_ok());
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_stalled_handshake_times_out_without_holding_up_others() {
    let dir = temp_dir("handshake");
    let pki = pki(&dir, "toolwire test CA");
    let tls = TlsConfig::from_pem_files(&pki.cert, &pki.key)
        .expect("TLS config")
        .with_handshake_timeout(Duration::from_millis(1500));
    let s = TestServer::with(HttpConfig::new().with_tls(tls)).await;
    // A client that connects and never says hello.
    let mut silent = TcpStream::connect(s.addr).await.expect("connect");
    tokio::time::sleep(Duration::from_millis(50)).await;
    // Others are served meanwhile, long before the silent one's handshake
    // times out: the handshake is not on the accept loop.
    let mut conn = tokio::time::timeout(
        Duration::from_millis(700),
        connect(s.addr, &pki.ca, &[b"h2"]),
    )
    .await
    .expect("not held up by the stalled handshake")
    .expect("handshake");
    let (status, _) = conn
        .post(&call_body(json!(1), "echo", json!({"text": "x"})), &[])
        .await;
    assert_eq!(status, 200);
    let mut buf = [0_u8; 16];
    let closed = tokio::time::timeout(Duration::from_secs(5), silent.read(&mut buf)).await;
    assert!(
        matches!(closed, Ok(Ok(0) | Err(_))),
        "the silent connection is closed after the handshake timeout: {closed:?}"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[tokio::test(flavor = "multi_thread")]
async fn handshakes_count_against_the_per_address_connection_cap() {
    let dir = temp_dir("caps");
    let pki = pki(&dir, "toolwire test CA");
    let (s, _tls) = start(&pki, HttpConfig::new().with_max_connections_per_client(1)).await;
    // Holds the address's one connection while its handshake is pending.
    let _silent = TcpStream::connect(s.addr).await.expect("connect");
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(
        connect(s.addr, &pki.ca, &[b"h2"]).await.is_err(),
        "a second connection from the address is closed"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[cfg(feature = "client")]
#[tokio::test(flavor = "multi_thread")]
async fn toolwire_client_calls_over_https_with_a_private_ca() {
    let dir = temp_dir("client");
    let pki = pki(&dir, "toolwire test CA");
    let (s, _tls) = start(&pki, HttpConfig::new()).await;
    let client = toolwire::Client::builder()
        .with_ca_pem(pki.ca_pem.clone())
        .connect_http(&format!("https://localhost:{}/mcp", s.addr.port()))
        .expect("client");
    let result = client
        .call_tool("echo", json!({"text": "via toolwire"}))
        .await
        .expect("call");
    assert_eq!(
        serde_json::to_value(&result).expect("json")["content"][0]["text"],
        "via toolwire"
    );
    assert!(
        client
            .list_tools()
            .await
            .expect("list")
            .iter()
            .any(|t| t.name == "echo")
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

impl Conn {
    /// Whether the server has closed the connection.
    fn is_closed(&self) -> bool {
        match &self.sender {
            Sender::H1(s) => s.is_closed(),
            Sender::H2(s) => s.is_closed(),
        }
    }

    /// Waits up to `limit` for the server to close the connection; how
    /// long it took, if it did.
    async fn closed_within(&self, limit: Duration) -> Option<Duration> {
        let started = std::time::Instant::now();
        while started.elapsed() < limit {
            if self.is_closed() {
                return Some(started.elapsed());
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        None
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn an_idle_http2_connection_is_closed_after_the_read_timeout_as_http1_is() {
    let dir = temp_dir("idle");
    let pki = pki(&dir, "toolwire test CA");
    let idle = Duration::from_millis(700);
    let (s, _tls) = start(&pki, HttpConfig::new().with_read_timeout(idle)).await;
    let echo = call_body(json!(1), "echo", json!({"text": "x"}));
    for alpn in [&b"h2"[..], b"http/1.1"] {
        let mut conn = connect(s.addr, &pki.ca, &[alpn]).await.expect("connect");
        assert_eq!(conn.is_h2(), alpn == b"h2");
        // A call that takes longer than the idle timeout: its stream keeps
        // the connection open.
        let slow = call_body(json!(2), "sleep", json!({"ms": 1200}));
        assert_eq!(conn.post(&slow, &[]).await.0, 200, "{alpn:?}");
        assert!(!conn.is_closed(), "{alpn:?}: closed while a call ran");
        assert_eq!(conn.post(&echo, &[]).await.0, 200, "{alpn:?}");
        // Then nothing: closed after about the idle timeout, not before.
        let took = conn
            .closed_within(Duration::from_secs(5))
            .await
            .unwrap_or_else(|| panic!("{alpn:?}: the idle connection stayed open"));
        assert!(
            took >= idle - Duration::from_millis(200),
            "{alpn:?}: closed after {took:?}, before the idle timeout"
        );
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[tokio::test(flavor = "multi_thread")]
async fn an_open_http2_stream_keeps_its_connection_and_a_reset_one_does_not() {
    let dir = temp_dir("idle-stream");
    let pki = pki(&dir, "toolwire test CA");
    let idle = Duration::from_millis(500);
    let config = HttpConfig::new()
        .with_read_timeout(idle)
        .with_sse_keep_alive(None);
    let (s, _tls) = start(&pki, config).await;
    let mut conn = connect(s.addr, &pki.ca, &[b"h2"]).await.expect("h2");
    let listen = json!({"jsonrpc": "2.0", "id": 7, "method": "subscriptions/listen",
        "params": {"notifications": {"toolsListChanged": true}, "_meta": meta()}});
    let res = conn.open(conn.request(&listen, &[])).await;
    assert_eq!(res.status(), 200);
    let mut body = res.into_body();
    read_until(&mut body, "notifications/subscriptions/acknowledged").await;
    // Silent for three idle timeouts (no keep-alive comments), yet open.
    tokio::time::sleep(idle * 3).await;
    assert!(!conn.is_closed(), "closed under an open listen stream");
    let echo = call_body(json!(1), "echo", json!({"text": "x"}));
    assert_eq!(conn.post(&echo, &[]).await.0, 200);
    // The client resets the stream: the connection is idle from then on.
    drop(body);
    assert!(
        conn.closed_within(Duration::from_secs(5)).await.is_some(),
        "the connection outlived its last stream by more than the idle timeout"
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[tokio::test(flavor = "multi_thread")]
async fn http2_streams_per_connection_are_bounded_by_the_client_share() {
    let dir = temp_dir("streams");
    let pki = pki(&dir, "toolwire test CA");
    let (s, _tls) = start(&pki, HttpConfig::new().with_max_requests_per_client(2)).await;
    let mut conn = connect(s.addr, &pki.ca, &[b"h2"]).await.expect("h2");
    // One exchange first, so the client has the server's SETTINGS (a
    // stream opened before them may be refused, REFUSED_STREAM).
    let echo = call_body(json!(0), "echo", json!({"text": "x"}));
    assert_eq!(conn.post(&echo, &[]).await.0, 200);
    let Sender::H2(sender) = &conn.sender else {
        unreachable!("h2 was offered alone")
    };
    // Three slow calls at once on one connection: the server allows two
    // open streams, so the client holds the third back until one ends
    // (instead of the server refusing it over the client's share).
    let started = std::time::Instant::now();
    let calls = (0..3).map(|i| {
        let mut sender = sender.clone();
        let req = conn.request(&call_body(json!(i), "sleep", json!({"ms": 400})), &[]);
        async move {
            sender.ready().await.expect("ready");
            sender.send_request(req).await.expect("response").status()
        }
    });
    let statuses = futures_util::future::join_all(calls).await;
    assert!(statuses.iter().all(|s| *s == 200), "{statuses:?}");
    assert!(
        started.elapsed() >= Duration::from_millis(780),
        "three 400 ms calls with two streams take two rounds: {:?}",
        started.elapsed()
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}
