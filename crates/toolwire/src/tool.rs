//! Tools: the builder that turns a typed Rust function into a tool, the
//! conventions for what a handler may return, and the erased form the
//! registry stores.

mod finite;
pub(crate) mod order;

use crate::context::RequestContext;
use crate::handler::{
    BoxFuture, HandlerError, HandlerOutput, IntoHandlerOutput, IntoTypedOutput, RegistrationError,
};
use crate::schema::CompiledSchema;
use crate::task::TaskSupport;
use schemars::JsonSchema;
use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::value::RawValue;
use serde_json::{Map, Value};
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use toolwire_proto::header::{HeaderParam, validate_x_mcp_headers};
use toolwire_proto::types::{
    CallToolResult, ContentBlock, Icon, Tool as ToolDefinition, ToolAnnotations,
};
use toolwire_proto::{ErrorObject, validate_tool_name};

type Handler =
    Arc<dyn Fn(Value, RequestContext) -> BoxFuture<Result<Forwarded, HandlerError>> + Send + Sync>;

/// What a [`forwarding_handler`](ToolBuilder::forwarding_handler) returns:
/// what the server it forwards to answered, still encoded, or any output
/// an ordinary tool handler may give.
#[derive(Debug)]
#[non_exhaustive]
pub enum Forwarded {
    /// A complete `CallToolResult` (`resultType` included) as the JSON it
    /// arrived in. Clients of the current revision get it byte for byte,
    /// without the checks the server makes of a result it builds itself
    /// (the `outputSchema`, the text copy of `structuredContent`, its own
    /// `serverInfo`): those are the answering server's, and the client
    /// checks the result anyway. For a legacy client it is read and
    /// treated like any result; one that does not read as a
    /// `CallToolResult` is then an internal error.
    Json(Box<RawValue>),
    /// Anything an ordinary tool handler returns.
    Output(ToolResult),
    /// A task the forwarded server created (its `CreateTaskResult`), for a
    /// request that declared the Tasks extension. The server seals `route`
    /// (where the task lives, e.g. the upstream and its task id there) and
    /// the caller's principal into the task id the client gets, and hands
    /// the route to the [`TaskForwarder`](crate::task::TaskForwarder) for
    /// the client's `tasks/*` requests. For a request that did not declare
    /// the extension it is an internal error: a forwarder asks for tasks
    /// only when the client did.
    ///
    /// Spec: extensions/tasks#capability-negotiation
    Task {
        /// The task as the forwarded server described it.
        task: toolwire_proto::types::Task,
        /// Where it lives, as the forwarder reads it back.
        route: Value,
    },
}

impl From<ToolResult> for Forwarded {
    fn from(output: ToolResult) -> Self {
        Self::Output(output)
    }
}

/// What a tool call produced: a finished `CallToolResult`, or a request for
/// input. Spec: basic/patterns/mrtr.mdx
///
/// A handler returns one when it may answer either way; a handler that
/// always finishes can return its text (or `Result<String, ToolError>`)
/// directly.
///
/// # Example
///
/// ```
/// use toolwire::{InputRequired, RequestContext, Tool, ToolError, ToolResult};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Lookup {
///     sku: String,
/// }
///
/// async fn lookup(input: Lookup, cx: RequestContext) -> Result<ToolResult, ToolError> {
///     Ok(match input.sku.as_str() {
///         "" => InputRequired::new()
///             .elicit::<Lookup>("sku", "Which SKU?")
///             .into(),
///         "A-1" => ToolResult::text("3 in stock"),
///         // `isError: true`: the model reads the text and can try again.
///         other => ToolResult::error_text(format!("no item {other}")),
///     })
/// }
///
/// let tool = Tool::builder("lookup").input::<Lookup>().handler(lookup).unwrap();
/// assert_eq!(tool.name(), "lookup");
/// ```
pub type ToolResult = HandlerOutput<CallToolResult>;

