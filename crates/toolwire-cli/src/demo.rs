//! The demo tool set served by `toolwire serve`. Other parts of the project
//! (tests, benchmarks) rely on these names and behaviours.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolwire::proto::types::LoggingLevel;
use toolwire::task::TaskSupport;
use toolwire::{
    ElicitAnswer, InputRequired, RegistrationError, RequestContext, Server, Tool, ToolError,
    ToolResult,
};
use toolwire_replica::{Relay, SharedTools, ToolFactory};

/// The demo tools with a one-line summary each, for `serve --help`. A test
/// checks this against what [`register`] registers.
pub(crate) const TOOLS: [(&str, &str); 8] = [
    ("echo", "echoes `text` back"),
    ("add", "adds `a` and `b`; structured output {sum}"),
    (
        "countdown",
        "counts `steps` steps, reporting progress and logging each at debug",
    ),
    (
        "regional_echo",
        "echoes `text` with its `region`; mirrors `region` and `priority` into headers",
    ),
    (
        "confirm_action",
        "asks the user to confirm `action` (form elicitation)",
    ),
    (
        "define_tool",
        "registers a tool `name` answering `text` (over HTTP only with --allow-define)",
    ),
    (
        "undefine_tool",
        "removes a tool define_tool registered (over HTTP only with --allow-define)",
    ),
    (
        "report",
        "writes a `pages`-page report, as a task where supported; `publish` asks first",
    ),
];

/// The "Demo tools:" section of `serve --help`, from [`TOOLS`].
pub(crate) fn tools_help() -> String {
    let width = TOOLS.iter().map(|(n, _)| n.len()).max().unwrap_or(0);
    let mut text = String::from("Demo tools:\n");
    for (name, summary) in TOOLS {
        text.push_str(&format!("  {name:<width$}  {summary}\n"));
    }
    text
}

/// The most tools `define_tool` keeps at once.
const MAX_DEFINED: usize = 32;

/// The longest `text` a defined tool answers with, in characters (its
/// input schema's `maxLength`): with [`MAX_DEFINED`], what callers can make
/// the server keep is bounded (tool names are at most 128 characters).
const MAX_DEFINED_TEXT: usize = 4096;

