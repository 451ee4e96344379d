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
//! answers (`shim.rs`). The pipeline knows a session only as the
//! `server::LegacySession` it implements (`shim.rs`): the server core does
//! not import this module.

mod convert;
mod negotiate;
mod notifier;
mod session;
mod shim;

pub use negotiate::LEGACY_PROTOCOL_VERSIONS;
pub(crate) use notifier::Notifier;
#[cfg(feature = "http")]
pub(crate) use notifier::StreamQueue;
#[cfg(feature = "http")]
pub(crate) use session::MayRead;
pub(crate) use session::Session;

use crate::server::{InitializeParams, LegacySession, Server};
use bytes::Bytes;
use std::sync::Arc;
use toolwire_proto::{RequestId, encode_result as encode};

/// Opens a legacy session for a legacy `initialize`: the negotiated
/// version, the client's capabilities and info. Returns the session, for
/// the transport to keep (the stdio process's one session, or an HTTP
/// session under a minted id), and the encoded `initialize` response.
///
/// Spec (2025-11-25): basic/lifecycle.mdx#initialization
pub(crate) fn open(
    server: &Server,
    id: &RequestId,
    init: InitializeParams,
) -> (Arc<Session>, Bytes) {
    let version = negotiate::negotiate(&init.requested);
    let session = Arc::new(Session::new(version, init.capabilities, init.client_info));
    let reply = encode(id, &negotiate::initialize_result(server, version));
    (session, Bytes::from(reply))
}

/// `session` as the pipeline sees it: what `Server::accept` takes, to
/// serve the session's requests.
pub(crate) fn for_pipeline(session: &Arc<Session>) -> Arc<dyn LegacySession> {
    Arc::clone(session) as Arc<dyn LegacySession>
}
