//! `toolwire discover|list|call` (and, in `features.rs`, the commands for
//! resources, prompts, completion and change notifications): the MCP
//! client on the command line.
//!
//! The target is an `http://` URL of a server's MCP endpoint, or
//! `--stdio "command args"` to start the server and speak stdio to it.
//! Output is human-readable unless `--json` is given; progress is drawn on
//! stderr when it is a terminal; elicitation requests are answered with
//! `--input KEY=JSON` or prompted for on a terminal. Errors go to stderr and
//! exit non-zero.

mod arguments;
pub(crate) mod checks;
mod features;
mod form_check;
mod interact;
mod log;
mod render;
mod suggest;
mod words;

use anyhow::{Context as _, bail};
use clap::Args;
use std::io::{IsTerminal as _, Write as _};
use std::sync::Arc;
use std::time::Duration;
use toolwire::proto::types::ElicitRequestParams;
use toolwire::{Client, ClientBuilder, ProtocolMode, RequestOptions, ToolCall};

pub(crate) use arguments::build as build_arguments;
pub(crate) use features::target as split_target;
pub(crate) use features::{
    CompleteArgs, ListenArgs, ListingArgs, PromptArgs, ReadArgs, complete, listen, prompt, prompts,
    read, resources, templates,
};

/// Where the server is, and how to talk to it.
#[derive(Args, Debug)]
pub(crate) struct Connection {
    /// Start the server with this command line and speak stdio to it, for
    /// example --stdio "toolwire serve".
    #[arg(long, value_name = "COMMAND")]
    stdio: Option<String>,
    /// An HTTP header for every request, "Name: value" (repeatable; HTTP
    /// only; not the Mcp-* headers, which toolwire sets).
    #[arg(long = "header", value_name = "NAME: VALUE", value_parser = checks::header, conflicts_with = "stdio")]
    headers: Vec<(String, String)>,
    /// Set an environment variable for the --stdio server (repeatable).
    /// Leading NAME=value words of the --stdio command do the same.
    #[arg(long = "env", value_name = "KEY=VALUE", value_parser = checks::env, requires = "stdio")]
    envs: Vec<(String, String)>,
    /// Start the --stdio server in DIR.
    #[arg(long, value_name = "DIR", requires = "stdio")]
    cwd: Option<std::path::PathBuf>,
    /// Give up on a request that has neither answered nor reported progress
    /// for this many seconds (fractions allowed, for example 0.5; more than
    /// 0). A --stdio server is stopped then, within a short grace (a
    /// quarter of this, 2 s at most, before SIGTERM and again before
    /// SIGKILL).
    #[arg(long, value_name = "SECONDS", default_value = "300", value_parser = checks::timeout)]
    timeout: Duration,
    /// Give up on the whole command after this many seconds, however much
    /// progress it reports (fractions allowed; default: no limit).
    #[arg(long, value_name = "SECONDS", value_parser = checks::timeout)]
    max_time: Option<Duration>,
    /// Print JSON instead of text.
    #[arg(long)]
    json: bool,
    /// Which protocol era to speak: auto (probe with server/discover, fall
    /// back to the 2025 initialize handshake for a legacy server), modern
    /// (2026-07-28 only) or legacy (initialize only).
    #[arg(long, value_name = "MODE", default_value = "auto", value_parser = ["auto", "modern", "legacy"])]
    protocol: String,
    /// Trust the CA certificates in FILE (PEM) for https:// servers, beside
    /// the platform's roots (repeatable).
    #[arg(long, value_name = "FILE")]
    cacert: Vec<std::path::PathBuf>,
    /// Send `Authorization: Bearer $VAR` (HTTP only) instead of the token
    /// `toolwire auth login` stored for the server.
    #[arg(long, value_name = "VAR", conflicts_with = "stdio")]
    bearer_env: Option<String>,
}

