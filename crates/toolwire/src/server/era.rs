//! The protocol era of a request, decided once at the transport's boundary
//! ([`Era`]), and what the pipeline needs from a legacy session
//! ([`LegacySession`]), which `crate::legacy` implements: the pipeline
//! serves both eras without knowing how a legacy session works.

use super::Server;
use super::accept::Prepared;
use super::dispatch::Job;
use super::outcome::Outcome;
use super::shape::Shape;
use crate::context::Outbound;
use crate::handler::BoxFuture;
use std::fmt;
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use toolwire_proto::types::RequestMeta;

/// The protocol era a request is served in, decided once by the transport
/// that read it.
///
/// Spec: basic/versioning.mdx#backward-compatibility-with-initialization-based-versions
/// — a request whose parsed `params._meta` carries
/// `io.modelcontextprotocol/protocolVersion` is served statelessly; a request
/// without it, in a legacy session, is served in that session.
#[derive(Debug, Clone, Default)]
pub(crate) enum Era {
    /// 2026-07-28: stateless, judged on its own `_meta`.
    #[default]
    Modern,
    /// An initialize-based revision, in this session.
    Legacy(Arc<dyn LegacySession>),
}

impl Era {
    /// How results are shaped for this era.
    pub(crate) fn shape(&self) -> Shape {
        match self {
            Self::Modern => Shape::Modern,
            Self::Legacy(session) => Shape::Legacy(session.version()),
        }
    }

    /// The legacy session, if any.
    pub(crate) fn session(&self) -> Option<&Arc<dyn LegacySession>> {
        match self {
            Self::Modern => None,
            Self::Legacy(session) => Some(session),
        }
    }
}

/// A legacy session as the pipeline sees it: what the session supplies to
/// its requests, how their results are shaped, and the work only the
/// legacy revisions have. Only requests of [`Era::Legacy`] reach it, so a
/// modern request never pays for it.
pub(crate) trait LegacySession: fmt::Debug + Send + Sync {
    /// The negotiated protocol version.
    fn version(&self) -> &'static str;

    /// The modern `_meta` a request of the session runs with: the
    /// request's own legacy `_meta` (`own`), plus what the session
    /// negotiated.
    fn request_meta(&self, server: &Server, own: Option<Arc<RequestMeta>>) -> Arc<RequestMeta>;

    /// Serves a method only the legacy revisions have (`initialize` again,
    /// `ping`, `logging/setLevel`, `resources/subscribe`, ...).
    fn serve_method(&self, p: &Prepared) -> Outcome;

    /// Runs a multi-round job (one that may answer `input_required`):
    /// each round's input requests are asked of the client, and the
    /// handler runs again with the answers.
    fn rounds(
        self: Arc<Self>,
        server: Server,
        job: Job,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> BoxFuture<Outcome>;
}
