//! Running [`HttpService`] on a TCP listener: HTTP/1.1 connections, a head
//! read timeout, and graceful shutdown with a bounded grace period.

use super::{HttpConfig, HttpService};
use crate::server::Server;
use hyper::server::conn::http1;
use hyper_util::rt::{TokioIo, TokioTimer};
use std::future::Future;
use std::io;
use std::pin::pin;
use std::time::Duration;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::task::JoinSet;
use tokio_util::sync::CancellationToken;

/// Binds `addr` and serves `server` on it until `shutdown` resolves.
///
/// Bind to a loopback address (such as `127.0.0.1:8080`) for a local server;
/// the default [`HttpConfig`] only accepts local `Host` and `Origin` values.
/// See [`serve_http_on`] for what shutdown does.
///
/// ```no_run
/// use toolwire::{HttpConfig, Server, ServerConfig};
///
/// # async fn run() -> std::io::Result<()> {
/// let server = Server::new(ServerConfig::new("demo", "1.0.0"));
/// let ctrl_c = async { let _ = tokio::signal::ctrl_c().await; };
/// toolwire::serve_http(server, "127.0.0.1:8080", HttpConfig::new(), ctrl_c).await
/// # }
/// ```
pub async fn serve_http<A, F>(
    server: Server,
    addr: A,
    config: HttpConfig,
    shutdown: F,
) -> io::Result<()>
where
    A: ToSocketAddrs,
    F: Future<Output = ()> + Send,
{
    let listener = TcpListener::bind(addr).await?;
    serve_http_on(server, listener, config, shutdown).await
}

/// Serves `server` on an already bound listener until `shutdown` resolves.
///
/// Each connection runs in its own task; requests on it are polled inline.
///
/// When `shutdown` resolves (or [`Server::shutdown`] is called) the listener
/// is closed, the server is shut down (so open `subscriptions/listen`
/// streams end with their closing result), idle connections are closed, and
/// connections with a request in flight finish it and close. Whatever is
/// still running after [`HttpConfig::shutdown_grace`] is dropped, which
/// cancels those requests. The function then returns.
pub async fn serve_http_on<F>(
    server: Server,
    listener: TcpListener,
    config: HttpConfig,
    shutdown: F,
) -> io::Result<()>
where
    F: Future<Output = ()> + Send,
{
    let service = HttpService::new(server, config);
    let grace = service.config().shutdown_grace;
    let mut builder = http1::Builder::new();
    builder
        .timer(TokioTimer::new())
        // Slowloris defence for the head (and the idle time between
        // requests); the body has its own timeout in the service.
        .header_read_timeout(service.config().read_timeout)
        .keep_alive(true);
    let stop = CancellationToken::new();
    let closing = service.server().inner.closing.clone();
    let mut connections = JoinSet::new();
    let mut shutdown = pin!(shutdown);

    loop {
        tokio::select! {
            () = &mut shutdown => break,
            () = closing.cancelled() => break,
            accepted = listener.accept() => match accepted {
                Ok((stream, _peer)) => {
                    // Responses are written whole; waiting for more to
                    // coalesce only adds latency.
                    let _ = stream.set_nodelay(true);
                    let conn = builder.serve_connection(TokioIo::new(stream), service.clone());
                    let stop = stop.clone();
                    connections.spawn(async move {
                        let mut conn = pin!(conn);
                        let result = tokio::select! {
                            result = conn.as_mut() => result,
                            () = stop.cancelled() => {
                                conn.as_mut().graceful_shutdown();
                                conn.await
                            }
                        };
                        if let Err(e) = result {
                            tracing::debug!(error = %e, "HTTP connection ended with an error");
                        }
                    });
                }
                Err(e) => {
                    // Usually out of file descriptors: back off instead of
                    // spinning, and keep serving the open connections.
                    tracing::warn!(error = %e, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            },
            Some(_) = connections.join_next(), if !connections.is_empty() => {}
        }
    }

    drop(listener);
    // Open `subscriptions/listen` streams end with their closing result.
    service.server().shutdown();
    stop.cancel();
    let drained = tokio::time::timeout(grace, async {
        while connections.join_next().await.is_some() {}
    })
    .await;
    if drained.is_err() {
        tracing::info!(
            remaining = connections.len(),
            "shutdown grace period over; cancelling the remaining requests"
        );
        // Aborting drops each connection with its in-flight requests, which
        // fires their cancellation tokens.
        connections.abort_all();
        while connections.join_next().await.is_some() {}
    }
    Ok(())
}