/// `toolwire discover`.
#[derive(Args, Debug)]
pub(crate) struct DiscoverArgs {
    /// The server's MCP endpoint, an http:// URL (or use --stdio).
    #[arg(value_name = "URL")]
    url: Option<String>,
    #[command(flatten)]
    connection: Connection,
}

/// `toolwire list`.
#[derive(Args, Debug)]
pub(crate) struct ListArgs {
    /// The server's MCP endpoint, an http:// URL (or use --stdio).
    #[arg(value_name = "URL")]
    url: Option<String>,
    #[command(flatten)]
    connection: Connection,
}

/// `toolwire call`.
#[derive(Args, Debug)]
#[command(override_usage = "toolwire call [OPTIONS] <URL | --stdio COMMAND> <TOOL> [KEY=VALUE]...")]
pub(crate) struct CallArgs {
    /// [URL] TOOL [KEY=VALUE]...: the endpoint (unless --stdio is given), the
    /// tool, and its arguments, each value typed by the tool's input schema
    /// (for example steps=3 is a number if the schema says so).
    #[arg(value_name = "ARGS", required = true)]
    positional: Vec<String>,
    /// All arguments as one JSON object; KEY=VALUE pairs override its members.
    #[arg(long = "args", value_name = "JSON")]
    args_json: Option<String>,
    /// Answer the server's input request KEY: the JSON object a form asks
    /// for, or decline, or cancel (repeatable). KEY `*` answers any request
    /// no other KEY names (a legacy server's requests have no keys).
    #[arg(long = "input", value_name = "KEY=JSON")]
    inputs: Vec<String>,
    /// Print the call's progress on stderr as lines, when stderr is not a
    /// terminal (a terminal always shows a progress bar).
    #[arg(long)]
    progress: bool,
    /// Declare the Tasks extension (io.modelcontextprotocol/tasks): a tool
    /// that supports tasks runs as one, polled until it ends, its input
    /// requests asked as for any call.
    #[arg(long)]
    task: bool,
    /// With --task: print the task id as soon as the call is a task, and
    /// exit (follow it later with `toolwire task wait`).
    #[arg(long, requires = "task")]
    detach: bool,
    /// Refuse a KEY=VALUE whose KEY the tool's input schema does not
    /// declare, instead of warning and sending it.
    #[arg(long)]
    strict: bool,
    #[command(flatten)]
    log: log::LogArgs,
    #[command(flatten)]
    connection: Connection,
}

/// What `toolwire task` does with a task.
#[derive(clap::ValueEnum, Clone, Copy, Debug)]
pub(crate) enum TaskAction {
    /// Print the task's status (tasks/get).
    Get,
    /// Follow the task to its end, answering its input requests, and print
    /// its result as `call` does.
    Wait,
    /// Ask the server to cancel the task (tasks/cancel).
    Cancel,
}

/// `toolwire task`.
#[derive(Args, Debug)]
#[command(
    override_usage = "toolwire task <get|wait|cancel> [OPTIONS] <URL | --stdio COMMAND> <ID>"
)]
pub(crate) struct TaskArgs {
    /// What to do.
    action: TaskAction,
    /// The endpoint, or the task id when --stdio is given.
    ///
    /// Ids are the server's own and may start with `-` (fastmcp's do):
    /// such a value is taken as it is, not as an option, unless every letter
    /// of it is one of this command's short options.
    #[arg(value_name = "URL", allow_hyphen_values = true)]
    first: String,
    /// The task id, after a URL.
    #[arg(value_name = "ID", allow_hyphen_values = true)]
    second: Option<String>,
    /// Answer the task's input request KEY (as for `call`; repeatable).
    #[arg(long = "input", value_name = "KEY=JSON")]
    inputs: Vec<String>,
    #[command(flatten)]
    connection: Connection,
}

/// The longest a --stdio server gets to exit at each step of its shutdown.
const CLOSE_GRACE: Duration = Duration::from_secs(2);