impl HandlerOutput<CallToolResult> {
    /// A finished call with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::Complete(CallToolResult::text(text))
    }

    /// A finished call that failed (`isError: true`), with text for the model.
    pub fn error_text(text: impl Into<String>) -> Self {
        Self::Complete(CallToolResult::error_text(text))
    }
}

impl From<CallToolResult> for ToolResult {
    fn from(r: CallToolResult) -> Self {
        Self::Complete(r)
    }
}

impl IntoHandlerOutput<CallToolResult> for CallToolResult {
    fn into_handler_output(self) -> Result<HandlerOutput<CallToolResult>, HandlerError> {
        Ok(HandlerOutput::Complete(self))
    }
}

/// One text block.
impl IntoHandlerOutput<CallToolResult> for String {
    fn into_handler_output(self) -> Result<HandlerOutput<CallToolResult>, HandlerError> {
        Ok(HandlerOutput::Complete(CallToolResult::text(self)))
    }
}

/// One text block.
impl IntoHandlerOutput<CallToolResult> for &'static str {
    fn into_handler_output(self) -> Result<HandlerOutput<CallToolResult>, HandlerError> {
        self.to_owned().into_handler_output()
    }
}

impl IntoHandlerOutput<CallToolResult> for ContentBlock {
    fn into_handler_output(self) -> Result<HandlerOutput<CallToolResult>, HandlerError> {
        vec![self].into_handler_output()
    }
}

impl IntoHandlerOutput<CallToolResult> for Vec<ContentBlock> {
    fn into_handler_output(self) -> Result<HandlerOutput<CallToolResult>, HandlerError> {
        let mut result = CallToolResult::text(String::new());
        result.content = self;
        Ok(HandlerOutput::Complete(result))
    }
}

/// A structured result: serialised into `structuredContent` and mirrored as a
/// JSON text block for clients that only read `content`.
/// Spec: server/tools.mdx#structured-content
///
/// # Errors
///
/// A tool execution error ([`HandlerError::Failed`], an `isError` result)
/// when `value` holds a number that is not finite (NaN, an overflow to
/// infinity): JSON cannot carry it. `-32603` when `value` does not
/// serialise for another reason.
pub fn structured<T: Serialize>(value: &T) -> Result<CallToolResult, HandlerError> {
    let value = finite::to_value(value).map_err(|e| match e {
        // Spec: server/tools.mdx#error-handling — the tool's computation
        // failed; the model can read that and try other arguments.
        finite::OutputError::NotFinite => HandlerError::failed(
            "the result holds a number that is not finite (NaN or an overflow to infinity), \
             which JSON cannot carry",
        ),
        finite::OutputError::Serialise(e) => {
            HandlerError::Protocol(ErrorObject::internal(format!("unserialisable output: {e}")))
        }
    })?;
    // Written straight into a `String` (`Value`'s `Display` goes through a
    // formatter adapter); encoding a `Value` cannot fail.
    let text = serde_json::to_string(&value).unwrap_or_default();
    let mut result = CallToolResult::text(text);
    result.structured_content = Some(value);
    Ok(result)
}

/// A tool ready to be registered: its definition, compiled schemas and handler.
///
/// Built with [`Tool::builder`], which checks the name, the schemas and the
/// `x-mcp-header` annotations, then registered with
/// [`Server::add_tool`](crate::Server::add_tool) (or removed again with
/// [`Server::remove_tool`](crate::Server::remove_tool)). Cheap to clone.
///
/// # Example
///
/// ```
/// use toolwire::{Server, ServerConfig, Tool};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Echo {
///     /// The text to send back.
///     text: String,
/// }
///
/// # fn main() -> Result<(), toolwire::RegistrationError> {
/// let echo = Tool::builder("echo")
///     .description("Sends the text back")
///     .input::<Echo>()
///     .handler(|input: Echo, _cx| async move { input.text })?;
///
/// // The definition `tools/list` shows, with the generated input schema.
/// let definition = echo.definition();
/// assert_eq!(definition.description.as_deref(), Some("Sends the text back"));
/// assert_eq!(definition.input_schema["required"], serde_json::json!(["text"]));
///
/// let server = Server::new(ServerConfig::new("demo", "1.0.0"));
/// server.add_tool(echo.clone())?;
/// assert!(server.add_tool(echo).is_err(), "names are unique");
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Tool {
    pub(crate) inner: Arc<ToolInner>,
}

