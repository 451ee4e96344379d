//! The demo tool set served by `toolwire serve`. Other parts of the project
//! (tests, benchmarks) rely on these names and behaviours.

use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::json;
use std::time::Duration;
use toolwire::proto::types::LoggingLevel;
use toolwire::{RegistrationError, RequestContext, Server, Tool, ToolError};

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
    #[allow(dead_code)]
    priority: Option<i64>,
    text: String,
}

/// Adds the demo tools to `server`.
pub(crate) fn register(server: &Server) -> Result<(), RegistrationError> {
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
            .handler(|i: AddInput, _| async move { Ok(AddOutput { sum: i.a + i.b }) })?,
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
    Ok(())
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
