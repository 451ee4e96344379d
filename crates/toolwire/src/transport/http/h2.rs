//! HTTP/2 connections (feature `tls`, chosen through ALPN): the same idle
//! timeout an HTTP/1.1 connection gets, keep-alive pings, and the streams
//! one connection may have open bounded by the client's request share.
//!
//! HTTP/1.1 closes a connection that sends no request head within
//! [`HttpConfig::read_timeout`] (hyper's header read timeout, which also
//! runs between requests). HTTP/2 has no such timer in hyper, so
//! [`Activity`] counts the connection's open streams (from the request
//! head until the response body ends or the stream is reset) and the
//! connection is shut down gracefully (`GOAWAY`) once it has had none for
//! the read timeout.

use super::body::HttpBody;
use super::{HttpConfig, HttpService};
use bytes::Bytes;
use http::{Request, Response};
use http_body::{Body, Frame, SizeHint};
use hyper::server::conn::http2;
use hyper_util::rt::{TokioExecutor, TokioTimer};
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, AtomicUsize, Ordering};
use std::task::{Context, Poll};
use std::time::Duration;
use tokio::sync::Notify;
use tokio::time::Instant;

/// The most streams one HTTP/2 connection may have open at once, whatever
/// the per-client request share (hyper's own default is 200).
const MAX_STREAMS: usize = 256;

/// The HTTP/2 settings for `config`: streams per connection bounded by
/// the per-client request share, a keep-alive ping every read timeout
/// that must be answered within it, and hyper's timer.
pub(super) fn builder(config: &HttpConfig) -> http2::Builder<TokioExecutor> {
    let mut builder = http2::Builder::new(TokioExecutor::new());
    let streams = config.max_requests_per_client.clamp(1, MAX_STREAMS);
    builder
        .timer(TokioTimer::new())
        .max_concurrent_streams(u32::try_from(streams).unwrap_or(u32::MAX))
        .keep_alive_interval(config.read_timeout)
        .keep_alive_timeout(config.read_timeout);
    builder
}

/// The open streams of one connection, and since when it has had none.
#[derive(Debug)]
pub(super) struct Activity {
    open: AtomicUsize,
    /// When the last stream ended (or the connection began), as
    /// nanoseconds after `epoch`; a new value means new activity.
    idle_since: AtomicU64,
    epoch: Instant,
    ended: Notify,
}

impl Activity {
    pub(super) fn new() -> Arc<Self> {
        Arc::new(Self {
            open: AtomicUsize::new(0),
            idle_since: AtomicU64::new(0),
            epoch: Instant::now(),
            ended: Notify::new(),
        })
    }

    fn nanos_now(&self) -> u64 {
        u64::try_from(self.epoch.elapsed().as_nanos()).unwrap_or(u64::MAX)
    }

    /// Resolves once the connection has had no open stream for `idle`.
    pub(super) async fn idle_for(&self, idle: Duration) {
        loop {
            if self.open.load(Ordering::Acquire) > 0 {
                // The last stream to end stores a permit, so an end between
                // the load and this wait is not missed.
                self.ended.notified().await;
                continue;
            }
            let since = self.idle_since.load(Ordering::Acquire);
            let deadline = self.epoch + Duration::from_nanos(since) + idle;
            tokio::time::sleep_until(deadline).await;
            if self.open.load(Ordering::Acquire) == 0
                && self.idle_since.load(Ordering::Acquire) == since
            {
                return;
            }
        }
    }

    fn begin(self: &Arc<Self>) -> Open {
        self.open.fetch_add(1, Ordering::AcqRel);
        Open(Arc::clone(self))
    }
}

/// One open stream; dropped when its response body ends, or with the
/// request's future when the stream is reset first.
#[derive(Debug)]
struct Open(Arc<Activity>);

impl Drop for Open {
    fn drop(&mut self) {
        let activity = &self.0;
        activity
            .idle_since
            .store(activity.nanos_now(), Ordering::Release);
        if activity.open.fetch_sub(1, Ordering::AcqRel) == 1 {
            activity.ended.notify_one();
        }
    }
}

/// [`HttpService`] for an HTTP/2 connection: each stream counted in the
/// connection's [`Activity`] until its response body is done.
#[derive(Clone)]
pub(super) struct Tracked {
    pub(super) service: HttpService,
    pub(super) activity: Arc<Activity>,
}

impl<B> hyper::service::Service<Request<B>> for Tracked
where
    B: Body + Send + 'static,
    B::Data: Send,
    B::Error: Into<super::BoxError>,
{
    type Response = Response<TrackedBody>;
    type Error = Infallible;
    type Future = Pin<Box<dyn Future<Output = Result<Response<TrackedBody>, Infallible>> + Send>>;

    fn call(&self, req: Request<B>) -> Self::Future {
        let open = self.activity.begin();
        let response = hyper::service::Service::call(&self.service, req);
        Box::pin(async move {
            let res = match response.await {
                Ok(res) => res,
                Err(never) => match never {},
            };
            Ok(res.map(|body| TrackedBody { body, _open: open }))
        })
    }
}

/// A response body that keeps its stream counted as open.
pub(super) struct TrackedBody {
    body: HttpBody,
    _open: Open,
}

impl Body for TrackedBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        Pin::new(&mut self.body).poll_frame(cx)
    }

    fn is_end_stream(&self) -> bool {
        self.body.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.body.size_hint()
    }
}