pub(crate) struct ToolInner {
    pub(crate) definition: ToolDefinition,
    pub(crate) input: CompiledSchema,
    pub(crate) output: Option<CompiledSchema>,
    pub(crate) header_params: Vec<HeaderParam>,
    pub(crate) required_capabilities: Vec<String>,
    pub(crate) scopes: Vec<String>,
    pub(crate) handler: Handler,
    /// What the tool declared of its own limits ([`ToolBuilder::timeout`],
    /// [`ToolBuilder::max_concurrency`], [`ToolBuilder::max_result_bytes`]).
    pub(crate) limits: Limits,
    /// Whether and how it runs as a task ([`ToolBuilder::task`]).
    pub(crate) task: TaskSpec,
    /// The input's `properties` in declaration order, when that is not
    /// the sorted order `definition` holds them in (see [`order`]).
    pub(crate) property_order: Option<Box<[Box<str>]>>,
}

/// How a tool runs as a task.
#[derive(Debug, Default, Clone, Copy)]
pub(crate) struct TaskSpec {
    pub(crate) support: TaskSupport,
    /// The handler decides when the call becomes a task
    /// ([`ToolBuilder::defer_task`]).
    pub(crate) deferred: bool,
    /// Safe to run again: on a shared store, a task whose replica stopped
    /// is run again elsewhere ([`ToolBuilder::rerun`]).
    pub(crate) rerun: bool,
    /// The tool's own time to live, over the server's.
    pub(crate) ttl: Option<std::time::Duration>,
    /// The tool's own polling interval, over the server's.
    pub(crate) poll_interval: Option<std::time::Duration>,
}

/// A tool's own limits, enforced by the server on every call of it (the
/// same as the middleware's per-tool layers, declared with the tool).
#[derive(Debug, Default)]
pub(crate) struct Limits {
    pub(crate) timeout: Option<std::time::Duration>,
    /// The places, and how many there are.
    pub(crate) concurrency: Option<(Arc<tokio::sync::Semaphore>, usize)>,
    pub(crate) result_bytes: Option<usize>,
}

/// What a builder was told of the limits.
#[derive(Debug, Default, Clone, Copy)]
struct DeclaredLimits {
    timeout: Option<std::time::Duration>,
    concurrency: Option<usize>,
    result_bytes: Option<usize>,
}

impl DeclaredLimits {
    fn build(self) -> Limits {
        Limits {
            timeout: self.timeout,
            concurrency: self
                .concurrency
                .map(|n| (Arc::new(tokio::sync::Semaphore::new(n)), n)),
            result_bytes: self.result_bytes,
        }
    }
}

impl std::fmt::Debug for Tool {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tool")
            .field("name", &self.inner.definition.name)
            .finish_non_exhaustive()
    }
}

