//! The gateway's entries: an upstream's tool or prompt re-registered under
//! its exposed name, with a handler that forwards to the upstream. Results
//! pass through intact; progress and logs are relayed; a downstream
//! cancellation drops the upstream call (which cancels it there); an
//! upstream's `input_required` goes downstream with the upstream's state
//! wrapped in the gateway's own sealed `requestState`; an upstream's task
//! goes downstream under an id that seals where it lives ([`tasks`]).

mod held;
mod resources;
mod tasks;

pub(crate) use held::Holds;

pub(crate) use resources::{UriSpace, resource, template, unlisted_interface};
pub(crate) use tasks::Forwarder;

use crate::config::Credentials;
use crate::upstream::Link;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::sync::Arc;
use toolwire::proto::types::{
    GetPromptRequest, GetPromptRequestParams, GetPromptResult, InputRequiredResult,
    Prompt as PromptDefinition, ResultOrInputRequired, TASKS_EXTENSION, Tool as ToolDefinition,
};
use toolwire::{
    ClientError, Forwarded, HandlerError, HandlerOutput, InputRequired, Prompt, PromptArguments,
    RegistrationError, Relayed, RequestContext, RequestOptions, Tool, ToolCall, ToolResult,
};

/// The gateway's part of a `requestState`: which upstream the round belongs
/// to and that upstream's own state, echoed back to it byte for byte. The
/// server seals it together with the downstream binding (method, exposed
/// name, arguments, principal, expiry), so any replica holding the same
/// keyring continues the round.
#[derive(Debug, Serialize, Deserialize)]
struct Relay {
    /// The upstream's configuration key.
    u: String,
    /// The upstream's `requestState`, if it gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    s: Option<String>,
    /// A legacy upstream's call held open in this replica, waiting for
    /// the answer to its elicitation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    h: Option<u64>,
}

/// The gateway's copy of `def`, exposed as `exposed`, forwarding to `link`,
/// its input properties listed in the upstream's `order`; the app
/// interface it names (`_meta.ui.resourceUri` and the deprecated flat key)
/// under its exposed URI in `space`, its visibility unchanged.
pub(crate) fn tool(
    link: &Arc<Link>,
    def: &ToolDefinition,
    order: Option<&[String]>,
    exposed: &str,
    description: Option<&str>,
    space: &UriSpace,
) -> Result<Tool, RegistrationError> {
    let mut builder = Tool::builder(exposed).input_schema(Value::Object(def.input_schema.clone()));
    if let Some(order) = order {
        builder = builder.property_order(order);
    }
    if let Some(schema) = &def.output_schema {
        builder = builder.output_schema(Value::Object(schema.clone()));
    }
    if let Some(title) = &def.title {
        builder = builder.title(title);
    }
    if let Some(d) = description.or(def.description.as_deref()) {
        builder = builder.description(d);
    }
    if let Some(a) = &def.annotations {
        builder = builder.annotations(a.clone());
    }
    for icon in def.icons.iter().flatten() {
        builder = builder.icon(icon.clone());
    }
    if let Some(meta) = &def.meta {
        let mut meta = meta.clone();
        if let Some(Value::Object(ui)) = meta.get_mut("ui")
            && let Some(Value::String(uri)) = ui.get_mut("resourceUri")
        {
            *uri = space.expose(uri);
        }
        if let Some(Value::String(uri)) = meta.get_mut(toolwire::apps::LEGACY_RESOURCE_URI_KEY) {
            *uri = space.expose(uri);
        }
        builder = builder.meta(meta);
    }
    let link = Arc::clone(link);
    let name: Arc<str> = def.name.as_str().into();
    if link.is_rest() {
        return builder.forwarding_handler(move |args: Value, cx: RequestContext| {
            let link = Arc::clone(&link);
            let name = Arc::clone(&name);
            async move { call_rest(&link, &name, &args, &cx).await }
        });
    }
    builder.forwarding_handler(move |args: Value, cx: RequestContext| {
        let link = Arc::clone(&link);
        let name = Arc::clone(&name);
        async move { call_tool(&link, &name, args, &cx).await }
    })
}

/// A call of a REST upstream's tool: one HTTP request, with the caller's
/// credential in a per-caller mode (refused, naming the upstream, when the
/// caller has none). The gateway's server checked the arguments against
/// the tool's input schema; the API checks them again, as its own.
async fn call_rest(
    link: &Link,
    name: &str,
    args: &Value,
    cx: &RequestContext,
) -> Result<Forwarded, HandlerError> {
    let Some(api) = link.rest() else {
        return Ok(ToolResult::error_text(link.down_reason()).into());
    };
    let credential = caller_credential(link, cx).await?;
    let result = tokio::select! {
        r = api.call(name, args, credential, link.spec.timeout) => r,
        // Dropping the request abandons it.
        () = cx.cancelled() => return Err(HandlerError::failed("cancelled")),
    };
    Ok(ToolResult::Complete(result).into())
}