/// Runs a client's work until it ends, `--max-time` passes, or SIGINT or
/// SIGTERM arrives. The last two drop the work, which cancels its request;
/// the caller then closes the client, which stops a --stdio server.
pub(crate) async fn bounded<T>(
    c: &Connection,
    work: impl Future<Output = anyhow::Result<T>>,
) -> anyhow::Result<T> {
    let limited = async {
        match c.max_time {
            Some(m) => tokio::time::timeout(m, work)
                .await
                .unwrap_or_else(|_| bail!("no result within --max-time {m:?}; stopped")),
            None => work.await,
        }
    };
    tokio::select! {
        r = limited => r,
        () = toolwire::shutdown_signal() => bail!("interrupted; stopped"),
    }
}

/// Closes the connection. A `--stdio` server that turned out to be of the
/// initialize era, found by probing (`--protocol auto`), gets a hint: the
/// probe's `server/discover` is a method it does not know, and some such
/// servers print pages of validation errors about it on every command.
pub(crate) async fn close(client: &Client, c: &Connection) {
    if c.stdio.is_some()
        && c.protocol == "auto"
        && matches!(client.era(), Some(toolwire::ProtocolEra::Legacy))
    {
        eprintln!(
            "toolwire: hint: this server speaks the initialize-era protocol; --protocol legacy \
             skips the server/discover probe it may print errors about"
        );
    }
    let _ = client.close().await;
}

/// Builds the client for `url` or `--stdio`.
pub(crate) fn connect(
    url: Option<&str>,
    c: &Connection,
    builder: ClientBuilder,
) -> anyhow::Result<Client> {
    let mode: ProtocolMode = c.protocol.parse().map_err(anyhow::Error::msg)?;
    let mut builder = builder
        .with_request_timeout(Some(c.timeout))
        .with_max_request_time(c.max_time)
        // After a timeout the command ends soon: a --stdio server gets a
        // quarter of the timeout (2 s at most) to exit after its stdin
        // closes, and as much after SIGTERM, before SIGKILL.
        .with_close_grace((c.timeout / 4).min(CLOSE_GRACE))
        .with_protocol_mode(mode);
    match (url, &c.stdio) {
        (Some(_), Some(_)) => bail!("give either a URL or --stdio, not both"),
        (None, None) => bail!("no server: give its http:// URL or --stdio \"command args\""),
        (Some(url), None) => {
            for file in &c.cacert {
                let pem = std::fs::read(file)
                    .with_context(|| format!("--cacert: cannot read {}", file.display()))?;
                builder = builder.with_ca_pem(pem);
            }
            for (name, value) in &c.headers {
                builder = builder.with_http_header(name, value);
            }
            // An explicit `--header "Authorization: …"` wins over the store.
            if !c
                .headers
                .iter()
                .any(|(name, _)| name.eq_ignore_ascii_case("authorization"))
            {
                builder = crate::auth_cmd::credentials(builder, url, c.bearer_env.as_deref())?;
            }
            builder
                .connect_http(url)
                .with_context(|| format!("cannot use {url}"))
        }
        (None, Some(line)) => {
            let words = words::split(line).context("--stdio")?;
            // `NAME=value cmd …` sets NAME for cmd, as a shell would.
            let assignments = words
                .iter()
                .map_while(|w| checks::assignment(w))
                .collect::<Vec<_>>();
            let Some((program, args)) = words[assignments.len()..].split_first() else {
                bail!("--stdio needs a command");
            };
            let mut command = tokio::process::Command::new(program);
            command
                .args(args)
                .envs(assignments)
                .envs(c.envs.iter().cloned());
            if let Some(dir) = &c.cwd {
                command.current_dir(dir);
            }
            builder
                .spawn(command)
                .with_context(|| format!("cannot start {program:?}"))
        }
    }
}

/// Writes `text` to stdout, flushed.
pub(crate) fn print(text: &str) -> anyhow::Result<()> {
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_bytes())?;
    out.flush()?;
    Ok(())
}

