//! The fixtures only the 2025-11-25 leg calls. They are written once, in the
//! MRTR style: for a legacy session toolwire's shim turns each input request
//! into a server-to-client request and calls the handler again with the
//! answer; a 2026-07-28 client gets `input_required`.
//!
//! `test_tool_with_logging` logs through `RequestContext::log`, which a
//! legacy session gates by its `logging/setLevel` level.

use crate::tools::tool;
use serde_json::{Map, Value, json};
use std::time::Duration;
use toolwire::proto::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitRequestedSchema, LoggingLevel,
    SamplingContent, SamplingMessage, SamplingMessageContentBlock,
};
use toolwire::{
    ElicitAnswer, InputRequired, RegistrationError, RequestContext, Server, Tool, ToolBuilder,
    ToolError, ToolResult,
};

/// A tool with a hand-written input schema.
fn tool_with(name: &str, description: &str, input: Value) -> ToolBuilder {
    Tool::builder(name)
        .description(description)
        .input_schema(input)
}

type Outcome = Result<ToolResult, ToolError>;

fn schema(v: Value) -> Result<ElicitRequestedSchema, ToolError> {
    serde_json::from_value(v).map_err(|e| ToolError::failed(format!("bad fixture schema: {e}")))
}

/// `"<prefix>: action=<action>, content=<json>"`.
fn describe(prefix: &str, answer: ElicitAnswer) -> ToolResult {
    let (action, content) = match answer {
        ElicitAnswer::Accept(c) => ("accept", Value::Object(c)),
        ElicitAnswer::Decline => ("decline", Value::Null),
        ElicitAnswer::Cancel => ("cancel", Value::Null),
    };
    ToolResult::text(format!("{prefix}: action={action}, content={content}"))
}

fn ask(cx: &RequestContext, prefix: &str, message: &str, form: Value) -> Outcome {
    match cx.input::<ElicitAnswer<Map<String, Value>>>("form")? {
        Some(answer) => Ok(describe(prefix, answer)),
        None => Ok(InputRequired::new()
            .elicit_form("form", message, schema(form)?)
            .into()),
    }
}

fn sampling(cx: &RequestContext, prompt: &str) -> Outcome {
    match cx.input::<CreateMessageResult>("llm")? {
        Some(r) => {
            let text = match &r.content {
                SamplingContent::Single(SamplingMessageContentBlock::Text(t)) => t.text.as_str(),
                _ => "(no text)",
            };
            Ok(ToolResult::text(format!("LLM response: {text}")))
        }
        None => Ok(InputRequired::new()
            .sample(
                "llm",
                CreateMessageRequestParams {
                    messages: vec![SamplingMessage::user_text(prompt)],
                    max_tokens: 100,
                    ..CreateMessageRequestParams::default()
                },
            )
            .into()),
    }
}

fn string_arg(args: &Value, name: &str) -> String {
    args.get(name)
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned()
}

pub(crate) fn register(server: &Server) -> Result<(), RegistrationError> {
    server.add_tool(
        tool(
            "test_tool_with_logging",
            "Logs three info messages (gated by the session's log level), then finishes",
        )
        .handler(|_: Value, cx: RequestContext| async move {
            for (i, text) in [
                "Tool execution started",
                "Tool processing data",
                "Tool execution completed",
            ]
            .into_iter()
            .enumerate()
            {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                cx.log(LoggingLevel::Info, Some("conformance"), text);
            }
            "Tool with logging executed successfully"
        })?,
    )?;
    server.add_tool(
        tool_with(
            "test_sampling",
            "Asks the client's model to answer a prompt",
            json!({"type":"object","properties":{"prompt":{"type":"string","description":"The prompt to send to the LLM"}},"required":["prompt"]}),
        )
            .handler(|args: Value, cx: RequestContext| async move {
                sampling(&cx, &string_arg(&args, "prompt"))
            })?,
    )?;
    server.add_tool(
        tool_with(
            "test_elicitation",
            "Asks the user for a username and an email address",
            json!({"type":"object","properties":{"message":{"type":"string","description":"The message to show the user"}},"required":["message"]}),
        )
        .handler(|args: Value, cx: RequestContext| async move {
            ask(
                &cx,
                "User response",
                &string_arg(&args, "message"),
                json!({"type":"object","properties":{
                    "username":{"type":"string","description":"User's response"},
                    "email":{"type":"string","description":"User's email address"}},
                    "required":["username","email"]}),
            )
        })?,
    )?;
    server.add_tool(
        tool(
            "test_elicitation_sep1034_defaults",
            "Asks the user to review a form whose fields all have defaults",
        )
        .handler(|_: Value, cx: RequestContext| async move {
            ask(
                &cx,
                "Elicitation completed",
                "Please review and update the form fields with defaults",
                json!({"type":"object","properties":{
                    "name":{"type":"string","description":"User name","default":"John Doe"},
                    "age":{"type":"integer","description":"User age","default":30},
                    "score":{"type":"number","description":"User score","default":95.5},
                    "status":{"type":"string","description":"User status","enum":["active","inactive","pending"],"default":"active"},
                    "verified":{"type":"boolean","description":"Verification status","default":true}},
                    "required":[]}),
            )
        })?,
    )?;
    server.add_tool(
        tool(
            "test_elicitation_sep1330_enums",
            "Asks the user to pick from five kinds of enumerations",
        )
        .handler(|_: Value, cx: RequestContext| async move {
            ask(
                &cx,
                "Elicitation completed",
                "Please pick from the enumerations",
                json!({"type":"object","properties":{
                    "untitledSingle":{"type":"string","description":"Untitled single select","enum":["option1","option2","option3"]},
                    "titledSingle":{"type":"string","description":"Titled single select","oneOf":[
                        {"const":"value1","title":"First Option"},{"const":"value2","title":"Second Option"},{"const":"value3","title":"Third Option"}]},
                    "legacyEnum":{"type":"string","description":"Legacy titled enum","enum":["opt1","opt2","opt3"],"enumNames":["Option One","Option Two","Option Three"]},
                    "untitledMulti":{"type":"array","description":"Untitled multi select","minItems":1,"maxItems":3,"items":{"type":"string","enum":["option1","option2","option3"]}},
                    "titledMulti":{"type":"array","description":"Titled multi select","minItems":1,"maxItems":3,"items":{"anyOf":[
                        {"const":"value1","title":"First Choice"},{"const":"value2","title":"Second Choice"},{"const":"value3","title":"Third Choice"}]}}},
                    "required":[]}),
            )
        })?,
    )?;
    server.add_tool(
        tool("test_reconnection", "Waits briefly, then finishes").handler(|_: Value, _| async {
            tokio::time::sleep(Duration::from_millis(100)).await;
            "Reconnection test completed"
        })?,
    )?;
    Ok(())
}