impl Tool {
    /// Starts a tool definition.
    pub fn builder(name: impl Into<String>) -> ToolBuilder {
        ToolBuilder {
            name: name.into(),
            title: None,
            description: None,
            input_schema: None,
            output_schema: None,
            annotations: None,
            icons: Vec::new(),
            required_capabilities: Vec::new(),
            scopes: Vec::new(),
            meta: None,
            ui: None,
            limits: DeclaredLimits::default(),
            task: TaskSpec::default(),
            declared: None,
            _marker: PhantomData,
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.inner.definition.name
    }

    /// The definition as listed by `tools/list`.
    pub fn definition(&self) -> &ToolDefinition {
        &self.inner.definition
    }

    /// Whether it may run as a task (see the builder's `task`).
    pub fn task_support(&self) -> TaskSupport {
        self.inner.task.support
    }

    /// The OAuth scopes needed to use it (see the builder's `scopes`).
    pub fn scopes(&self) -> &[String] {
        &self.inner.scopes
    }

    /// The parameters mirrored into `Mcp-Param-*` headers.
    pub fn header_params(&self) -> &[HeaderParam] {
        &self.inner.header_params
    }
}

/// Marker: the handler's output is untyped (anything
/// [`IntoHandlerOutput<CallToolResult>`](IntoHandlerOutput)).
#[derive(Debug)]
pub struct Untyped;

/// Marker: the handler returns `O`, sent as `structuredContent` and checked
/// against the `outputSchema` generated from `O`.
#[derive(Debug)]
pub struct Typed<O>(PhantomData<fn() -> O>);

/// Builds a [`Tool`]; see [`Tool::builder`].
///
/// The type parameters track what the handler receives (`I`, the input
/// type set by [`input`](Self::input)) and returns (`O`: [`Untyped`], or
/// [`Typed<T>`] after [`output`](Self::output)). Everything is checked
/// when [`handler`](Self::handler) finishes the tool.
///
/// # Example
///
/// A typed input and output, behaviour hints, and a required capability:
///
/// ```
/// use toolwire::proto::types::ToolAnnotations;
/// use toolwire::{RequestContext, Tool, ToolError};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Divide {
///     a: f64,
///     b: f64,
/// }
///
/// #[derive(serde::Serialize, schemars::JsonSchema)]
/// struct Quotient {
///     quotient: f64,
/// }
///
/// async fn divide(input: Divide, _cx: RequestContext) -> Result<Quotient, ToolError> {
///     if input.b == 0.0 {
///         return Err(ToolError::failed("cannot divide by zero"));
///     }
///     Ok(Quotient { quotient: input.a / input.b })
/// }
///
/// # fn main() -> Result<(), toolwire::RegistrationError> {
/// let tool = Tool::builder("divide")
///     .title("Divide")
///     .description("Divides a by b")
///     .annotations(ToolAnnotations {
///         read_only_hint: Some(true),
///         ..ToolAnnotations::default()
///     })
///     .input::<Divide>()
///     .output::<Quotient>() // the handler returns `Quotient` or `Result<Quotient, ToolError>`
///     .require_capability("sampling") // clients without it get -32021
///     .handler(divide)?;
///
/// let schema = tool.definition().output_schema.as_ref().expect("typed output");
/// assert_eq!(schema["properties"]["quotient"]["type"], "number");
///
/// // A bad name is refused when the tool is built, not when it is called.
/// let bad = Tool::builder("no spaces allowed")
///     .input::<Divide>()
///     .handler(|_: Divide, _cx| async { "never" });
/// assert!(bad.is_err());
/// # Ok(())
/// # }
/// ```
#[derive(Debug)]
#[must_use]
pub struct ToolBuilder<I = Value, O = Untyped> {
    name: String,
    title: Option<String>,
    description: Option<String>,
    input_schema: Option<Value>,
    output_schema: Option<Value>,
    annotations: Option<ToolAnnotations>,
    icons: Vec<Icon>,
    required_capabilities: Vec<String>,
    scopes: Vec<String>,
    meta: Option<Map<String, Value>>,
    ui: Option<crate::apps::ToolUi>,
    limits: DeclaredLimits,
    task: TaskSpec,
    /// The input's property names in declaration order, as far as known.
    declared: Option<Vec<String>>,
    _marker: PhantomData<fn() -> (I, O)>,
}

fn schema_of<T: JsonSchema>() -> Value {
    let mut v = schemars::schema_for!(T).to_value();
    if let Some(obj) = v.as_object_mut() {
        // The type's Rust name says nothing to a model.
        obj.remove("title");
    }
    v
}

impl<I, O> ToolBuilder<I, O> {
    fn retype<I2, O2>(self) -> ToolBuilder<I2, O2> {
        ToolBuilder {
            name: self.name,
            title: self.title,
            description: self.description,
            input_schema: self.input_schema,
            output_schema: self.output_schema,
            annotations: self.annotations,
            icons: self.icons,
            required_capabilities: self.required_capabilities,
            scopes: self.scopes,
            meta: self.meta,
            ui: self.ui,
            limits: self.limits,
            task: self.task,
            declared: self.declared,
            _marker: PhantomData,
        }
    }

