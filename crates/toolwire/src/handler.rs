//! What every handler (tool, prompt, resource read) has in common: the one
//! result shape ([`HandlerOutput`]), the conversions a handler's return value
//! goes through ([`IntoHandlerOutput`], [`IntoTypedOutput`]), the one error a
//! handler fails with ([`HandlerError`]), and the boxed future the registries
//! store. The registration error lives beside it, in `handler/registration.rs`.
//!
//! This module sits below `tool`, `prompt`, `resource`, `completion` and
//! `context`: they import it, it imports none of them.

mod registration;

pub use registration::{EntryKind, PromptProblem, RegistrationError, ResourceProblem};

use crate::mrtr::InputRequired;
use serde::Serialize;
use serde_json::{Map, Value};
use std::future::Future;
use std::pin::Pin;
use toolwire_proto::{ErrorCode, ErrorObject};

pub(crate) type BoxFuture<T> = Pin<Box<dyn Future<Output = T> + Send>>;

/// What the erased handler of a registry entry resolves to.
pub(crate) type Handled<T> = Result<HandlerOutput<T>, HandlerError>;

/// What a handler produced: the finished value, or a request for input.
///
/// The same shape serves every kind of handler: `T` is a `CallToolResult`
/// for a tool (see [`ToolResult`](crate::ToolResult)), a `GetPromptResult`
/// for a prompt ([`PromptResult`](crate::PromptResult)), the contents of a
/// read for a resource ([`ResourceResult`](crate::ResourceResult)), and the
/// output type of a tool built with [`output`](crate::ToolBuilder::output).
#[derive(Debug, Clone)]
#[non_exhaustive]
pub enum HandlerOutput<T> {
    /// The request finished with this value.
    Complete(T),
    /// The request needs input from the client first: sent as
    /// `resultType: "input_required"`; the client retries with the answers.
    /// Spec: basic/patterns/mrtr.mdx
    InputRequired(InputRequired),
}

impl<T> From<InputRequired> for HandlerOutput<T> {
    fn from(r: InputRequired) -> Self {
        Self::InputRequired(r)
    }
}

impl<T> HandlerOutput<T> {
    /// Converts the finished value, keeping an input request as it is.
    pub fn map<U>(self, f: impl FnOnce(T) -> U) -> HandlerOutput<U> {
        match self {
            Self::Complete(v) => HandlerOutput::Complete(f(v)),
            Self::InputRequired(ir) => HandlerOutput::InputRequired(ir),
        }
    }
}

/// Values a handler may return, for a handler whose result is a `T`.
///
/// Every kind accepts a [`HandlerOutput<T>`], an [`InputRequired`], and a
/// `Result` of any accepted value whose error converts into
/// [`HandlerError`]. Each kind adds its own values: text, content blocks and
/// `CallToolResult` for tools; text, messages and `GetPromptResult` for
/// prompts; text, bytes and contents for resource reads.
pub trait IntoHandlerOutput<T> {
    /// Converts into the handler's output.
    ///
    /// # Errors
    ///
    /// The handler's failure, when the value is one.
    fn into_handler_output(self) -> Result<HandlerOutput<T>, HandlerError>;
}

impl<T> IntoHandlerOutput<T> for HandlerOutput<T> {
    fn into_handler_output(self) -> Result<HandlerOutput<T>, HandlerError> {
        Ok(self)
    }
}

impl<T> IntoHandlerOutput<T> for InputRequired {
    fn into_handler_output(self) -> Result<HandlerOutput<T>, HandlerError> {
        Ok(HandlerOutput::InputRequired(self))
    }
}

impl<T, R: IntoHandlerOutput<T>, E: Into<HandlerError>> IntoHandlerOutput<T> for Result<R, E> {
    fn into_handler_output(self) -> Result<HandlerOutput<T>, HandlerError> {
        self.map_err(Into::into)?.into_handler_output()
    }
}

/// Values the handler of a tool with a typed output
/// ([`ToolBuilder::output`](crate::ToolBuilder::output)) may return: the
/// output `O` itself, an [`InputRequired`], a [`HandlerOutput<O>`], or a
/// `Result` of `O` or of `HandlerOutput<O>` with a [`HandlerError`].
///
/// A separate trait from [`IntoHandlerOutput`] because Rust cannot have both
/// "every serialisable `O`" and "every `Result`" in one trait (a `Result` can
/// be serialisable too); for the same reason the error of a `Result` here is
/// [`HandlerError`] itself, which also lets `Ok(value)` need no annotation.
/// `?` converts any error that converts into [`HandlerError`].
pub trait IntoTypedOutput<O> {
    /// Converts into the handler's output.
    ///
    /// # Errors
    ///
    /// The handler's failure, when the value is one.
    fn into_typed_output(self) -> Result<HandlerOutput<O>, HandlerError>;
}

impl<O: Serialize> IntoTypedOutput<O> for O {
    fn into_typed_output(self) -> Result<HandlerOutput<O>, HandlerError> {
        Ok(HandlerOutput::Complete(self))
    }
}

impl<O> IntoTypedOutput<O> for InputRequired {
    fn into_typed_output(self) -> Result<HandlerOutput<O>, HandlerError> {
        Ok(HandlerOutput::InputRequired(self))
    }
}

impl<O> IntoTypedOutput<O> for HandlerOutput<O> {
    fn into_typed_output(self) -> Result<HandlerOutput<O>, HandlerError> {
        Ok(self)
    }
}

impl<O> IntoTypedOutput<O> for Result<O, HandlerError> {
    fn into_typed_output(self) -> Result<HandlerOutput<O>, HandlerError> {
        self.map(HandlerOutput::Complete)
    }
}

