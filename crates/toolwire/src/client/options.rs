//! [`RequestOptions`]: per-request progress and log callbacks, extra `_meta`,
//! and a timeout; and [`ToolCall`], a `tools/call` with its options.

use crate::bounds::timeout_within_bounds;
use serde_json::{Map, Value};
use std::fmt;
use std::sync::Arc;
use std::time::Duration;
use toolwire_proto::types::{
    ClientCapabilities, InputRequiredResult, InputResponses, JsonObject, LoggingLevel,
    LoggingMessageNotificationParams, ProgressNotificationParams,
};

type ProgressFn = Arc<dyn Fn(&ProgressNotificationParams) + Send + Sync>;
type LogFn = Arc<dyn Fn(&LoggingMessageNotificationParams) + Send + Sync>;

/// Options of one request. Cheap to clone.
#[derive(Clone, Default)]
#[non_exhaustive]
pub struct RequestOptions {
    pub(crate) progress: Option<ProgressFn>,
    pub(crate) log: Option<(LoggingLevel, LogFn)>,
    pub(crate) meta: Map<String, Value>,
    pub(crate) timeout: Option<Duration>,
    /// Sent as `clientCapabilities` instead of the client's own.
    /// Kept typed, and serialized straight into the request: a map of
    /// values in between would cost more than it saves.
    pub(crate) capabilities: Option<Box<ClientCapabilities>>,
    pub(crate) max_time: Option<Duration>,
    /// A `tools/call` that becomes a task returns its handle instead of
    /// following it ([`Client::start_tool`](crate::Client::start_tool)).
    pub(crate) detach_task: bool,
    /// HTTP headers of this request alone, over the client's own of the
    /// same name (its `Authorization` included); ignored on stdio.
    pub(crate) http_headers: Vec<(String, String)>,
}

impl fmt::Debug for RequestOptions {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("RequestOptions")
            .field("progress", &self.progress.is_some())
            .field("log_level", &self.log.as_ref().map(|(l, _)| l))
            .field("meta", &self.meta)
            .field("timeout", &self.timeout)
            .field("capabilities", &self.capabilities)
            .field("max_time", &self.max_time)
            // Names only: the values are credentials, as often as not.
            .field(
                "http_headers",
                &self.http_headers.iter().map(|(n, _)| n).collect::<Vec<_>>(),
            )
            .finish()
    }
}

impl RequestOptions {
    /// No callbacks, no extra `_meta`, the client's default timeout.
    pub fn new() -> Self {
        Self::default()
    }

    /// Asks for progress (a fresh `progressToken` is sent) and calls `f` for
    /// each `notifications/progress` of the request.
    #[must_use]
    pub fn with_progress(
        mut self,
        f: impl Fn(&ProgressNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.progress = Some(Arc::new(f));
        self
    }

    /// Asks for log messages at `level` and above
    /// (`io.modelcontextprotocol/logLevel`) and calls `f` for each.
    #[must_use]
    pub fn with_log(
        mut self,
        level: LoggingLevel,
        f: impl Fn(&LoggingMessageNotificationParams) + Send + Sync + 'static,
    ) -> Self {
        self.log = Some((level, Arc::new(f)));
        self
    }

    /// Adds a `_meta` member (for example `traceparent`). The protocol
    /// members the client manages take precedence.
    #[must_use]
    pub fn with_meta(mut self, key: impl Into<String>, value: Value) -> Self {
        self.meta.insert(key.into(), value);
        self
    }

    /// Overrides the client's idle timeout for this request (at least
    /// 1 ms, at most a year). Each progress notification of the request
    /// starts it again.
    #[must_use]
    pub fn with_timeout(mut self, timeout: Duration) -> Self {
        self.timeout = Some(timeout_within_bounds(timeout));
        self
    }

    /// Declares `capabilities` as this request's `clientCapabilities`
    /// instead of those the client's input handlers imply: for a proxy
    /// that passes its own caller's capabilities on, and answers the
    /// resulting input requests itself (in manual mode:
    /// [`Client::call_tool_once`](crate::Client::call_tool_once),
    /// [`Client::request_once`](crate::Client::request_once)). A legacy
    /// session declared its capabilities once, at `initialize`, and
    /// ignores this.
    #[must_use]
    pub fn with_client_capabilities(mut self, capabilities: &ClientCapabilities) -> Self {
        self.capabilities = Some(Box::new(capabilities.clone()));
        self
    }

    /// Sends the HTTP header `name: value` with this request, in place of
    /// the client's own header of that name (for `Authorization`, in place
    /// of its bearer token): for a caller that acts for several users
    /// through one client, such as a gateway sending each caller's own
    /// credential upstream. Ignored on stdio. The value is marked
    /// sensitive, and never logged; an invalid name or value fails the
    /// request.
    #[must_use]
    pub fn with_http_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http_headers.push((name.into(), value.into()));
        self
    }

