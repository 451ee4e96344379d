//! Answering the server's input requests (MRTR): the [`InputHandler`] trait,
//! its erased form, and the client capabilities the registered handlers
//! imply.
//!
//! Spec: basic/patterns/mrtr.mdx, client/elicitation.mdx,
//! client/sampling.mdx, client/roots.mdx

use futures_util::future::BoxFuture;
use std::future::Future;
use std::sync::Arc;
use toolwire_proto::types::{
    ClientCapabilities, CreateMessageRequest, ElicitRequest, ElicitationCapability,
    ListRootsRequest, RequestMethod, RootsCapability, SamplingCapability,
};

/// Answers one kind of input request the server embeds in an
/// `input_required` result: [`ElicitRequest`] (ask the user),
/// [`CreateMessageRequest`] (ask the model) or [`ListRootsRequest`].
///
/// Register handlers on the [`ClientBuilder`](super::ClientBuilder); the
/// client declares exactly the capabilities of the handlers it has.
/// Closures `Fn(String, M::Params) -> impl Future<Output = Result<M::Result,
/// InputError>>` implement this trait.
///
/// ```
/// use toolwire::{ClientBuilder, InputError};
/// use toolwire::proto::types::{ElicitAction, ElicitRequestParams, ElicitResult};
///
/// let builder = ClientBuilder::new().with_elicitation(
///     |_key: String, _request: ElicitRequestParams| async move {
///         Ok::<_, InputError>(ElicitResult { action: ElicitAction::Decline, content: None })
///     },
/// );
/// assert!(builder.capabilities().elicitation.is_some());
/// ```
pub trait InputHandler<M: RequestMethod>: Send + Sync + 'static {
    /// Answers the request stored under `key` in `inputRequests`.
    fn handle(
        &self,
        key: String,
        params: M::Params,
    ) -> impl Future<Output = Result<M::Result, InputError>> + Send;
}

impl<M, F, Fut> InputHandler<M> for F
where
    M: RequestMethod,
    F: Fn(String, M::Params) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<M::Result, InputError>> + Send,
{
    fn handle(
        &self,
        key: String,
        params: M::Params,
    ) -> impl Future<Output = Result<M::Result, InputError>> + Send {
        self(key, params)
    }
}

/// An input handler that could not answer. The call it belongs to fails
/// with [`ClientError::Input`](super::ClientError::Input) and is not retried.
///
/// A user who declines or cancels an elicitation is not an error: answer
/// with an `ElicitResult` whose action says so.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct InputError {
    message: String,
}

impl InputError {
    /// An error with a message.
    pub fn new(message: impl Into<String>) -> Self {
        Self {
            message: message.into(),
        }
    }

    /// The message.
    pub fn message(&self) -> &str {
        &self.message
    }
}

/// An input handler with its future boxed, so handlers of any type can be
/// stored together.
pub(crate) trait DynInputHandler<M: RequestMethod>: Send + Sync {
    fn call(&self, key: String, params: M::Params) -> BoxFuture<'_, Result<M::Result, InputError>>;
}

impl<M: RequestMethod + 'static, H: InputHandler<M>> DynInputHandler<M> for H
where
    M::Params: Send,
{
    fn call(&self, key: String, params: M::Params) -> BoxFuture<'_, Result<M::Result, InputError>> {
        Box::pin(self.handle(key, params))
    }
}

/// The handlers registered on a client.
#[derive(Clone, Default)]
pub(crate) struct InputHandlers {
    pub(crate) elicit: Option<Arc<dyn DynInputHandler<ElicitRequest>>>,
    pub(crate) elicitation_capability: Option<ElicitationCapability>,
    pub(crate) sampling: Option<Arc<dyn DynInputHandler<CreateMessageRequest>>>,
    pub(crate) sampling_capability: Option<SamplingCapability>,
    pub(crate) roots: Option<Arc<dyn DynInputHandler<ListRootsRequest>>>,
}

impl std::fmt::Debug for InputHandlers {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("InputHandlers")
            .field("elicitation", &self.elicit.is_some())
            .field("sampling", &self.sampling.is_some())
            .field("roots", &self.roots.is_some())
            .finish()
    }
}

impl InputHandlers {
    /// The capabilities these handlers imply: one entry per registered
    /// handler, nothing else.
    ///
    /// Spec: basic/index.mdx#meta — a server must not rely on capabilities
    /// the client did not declare, so the client declares only what it can
    /// answer.
    pub(crate) fn capabilities(&self) -> ClientCapabilities {
        ClientCapabilities {
            elicitation: self
                .elicit
                .as_ref()
                .map(|_| self.elicitation_capability.clone().unwrap_or_default()),
            sampling: self
                .sampling
                .as_ref()
                .map(|_| self.sampling_capability.clone().unwrap_or_default()),
            roots: self.roots.as_ref().map(|_| RootsCapability::default()),
            ..ClientCapabilities::default()
        }
    }
}