impl<O> IntoTypedOutput<O> for Result<HandlerOutput<O>, HandlerError> {
    fn into_typed_output(self) -> Result<HandlerOutput<O>, HandlerError> {
        self
    }
}

/// A failure inside a handler.
///
/// The variant decides what the client sees:
/// - [`Failed`](Self::Failed): the handler ran and failed. From a tool, a
///   result with `isError: true` whose text the model can read and act on
///   (Spec: server/tools.mdx#error-handling). A prompt or a resource read has
///   no such result, so there it is a JSON-RPC `-32603` with the text.
/// - [`Protocol`](Self::Protocol): this JSON-RPC error, as it is.
/// - [`NotFound`](Self::NotFound): the request named something that does not
///   exist. From a resource read, `-32602 "Resource not found"` with
///   `data.uri` (Spec: server/resources.mdx#error-handling); elsewhere
///   `-32602 "not found"`.
///
/// `?` converts `std::io::Error`, `serde_json::Error`, any
/// `Box<dyn Error + Send + Sync>` and (with the `anyhow` feature)
/// `anyhow::Error` into [`Failed`](Self::Failed) with the error's message,
/// and an [`ErrorObject`] into [`Protocol`](Self::Protocol).
///
/// # Example
///
/// ```
/// use toolwire::{RequestContext, Tool, ToolError};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Read {
///     path: String,
/// }
///
/// async fn read(input: Read, _cx: RequestContext) -> Result<String, ToolError> {
///     if input.path.contains("..") {
///         // A JSON-RPC error (-32602), not a result the model reads.
///         return Err(ToolError::invalid_params("path must not contain .."));
///     }
///     // An `isError` result with the io::Error's message.
///     let text = tokio::fs::read_to_string(&input.path).await?;
///     // Any other error: say it in words.
///     let first: u64 = text.trim().parse().map_err(ToolError::failed)?;
///     Ok(format!("{}", first * 2))
/// }
///
/// let tool = Tool::builder("double_file").input::<Read>().handler(read).unwrap();
/// # drop(tool);
///
/// // What `?` makes of an io::Error: its message, for the model.
/// let e = ToolError::from(std::io::Error::other("disk full"));
/// assert!(matches!(&e, ToolError::Failed(text) if text == "disk full"));
/// ```
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum HandlerError {
    /// The handler ran and failed; the text says why.
    #[error("{0}")]
    Failed(String),
    /// A protocol-level error, sent as a JSON-RPC error response.
    #[error(transparent)]
    Protocol(ErrorObject),
    /// Nothing exists at what the request named, such as a resource
    /// template whose variables matched but name nothing.
    #[error("not found")]
    NotFound,
}

/// The name tool code reads best with: the same type as [`HandlerError`],
/// whose [`Failed`](HandlerError::Failed) becomes an `isError` result.
pub type ToolError = HandlerError;

impl HandlerError {
    /// A failure with a message (for a tool, the text the model reads).
    pub fn failed(message: impl std::fmt::Display) -> Self {
        Self::Failed(message.to_string())
    }

    /// `-32602`: the request's parameters (a tool's or prompt's arguments)
    /// are unacceptable.
    pub fn invalid_params(message: impl Into<String>) -> Self {
        Self::Protocol(ErrorObject::invalid_params(message))
    }

    /// `-32603` with `message`.
    pub fn internal(message: impl std::fmt::Display) -> Self {
        Self::Protocol(ErrorObject::internal(message.to_string()))
    }

    /// `-32021`: the client lacks capabilities the handler cannot do
    /// without. `capabilities` are top-level client capability names such
    /// as `"sampling"`.
    pub fn missing_capabilities<S: AsRef<str>>(capabilities: &[S]) -> Self {
        Self::Protocol(missing_capabilities_error(capabilities))
    }

    /// The JSON-RPC error this failure is for a handler that has no
    /// `isError` result (a prompt, a resource read).
    pub(crate) fn into_error_object(self) -> ErrorObject {
        match self {
            Self::Failed(text) => ErrorObject::internal(text),
            Self::Protocol(e) => e,
            Self::NotFound => ErrorObject::invalid_params("not found"),
        }
    }
}

impl From<ErrorObject> for HandlerError {
    fn from(e: ErrorObject) -> Self {
        Self::Protocol(e)
    }
}

impl From<std::io::Error> for HandlerError {
    fn from(e: std::io::Error) -> Self {
        Self::failed(e)
    }
}

impl From<serde_json::Error> for HandlerError {
    fn from(e: serde_json::Error) -> Self {
        Self::failed(e)
    }
}

impl From<Box<dyn std::error::Error + Send + Sync>> for HandlerError {
    fn from(e: Box<dyn std::error::Error + Send + Sync>) -> Self {
        Self::failed(e)
    }
}

#[cfg(feature = "anyhow")]
impl From<anyhow::Error> for HandlerError {
    /// The top-level message only (`Display`, not the `{:#}` chain): what a
    /// handler chose to say, not its internals.
    fn from(e: anyhow::Error) -> Self {
        Self::failed(e)
    }
}

/// A duration as the wire's whole milliseconds (`ttlMs`), saturating at
/// `u64::MAX` rather than wrapping.
pub(crate) fn wire_millis(d: std::time::Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

pub(crate) fn missing_capabilities_error<S: AsRef<str>>(capabilities: &[S]) -> ErrorObject {
    let names: Vec<&str> = capabilities.iter().map(AsRef::as_ref).collect();
    let required: Map<String, Value> = names
        .iter()
        .map(|n| ((*n).to_owned(), Value::Object(Map::new())))
        .collect();
    ErrorObject::new(
        ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
        format!("missing required client capability: {}", names.join(", ")),
    )
    .with_data(serde_json::json!({ "requiredCapabilities": required }))
}

#[cfg(test)]
mod tests;