/// A call forwarded: a modern upstream's complete result goes downstream
/// as the JSON it arrived in (the server re-encodes it only for a legacy
/// client); everything else as an ordinary tool output.
async fn call_tool(
    link: &Link,
    name: &str,
    args: Value,
    cx: &RequestContext,
) -> Result<Forwarded, HandlerError> {
    let (state, hold) = relay_round(link, cx)?;
    let Some(client) = link.client() else {
        return Ok(ToolResult::error_text(link.down_reason()).into());
    };
    // The gateway's server checked the arguments against this schema as
    // they came in; the upstream checks them again, as its own.
    let mut call = ToolCall::new(name)
        .with_arguments(args)
        .without_argument_check()
        .with_options(call_options(link, cx).await?);
    if hold.is_some() || matches!(client.era(), Some(toolwire::ProtocolEra::Legacy)) {
        return held::call(link, client, call, hold, cx)
            .await
            .map(Into::into);
    }
    if let Some(r) = cx.input_responses() {
        call = call.with_input_responses(r.clone());
    }
    if let Some(s) = state {
        call = call.with_request_state(s);
    }
    let outcome = tokio::select! {
        r = client.call_tool_relayed(call) => r,
        // Dropping the call cancels it upstream; the server sends nothing
        // downstream for a cancelled request.
        () = cx.cancelled() => return Err(HandlerError::failed("cancelled")),
    };
    match outcome {
        Ok(Relayed::Complete(json)) => Ok(Forwarded::Json(json)),
        Ok(Relayed::Task(json)) => tasks::created(link, &json),
        Ok(Relayed::InputRequired(ir)) => {
            Ok(ToolResult::InputRequired(relay_input(link, ir)).into())
        }
        // `Relayed` may grow: what this gateway does not know it refuses.
        Ok(_) => Err(HandlerError::failed(
            "an upstream answer of an unknown kind",
        )),
        Err(e) => failure(link, &client, e).map(|text| ToolResult::error_text(text).into()),
    }
}

/// The gateway's copy of a prompt.
pub(crate) fn prompt(
    link: &Arc<Link>,
    def: &PromptDefinition,
    exposed: &str,
    completes: bool,
) -> Result<Prompt, RegistrationError> {
    let mut builder = Prompt::builder(exposed);
    if let Some(title) = &def.title {
        builder = builder.title(title);
    }
    if let Some(d) = &def.description {
        builder = builder.description(d);
    }
    for argument in def.arguments.iter().flatten() {
        builder = builder.argument(argument.clone());
        if completes {
            let reference = serde_json::json!({"type": "ref/prompt", "name": def.name});
            builder = builder.complete(&argument.name, resources::completer(link, reference));
        }
    }
    for icon in def.icons.iter().flatten() {
        builder = builder.icon(icon.clone());
    }
    let link = Arc::clone(link);
    let name: Arc<str> = def.name.as_str().into();
    builder.handler(move |args: PromptArguments, cx: RequestContext| {
        let link = Arc::clone(&link);
        let name = Arc::clone(&name);
        async move { get_prompt(&link, &name, args, &cx).await }
    })
}

async fn get_prompt(
    link: &Link,
    name: &str,
    args: PromptArguments,
    cx: &RequestContext,
) -> Result<HandlerOutput<GetPromptResult>, HandlerError> {
    let state = relay_state(link, cx)?;
    let Some(client) = link.client() else {
        return Err(HandlerError::failed(link.down_reason()));
    };
    let params = GetPromptRequestParams {
        name: name.to_owned(),
        arguments: (!args.is_empty()).then_some(args),
        input_responses: cx.input_responses().cloned(),
        request_state: state,
        meta: None,
    };
    let options = options(link, cx).await?;
    let outcome = tokio::select! {
        r = client.request_once::<GetPromptRequest>(params, options) => r,
        () = cx.cancelled() => return Err(HandlerError::failed("cancelled")),
    };
    match outcome {
        Ok(ResultOrInputRequired::Complete(result)) => Ok(HandlerOutput::Complete(result)),
        Ok(ResultOrInputRequired::InputRequired(ir)) => {
            Ok(HandlerOutput::InputRequired(relay_input(link, ir)))
        }
        Err(e) => Err(HandlerError::failed(failure(link, &client, e)?)),
    }
}