/// `toolwire discover`: versions, capabilities, instructions.
pub(crate) async fn discover(a: DiscoverArgs) -> anyhow::Result<()> {
    let client = connect(a.url.as_deref(), &a.connection, ClientBuilder::new())?;
    let result = bounded(&a.connection, async {
        client.discover().await.context("server/discover failed")
    })
    .await;
    close(&client, &a.connection).await;
    let d = result?;
    let era = client
        .era()
        .map_or_else(|| "?".to_owned(), |e| e.to_string());
    let version = client.protocol_version();
    print(&if a.connection.json {
        render::discover_json(&d, &era, &version)
    } else {
        format!("era:          {era} ({version})\n{}", render::discover(&d))
    })
}

/// `toolwire list`: the tools and their parameters.
pub(crate) async fn list(a: ListArgs) -> anyhow::Result<()> {
    let client = connect(a.url.as_deref(), &a.connection, ClientBuilder::new())?;
    let result = bounded(&a.connection, async {
        client.list_tools().await.context("tools/list failed")
    })
    .await;
    close(&client, &a.connection).await;
    let tools = result?;
    print(&if a.connection.json {
        render::json(&tools)
    } else {
        render::tools(&tools, &|name| client.property_order(name))
    })
}

/// `toolwire call`: one tool call, answering input requests on the way.
/// Exits non-zero when the tool reports an error.
pub(crate) async fn call(a: CallArgs) -> anyhow::Result<()> {
    let mut positional = a.positional.iter().map(String::as_str);
    let url = if a.connection.stdio.is_none() {
        positional.next()
    } else {
        None
    };
    let Some(tool) = positional.next() else {
        bail!("which tool? usage: toolwire call <URL | --stdio COMMAND> <TOOL> [KEY=VALUE]...");
    };
    let pairs: Vec<String> = positional.map(str::to_owned).collect();
    let answers = Arc::new(interact::Answers::parse(&a.inputs)?);
    let show = if std::io::stderr().is_terminal() {
        interact::ProgressShow::Bar
    } else if a.progress {
        interact::ProgressShow::Lines
    } else {
        interact::ProgressShow::Hidden
    };
    let bar = interact::ProgressBar::new(show);
    let (answers_h, bar_h) = (Arc::clone(&answers), bar.clone());
    let mut builder =
        ClientBuilder::new().with_elicitation(move |key: String, request: ElicitRequestParams| {
            interact::elicit(Arc::clone(&answers_h), bar_h.clone(), key, request)
        });
    if a.task {
        builder = builder.with_tasks();
    }
    let client = connect(url, &a.connection, builder)?;
    let options = a.log.apply(RequestOptions::new(), &bar);
    let following = std::sync::Mutex::new(None);
    let run = Run {
        client: &client,
        tool,
        args_json: a.args_json.as_deref(),
        pairs: &pairs,
        strict: a.strict,
        bar: &bar,
        detach: a.detach,
        following: a.task.then_some(&following),
    };
    let outcome = bounded(&a.connection, run_call(run, options)).await;
    // Interrupted (or out of --max-time) while following a task: the task
    // is cancelled, not left running on the server.
    let handle = following.lock().ok().and_then(|mut h| h.take());
    if outcome.is_err()
        && let Some(handle) = handle
    {
        cancel_unfinished(&handle).await;
    }
    bar.clear();
    close(&client, &a.connection).await;
    let unused = answers.unused();
    if !unused.is_empty() {
        tracing::warn!(
            "the server never asked for --input {}",
            unused.join(", --input ")
        );
    }
    let outcome = match outcome {
        Err(e) if a.connection.json => {
            // A script reading --json gets JSON for a failure too.
            print(&render::json(&failure_json(&e)))?;
            return Err(e);
        }
        outcome => outcome?,
    };
    let result = match outcome {
        Called::Result(result) => result,
        Called::Task(id) => {
            if a.connection.json {
                print(&format!("{}\n", serde_json::json!({ "taskId": id })))?;
            } else {
                print(&format!("{id}\n"))?;
            }
            return Ok(());
        }
    };
    if a.connection.json {
        print(&render::json(&result))?;
    } else if result.is_error() {
        eprint!("{}", render::call(&result));
    } else {
        print(&render::call(&result))?;
    }
    if result.is_error() {
        bail!("tool {tool:?} reported an error");
    }
    Ok(())
}

