//! Running [`HttpService`] on a TCP listener: HTTP/1.1 connections (or
//! HTTPS with HTTP/2 beside them, `tls.rs`), a head
//! read timeout, a write timeout, bounded connections (overall and per
//! address), backing off when out of file descriptors, and graceful
//! shutdown with a bounded grace period.

use super::head_timer::HeadTimer;
use super::peers::{self, Kind, Peers};
use super::timed_io::WriteTimeout;
use super::{HttpConfig, HttpService};
use crate::log_limit;
use crate::server::Server;
use crate::watch::Watch;
use hyper::server::conn::http1;
use hyper_util::rt::TokioIo;
use std::future::Future;
use std::future::poll_fn;
use std::io;
use std::pin::{Pin, pin};
use std::sync::Arc;
use std::task::Poll;
use std::time::Duration;
use tokio::net::{TcpListener, ToSocketAddrs};
use tokio::sync::Semaphore;
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
        // Slowloris defence for the head (and the idle time between
        // requests); the body has its own timeout in the service. Each
        // connection gets its own timer (below): one wheel entry per
        // connection rather than one per request.
        .header_read_timeout(service.config().read_timeout)
        .keep_alive(true);
    let stop = CancellationToken::new();
    let closing = service.server().inner.closing.clone();
    let max_connections = service
        .config()
        .max_connections
        .unwrap_or_else(default_max_connections);
    let slots = Arc::new(Semaphore::new(max_connections));
    let per_client = service.config().max_connections_per_client;
    // Every live entry holds a connection or a session.
    let peers = Peers::new(max_connections.saturating_add(service.config().max_sessions));
    let write_timeout = service.config().write_timeout;
    #[cfg(feature = "tls")]
    let tls = service.config().tls.clone();
    let mut backoff = Backoff::default();
    let mut connections = JoinSet::new();
    let mut shutdown = pin!(shutdown);

    loop {
        tokio::select! {
            () = &mut shutdown => break,
            () = closing.cancelled() => break,
            // At the connection limit, new connections wait in the backlog
            // until one closes.
            accepted = accept(&listener, &slots) => match accepted {
                Ok((stream, peer, slot)) => {
                    backoff.reset();
                    let counts = peers.get(peer.ip());
                    let held = counts
                        .as_ref()
                        .and_then(|c| peers::acquire(c, Kind::Connection, per_client));
                    let (Some(counts), Some(held)) = (counts, held) else {
                        // Over its address's share: closed at once.
                        log_limit::warn_limited!(
                            peer = %peer.ip(),
                            "closing connections over the per-address limit"
                        );
                        drop(stream);
                        continue;
                    };
                    // Responses are written whole; waiting for more to
                    // coalesce only adds latency.
                    let _ = stream.set_nodelay(true);
                    let stream = WriteTimeout::new(stream, write_timeout);
                    let stop = stop.clone();
                    // The handshake runs in the connection's task, which
                    // holds its places under the connection caps.
                    #[cfg(feature = "tls")]
                    if let Some(tls) = &tls {
                        let serve = super::tls::serve(
                            tls.clone(),
                            stream,
                            service.for_peer(counts),
                            builder.clone().timer(HeadTimer::new()).clone(),
                            stop,
                        );
                        connections.spawn(async move {
                            let _held = (slot, held);
                            serve.await;
                        });
                        continue;
                    }
                    let conn = builder
                        .clone()
                        .timer(HeadTimer::new())
                        .serve_connection(TokioIo::new(stream), service.for_peer(counts));
                    connections.spawn(async move {
                        let _held = (slot, held);
                        let conn = pin!(conn);
                        let result =
                            until_stopped(conn, &stop, |c| c.graceful_shutdown()).await;
                        if let Err(e) = result {
                            tracing::debug!(error = %e, "HTTP connection ended with an error");
                        }
                    });
                }
                Err(e) => {
                    // Usually out of file descriptors: back off instead of
                    // spinning, and keep serving the open connections.
                    backoff.failed(&e).await;
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

/// Serves a connection to its end. If `stop` fires first, `shutdown` asks
/// it to finish gracefully (its requests in flight are answered), and it is
/// served until it has.
///
/// A busy connection's task is woken for every request: the stop signal
/// is watched without polling its wait at each wake (`crate::watch`).
pub(super) async fn until_stopped<C: Future>(
    mut conn: Pin<&mut C>,
    stop: &CancellationToken,
    shutdown: impl FnOnce(Pin<&mut C>),
) -> C::Output {
    let wait = pin!(stop.cancelled());
    let mut stopped = Watch::new(stop, wait);
    let ended = poll_fn(|cx| {
        if let Poll::Ready(out) = conn.as_mut().poll(cx) {
            return Poll::Ready(Some(out));
        }
        if stopped.fired(cx) {
            return Poll::Ready(None);
        }
        Poll::Pending
    })
    .await;
    match ended {
        Some(out) => out,
        None => {
            shutdown(conn.as_mut());
            conn.await
        }
    }
}

/// Waits for a connection slot, then accepts.
async fn accept(
    listener: &TcpListener,
    slots: &Arc<Semaphore>,
) -> io::Result<(
    tokio::net::TcpStream,
    std::net::SocketAddr,
    tokio::sync::OwnedSemaphorePermit,
)> {
    let slot = Arc::clone(slots)
        .acquire_owned()
        .await
        .map_err(io::Error::other)?;
    let (stream, peer) = listener.accept().await?;
    Ok((stream, peer, slot))
}

/// The connection limit when none is configured: three quarters of the
/// soft file-descriptor limit read now, leaving the rest for files, the
/// listener and the runtime.
fn default_max_connections() -> usize {
    const FALLBACK: usize = 4096;
    const CEILING: usize = 65_536;
    #[cfg(unix)]
    let soft = rustix::process::getrlimit(rustix::process::Resource::Nofile)
        .current
        .and_then(|n| usize::try_from(n).ok());
    #[cfg(not(unix))]
    let soft: Option<usize> = None;
    soft.map_or(FALLBACK, |n| (n / 4 * 3).clamp(1, CEILING))
}

/// The accept loop's back-off on failures. Its log line is rate-limited
/// (`log_limit`): a full fd table must not flood the log.
struct Backoff {
    delay: Duration,
}

impl Default for Backoff {
    fn default() -> Self {
        Self { delay: Self::FIRST }
    }
}

impl Backoff {
    const FIRST: Duration = Duration::from_millis(10);
    const MOST: Duration = Duration::from_secs(1);

    fn reset(&mut self) {
        self.delay = Self::FIRST;
    }

    /// An accept failed: log (rate-limited) and wait, longer each time in a
    /// row (EMFILE/ENFILE clear only when a connection closes).
    async fn failed(&mut self, e: &io::Error) {
        log_limit::warn_limited!(error = %e, "accepting connections failed; backing off");
        tokio::time::sleep(self.delay).await;
        self.delay = (self.delay * 2).min(Self::MOST);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// A connection that is woken often (as a busy one is) and ends only
    /// once asked to shut down.
    struct Busy {
        polls: Arc<AtomicUsize>,
        shutting: bool,
    }

    impl Future for Busy {
        type Output = &'static str;
        fn poll(self: Pin<&mut Self>, cx: &mut std::task::Context<'_>) -> Poll<&'static str> {
            if self.shutting {
                return Poll::Ready("finished gracefully");
            }
            self.polls.fetch_add(1, Ordering::Relaxed);
            cx.waker().wake_by_ref();
            Poll::Pending
        }
    }

    #[tokio::test]
    async fn a_busy_connection_sees_the_stop_and_is_shut_down_gracefully() {
        let stop = CancellationToken::new();
        let polls = Arc::new(AtomicUsize::new(0));
        let serving = tokio::spawn({
            let (stop, polls) = (stop.clone(), Arc::clone(&polls));
            async move {
                let conn = pin!(Busy {
                    polls,
                    shutting: false
                });
                until_stopped(conn, &stop, |mut c| c.shutting = true).await
            }
        });
        // The connection keeps being woken with the same waker, so the
        // stop is seen by its flag, not by a new poll of the wait.
        while polls.load(Ordering::Relaxed) < 100 {
            tokio::task::yield_now().await;
        }
        stop.cancel();
        let ended = tokio::time::timeout(Duration::from_secs(5), serving)
            .await
            .expect("the stop is seen")
            .expect("joined");
        assert_eq!(ended, "finished gracefully");
    }

    /// A connection that never wakes its task itself.
    struct Idle {
        asked: bool,
    }

    impl Future for Idle {
        type Output = ();
        fn poll(self: Pin<&mut Self>, _: &mut std::task::Context<'_>) -> Poll<()> {
            if self.asked {
                Poll::Ready(())
            } else {
                Poll::Pending
            }
        }
    }

    #[tokio::test]
    async fn an_idle_connection_is_woken_by_the_stop() {
        let stop = CancellationToken::new();
        let serving = tokio::spawn({
            let stop = stop.clone();
            async move {
                let conn = pin!(Idle { asked: false });
                until_stopped(conn, &stop, |mut c| c.asked = true).await;
            }
        });
        tokio::time::sleep(Duration::from_millis(20)).await;
        assert!(!serving.is_finished());
        // Only the stop can wake the task now.
        stop.cancel();
        tokio::time::timeout(Duration::from_secs(5), serving)
            .await
            .expect("the stop woke the connection's task")
            .expect("joined");
    }
}
