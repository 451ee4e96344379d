//! How the user takes part in authorization: the [`Redirect`] trait, and
//! [`LoopbackRedirect`], which receives the authorization response on a
//! listener on 127.0.0.1 (RFC 8252 §7.3).

use super::error::AuthError;
use bytes::Bytes;
use futures_util::future::BoxFuture;
use http::{Response, StatusCode};
use http_body_util::Full;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::sync::mpsc;
use url::Url;

/// Sends the user to the authorization server and brings the response
/// back.
pub trait Redirect: Send + Sync + 'static {
    /// Gets ready for one authorization response (for example binds a
    /// listener) and says where the authorization server must send it.
    fn prepare(&self) -> BoxFuture<'_, Result<Box<dyn RedirectWait>, AuthError>>;
}

/// One authorization in progress.
pub trait RedirectWait: Send {
    /// The `redirect_uri` to register and send.
    fn redirect_uri(&self) -> &str;

    /// Sends the user to `authorization_url` and waits for the response:
    /// the URL the authorization server redirected to, whose query holds
    /// `code` and `state` (or `error`), and perhaps `iss`.
    fn wait(self: Box<Self>, authorization_url: Url) -> BoxFuture<'static, Result<Url, AuthError>>;
}

type OnUrl = Arc<dyn Fn(&Url) + Send + Sync>;

/// Receives the authorization response on `http://127.0.0.1:PORT/callback`,
/// a fresh random port per authorization. The authorization URL is handed
/// to a callback (the CLI prints it and opens a browser).
#[derive(Clone)]
pub struct LoopbackRedirect {
    on_url: OnUrl,
    timeout: Duration,
}

impl fmt::Debug for LoopbackRedirect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LoopbackRedirect")
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

impl LoopbackRedirect {
    /// Calls `on_url` with each authorization URL the user must open;
    /// waits up to 5 minutes for the response.
    pub fn new(on_url: impl Fn(&Url) + Send + Sync + 'static) -> Self {
        Self {
            on_url: Arc::new(on_url),
            timeout: Duration::from_secs(300),
        }
    }

    /// How long to wait for the user (at least a second).
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = timeout.max(Duration::from_secs(1));
        self
    }
}

impl Redirect for LoopbackRedirect {
    fn prepare(&self) -> BoxFuture<'_, Result<Box<dyn RedirectWait>, AuthError>> {
        Box::pin(async move {
            let listener = TcpListener::bind(("127.0.0.1", 0))
                .await
                .map_err(|e| AuthError::Redirect(format!("cannot listen on 127.0.0.1: {e}")))?;
            let port = listener
                .local_addr()
                .map_err(|e| AuthError::Redirect(e.to_string()))?
                .port();
            Ok(Box::new(LoopbackWait {
                listener,
                uri: format!("http://127.0.0.1:{port}/callback"),
                on_url: self.on_url.clone(),
                timeout: self.timeout,
            }) as Box<dyn RedirectWait>)
        })
    }
}

struct LoopbackWait {
    listener: TcpListener,
    uri: String,
    on_url: OnUrl,
    timeout: Duration,
}

/// Most connections served while waiting, so that a local process cannot
/// keep the listener busy forever.
const MAX_CONNECTIONS: usize = 64;

impl RedirectWait for LoopbackWait {
    fn redirect_uri(&self) -> &str {
        &self.uri
    }

    fn wait(self: Box<Self>, authorization_url: Url) -> BoxFuture<'static, Result<Url, AuthError>> {
        Box::pin(async move {
            let Self {
                listener,
                uri,
                on_url,
                timeout,
            } = *self;
            (on_url)(&authorization_url);
            let (tx, mut rx) = mpsc::channel::<Url>(1);
            let serve = async {
                for _ in 0..MAX_CONNECTIONS {
                    let Ok((stream, _)) = listener.accept().await else {
                        continue;
                    };
                    let tx = tx.clone();
                    let base = uri.clone();
                    tokio::spawn(async move {
                        let service = service_fn(
                            move |req: http::Request<hyper::body::Incoming>| {
                                let tx = tx.clone();
                                let base = base.clone();
                                async move {
                                    let is_callback = req.uri().path() == "/callback";
                                    let url = Url::parse(&base).ok().filter(|_| is_callback).map(
                                        |mut u| {
                                            u.set_query(req.uri().query());
                                            u
                                        },
                                    );
                                    let (status, text) = match url {
                                        Some(u) => {
                                            let _ = tx.try_send(u);
                                            (
                                                StatusCode::OK,
                                                "toolwire: authorization received; you can close this window.",
                                            )
                                        }
                                        None => (StatusCode::NOT_FOUND, "not found"),
                                    };
                                    let mut response = Response::new(Full::new(
                                        Bytes::from_static(text.as_bytes()),
                                    ));
                                    *response.status_mut() = status;
                                    Ok::<_, std::convert::Infallible>(response)
                                }
                            },
                        );
                        let _ = http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
                std::future::pending::<()>().await;
            };
            tokio::select! {
                url = rx.recv() => url.ok_or_else(|| AuthError::Redirect("the listener stopped".into())),
                () = serve => Err(AuthError::Redirect("the listener stopped".into())),
                () = tokio::time::sleep(timeout) => Err(AuthError::Redirect(format!(
                    "no authorization response within {timeout:?}"
                ))),
            }
        })
    }
}