    /// Typed input: arguments are validated against the schema generated from
    /// `T`, then deserialised into it.
    ///
    /// `tools/list` shows the properties in the order `T` declares its
    /// fields (a struct with flattened fields shows them sorted).
    pub fn input<T: JsonSchema + DeserializeOwned>(mut self) -> ToolBuilder<T, O> {
        self.input_schema = Some(schema_of::<T>());
        self.declare::<T>().retype()
    }

    /// The order `T` declares (none for a type that is not a plain struct),
    /// replacing an earlier type's.
    fn declare<T: DeserializeOwned>(mut self) -> Self {
        self.declared = order::declared_fields::<T>()
            .map(|fields| fields.iter().map(|&f| f.to_owned()).collect());
        self
    }

    /// The order `tools/list` shows the input's properties in (JSON objects
    /// are unordered, but hosts and the CLI show parameters as listed).
    /// Names the schema does not have are ignored; properties not named
    /// follow, sorted. [`input`](Self::input) sets it from the type.
    pub fn property_order<S: Into<String>>(mut self, names: impl IntoIterator<Item = S>) -> Self {
        self.declared = Some(names.into_iter().map(Into::into).collect());
        self
    }

    /// A hand-written input schema. The handler receives the arguments as `I`
    /// (a `serde_json::Value` unless [`input`](Self::input) set a type).
    pub fn input_schema(mut self, schema: Value) -> Self {
        self.input_schema = Some(schema);
        self
    }

    /// A hand-written input schema for a typed input: arguments are validated
    /// against `schema`, then deserialised into `T`.
    pub fn input_with_schema<T: DeserializeOwned>(mut self, schema: Value) -> ToolBuilder<T, O> {
        self.input_schema = Some(schema);
        self.declare::<T>().retype()
    }

    /// Typed output: the handler returns a `T` (or anything
    /// [`IntoTypedOutput<T>`], such as `Result<T, HandlerError>` or an
    /// [`InputRequired`](crate::InputRequired)); the value is sent as
    /// `structuredContent`, mirrored as text, and `outputSchema` is generated
    /// from `T`.
    pub fn output<T: JsonSchema + Serialize>(mut self) -> ToolBuilder<I, Typed<T>> {
        self.output_schema = Some(schema_of::<T>());
        self.retype()
    }

    /// A hand-written output schema.
    pub fn output_schema(mut self, schema: Value) -> Self {
        self.output_schema = Some(schema);
        self
    }

    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the tool does, for the model.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Behaviour hints.
    pub fn annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// Declares a client capability (such as `"sampling"`) the tool cannot
    /// run without; calls from clients that lack it get `-32021`.
    pub fn require_capability(mut self, capability: impl Into<String>) -> Self {
        self.required_capabilities.push(capability.into());
        self
    }

    /// Cancels a call still running after `limit` (its handler's
    /// cancellation token fires and its future is dropped) and answers it
    /// with an `isError` result that says so. Kept between 1 ms and a year.
    /// The same as a [`ToolTimeoutLayer`](crate::middleware::ToolTimeoutLayer)
    /// entry, declared with the tool.
    pub fn timeout(mut self, limit: std::time::Duration) -> Self {
        const YEAR: std::time::Duration = std::time::Duration::from_secs(365 * 24 * 3600);
        self.limits.timeout = Some(limit.clamp(std::time::Duration::from_millis(1), YEAR));
        self
    }

