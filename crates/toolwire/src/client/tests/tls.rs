//! HTTPS: the real MCP server behind a small rustls test server (a CA made
//! with rcgen at test time), reached with the CA added to the client; HTTP/2
//! over ALPN; and refusals that say why (unknown issuer, name mismatch,
//! expiry).

use super::server::{server, text};
use crate::client::{ClientBuilder, ClientError, ProtocolEra, ProtocolMode};
use crate::{HttpConfig, HttpService};
use hyper_util::rt::{TokioExecutor, TokioIo};
use rcgen::{
    BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose,
    date_time_ymd,
};
use rustls::pki_types::{CertificateDer, PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::json;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex};
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;

/// A CA: its PEM and what signs leaves with it.
struct Ca {
    pem: String,
    params: CertificateParams,
    key: KeyPair,
}

fn ca(name: &str) -> Ca {
    let key = KeyPair::generate().expect("CA key");
    let mut params = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    params.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    params.distinguished_name.push(DnType::CommonName, name);
    params.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::CrlSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let cert = params.self_signed(&key).expect("CA cert");
    Ca {
        pem: cert.pem(),
        params,
        key,
    }
}

/// A leaf for `names`, signed by `ca`; `expired` makes it end in 2020.
fn leaf(
    ca: &Ca,
    names: &[&str],
    expired: bool,
) -> (CertificateDer<'static>, PrivateKeyDer<'static>) {
    let key = KeyPair::generate().expect("leaf key");
    let names: Vec<String> = names.iter().map(|n| (*n).to_owned()).collect();
    let mut params = CertificateParams::new(names).expect("leaf params");
    params
        .distinguished_name
        .push(DnType::CommonName, "toolwire test server");
    if expired {
        params.not_before = date_time_ymd(2019, 1, 1);
        params.not_after = date_time_ymd(2020, 1, 1);
    }
    let issuer = Issuer::from_params(&ca.params, &ca.key);
    let cert = params.signed_by(&key, &issuer).expect("leaf cert");
    let key = PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der()));
    (cert.der().clone(), key)
}

/// Serves the test MCP server over TLS with `cert`, offering `alpn`;
/// records the protocol each connection negotiated.
async fn serve_tls(
    cert: (CertificateDer<'static>, PrivateKeyDer<'static>),
    alpn: &[&[u8]],
) -> (SocketAddr, Arc<Mutex<Vec<Option<Vec<u8>>>>>) {
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(vec![cert.0], cert.1)
        .expect("server cert");
    config.alpn_protocols = alpn.iter().map(|p| p.to_vec()).collect();
    let acceptor = TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let negotiated = Arc::new(Mutex::new(Vec::new()));
    let seen = Arc::clone(&negotiated);
    let service = HttpService::new(server(60_000, Arc::default()), HttpConfig::new());
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let acceptor = acceptor.clone();
            let service = service.clone();
            let seen = Arc::clone(&seen);
            tokio::spawn(async move {
                // A refused handshake ends here: the client saw why.
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let alpn = tls.get_ref().1.alpn_protocol().map(<[u8]>::to_vec);
                seen.lock().expect("seen").push(alpn);
                let _ = hyper_util::server::conn::auto::Builder::new(TokioExecutor::new())
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (addr, negotiated)
}

#[tokio::test]
async fn https_with_an_added_ca_speaks_http2_when_offered() {
    let ca = ca("toolwire test CA");
    let cert = leaf(&ca, &["localhost", "127.0.0.1"], false);
    let (addr, negotiated) = serve_tls(cert, &[b"h2", b"http/1.1"]).await;
    let url = format!("https://localhost:{}/mcp", addr.port());
    let client = ClientBuilder::new()
        .with_ca_pem(ca.pem.as_bytes())
        .connect_http(&url)
        .expect("client");
    assert_eq!(client.list_tools().await.expect("list").len(), 5);
    let r = client
        .call_tool("echo", json!({"text": "over TLS"}))
        .await
        .expect("echo");
    assert_eq!(text(&r), "over TLS");
    assert_eq!(client.era(), Some(ProtocolEra::Modern));
    let seen = negotiated.lock().expect("seen").clone();
    assert!(!seen.is_empty());
    assert!(
        seen.iter().all(|p| p.as_deref() == Some(b"h2".as_slice())),
        "{seen:?}"
    );

    // An IP address in the URL matches the certificate's IP name.
    let url = format!("https://127.0.0.1:{}/mcp", addr.port());
    let client = ClientBuilder::new()
        .with_ca_pem(ca.pem.as_bytes())
        .connect_http(&url)
        .expect("client");
    client.discover().await.expect("discover by IP");
}

#[tokio::test]
async fn http1_when_the_server_offers_only_that_and_legacy_sessions_work_too() {
    let ca = ca("toolwire test CA");
    let cert = leaf(&ca, &["localhost"], false);
    let (addr, negotiated) = serve_tls(cert, &[b"http/1.1"]).await;
    let url = format!("https://localhost:{}/mcp", addr.port());
    let client = ClientBuilder::new()
        .with_protocol_mode(ProtocolMode::Legacy)
        .with_ca_pem(ca.pem.as_bytes())
        .connect_http(&url)
        .expect("client");
    assert_eq!(client.list_tools().await.expect("list").len(), 5);
    assert_eq!(client.era(), Some(ProtocolEra::Legacy));
    client.close().await.expect("close");
    let seen = negotiated.lock().expect("seen").clone();
    assert!(
        seen.iter()
            .all(|p| p.as_deref() == Some(b"http/1.1".as_slice())),
        "{seen:?}"
    );
}

async fn refusal(ca_pem: &str, cert: (CertificateDer<'static>, PrivateKeyDer<'static>)) -> String {
    let (addr, _) = serve_tls(cert, &[b"h2", b"http/1.1"]).await;
    let url = format!("https://localhost:{}/mcp", addr.port());
    let client = ClientBuilder::new()
        .with_ca_pem(ca_pem.as_bytes())
        .connect_http(&url)
        .expect("client");
    let err = client.list_tools().await.expect_err("refused");
    assert!(matches!(err, ClientError::Tls(_)), "{err:?}");
    err.to_string()
}

#[tokio::test]
async fn refusals_say_why() {
    let ca = ca("toolwire test CA");
    let other = ca_other();
    let msg = refusal(&other.pem, leaf(&ca, &["localhost"], false)).await;
    assert!(msg.contains("unknown issuer"), "{msg}");
    let msg = refusal(&ca.pem, leaf(&ca, &["example.test"], false)).await;
    assert!(
        msg.contains("not valid for the name \"localhost\""),
        "{msg}"
    );
    let msg = refusal(&ca.pem, leaf(&ca, &["localhost"], true)).await;
    assert!(msg.contains("expired"), "{msg}");
}

fn ca_other() -> Ca {
    ca("some other CA")
}

#[test]
fn an_unusable_ca_is_refused_when_connecting() {
    let err = ClientBuilder::new()
        .with_ca_pem("not a certificate")
        .connect_http("https://localhost/mcp")
        .expect_err("no PEM");
    assert!(matches!(err, ClientError::Tls(_)), "{err}");
    assert!(err.to_string().contains("PEM"), "{err}");
}
