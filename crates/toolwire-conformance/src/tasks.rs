//! The Tasks extension's fixtures (the suite's `tasks-*` scenarios): a
//! synchronous `greet`, and tools that run as tasks: a slow computation
//! that honours cancellation, a tool error, a protocol error, input asked
//! inside a task (one request, then two at once), and input asked
//! synchronously before the call becomes a task.
//!
//! Spec: extensions/tasks

use crate::mrtr::UserName;
use crate::tools::tool;
use schemars::JsonSchema;
use serde::Deserialize;
use serde_json::Value;
use std::time::Duration;
use toolwire::task::TaskSupport;
use toolwire::{
    ElicitAnswer, HandlerError, InputRequired, RegistrationError, RequestContext, Server, Tool,
    ToolError, ToolResult,
};

#[derive(Deserialize, JsonSchema)]
struct Greet {
    /// Who to greet.
    name: String,
}

#[derive(Deserialize, JsonSchema)]
struct SlowCompute {
    /// How long to work, in seconds (0 answers at once).
    seconds: f64,
    /// A label echoed in the result.
    #[serde(default)]
    label: Option<String>,
}

#[derive(Deserialize, JsonSchema)]
struct ConfirmDelete {
    /// The file to delete.
    filename: String,
}

/// The form of "Delete this file?".
#[derive(Deserialize, JsonSchema)]
struct Confirm {
    /// Whether to go ahead.
    confirm: bool,
}

/// The form `multi_input` asks twice.
#[derive(Deserialize, JsonSchema)]
struct Detail {
    /// A name.
    #[serde(default)]
    name: Option<String>,
    /// Whether to go ahead.
    #[serde(default)]
    confirm: Option<bool>,
}

async fn slow_compute(input: SlowCompute, cx: RequestContext) -> Result<String, ToolError> {
    let label = input.label.unwrap_or_else(|| "job".to_owned());
    let seconds = if input.seconds.is_finite() {
        input.seconds.clamp(0.0, 3600.0)
    } else {
        0.0
    };
    let steps = (seconds * 4.0).ceil().max(1.0);
    for step in 1..=(steps as u32) {
        tokio::select! {
            () = cx.cancelled() => return Err(ToolError::failed(format!("{label}: cancelled"))),
            () = tokio::time::sleep(Duration::from_secs_f64(seconds / steps)) => {}
        }
        cx.report_progress(
            f64::from(step),
            Some(steps),
            Some(&format!("{label}: step {step}")),
        );
    }
    Ok(format!("{label}: computed in {seconds} s"))
}

async fn failing_job(_: Value, cx: RequestContext) -> ToolResult {
    tokio::select! {
        () = cx.cancelled() => {}
        () = tokio::time::sleep(Duration::from_secs(1)) => {}
    }
    ToolResult::error_text("failing_job: the job failed, as it always does")
}

async fn protocol_error_job(_: Value, _: RequestContext) -> Result<ToolResult, ToolError> {
    Err(HandlerError::internal(
        "protocol_error_job: the server failed while running the job",
    ))
}

async fn confirm_delete(input: ConfirmDelete, cx: RequestContext) -> Result<ToolResult, ToolError> {
    match cx.input::<ElicitAnswer<Confirm>>("confirm")? {
        Some(ElicitAnswer::Accept(Confirm { confirm: true })) => {
            Ok(ToolResult::text(format!("Deleted {}", input.filename)))
        }
        Some(_) => Ok(ToolResult::text(format!("Kept {}", input.filename))),
        None => Ok(InputRequired::new()
            .elicit::<Confirm>("confirm", format!("Delete {}?", input.filename))
            .into()),
    }
}

async fn multi_input(_: Value, cx: RequestContext) -> Result<ToolResult, ToolError> {
    let first = cx.input::<ElicitAnswer<Detail>>("first")?;
    let second = cx.input::<ElicitAnswer<Detail>>("second")?;
    match (first, second) {
        (Some(first), Some(second)) => {
            let name = |a: ElicitAnswer<Detail>| {
                a.accepted()
                    .and_then(|d| d.name.filter(|_| d.confirm != Some(false)))
                    .unwrap_or_else(|| "(declined)".to_owned())
            };
            Ok(ToolResult::text(format!(
                "Received {} and {}",
                name(first),
                name(second)
            )))
        }
        _ => Ok(InputRequired::new()
            .elicit::<Detail>("first", "First detail")
            .elicit::<Detail>("second", "Second detail")
            .into()),
    }
}

/// Round 1 asks for the user's name synchronously (MRTR); round 2 becomes
/// a task, whose result greets them.
async fn tool_with_task(_: Value, cx: RequestContext) -> Result<ToolResult, ToolError> {
    let Some(answer) = cx.input::<ElicitAnswer<UserName>>("user_name")? else {
        return Ok(InputRequired::new()
            .elicit::<UserName>("user_name", "What is your name?")
            .into());
    };
    let name = answer
        .accepted()
        .map_or_else(|| "stranger".to_owned(), |u| u.name);
    cx.continue_as_task().await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    Ok(ToolResult::text(format!("Hello, {name}! (from a task)")))
}

pub(crate) fn register(server: &Server) -> Result<(), RegistrationError> {
    server.add_tool(
        Tool::builder("greet")
            .description("Greets someone, synchronously")
            .input::<Greet>()
            .handler(|g: Greet, _| async move { format!("Hello, {}!", g.name) })?,
    )?;
    server.add_tool(
        Tool::builder("slow_compute")
            .description("Works for `seconds` seconds, as a task when the client supports them")
            .task(TaskSupport::Optional)
            .task_poll_interval(Duration::from_millis(200))
            .input::<SlowCompute>()
            .handler(slow_compute)?,
    )?;
    server.add_tool(
        tool(
            "failing_job",
            "Runs only as a task, and ends with a tool error",
        )
        .task(TaskSupport::Required)
        .handler(failing_job)?,
    )?;
    server.add_tool(
        tool(
            "protocol_error_job",
            "Runs as a task, and ends with a protocol error",
        )
        .task(TaskSupport::Optional)
        .handler(protocol_error_job)?,
    )?;
    server.add_tool(
        Tool::builder("confirm_delete")
            .description("Asks for confirmation inside the task, then deletes (pretends to)")
            .task(TaskSupport::Optional)
            .input::<ConfirmDelete>()
            .handler(confirm_delete)?,
    )?;
    server.add_tool(
        tool("multi_input", "Asks for two inputs at once inside the task")
            .task(TaskSupport::Optional)
            .handler(multi_input)?,
    )?;
    server.add_tool(
        tool(
            "test_tool_with_task",
            "Asks for the user's name synchronously, then continues as a task",
        )
        .task(TaskSupport::Required)
        .defer_task()
        .handler(tool_with_task)?,
    )?;
    Ok(())
}