#[derive(Deserialize, JsonSchema)]
struct EchoInput {
    /// The text to echo back.
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct AddInput {
    /// The first addend.
    a: f64,
    /// The second addend.
    b: f64,
}

#[derive(Serialize, JsonSchema)]
struct AddOutput {
    /// `a + b`.
    sum: f64,
}

#[derive(Deserialize, JsonSchema)]
struct CountdownInput {
    /// How many steps to count.
    #[schemars(range(min = 1, max = 1000))]
    steps: u32,
    /// Pause before each step, in milliseconds.
    #[schemars(range(min = 0, max = 10000))]
    interval_ms: u64,
}

#[derive(Deserialize)]
struct RegionalEchoInput {
    region: String,
    /// An integer-valued float (`42.0`) converts: the schema says
    /// `integer`, and the tool builder reads such numbers as integers.
    #[allow(dead_code)]
    #[serde(default)]
    priority: Option<i64>,
    text: String,
}

/// `a + b`, or a tool error when the sum is not a finite number: JSON has
/// no infinity, so `sum` could not be written (serde would write `null`,
/// which the output schema refuses, and the call would end in `-32603`).
// Spec: server/tools.mdx#error-handling — a failure of the tool's own
// computation is a tool execution error (`isError`), not a protocol error.
fn add(i: &AddInput) -> Result<AddOutput, ToolError> {
    let sum = i.a + i.b;
    if sum.is_finite() {
        Ok(AddOutput { sum })
    } else {
        Err(ToolError::failed(format!(
            "{} + {} is not a finite number (the sum overflows)",
            i.a, i.b
        )))
    }
}

#[derive(Deserialize, JsonSchema)]
struct ConfirmInput {
    /// The action the user must confirm.
    action: String,
}

/// The form `confirm_action` asks the user to fill in.
#[derive(Deserialize, JsonSchema)]
struct Confirmation {
    /// Whether to go ahead with the action.
    confirm: bool,
}

#[derive(Deserialize, JsonSchema)]
struct DefineInput {
    /// The new tool's name.
    name: String,
    /// The text the new tool answers with.
    #[schemars(length(max = MAX_DEFINED_TEXT))]
    text: String,
}

#[derive(Deserialize, JsonSchema)]
struct UndefineInput {
    /// The name of a tool `define_tool` registered.
    name: String,
}

/// Adds the demo tools to `server`; `define_tool` and `undefine_tool` only
/// when `define` is set. With `shared` (a bus is configured),
/// `define_tool` and `undefine_tool` change the tools of every replica.
pub(crate) fn register(
    server: &Server,
    shared: Option<SharedTools>,
    define: bool,
) -> Result<(), RegistrationError> {
    server.add_tool(
        Tool::builder("echo")
            .description("Echoes the given text back.")
            .input::<EchoInput>()
            .handler(|i: EchoInput, _| async move { i.text })?,
    )?;
    server.add_tool(
        Tool::builder("add")
            .description("Adds two numbers and returns their sum as structured content.")
            .input::<AddInput>()
            .output::<AddOutput>()
            .handler(|i: AddInput, _| async move { add(&i) })?,
    )?;
    server.add_tool(
        Tool::builder("countdown")
            .description(
                "Counts `steps` steps, sleeping `interval_ms` before each, reporting progress \
                 and logging each step at debug level.",
            )
            .input::<CountdownInput>()
            .handler(countdown)?,
    )?;
    server.add_tool(
        Tool::builder("regional_echo")
            .description("Echoes text prefixed with its region. `region` and `priority` are mirrored into HTTP headers.")
            .input_with_schema::<RegionalEchoInput>(json!({
                "type": "object",
                "properties": {
                    "region": {"type": "string", "description": "Routing region.", "x-mcp-header": "Region"},
                    "priority": {"type": "integer", "description": "Optional priority.", "x-mcp-header": "Priority"},
                    "text": {"type": "string", "description": "The text to echo."}
                },
                "required": ["region", "text"],
                "additionalProperties": false
            }))
            .handler(|i: RegionalEchoInput, _| async move { format!("{}: {}", i.region, i.text) })?,
    )?;
    server.add_tool(
        Tool::builder("confirm_action")
            .description(
                "Asks the user to confirm `action` (a form elicitation; needs the client's \
                 elicitation capability) and answers \"confirmed: <action>\" or, if the user \
                 declines, cancels or does not confirm, an error \"not confirmed: <action>\".",
            )
            .input::<ConfirmInput>()
            .handler(confirm_action)?,
    )?;
    if define {
        register_define(server, shared)?;
    }
    server.add_tool(
        Tool::builder("report")
            .description(
                "Writes a report of `pages` pages (0.3 s each), reporting progress. With \
                 `publish`, asks the user to confirm publishing it (form elicitation). Runs as \
                 a task (io.modelcontextprotocol/tasks) for a client that declares the \
                 extension, as a plain call otherwise. Idempotent: if the replica writing it \
                 stops, another one writes it again.",
            )
            .task(TaskSupport::Optional)
            .rerun()
            .task_poll_interval(Duration::from_millis(500))
            .input::<ReportInput>()
            .handler(report)?,
    )?;
    crate::demo_features::register(server)?;
    Ok(())
}

/// `define_tool` and `undefine_tool`: any caller changes the tool list
/// every client sees, within [`MAX_DEFINED`] tools of [`MAX_DEFINED_TEXT`].
fn register_define(server: &Server, shared: Option<SharedTools>) -> Result<(), RegistrationError> {
    let defined: Arc<Mutex<BTreeSet<String>>> = Arc::default();
    let (srv, names, on_bus) = (server.clone(), Arc::clone(&defined), shared.clone());
    server.add_tool(
        Tool::builder("define_tool")
            .description(
                "Registers a new tool `name` that answers with `text`. The tool list changes: \
                 subscribers to tools/list_changed are notified.",
            )
            .input::<DefineInput>()
            .handler(move |i: DefineInput, _| {
                let (srv, names, on_bus) = (srv.clone(), Arc::clone(&names), on_bus.clone());
                async move {
                    match on_bus {
                        Some(shared) => define_shared(&shared, i).await,
                        None => define_tool(&srv, &names, i),
                    }
                }
            })?,
    )?;
    let srv = server.clone();
    server.add_tool(
        Tool::builder("undefine_tool")
            .description(
                "Removes a tool that define_tool registered. The tool list changes: \
                 subscribers to tools/list_changed are notified.",
            )
            .input::<UndefineInput>()
            .handler(move |i: UndefineInput, _| {
                let (srv, names, on_bus) = (srv.clone(), Arc::clone(&defined), shared.clone());
                async move {
                    match on_bus {
                        Some(shared) => undefine_shared(&shared, &i.name).await,
                        None => undefine_tool(&srv, &names, &i.name),
                    }
                }
            })?,
    )?;
    Ok(())
}

/// Spec: basic/patterns/mrtr.mdx — round 1 asks; the retry reads the answer.
async fn confirm_action(i: ConfirmInput, cx: RequestContext) -> Result<ToolResult, ToolError> {
    Ok(match cx.input::<ElicitAnswer<Confirmation>>("confirm")? {
        Some(ElicitAnswer::Accept(Confirmation { confirm: true })) => {
            ToolResult::text(format!("confirmed: {}", i.action))
        }
        Some(_) => ToolResult::error_text(format!("not confirmed: {}", i.action)),
        // No answer yet (or the retry missed the key): ask.
        None => InputRequired::new()
            .elicit::<Confirmation>("confirm", format!("Confirm: {}?", i.action))
            .into(),
    })
}

fn define_tool(
    server: &Server,
    defined: &Mutex<BTreeSet<String>>,
    i: DefineInput,
) -> Result<String, ToolError> {
    let Ok(mut names) = defined.lock() else {
        return Err(ToolError::failed("the tool registry is unavailable"));
    };
    if names.len() >= MAX_DEFINED {
        return Err(ToolError::failed(format!(
            "at most {MAX_DEFINED} tools may be defined; undefine one first"
        )));
    }
    answering(&i.name, i.text)
        .and_then(|tool| server.add_tool(tool))
        .map_err(ToolError::failed)?;
    names.insert(i.name.clone());
    Ok(format!("defined {}", i.name))
}

/// The tool `define_tool` registers: `name`, answering `text`.
fn answering(name: &str, text: String) -> Result<Tool, RegistrationError> {
    Tool::builder(name)
        .description(format!(
            "Answers {text:?} (defined at run time by define_tool)."
        ))
        .input_schema(json!({"type": "object", "properties": {}}))
        .handler(move |_: serde_json::Value, _| {
            let text = text.clone();
            async move { text }
        })
}

/// The tools `define_tool` shares through the bus at `relay`: each stored
/// definition is `{"text": …}`, and every replica builds the same tool from
/// it with [`answering`].
pub(crate) async fn shared_tools(relay: &Relay, server: &Server) -> anyhow::Result<SharedTools> {
    let factory: ToolFactory = Arc::new(|name, definition| {
        let text = definition
            .get("text")
            .and_then(serde_json::Value::as_str)
            .ok_or("the definition has no \"text\"")?;
        answering(name, text.to_owned()).map_err(|e| e.to_string())
    });
    SharedTools::attach(relay, server.clone(), factory, MAX_DEFINED)
        .await
        .map_err(|e| anyhow::anyhow!("loading the shared tools from the bus: {e}"))
}

/// `define_tool` with a bus: on every replica.
async fn define_shared(shared: &SharedTools, i: DefineInput) -> Result<String, ToolError> {
    shared
        .define(&i.name, json!({ "text": i.text }))
        .await
        .map_err(ToolError::failed)?;
    Ok(format!("defined {}", i.name))
}

/// `undefine_tool` with a bus: on every replica.
async fn undefine_shared(shared: &SharedTools, name: &str) -> Result<String, ToolError> {
    shared.undefine(name).await.map_err(ToolError::failed)?;
    Ok(format!("undefined {name}"))
}

fn undefine_tool(
    server: &Server,
    defined: &Mutex<BTreeSet<String>>,
    name: &str,
) -> Result<String, ToolError> {
    let Ok(mut names) = defined.lock() else {
        return Err(ToolError::failed("the tool registry is unavailable"));
    };
    if !names.remove(name) {
        return Err(ToolError::failed(format!(
            "{name:?} was not defined by define_tool"
        )));
    }
    server.remove_tool(name);
    Ok(format!("undefined {name}"))
}

#[derive(Deserialize, JsonSchema)]
struct ReportInput {
    /// How many pages to write.
    #[schemars(range(min = 1, max = 100))]
    pages: u32,
    /// Ask the user to confirm publishing the report once it is written.
    #[serde(default)]
    publish: bool,
}

#[derive(Deserialize, JsonSchema)]
struct Publish {
    /// Whether to publish the report.
    publish: bool,
}

/// The same code as a plain call and inside a task: progress becomes the
/// task's status message, the confirmation its `input_required`.
async fn report(i: ReportInput, cx: RequestContext) -> Result<ToolResult, ToolError> {
    let pages = i.pages.clamp(1, 100);
    // A retry (MRTR, or the task's next round) already wrote the report.
    let answer = cx.input::<ElicitAnswer<Publish>>("publish")?;
    if answer.is_none() {
        for page in 1..=pages {
            tokio::select! {
                () = tokio::time::sleep(Duration::from_millis(300)) => {}
                () = cx.cancelled() => return Err(ToolError::failed("report cancelled")),
            }
            cx.report_progress(
                f64::from(page),
                Some(f64::from(pages)),
                Some(&format!("page {page} of {pages}")),
            );
        }
        if i.publish {
            return Ok(InputRequired::new()
                .elicit::<Publish>("publish", format!("Publish the {pages}-page report?"))
                .into());
        }
    }
    let published = matches!(
        answer,
        Some(ElicitAnswer::Accept(Publish { publish: true }))
    );
    Ok(ToolResult::text(format!(
        "report of {pages} pages written{}{}",
        if published { " and published" } else { "" },
        if cx.is_task() { ", as a task" } else { "" }
    )))
}

async fn countdown(i: CountdownInput, cx: RequestContext) -> Result<String, ToolError> {
    let total = f64::from(i.steps);
    for step in 1..=i.steps {
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(i.interval_ms)) => {}
            () = cx.cancelled() => return Err(ToolError::failed("cancelled")),
        }
        cx.report_progress(f64::from(step), Some(total), Some(&format!("step {step}")));
        cx.log(
            LoggingLevel::Debug,
            Some("countdown"),
            json!({ "step": step, "of": i.steps }),
        );
    }
    Ok(format!("done after {} steps", i.steps))
}

#[cfg(test)]
mod tests {
    use super::{TOOLS, register};
    use toolwire::{Server, ServerConfig};

    #[test]
    fn the_help_list_matches_the_registered_tools() {
        let server = Server::new(ServerConfig::new("demo", "0"));
        register(&server, None, true).expect("register");
        let mut registered = server.tool_names();
        registered.sort();
        let mut listed: Vec<String> = TOOLS.iter().map(|(n, _)| (*n).to_owned()).collect();
        listed.sort();
        assert_eq!(listed, registered);
    }

    #[test]
    fn define_is_left_out_unless_asked() {
        let server = Server::new(ServerConfig::new("demo", "0"));
        register(&server, None, false).expect("register");
        let names = server.tool_names();
        assert!(!names.iter().any(|n| n.contains("define")), "{names:?}");
        assert!(names.iter().any(|n| n == "echo"));
    }
}