/// A failed call as `--json` prints it: `{"error": {"message", "code"?,
/// "data"?}}`, with the server's JSON-RPC error when it sent one.
fn failure_json(e: &anyhow::Error) -> serde_json::Value {
    let rpc = e
        .chain()
        .find_map(|c| c.downcast_ref::<toolwire::ClientError>())
        .and_then(toolwire::ClientError::rpc);
    let mut error = serde_json::json!({ "message": format!("{e:#}") });
    if let Some(rpc) = rpc {
        error["code"] = serde_json::json!(rpc.code.0);
        if let Some(data) = &rpc.data {
            error["data"] = data.clone();
        }
    }
    serde_json::json!({ "error": error })
}

/// One `toolwire call`'s call.
struct Run<'a> {
    client: &'a Client,
    tool: &'a str,
    args_json: Option<&'a str>,
    pairs: &'a [String],
    /// `--strict`: an undeclared argument name is an error, not a warning.
    strict: bool,
    bar: &'a interact::ProgressBar,
    /// `--detach`: the task id once the call is a task.
    detach: bool,
    /// `--task` without `--detach`: where the task being followed is kept,
    /// so that an interrupted call can cancel it.
    following: Option<&'a std::sync::Mutex<Option<toolwire::TaskHandle>>>,
}

/// Cancels the task unless it ended, saying so on stderr.
async fn cancel_unfinished(handle: &toolwire::TaskHandle) {
    let within = Duration::from_secs(5);
    let ended = tokio::time::timeout(within, handle.get())
        .await
        .ok()
        .and_then(Result::ok)
        .is_some_and(|t| t.state.status().is_terminal());
    if ended {
        return;
    }
    eprintln!("toolwire: cancelling task {}", handle.id());
    match tokio::time::timeout(within, handle.cancel()).await {
        Ok(Ok(())) => {}
        Ok(Err(e)) => tracing::warn!("cancelling task {} failed: {e}", handle.id()),
        Err(_) => tracing::warn!(
            "cancelling task {} took too long; it may still run",
            handle.id()
        ),
    }
}

/// How a call ended: its result, or (with `--detach`) the task it became.
enum Called {
    Result(toolwire::proto::types::CallToolResult),
    Task(String),
}

async fn run_call(run: Run<'_>, options: RequestOptions) -> anyhow::Result<Called> {
    let Run {
        client,
        tool,
        args_json,
        pairs,
        strict,
        bar,
        detach,
        following,
    } = run;
    let tools = client.list_tools().await.context("tools/list failed")?;
    let definition = tools.iter().find(|t| t.name == tool);
    // A tool the server does not list may still answer (it is called
    // anyway); if the call fails, the error names the tools that exist.
    let unlisted = definition.is_none().then(|| {
        let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        let near = suggest::closest(tool, names.iter().copied())
            .map(|n| format!("did you mean {n}? "))
            .unwrap_or_default();
        if names.is_empty() {
            format!("{tool:?} is not listed: the server lists no tools")
        } else {
            format!(
                "{tool:?} is not listed: {near}the server's tools are {}",
                names.join(", ")
            )
        }
    });
    if definition.is_none() && !pairs.is_empty() {
        tracing::warn!("tool {tool:?} is not listed; arguments are not typed by its schema");
    }
    let failed = |e: anyhow::Error| match &unlisted {
        Some(hint) => e.context(hint.clone()),
        None => e,
    };
    let arguments = arguments::build(definition.map(render::schema_of), args_json, pairs, strict)?;
    // Always ask for progress: it keeps the idle --timeout from cutting off
    // a long call that reports it, and reaches a log with --progress.
    let progress_bar = bar.clone();
    let options = options.with_progress(move |p| progress_bar.update(p));
    let call = ToolCall::new(tool)
        .with_arguments(serde_json::Value::Object(arguments))
        .with_options(options);
    if detach || following.is_some() {
        let handle = match client
            .start_tool(call)
            .await
            .with_context(|| format!("calling {tool:?} failed"))
            .map_err(failed)?
        {
            toolwire::Started::Task(handle) => handle,
            toolwire::Started::Done(result) => return Ok(Called::Result(result)),
        };
        if detach {
            return Ok(Called::Task(handle.id().to_owned()));
        }
        if let Some(slot) = following
            && let Ok(mut slot) = slot.lock()
        {
            *slot = Some(handle.clone());
        }
        // The task's status and statusMessage (its progress, on a toolwire
        // server) on the bar as it is polled.
        let status_bar = bar.clone();
        return handle
            .on_status(move |task| status_bar.task_status(task))
            .wait()
            .await
            .map(Called::Result)
            .with_context(|| format!("calling {tool:?} failed"));
    }
    client
        .call_tool_with(call)
        .await
        .map(Called::Result)
        .with_context(|| format!("calling {tool:?} failed"))
        .map_err(failed)
}