    /// Runs at most `n` calls of this tool at once (at least 1); one more
    /// is refused at once with a busy `-32603` (`503` with `Retry-After`
    /// on HTTP) while other tools are served.
    pub fn max_concurrency(mut self, n: usize) -> Self {
        self.limits.concurrency = Some(n.max(1));
        self
    }

    /// Refuses to send a result of this tool larger than `bytes` (its
    /// encoded JSON-RPC response): the call gets an `isError` result that
    /// gives both sizes, so the model can ask for less.
    pub fn max_result_bytes(mut self, bytes: usize) -> Self {
        self.limits.result_bytes = Some(bytes);
        self
    }

    /// OAuth scopes a caller needs to see and use this tool when the
    /// HTTP transport's resource server is on (`HttpConfig::with_auth`,
    /// feature `auth`): others get `403 insufficient_scope` and do not see
    /// it listed. Without the resource server, scopes are ignored.
    pub fn scopes<L, S>(mut self, scopes: L) -> Self
    where
        L: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Whether the tool may run as a task (the Tasks extension):
    /// [`TaskSupport::Forbidden`] by default. With
    /// [`Optional`](TaskSupport::Optional), a request that declared the
    /// extension gets a task handle at once and the handler runs in the
    /// background; one that did not gets a plain call. With
    /// [`Required`](TaskSupport::Required), the latter gets `-32021`.
    ///
    /// Spec: extensions/tasks#capability-negotiation
    pub fn task(mut self, support: TaskSupport) -> Self {
        self.task.support = support;
        self
    }

    /// The handler, not the server, decides when a task-capable call
    /// becomes a task: the call runs as a plain one (it may answer
    /// `input_required` rounds synchronously) until the handler awaits
    /// [`RequestContext::continue_as_task`]; a call that finishes first is
    /// answered synchronously.
    ///
    /// Spec: extensions/tasks#task-creation — MRTR exchanges resolved
    /// before the task is created.
    pub fn defer_task(mut self) -> Self {
        self.task.deferred = true;
        self
    }

    /// The tool is idempotent, so its task may run more than once: when
    /// the replica running it stops (on a store replicas share), a
    /// surviving replica runs the call again from the start, instead of
    /// ending the task `failed`. At-least-once execution; the result
    /// served is the run that finished.
    pub fn rerun(mut self) -> Self {
        self.task.rerun = true;
        self
    }

    /// This tool's tasks live `ttl` from creation, instead of the
    /// server's [`TaskOptions::ttl`](crate::task::TaskOptions::ttl).
    pub fn task_ttl(mut self, ttl: std::time::Duration) -> Self {
        self.task.ttl = Some(crate::bounds::timeout_within_bounds(ttl));
        self
    }

    /// The polling interval this tool's tasks suggest.
    pub fn task_poll_interval(mut self, interval: std::time::Duration) -> Self {
        self.task.poll_interval = Some(crate::bounds::timeout_within_bounds(interval));
        self
    }

    /// Sets the definition's `_meta`.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Renders the tool's results with the app interface at `resource_uri`
    /// (a `ui://` resource registered with
    /// [`Resource::app`](crate::Resource::app) before the tool): sets
    /// `_meta.ui.resourceUri`, and the deprecated flat
    /// `_meta["ui/resourceUri"]` for older hosts. The tool must still
    /// answer with meaningful text content for clients without the
    /// extension (in debug builds a result without text is logged as an
    /// error). See the [`apps`](crate::apps) module.
    pub fn ui(mut self, resource_uri: impl Into<String>) -> Self {
        self.ui.get_or_insert_with(Default::default).resource_uri = Some(resource_uri.into());
        self
    }