/// The upstream's state from the round's sealed state, checked to belong
/// to `link`.
fn relay_state(link: &Link, cx: &RequestContext) -> Result<Option<String>, HandlerError> {
    relay_round(link, cx).map(|(s, _)| s)
}

/// The upstream's state and the held call, if any, of this round.
fn relay_round(
    link: &Link,
    cx: &RequestContext,
) -> Result<(Option<String>, Option<u64>), HandlerError> {
    match cx.state::<Relay>()? {
        None => Ok((None, None)),
        Some(r) if r.u == link.name() => Ok((r.s, r.h)),
        Some(r) => Err(HandlerError::invalid_params(format!(
            "requestState belongs to upstream {:?}, not {:?}",
            r.u,
            link.name()
        ))),
    }
}

/// The header a request forwarded for this caller carries, in the
/// upstream's credential mode; the refusal, naming the upstream, when the
/// caller has none.
async fn caller_credential(
    link: &Link,
    cx: &RequestContext,
) -> Result<Option<(String, String)>, HandlerError> {
    link.spec
        .credentials
        .header(link.name(), cx.principal(), cx.caller_token())
        .await
        .map_err(HandlerError::failed)
}

/// The options of a forwarded request: the downstream client's
/// capabilities (so the upstream asks only for input the client can give),
/// the upstream's time limit, progress and logs relayed under the
/// downstream request's token and level, and, for an upstream that takes
/// each caller's own credential, the caller's. A caller without one is
/// refused, naming the upstream: never sent with the gateway's own.
async fn options(link: &Link, cx: &RequestContext) -> Result<RequestOptions, HandlerError> {
    let mut options = RequestOptions::new()
        .with_client_capabilities(cx.client_capabilities())
        .with_timeout(link.spec.timeout);
    let credential = caller_credential(link, cx).await?;
    if let Some((header, value)) = credential {
        options = options.with_http_header(header, value);
    }
    if cx.progress_enabled() {
        let cx = cx.clone();
        options = options.with_progress(move |p| {
            cx.report_progress(p.progress, p.total, p.message.as_deref());
        });
    }
    if let Some(level) = cx.log_level() {
        let cx = cx.clone();
        options = options.with_log(level, move |m| {
            cx.log(m.level, m.logger.as_deref(), m.data.clone());
        });
    }
    Ok(options)
}

/// The options of a forwarded `tools/call`: [`options`], with the
/// downstream client's declaration of the Tasks extension passed on only to
/// an upstream that offers it, so that the tools of any other are never
/// tasks.
///
/// Spec: extensions/tasks#capability-negotiation
async fn call_options(link: &Link, cx: &RequestContext) -> Result<RequestOptions, HandlerError> {
    let options = options(link, cx).await?;
    let declared = cx
        .client_capabilities()
        .extensions
        .as_ref()
        .is_some_and(|e| e.contains_key(TASKS_EXTENSION));
    // A task is followed with the gateway's own requests (`tasks/get`,
    // ...), which carry no caller's credential: an upstream that takes
    // each caller's own runs its tools as plain calls.
    let per_caller = !matches!(link.spec.credentials, Credentials::Gateway);
    if !declared || (link.offers_tasks() && !per_caller) {
        return Ok(options);
    }
    let mut capabilities = cx.client_capabilities().clone();
    if let Some(extensions) = &mut capabilities.extensions {
        extensions.remove(TASKS_EXTENSION);
    }
    Ok(options.with_client_capabilities(&capabilities))
}

/// The upstream's input requests, unchanged, with its state wrapped.
fn relay_input(link: &Link, ir: InputRequiredResult) -> InputRequired {
    let mut out = InputRequired::new();
    for (key, request) in ir.input_requests.into_iter().flatten() {
        out = out.request(key, request);
    }
    out.with_state(&Relay {
        u: link.name().to_owned(),
        s: ir.request_state,
        h: None,
    })
}

/// What a failed forward becomes: the upstream's own JSON-RPC error passes
/// through; anything else is text naming the upstream (an `isError` result
/// for a tool). A lost stdio connection wakes the supervisor.
fn failure(link: &Link, client: &toolwire::Client, e: ClientError) -> Result<String, HandlerError> {
    match e {
        ClientError::Rpc(e) => Err(HandlerError::Protocol(e)),
        ClientError::Timeout(t) => Ok(format!(
            "upstream {:?} did not answer within {} ms; the call was cancelled",
            link.name(),
            t.as_millis()
        )),
        other => {
            if client.connection_lost().is_some() {
                link.broken.notify_one();
            }
            Ok(format!("upstream {:?} failed: {other}", link.name()))
        }
    }
}