/// `toolwire task get|wait|cancel`: one task, by id, on the server the
/// connection options name.
pub(crate) async fn task(a: TaskArgs) -> anyhow::Result<()> {
    let (url, id) = match (a.connection.stdio.is_some(), a.second.as_deref()) {
        (false, Some(id)) => (Some(a.first.as_str()), id),
        (true, None) => (None, a.first.as_str()),
        _ => {
            bail!("which task? usage: toolwire task <get|wait|cancel> <URL | --stdio COMMAND> <ID>")
        }
    };
    let answers = Arc::new(interact::Answers::parse(&a.inputs)?);
    let show = if std::io::stderr().is_terminal() {
        interact::ProgressShow::Bar
    } else {
        interact::ProgressShow::Hidden
    };
    let bar = interact::ProgressBar::new(show);
    let (answers_h, bar_h) = (Arc::clone(&answers), bar.clone());
    let builder = ClientBuilder::new().with_tasks().with_elicitation(
        move |key: String, request: ElicitRequestParams| {
            interact::elicit(Arc::clone(&answers_h), bar_h.clone(), key, request)
        },
    );
    let client = connect(url, &a.connection, builder)?;
    let handle = client.task(id);
    let json = a.connection.json;
    let outcome = bounded(&a.connection, async {
        match a.action {
            TaskAction::Get => {
                let task = handle.get().await.context("tasks/get failed")?;
                let v = serde_json::to_value(&task).context("the task does not serialise")?;
                if json {
                    print(&format!("{v}\n"))?;
                } else {
                    let message = task.info.status_message.as_deref().unwrap_or_default();
                    let status = v["status"].as_str().unwrap_or_default();
                    print(&format!(
                        "{id}: {status}{}{message}\n",
                        if message.is_empty() { "" } else { ": " }
                    ))?;
                }
                Ok(None)
            }
            TaskAction::Wait => {
                let status_bar = bar.clone();
                handle
                    .clone()
                    .on_status(move |task| status_bar.task_status(task))
                    .wait()
                    .await
                    .map(Some)
                    .context("following the task failed")
            }
            TaskAction::Cancel => {
                handle.cancel().await.context("tasks/cancel failed")?;
                if !json {
                    print(&format!("{id}: cancel requested\n"))?;
                }
                Ok(None)
            }
        }
    })
    .await;
    bar.clear();
    close(&client, &a.connection).await;
    let Some(result) = outcome? else {
        return Ok(());
    };
    if json {
        print(&render::json(&result))?;
    } else if result.is_error() {
        eprint!("{}", render::call(&result));
    } else {
        print(&render::call(&result))?;
    }
    if result.is_error() {
        bail!("the task's tool reported an error");
    }
    Ok(())
}
