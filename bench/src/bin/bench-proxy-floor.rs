//! The proxy floor: the cheapest HTTP hop, to judge the gateway row
//! (issue 19) against. No MCP logic and no JSON parsing: each `POST /mcp`
//! is forwarded to `--upstream URL` as is and the answer copied back.
//!
//! It runs on the same bare hyper accept loop as the floor and rmcp
//! servers (multi-thread runtime, keep-alive, `TCP_NODELAY`, one task per
//! connection). Each downstream connection gets its own kept-alive upstream
//! connection, driven by hyper's low-level client (`client::conn::http1`):
//! HTTP/1.1 serves one request at a time per connection, so the two
//! connections move in lockstep and no pool, lock contention or
//! scheduling between them is needed. Forwarded: the request body and its
//! `Content-Type`, `Accept` and `Mcp-*` headers (`MCP-Protocol-Version`,
//! `Mcp-Method`, `Mcp-Name`, ...); copied back: the status, `Content-Type`
//! and the body. An upstream that fails answers 502.
//!
//! ```text
//! bench-proxy-floor --http 127.0.0.1:0 --upstream http://127.0.0.1:PORT/mcp
//! ```

use bytes::Bytes;
use http::header::{ACCEPT, CONTENT_TYPE, HOST};
use http::{HeaderValue, Method, StatusCode, Uri};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use std::convert::Infallible;
use std::future::poll_fn;
use std::io;
use std::sync::{Arc, Mutex, PoisonError};
use tokio::net::TcpStream;
use toolwire_bench::Mode;

/// Where requests go: the upstream's `host:port` (also its `Host` header)
/// and path.
struct Upstream {
    authority: String,
    host: HeaderValue,
    path: Uri,
}

impl Upstream {
    fn parse(url: &str) -> io::Result<Upstream> {
        let bad = || {
            io::Error::other(format!(
                "--upstream: want http://HOST:PORT/PATH, got {url:?}"
            ))
        };
        let uri: Uri = url.parse().map_err(|_| bad())?;
        if uri.scheme_str() != Some("http") {
            return Err(bad());
        }
        let authority = uri.authority().ok_or_else(bad)?.as_str().to_owned();
        let path = uri.path_and_query().map_or("/", |p| p.as_str());
        Ok(Upstream {
            host: HeaderValue::from_str(&authority).map_err(|_| bad())?,
            path: path.parse().map_err(|_| bad())?,
            authority,
        })
    }

    /// A new kept-alive connection, its hyper connection task spawned.
    async fn connect(&self) -> io::Result<SendRequest<Full<Bytes>>> {
        let stream = TcpStream::connect(&self.authority).await?;
        stream.set_nodelay(true)?;
        let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(io::Error::other)?;
        tokio::spawn(async move {
            let _ = conn.await;
        });
        Ok(sender)
    }
}

/// One downstream connection's upstream connection. The mutex is never
/// contended (hyper's HTTP/1.1 server calls the service for one request at
/// a time) and never held across an await.
struct Hop {
    upstream: Arc<Upstream>,
    link: Mutex<Option<SendRequest<Full<Bytes>>>>,
}

impl Hop {
    /// Waits until the upstream connection can take a request, opening a
    /// new one if there is none or it was closed (once).
    async fn ready(&self) -> io::Result<()> {
        let lock = || self.link.lock().unwrap_or_else(PoisonError::into_inner);
        let ok = poll_fn(|cx| match lock().as_mut() {
            Some(s) => s.poll_ready(cx).map(|r| r.is_ok()),
            None => std::task::Poll::Ready(false),
        })
        .await;
        if !ok {
            let fresh = self.upstream.connect().await?;
            *lock() = Some(fresh);
        }
        Ok(())
    }

    async fn forward(&self, req: http::Request<Incoming>) -> http::Response<Full<Bytes>> {
        if req.uri().path() != "/mcp" {
            return status(StatusCode::NOT_FOUND);
        }
        if req.method() != Method::POST {
            return status(StatusCode::METHOD_NOT_ALLOWED);
        }
        let (head, body) = req.into_parts();
        let Ok(body) = body.collect().await else {
            return status(StatusCode::BAD_REQUEST);
        };
        let mut up = http::Request::new(Full::new(body.to_bytes()));
        *up.method_mut() = Method::POST;
        *up.uri_mut() = self.upstream.path.clone();
        let headers = up.headers_mut();
        headers.insert(HOST, self.upstream.host.clone());
        for (name, value) in &head.headers {
            if name == CONTENT_TYPE || name == ACCEPT || name.as_str().starts_with("mcp-") {
                headers.append(name, value.clone());
            }
        }
        if self.ready().await.is_err() {
            return status(StatusCode::BAD_GATEWAY);
        }
        // The returned future does not borrow the sender: the lock is
        // released before it is awaited.
        let sent = match self
            .link
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .as_mut()
        {
            Some(s) => s.send_request(up),
            None => return status(StatusCode::BAD_GATEWAY),
        };
        let Ok(res) = sent.await else {
            return status(StatusCode::BAD_GATEWAY);
        };
        let (head, body) = res.into_parts();
        let Ok(body) = body.collect().await else {
            return status(StatusCode::BAD_GATEWAY);
        };
        let mut out = http::Response::new(Full::new(body.to_bytes()));
        *out.status_mut() = head.status;
        if let Some(ct) = head.headers.get(CONTENT_TYPE) {
            out.headers_mut().insert(CONTENT_TYPE, ct.clone());
        }
        out
    }
}

fn status(code: StatusCode) -> http::Response<Full<Bytes>> {
    let mut res = http::Response::new(Full::new(Bytes::new()));
    *res.status_mut() = code;
    res
}

/// The accept loop of `toolwire_bench::serve_http1`, with one upstream
/// connection opened per downstream connection before it is served.
async fn serve(listener: tokio::net::TcpListener, upstream: Arc<Upstream>) -> io::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let _ = stream.set_nodelay(true);
        let upstream = upstream.clone();
        tokio::spawn(async move {
            let link = match upstream.connect().await {
                Ok(s) => Some(s),
                Err(e) => {
                    eprintln!("bench-proxy-floor: upstream {}: {e}", upstream.authority);
                    None
                }
            };
            let hop = Arc::new(Hop {
                upstream,
                link: Mutex::new(link),
            });
            let svc = hyper::service::service_fn(move |req| {
                let hop = hop.clone();
                async move { Ok::<_, Infallible>(hop.forward(req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), svc)
                .await;
        });
    }
}

fn main() -> io::Result<()> {
    let (mode, rest) = toolwire_bench::parse_mode();
    let url = rest
        .iter()
        .position(|a| a == "--upstream")
        .and_then(|i| rest.get(i + 1))
        .ok_or_else(|| io::Error::other("bench-proxy-floor needs --upstream URL"))?;
    let upstream = Arc::new(Upstream::parse(url)?);
    let Mode::Http(addr) = mode else {
        return Err(io::Error::other("bench-proxy-floor serves --http only"));
    };
    tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?
        .block_on(async move {
            let listener = toolwire_bench::bind(&addr).await?;
            serve(listener, upstream).await
        })
}
