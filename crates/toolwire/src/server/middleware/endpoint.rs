//! The Prometheus scrape endpoint of a [`Metrics`]: `GET /metrics` on a
//! listener of its own, never on the MCP endpoint. A handful of
//! connections at once, each with a header deadline, so a scraper that
//! misbehaves cannot hold it.

use super::Metrics;
use bytes::Bytes;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::convert::Infallible;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::Semaphore;

/// Connections served at once; more wait in the listen queue.
const MAX_CONNECTIONS: usize = 16;

/// How long a scraper has to send its request head.
const HEADER_TIMEOUT: Duration = Duration::from_secs(5);

/// Serves `metrics` at `GET /metrics` on `listener` until `shutdown`
/// completes. Any other path is `404`, any other method `405`.
pub async fn serve_metrics(
    metrics: Metrics,
    listener: TcpListener,
    shutdown: impl Future<Output = ()>,
) -> std::io::Result<()> {
    let places = Arc::new(Semaphore::new(MAX_CONNECTIONS));
    tokio::pin!(shutdown);
    loop {
        let place = tokio::select! {
            () = &mut shutdown => return Ok(()),
            place = Arc::clone(&places).acquire_owned() => match place {
                Ok(place) => place,
                Err(_) => return Ok(()),
            },
        };
        let stream = tokio::select! {
            () = &mut shutdown => return Ok(()),
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => stream,
                // A transient failure (out of descriptors): try again shortly.
                Err(e) => {
                    tracing::debug!("metrics endpoint: accept failed: {e}");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
        };
        let metrics = metrics.clone();
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let answer = answer(&metrics, &req);
                async move { Ok::<_, Infallible>(answer) }
            });
            let mut builder = http1::Builder::new();
            builder
                .timer(TokioTimer::new())
                .header_read_timeout(HEADER_TIMEOUT)
                .keep_alive(false);
            let _ = builder
                .serve_connection(TokioIo::new(stream), service)
                .await;
            drop(place);
        });
    }
}

fn answer<B>(metrics: &Metrics, req: &Request<B>) -> Response<Full<Bytes>> {
    let (status, content_type, body) = match (req.method(), req.uri().path()) {
        (&Method::GET, "/metrics") => (
            StatusCode::OK,
            "text/plain; version=0.0.4; charset=utf-8",
            Bytes::from(metrics.render_prometheus()),
        ),
        (_, "/metrics") => (
            StatusCode::METHOD_NOT_ALLOWED,
            "text/plain; charset=utf-8",
            Bytes::from_static(b"Method Not Allowed: GET /metrics\n"),
        ),
        _ => (
            StatusCode::NOT_FOUND,
            "text/plain; charset=utf-8",
            Bytes::from_static(b"Not Found: the metrics are at /metrics\n"),
        ),
    };
    let mut res = Response::new(Full::new(body));
    *res.status_mut() = status;
    if let Ok(v) = header::HeaderValue::from_str(content_type) {
        res.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    res
}
