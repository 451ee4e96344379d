//! Serving the initialize-handshake revisions (2025-11-25, 2025-06-18 and
//! 2025-03-26) beside 2026-07-28, on the same stdio process or HTTP
//! endpoint.
//!
//! Era selection is per request. Spec:
//! basic/versioning.mdx#backward-compatibility-with-initialization-based-versions
//! — a request whose `_meta` carries `io.modelcontextprotocol/protocolVersion`
//! is served statelessly; an `initialize` with the legacy shape opens a
//! legacy session (the stdio process, or the HTTP session it mints), and the
//! other requests of that session are served with legacy semantics.
//!
//! A legacy request runs through the same pipeline as a modern one: the
//! session supplies what a modern request carries in `_meta` (capabilities,
//! client info, the session's log level), and the result is shaped for the
//! legacy schema afterwards (`convert.rs`). A handler written in the MRTR
//! style works unchanged: each `input_required` round becomes real
//! server-to-client requests, and the handler is called again with the
//! answers (`shim.rs`).

mod convert;
mod negotiate;
mod session;
mod shim;

pub use negotiate::LEGACY_PROTOCOL_VERSIONS;
pub(crate) use negotiate::{InitializeParams, initialize_result, negotiate, parse_initialize};
pub(crate) use session::Session;
pub(crate) use shim::serve;

use serde::Deserialize;
use toolwire_proto::meta::PROTOCOL_VERSION_KEY;
use toolwire_proto::types::{CancelledNotification, NotificationMethod as _, removed};
use toolwire_proto::{Notification, Request, RequestId};

/// Whether the request's params mention the modern `_meta` version key: a
/// substring scan of the raw params, no parse. Spec:
/// basic/versioning.mdx#backward-compatibility-with-initialization-based-versions
/// — the presence of `_meta` alone proves nothing (legacy requests carry
/// `_meta.progressToken`).
pub(crate) fn has_modern_meta(req: &Request) -> bool {
    req.params
        .as_ref()
        .is_some_and(|p| p.get().contains(PROTOCOL_VERSION_KEY))
}

/// `initialize` with the legacy shape (`protocolVersion`, `capabilities`),
/// or `None`. A 2026-07-28 `initialize` probe (only `_meta`) is not one and
/// stays on the modern path, where the method does not exist.
pub(crate) fn legacy_initialize(req: &Request) -> Option<InitializeParams> {
    if req.method != removed::INITIALIZE || has_modern_meta(req) {
        return None;
    }
    parse_initialize(req)
}

/// The request a legacy `notifications/cancelled` names, or `None` for any
/// other notification (a modern one included).
pub(crate) fn cancelled_request_id(n: &Notification) -> Option<RequestId> {
    #[derive(Deserialize)]
    #[serde(rename_all = "camelCase")]
    struct Cancelled {
        request_id: RequestId,
    }
    let params = n.params.as_ref()?.get();
    if n.method != CancelledNotification::METHOD || params.contains(PROTOCOL_VERSION_KEY) {
        return None;
    }
    serde_json::from_str::<Cancelled>(params)
        .ok()
        .map(|c| c.request_id)
}
