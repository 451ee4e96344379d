//! The context a handler receives: cancellation, progress, logging, and what
//! the client said about itself on this request.

use bytes::Bytes;
use serde_json::{Value, json};
use std::sync::Arc;
use std::sync::Mutex;
use tokio::sync::mpsc::UnboundedSender;
use tokio_util::sync::CancellationToken;
use toolwire_proto::types::{
    ClientCapabilities, Implementation, LoggingLevel, LoggingMessageNotification,
    NotificationMethod, ProgressNotification, ProgressToken, RequestMeta,
};
use toolwire_proto::{RequestId, encode_notification};

/// Where a request's notifications go: the stdio writer, or the HTTP
/// response stream of this request. Each item is one encoded JSON-RPC message.
pub(crate) type Outbound = UnboundedSender<Bytes>;

/// Per-request context handed to tool handlers.
///
/// Cloning is cheap; clones share the same request.
#[derive(Clone, Debug)]
pub struct RequestContext {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    id: RequestId,
    meta: Arc<RequestMeta>,
    cancel: CancellationToken,
    outbound: Option<Outbound>,
    last_progress: Mutex<Option<f64>>,
}

static EMPTY_CAPS: std::sync::OnceLock<ClientCapabilities> = std::sync::OnceLock::new();

impl RequestContext {
    pub(crate) fn new(
        id: RequestId,
        meta: Arc<RequestMeta>,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Self {
        Self {
            inner: Arc::new(Inner {
                id,
                meta,
                cancel,
                outbound,
                last_progress: Mutex::new(None),
            }),
        }
    }

    /// The JSON-RPC id of the request.
    pub fn request_id(&self) -> &RequestId {
        &self.inner.id
    }

    /// The request's `_meta`, including keys toolwire does not interpret.
    pub fn meta(&self) -> &RequestMeta {
        &self.inner.meta
    }

    /// The capabilities the client declared on this request.
    pub fn client_capabilities(&self) -> &ClientCapabilities {
        self.inner
            .meta
            .client_capabilities
            .as_ref()
            .unwrap_or_else(|| EMPTY_CAPS.get_or_init(ClientCapabilities::default))
    }

    /// The client's self-reported identity, if it sent one.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.inner.meta.client_info.as_ref()
    }

    /// Fires when the client cancels the request or goes away.
    pub fn cancellation(&self) -> &CancellationToken {
        &self.inner.cancel
    }

    /// Whether the request was cancelled.
    pub fn is_cancelled(&self) -> bool {
        self.inner.cancel.is_cancelled()
    }

    /// Resolves when the request is cancelled.
    pub async fn cancelled(&self) {
        self.inner.cancel.cancelled().await;
    }

    /// Whether progress reports reach the client: only when it sent a
    /// `progressToken` and the transport can carry notifications.
    pub fn progress_enabled(&self) -> bool {
        self.inner.outbound.is_some() && self.inner.meta.progress_token.is_some()
    }

    /// Reports progress. A no-op without a `progressToken`, after
    /// cancellation, or when `progress` would go backwards.
    ///
    /// Spec: basic/patterns/progress.mdx — progress MUST increase.
    pub fn report_progress(&self, progress: f64, total: Option<f64>, message: Option<&str>) {
        let (Some(out), Some(token)) = (&self.inner.outbound, &self.inner.meta.progress_token)
        else {
            return;
        };
        if self.is_cancelled() || !progress.is_finite() {
            return;
        }
        {
            let Ok(mut last) = self.inner.last_progress.lock() else {
                return;
            };
            if last.is_some_and(|l| progress <= l) {
                return;
            }
            *last = Some(progress);
        }
        let params = progress_params(token, progress, total, message);
        let msg = encode_notification(ProgressNotification::METHOD, Some(&params));
        let _ = out.send(Bytes::from(msg));
    }

    /// The level the client opted into, if any.
    pub fn log_level(&self) -> Option<LoggingLevel> {
        self.inner.meta.log_level
    }

    /// Whether a message at `level` would be sent.
    ///
    /// Spec: server/utilities/logging.mdx — without a `logLevel` in `_meta`,
    /// the server MUST NOT send log notifications for the request.
    pub fn log_enabled(&self, level: LoggingLevel) -> bool {
        self.inner.outbound.is_some() && self.log_level().is_some_and(|min| level >= min)
    }

    /// Sends a `notifications/message` if `level` is at or above the client's level.
    pub fn log(&self, level: LoggingLevel, logger: Option<&str>, data: impl Into<Value>) {
        if !self.log_enabled(level) || self.is_cancelled() {
            return;
        }
        let Some(out) = &self.inner.outbound else {
            return;
        };
        let mut params = json!({ "level": level, "data": data.into() });
        if let (Some(logger), Some(obj)) = (logger, params.as_object_mut()) {
            obj.insert("logger".into(), Value::String(logger.into()));
        }
        let msg = encode_notification(LoggingMessageNotification::METHOD, Some(&params));
        let _ = out.send(Bytes::from(msg));
    }
}

fn progress_params(
    token: &ProgressToken,
    progress: f64,
    total: Option<f64>,
    message: Option<&str>,
) -> Value {
    let mut params = json!({ "progressToken": token, "progress": progress });
    if let Some(obj) = params.as_object_mut() {
        if let Some(total) = total {
            obj.insert("total".into(), json!(total));
        }
        if let Some(message) = message {
            obj.insert("message".into(), Value::String(message.into()));
        }
    }
    params
}