    /// Who may call the tool (`_meta.ui.visibility`; both when not set):
    /// `[Visibility::App]` hides it from the model and leaves it callable
    /// by its interface.
    pub fn visibility(mut self, who: impl IntoIterator<Item = crate::apps::Visibility>) -> Self {
        self.ui.get_or_insert_with(Default::default).visibility = Some(who.into_iter().collect());
        self
    }

    fn finish(self, handler: Handler) -> Result<Tool, RegistrationError> {
        let name = self.name;
        validate_tool_name(&name).map_err(|source| RegistrationError::InvalidName {
            name: name.clone(),
            source,
        })?;
        let Some(input_schema) = self.input_schema else {
            return Err(RegistrationError::NoInputSchema(name));
        };
        let input = CompiledSchema::compile(&input_schema).map_err(|source| {
            RegistrationError::InputSchema {
                name: name.clone(),
                source,
            }
        })?;
        if input_schema.get("type").and_then(Value::as_str) != Some("object") {
            return Err(RegistrationError::InputNotObject { name });
        }
        let header_params =
            validate_x_mcp_headers(&input_schema).map_err(|source| RegistrationError::Header {
                name: name.clone(),
                source,
            })?;
        let output = match &self.output_schema {
            Some(s) => Some(CompiledSchema::compile(s).map_err(|source| {
                RegistrationError::OutputSchema {
                    name: name.clone(),
                    source,
                }
            })?),
            None => None,
        };
        let Value::Object(input_schema) = input_schema else {
            return Err(RegistrationError::InputNotObject { name });
        };
        let property_order = self
            .declared
            .as_deref()
            .and_then(|declared| order::property_order(&input_schema, declared));
        let mut definition = ToolDefinition::new(name, input_schema);
        definition.title = self.title;
        definition.description = self.description;
        definition.output_schema = match self.output_schema {
            Some(Value::Object(map)) => Some(map),
            _ => None,
        };
        definition.annotations = self.annotations;
        definition.icons = (!self.icons.is_empty()).then_some(self.icons);
        definition.meta = self.meta;
        if let Some(ui) = &self.ui {
            if let Some(uri) = &ui.resource_uri
                && !uri.starts_with("ui://")
            {
                return Err(RegistrationError::ToolUi {
                    tool: definition.name,
                    uri: uri.clone(),
                    problem: "is not a ui:// URI",
                });
            }
            ui.write_into(definition.meta.get_or_insert_with(Map::new));
        }
        Ok(Tool {
            inner: Arc::new(ToolInner {
                definition,
                input,
                output,
                header_params,
                required_capabilities: self.required_capabilities,
                scopes: self.scopes,
                handler,
                limits: self.limits.build(),
                task: self.task,
                property_order,
            }),
        })
    }
}

/// Whether `schema` declares an `integer` anywhere (`"type": "integer"`, or
/// a `type` list that holds it).
fn declares_integer(schema: &Value) -> bool {
    match schema {
        Value::Object(map) => map.iter().any(|(key, v)| match (key.as_str(), v) {
            ("type", Value::String(t)) => t == "integer",
            ("type", Value::Array(ts)) => ts.iter().any(|t| t == "integer"),
            _ => declares_integer(v),
        }),
        Value::Array(items) => items.iter().any(declares_integer),
        _ => false,
    }
}

/// Rewrites integer-valued numbers written as floats (`42.0`, `4.2e1`) as
/// integers, so that serde's integer types read them: JSON Schema's
/// `integer` accepts them, and serde's `i64` does not. Floats outside the
/// 64-bit integer range stay as they are.
fn integral_numbers(v: &mut Value) {
    match v {
        Value::Number(n) if n.is_f64() => {
            let f = n.as_f64().unwrap_or(f64::NAN);
            // NaN and infinities have no zero fraction.
            if f.fract() != 0.0 {
                return;
            }
            #[allow(
                clippy::cast_possible_truncation,
                clippy::cast_sign_loss,
                reason = "integral and in range, so exact"
            )]
            let int = if (-9.2e18..9.2e18).contains(&f) {
                Value::from(f as i64)
            } else if (0.0..1.8e19).contains(&f) {
                Value::from(f as u64)
            } else {
                return;
            };
            *v = int;
        }
        Value::Array(items) => items.iter_mut().for_each(integral_numbers),
        Value::Object(map) => map.values_mut().for_each(integral_numbers),
        _ => {}
    }
}

