//! `serve`'s guards over the real binary: `define_tool` over HTTP only
//! with `--allow-define` and bounded when served, `--rate-limit` on stdio
//! and HTTP, and `--tls-cert`/`--tls-key` with the certificate reloaded on
//! SIGHUP while an open connection keeps working.

use super::era::http_server_with;
use super::features::run;
use super::support::{Proc, meta};
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{CertificateDer, ServerName};
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::TcpStream;
use tokio::process::{Child, Command};
use tokio::sync::mpsc;

/// A `tools/call` over HTTP/1.1 on `stream` (kept open); the status and
/// the JSON body.
async fn post<S>(stream: &mut S, port: u16, id: u64, tool: &str, args: Value) -> (u16, Value)
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let body = json!({"jsonrpc": "2.0", "id": id, "method": "tools/call",
        "params": {"name": tool, "arguments": args, "_meta": meta()}})
    .to_string();
    let head = format!(
        "POST /mcp HTTP/1.1\r\nHost: localhost:{port}\r\nContent-Type: application/json\r\nAccept: application/json, text/event-stream\r\nMCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\nMcp-Name: {tool}\r\nContent-Length: {}\r\n\r\n",
        body.len()
    );
    stream.write_all(head.as_bytes()).await.expect("write");
    stream.write_all(body.as_bytes()).await.expect("write");
    let mut buf = Vec::new();
    let mut chunk = [0_u8; 8192];
    let read = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                let head = String::from_utf8_lossy(&buf[..end]).to_ascii_lowercase();
                let len: usize = head
                    .lines()
                    .find_map(|l| l.strip_prefix("content-length:"))
                    .and_then(|v| v.trim().parse().ok())
                    .expect("content-length");
                if buf.len() >= end + 4 + len {
                    let status = head[9..12].parse().expect("status");
                    let body = serde_json::from_slice(&buf[end + 4..end + 4 + len]).expect("JSON");
                    return (status, body);
                }
            }
            let n = stream.read(&mut chunk).await.expect("read");
            assert!(n > 0, "closed: {:?}", String::from_utf8_lossy(&buf));
            buf.extend_from_slice(&chunk[..n]);
        }
    })
    .await;
    read.expect("a response within 10 s")
}

