//! `--cacert` over the real binary: an MCP server behind a small rustls
//! test server whose CA is made with rcgen at test time.

use super::features::run;
use rcgen::{BasicConstraints, CertificateParams, DnType, IsCa, Issuer, KeyPair, KeyUsagePurpose};
use rustls::pki_types::{PrivateKeyDer, PrivatePkcs8KeyDer};
use serde_json::{Value, json};
use std::sync::Arc;
use tokio::net::TcpListener;
use tokio_rustls::TlsAcceptor;
use toolwire::{HttpConfig, HttpService, Server, ServerConfig, Tool};

/// Starts an HTTPS MCP server with an `echo` tool; returns its port and the
/// CA's PEM.
async fn https_server() -> (u16, String) {
    let ca_key = KeyPair::generate().expect("CA key");
    let mut ca = CertificateParams::new(Vec::<String>::new()).expect("CA params");
    ca.is_ca = IsCa::Ca(BasicConstraints::Unconstrained);
    ca.distinguished_name
        .push(DnType::CommonName, "toolwire CLI test CA");
    ca.key_usages = vec![
        KeyUsagePurpose::KeyCertSign,
        KeyUsagePurpose::DigitalSignature,
    ];
    let ca_pem = ca.self_signed(&ca_key).expect("CA cert").pem();
    let key = KeyPair::generate().expect("leaf key");
    let leaf = CertificateParams::new(vec!["localhost".to_owned()])
        .expect("leaf params")
        .signed_by(&key, &Issuer::from_params(&ca, &ca_key))
        .expect("leaf");
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let mut config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .expect("versions")
        .with_no_client_auth()
        .with_single_cert(
            vec![leaf.der().clone()],
            PrivateKeyDer::Pkcs8(PrivatePkcs8KeyDer::from(key.serialize_der())),
        )
        .expect("server cert");
    config.alpn_protocols = vec![b"h2".to_vec(), b"http/1.1".to_vec()];
    let acceptor = TlsAcceptor::from(Arc::new(config));

    let server = Server::new(ServerConfig::new("tls-test", "1.0.0"));
    server
        .add_tool(
            Tool::builder("echo")
                .input_schema(json!({"type": "object", "properties": {"text": {"type": "string"}}}))
                .handler(
                    |v: Value, _| async move { v["text"].as_str().unwrap_or_default().to_owned() },
                )
                .expect("echo"),
        )
        .expect("add echo");
    let service = HttpService::new(server, HttpConfig::new());
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let port = listener.local_addr().expect("addr").port();
    tokio::spawn(async move {
        while let Ok((tcp, _)) = listener.accept().await {
            let (acceptor, service) = (acceptor.clone(), service.clone());
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let _ = hyper_util::server::conn::auto::Builder::new(
                    hyper_util::rt::TokioExecutor::new(),
                )
                .serve_connection(hyper_util::rt::TokioIo::new(tls), service)
                .await;
            });
        }
    });
    (port, ca_pem)
}

#[tokio::test]
async fn cacert_lets_the_client_trust_a_private_ca() {
    let (port, ca_pem) = https_server().await;
    let url = format!("https://localhost:{port}/mcp");
    let file =
        std::env::temp_dir().join(format!("toolwire-cacert-{}-{port}.pem", std::process::id()));
    std::fs::write(&file, &ca_pem).expect("write the CA");
    let cacert = file.to_str().expect("utf-8 path");
    let (ok, out, err) = run(&["call", "--cacert", cacert, &url, "echo", "text=secure"]).await;
    assert!(ok, "{err}");
    assert_eq!(out, "secure\n");
    // Without it, the refusal says why.
    let (ok, _, err) = run(&["list", &url]).await;
    assert!(!ok);
    assert!(err.contains("unknown issuer"), "{err}");
    assert!(err.contains("--cacert"), "{err}");
    let _ = std::fs::remove_file(&file);
    let (ok, _, err) = run(&["list", "--cacert", "/nonexistent/ca.pem", &url]).await;
    assert!(!ok);
    assert!(err.contains("/nonexistent/ca.pem"), "{err}");
}