/// The typed arguments of a call: `args` deserialised as `I`, with
/// integer-valued floats read as integers when the input schema declares an
/// integer (`integers`).
fn typed_arguments<I: DeserializeOwned>(
    mut args: Value,
    integers: bool,
) -> Result<I, serde_json::Error> {
    if integers {
        integral_numbers(&mut args);
    }
    serde_json::from_value::<I>(args)
}

fn bad_arguments(e: &serde_json::Error) -> Result<Forwarded, HandlerError> {
    Ok(Forwarded::Output(HandlerOutput::Complete(
        CallToolResult::error_text(format!(
            "Invalid arguments: {e}. Fix the arguments to match the tool's inputSchema and call again."
        )),
    )))
}

impl<I: DeserializeOwned + Send + 'static> ToolBuilder<I, Untyped> {
    /// Finishes the tool with its handler. Validates the name, schemas and
    /// `x-mcp-header` annotations now, not at call time.
    pub fn handler<F, Fut, R>(self, f: F) -> Result<Tool, RegistrationError>
    where
        F: Fn(I, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoHandlerOutput<CallToolResult> + 'static,
    {
        let f = Arc::new(f);
        let integers = self.input_schema.as_ref().is_some_and(declares_integer);
        self.finish(Arc::new(move |args, cx| {
            let f = Arc::clone(&f);
            Box::pin(async move {
                let input = match typed_arguments::<I>(args, integers) {
                    Ok(v) => v,
                    Err(e) => return bad_arguments(&e),
                };
                f(input, cx)
                    .await
                    .into_handler_output()
                    .map(Forwarded::Output)
            })
        }))
    }
}

impl ToolBuilder<Value, Untyped> {
    /// Finishes the tool with the handler of a proxy: it gets the
    /// arguments as JSON and may answer with the forwarded server's result
    /// still encoded ([`Forwarded::Json`]), which the server then passes
    /// on without decoding and re-encoding it. The arguments were checked
    /// against the input schema first, as for any tool.
    pub fn forwarding_handler<F, Fut>(self, f: F) -> Result<Tool, RegistrationError>
    where
        F: Fn(Value, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = Result<Forwarded, HandlerError>> + Send + 'static,
    {
        self.finish(Arc::new(move |args, cx| Box::pin(f(args, cx))))
    }
}

impl<I: DeserializeOwned + Send + 'static, O: Serialize + 'static> ToolBuilder<I, Typed<O>> {
    /// Finishes the tool with a handler whose output is structured. The
    /// handler may also return an [`InputRequired`](crate::InputRequired)
    /// (or a [`HandlerOutput<O>`] holding one) to ask the client first.
    pub fn handler<F, Fut, R>(self, f: F) -> Result<Tool, RegistrationError>
    where
        F: Fn(I, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoTypedOutput<O> + 'static,
    {
        let f = Arc::new(f);
        let integers = self.input_schema.as_ref().is_some_and(declares_integer);
        self.finish(Arc::new(move |args, cx| {
            let f = Arc::clone(&f);
            Box::pin(async move {
                let input = match typed_arguments::<I>(args, integers) {
                    Ok(v) => v,
                    Err(e) => return bad_arguments(&e),
                };
                Ok(Forwarded::Output(
                    match f(input, cx).await.into_typed_output()? {
                        HandlerOutput::Complete(out) => HandlerOutput::Complete(structured(&out)?),
                        HandlerOutput::InputRequired(ir) => HandlerOutput::InputRequired(ir),
                    },
                ))
            })
        }))
    }
}