#[tokio::test]
async fn define_tool_is_served_over_http_only_with_allow_define() {
    let (_server, url) = http_server_with(&[]).await;
    let (ok, out, err) = run(&["list", &url]).await;
    assert!(ok, "{err}");
    assert!(!out.contains("define_tool"), "{out}");
    let (ok, _, err) = run(&["call", &url, "define_tool", "name=x", "text=y"]).await;
    assert!(!ok);
    assert!(err.contains("define_tool"), "{err}");
    // Over stdio (one client, its own process) they are served.
    let mut p = Proc::spawn();
    let r = p
        .call(
            1,
            "tools/call",
            json!({"name": "define_tool", "arguments": {"name": "mine", "text": "hi"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "defined mine", "{r}");
}

#[tokio::test]
async fn defined_tools_are_bounded_in_number_and_size() {
    let (_server, url) = http_server_with(&["--allow-define"]).await;
    let port: u16 = url
        .rsplit(':')
        .next()
        .and_then(|p| p.split('/').next())
        .and_then(|p| p.parse().ok())
        .expect("port");
    let mut conn = TcpStream::connect(("127.0.0.1", port))
        .await
        .expect("connect");
    let big = "x".repeat(4097);
    let (status, r) = post(
        &mut conn,
        port,
        1,
        "define_tool",
        json!({"name": "big", "text": big}),
    )
    .await;
    assert_eq!(status, 200);
    assert_eq!(r["result"]["isError"], true, "{r}");
    let (_, r) = post(
        &mut conn,
        port,
        2,
        "define_tool",
        json!({"name": "fits", "text": "x".repeat(4096)}),
    )
    .await;
    assert_ne!(r["result"]["isError"], true, "{r}");
    for n in 1..32 {
        let (_, r) = post(
            &mut conn,
            port,
            10 + n,
            "define_tool",
            json!({"name": format!("t{n}"), "text": "x"}),
        )
        .await;
        assert_ne!(r["result"]["isError"], true, "{n}: {r}");
    }
    let (_, r) = post(
        &mut conn,
        port,
        99,
        "define_tool",
        json!({"name": "one_too_many", "text": "x"}),
    )
    .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(r.to_string().contains("at most 32"), "{r}");
    // Undefining one makes room again.
    let (_, r) = post(&mut conn, port, 100, "undefine_tool", json!({"name": "t1"})).await;
    assert_ne!(r["result"]["isError"], true, "{r}");
    let (_, r) = post(
        &mut conn,
        port,
        101,
        "define_tool",
        json!({"name": "one_too_many", "text": "x"}),
    )
    .await;
    assert_ne!(r["result"]["isError"], true, "{r}");
}

#[tokio::test]
async fn rate_limit_over_stdio_is_per_process_and_off_by_default() {
    let echo = json!({"name": "echo", "arguments": {"text": "hi"}});
    let mut free = Proc::spawn();
    for id in 1..=20 {
        let r = free.call(id, "tools/call", echo.clone()).await;
        assert!(r.get("result").is_some(), "no limit by default: {r}");
    }
    let mut p = Proc::spawn_with(&["--rate-limit", "2/m", "--rate-limit-for", "add=1/m"], &[]);
    for id in 1..=2 {
        let r = p.call(id, "tools/call", echo.clone()).await;
        assert!(r.get("result").is_some(), "{r}");
    }
    let r = p.call(3, "tools/call", echo.clone()).await;
    assert_eq!(r["error"]["code"], -31429, "{r}");
    assert!(
        r["error"]["data"]["retryAfterMs"]
            .as_u64()
            .is_some_and(|ms| ms > 1000),
        "{r}"
    );
    // `add` has its own bucket.
    let add = json!({"name": "add", "arguments": {"a": 1, "b": 2}});
    assert!(
        p.call(4, "tools/call", add.clone())
            .await
            .get("result")
            .is_some()
    );
    assert_eq!(p.call(5, "tools/call", add).await["error"]["code"], -31429);
    // Lists are not limited.
    assert!(
        p.call(6, "tools/list", json!({}))
            .await
            .get("result")
            .is_some()
    );
}

#[tokio::test]
async fn rate_limit_flags_are_checked() {
    for args in [
        &["serve", "--rate-limit", "fast"][..],
        &["serve", "--rate-limit", "0/s"],
        &["serve", "--rate-limit-for", "echo"],
        &["serve", "--tls-cert", "c.pem", "--tls-key", "k.pem"],
        &["serve", "--allow-define"],
    ] {
        let (ok, _, err) = run(args).await;
        assert!(!ok, "{args:?} must be refused");
        assert!(!err.is_empty(), "{args:?}");
    }
    let (_, _, err) = run(&["serve", "--rate-limit", "fast"]).await;
    assert!(err.contains("10/s,20"), "the error shows the syntax: {err}");
}

#[tokio::test]
async fn rate_limit_over_http_answers_429() {
    let (_server, url) = http_server_with(&["--rate-limit", "1/m"]).await;
    let (ok, _, err) = run(&["call", &url, "echo", "text=one"]).await;
    assert!(ok, "{err}");
    let (ok, _, err) = run(&["call", &url, "echo", "text=two"]).await;
    assert!(!ok);
    assert!(
        err.contains("-31429") && err.contains("retry after"),
        "{err}"
    );
}

/// A CA named `name` and a `localhost` certificate it signed, as PEM files
/// in `dir`; the CA's file and DER.
fn pki(dir: &Path, name: &str) -> (PathBuf, CertificateDer<'static>) {
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
    std::fs::write(dir.join("cert.pem"), leaf.pem()).expect("cert");
    std::fs::write(dir.join("key.pem"), key.serialize_pem()).expect("key");
    let ca_file = dir.join(format!("{}.pem", name.replace(' ', "-")));
    std::fs::write(&ca_file, ca_cert.pem()).expect("CA");
    (ca_file, ca_cert.der().clone())
}

/// `toolwire serve --http 127.0.0.1:0 ARGS…`, its port, and its stderr
/// lines from then on.
async fn serve(args: &[&str]) -> (Child, u16, mpsc::UnboundedReceiver<String>) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["serve", "--http", "127.0.0.1:0"])
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let port = tokio::time::timeout(Duration::from_secs(20), async {
        while let Some(line) = lines.next_line().await.expect("line") {
            if let Some(rest) = line.split("https://127.0.0.1:").nth(1) {
                return rest
                    .split('/')
                    .next()
                    .and_then(|p| p.parse().ok())
                    .expect("port");
            }
        }
        panic!("no https URL")
    })
    .await
    .expect("starts in time");
    let (tx, rx) = mpsc::unbounded_channel();
    tokio::spawn(async move {
        while let Ok(Some(line)) = lines.next_line().await {
            let _ = tx.send(line);
        }
    });
    (child, port, rx)
}

/// A TLS connection to `port` trusting only `ca`.
async fn tls_connect(
    port: u16,
    ca: &CertificateDer<'static>,
) -> std::io::Result<tokio_rustls::client::TlsStream<TcpStream>> {
    let mut roots = rustls::RootCertStore::empty();
    roots.add(ca.clone()).expect("root");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_root_certificates(roots)
        .with_no_client_auth();
    let tcp = TcpStream::connect(("127.0.0.1", port)).await?;
    tokio_rustls::TlsConnector::from(Arc::new(config))
        .connect(ServerName::try_from("localhost").expect("name"), tcp)
        .await
}

#[tokio::test]
async fn https_with_the_certificate_reloaded_on_sighup() {
    let dir = std::env::temp_dir().join(format!("toolwire-cli-tls-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("dir");
    let (old_ca_file, old_ca) = pki(&dir, "old CA");
    let cert = dir.join("cert.pem");
    let key = dir.join("key.pem");
    let (child, port, mut stderr) = serve(&[
        "--tls-cert",
        cert.to_str().expect("utf-8"),
        "--tls-key",
        key.to_str().expect("utf-8"),
    ])
    .await;
    let url = format!("https://localhost:{port}/mcp");
    let old_cacert = old_ca_file.to_str().expect("utf-8");
    let (ok, out, err) = run(&["call", "--cacert", old_cacert, &url, "echo", "text=secure"]).await;
    assert!(ok, "{err}");
    assert_eq!(out, "secure\n");
    // A connection opened before the reload.
    let mut before = tls_connect(port, &old_ca).await.expect("old certificate");
    assert_eq!(
        post(&mut before, port, 1, "echo", json!({"text": "a"}))
            .await
            .0,
        200
    );

    let (new_ca_file, new_ca) = pki(&dir, "new CA");
    let pid = child.id().expect("running").to_string();
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    let said = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(line) = stderr.recv().await {
            if line.contains("reloaded the TLS certificate") {
                return;
            }
        }
        panic!("the server stopped")
    })
    .await;
    assert!(said.is_ok(), "no reload line");

    // New connections get the new certificate.
    assert!(tls_connect(port, &old_ca).await.is_err());
    let new_cacert = new_ca_file.to_str().expect("utf-8");
    let (ok, out, err) = run(&["call", "--cacert", new_cacert, &url, "echo", "text=renewed"]).await;
    assert!(ok, "{err}");
    assert_eq!(out, "renewed\n");
    let mut after = tls_connect(port, &new_ca).await.expect("new certificate");
    assert_eq!(
        post(&mut after, port, 1, "echo", json!({"text": "b"}))
            .await
            .0,
        200
    );
    // The old connection was not dropped.
    let (status, r) = post(&mut before, port, 2, "echo", json!({"text": "still"})).await;
    assert_eq!(status, 200);
    assert_eq!(r["result"]["content"][0]["text"], "still");

    // A broken key file: the reload fails, the server says so and keeps
    // serving the current certificate.
    std::fs::write(&key, "not a key").expect("write");
    let status = std::process::Command::new("kill")
        .args(["-HUP", &pid])
        .status()
        .expect("kill");
    assert!(status.success());
    let said = tokio::time::timeout(Duration::from_secs(10), async {
        while let Some(line) = stderr.recv().await {
            if line.contains("keeping the current TLS certificate") {
                return;
            }
        }
    })
    .await;
    assert!(said.is_ok(), "no failure line");
    assert!(tls_connect(port, &new_ca).await.is_ok());
    std::fs::remove_dir_all(&dir).expect("clean up");
}