    /// The idle timeout of this request, if it overrides the client's.
    pub fn timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// Overrides the client's maximum time for this request (at least 1 ms,
    /// at most a year): it is cancelled then, however much progress it
    /// reported. Each round of a multi-round call is a request of its own.
    #[must_use]
    pub fn with_max_time(mut self, max: Duration) -> Self {
        self.max_time = Some(timeout_within_bounds(max));
        self
    }

    /// The maximum time of this request, if it overrides the client's.
    pub fn max_time(&self) -> Option<Duration> {
        self.max_time
    }
}

/// A `tools/call`: the tool, its arguments, and (for a manual retry) the
/// answers to an earlier `input_required` result.
#[derive(Debug, Clone)]
#[non_exhaustive]
pub struct ToolCall {
    pub(crate) name: String,
    pub(crate) arguments: Option<JsonObject>,
    pub(crate) input_responses: Option<InputResponses>,
    pub(crate) request_state: Option<String>,
    pub(crate) options: RequestOptions,
    /// Whether the client checks the arguments against the tool's input
    /// schema before sending them (when it knows the tool).
    pub(crate) check_arguments: bool,
}

impl ToolCall {
    /// A call of `name` without arguments.
    pub fn new(name: impl Into<String>) -> Self {
        Self {
            name: name.into(),
            arguments: None,
            input_responses: None,
            request_state: None,
            options: RequestOptions::default(),
            check_arguments: true,
        }
    }

    /// Sends the arguments without checking them against the tool's input
    /// schema first. For a caller that has checked them against that very
    /// schema already, such as a gateway whose server checked them when
    /// they came in: the check would only be done twice. The server called
    /// still checks them.
    #[must_use]
    pub fn without_argument_check(mut self) -> Self {
        self.check_arguments = false;
        self
    }

    /// Sets the arguments. A value that is not a JSON object is ignored.
    #[must_use]
    pub fn with_arguments(mut self, arguments: Value) -> Self {
        if let Value::Object(map) = arguments {
            self.arguments = Some(map);
        }
        self
    }

    /// Sets one argument.
    #[must_use]
    pub fn with_argument(mut self, key: impl Into<String>, value: Value) -> Self {
        self.arguments
            .get_or_insert_with(Map::new)
            .insert(key.into(), value);
        self
    }

    /// Sets the request options.
    #[must_use]
    pub fn with_options(mut self, options: RequestOptions) -> Self {
        self.options = options;
        self
    }

    /// The retry of this call after `input_required`: the same tool and
    /// arguments, the given answers, and the result's `requestState` echoed
    /// exactly (and omitted when it had none).
    ///
    /// Spec: basic/patterns/mrtr.mdx#client-requirements-basic-workflow
    #[must_use]
    pub fn retry(&self, input_required: &InputRequiredResult, responses: InputResponses) -> Self {
        Self {
            input_responses: Some(responses),
            request_state: input_required.request_state.clone(),
            ..self.clone()
        }
    }

    /// A manual retry's answers to the input requests of the previous
    /// round (see [`retry`](Self::retry) when that round's result is at hand).
    #[must_use]
    pub fn with_input_responses(mut self, responses: InputResponses) -> Self {
        self.input_responses = Some(responses);
        self
    }

    /// A manual retry's `requestState`, echoed exactly as the previous
    /// round's result gave it.
    #[must_use]
    pub fn with_request_state(mut self, state: impl Into<String>) -> Self {
        self.request_state = Some(state.into());
        self
    }

    /// The tool name.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// The arguments, if any.
    pub fn arguments(&self) -> Option<&JsonObject> {
        self.arguments.as_ref()
    }
}
