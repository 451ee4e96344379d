//! Opaque tokens checked by introspection (feature `auth`), against an
//! authorization server on loopback that answers RFC 7662 slowly (300 ms)
//! and counts what it is asked: identical tokens that arrive together
//! share one introspection, a refused token is not introspected again
//! while its refusal is cached, and introspections beyond the in-flight
//! bound are answered 503 without a request. (The CLI's tests run the
//! same verifier against the real `oidc-provider`.)

use super::client::{Req, Resp, call_body};
use bytes::Bytes;
use http_body_util::{BodyExt as _, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use serde_json::json;
use std::convert::Infallible;
use std::net::SocketAddr;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;
use tokio::net::TcpListener;
use toolwire::{AuthConfig, HttpConfig, IntrospectionVerifier, Server, ServerConfig, Tool};

const RESOURCE: &str = "http://127.0.0.1/mcp";

/// Starts the authorization server; returns its introspection URL and its
/// count of introspection requests. `good` is active, anything else not.
async fn authorization_server() -> (String, Arc<AtomicUsize>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    let asked = Arc::new(AtomicUsize::new(0));
    let count = Arc::clone(&asked);
    tokio::spawn(async move {
        loop {
            let Ok((stream, _)) = listener.accept().await else {
                return;
            };
            let count = Arc::clone(&count);
            let svc = hyper::service::service_fn(move |req: http::Request<Incoming>| {
                let count = Arc::clone(&count);
                async move {
                    count.fetch_add(1, Ordering::SeqCst);
                    let form = req.into_body().collect().await.expect("form").to_bytes();
                    tokio::time::sleep(Duration::from_millis(300)).await;
                    let answer = if form.starts_with(b"token=good&") {
                        json!({"active": true, "aud": RESOURCE, "sub": "user", "exp": 4_000_000_000_u64})
                    } else {
                        json!({"active": false})
                    };
                    Ok::<_, Infallible>(
                        http::Response::builder()
                            .header("content-type", "application/json")
                            .body(Full::new(Bytes::from(answer.to_string())))
                            .expect("response"),
                    )
                }
            });
            tokio::spawn(
                hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(stream), svc),
            );
        }
    });
    (format!("http://{addr}/introspect"), asked)
}

async fn start(endpoint: &str, max_in_flight: usize) -> SocketAddr {
    let verifier = IntrospectionVerifier::new(endpoint, RESOURCE, "toolwire", "secret")
        .expect("verifier")
        .with_max_in_flight(max_in_flight);
    let auth = AuthConfig::new(RESOURCE, verifier).expect("auth");
    let server = Server::new(ServerConfig::new("introspect-it", "0"));
    let echo = Tool::builder("echo")
        .input_schema(json!({"type": "object"}))
        .handler(|_: serde_json::Value, _| async { "ok" })
        .expect("tool");
    server.add_tool(echo).expect("add");
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(toolwire::serve_http_on(
        server,
        listener,
        HttpConfig::new().with_auth(auth),
        std::future::pending::<()>(),
    ));
    addr
}

async fn call(addr: SocketAddr, token: &str) -> Resp {
    Req::post(&call_body(json!(1), "echo", json!({})))
        .set("Authorization", &format!("Bearer {token}"))
        .send(addr)
        .await
}

#[tokio::test(flavor = "multi_thread")]
async fn identical_bad_tokens_are_introspected_once() {
    let (endpoint, asked) = authorization_server().await;
    let addr = start(&endpoint, 16).await;
    // Eight at once: one introspection, shared.
    let together = futures_util::future::join_all((0..8).map(|_| call(addr, "bad-token"))).await;
    for r in &together {
        assert_eq!(r.status, 401, "{}", r.text());
        assert!(
            r.header("www-authenticate")
                .is_some_and(|c| c.contains("the token is not active")),
            "{:?}",
            r.header("www-authenticate")
        );
    }
    assert_eq!(
        asked.load(Ordering::SeqCst),
        1,
        "introspections for 8 at once"
    );
    // Then one after another: the refusal is remembered.
    for _ in 0..5 {
        assert_eq!(call(addr, "bad-token").await.status, 401);
    }
    assert_eq!(asked.load(Ordering::SeqCst), 1, "introspections for 13");
    // A good token is introspected once and then served from the cache.
    for _ in 0..3 {
        let r = call(addr, "good").await;
        assert_eq!(r.status, 200, "{}", r.text());
    }
    assert_eq!(asked.load(Ordering::SeqCst), 2);
}

#[tokio::test(flavor = "multi_thread")]
async fn introspections_beyond_the_in_flight_bound_get_503_without_a_request() {
    let (endpoint, asked) = authorization_server().await;
    let addr = start(&endpoint, 2).await;
    let tokens: Vec<String> = (0..6).map(|i| format!("distinct-{i}")).collect();
    let started = std::time::Instant::now();
    let replies = futures_util::future::join_all(tokens.iter().map(|t| call(addr, t))).await;
    let statuses: Vec<u16> = replies.iter().map(|r| r.status).collect();
    let refused: Vec<&Resp> = replies.iter().filter(|r| r.status == 503).collect();
    assert_eq!(
        statuses.iter().filter(|s| **s == 401).count(),
        2,
        "{statuses:?}"
    );
    assert_eq!(refused.len(), 4, "{statuses:?}");
    for r in refused {
        assert_eq!(r.header("retry-after"), Some("5"));
        assert_eq!(r.code(), -32603, "{}", r.text());
    }
    assert_eq!(
        asked.load(Ordering::SeqCst),
        2,
        "only two introspections ran"
    );
    assert!(started.elapsed() < Duration::from_secs(3));
    // Once those are done, the others are introspected (and refused).
    for t in &tokens {
        assert_eq!(call(addr, t).await.status, 401);
    }
    assert_eq!(asked.load(Ordering::SeqCst), 6);
}
