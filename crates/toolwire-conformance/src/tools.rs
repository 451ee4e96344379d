//! The tool fixtures that need no input from the client: content types,
//! errors, progress, logging, the capability and list-change probes, and the
//! header and JSON Schema fixtures of the pending scenarios.

use crate::mrtr::UserName;
use crate::{PNG_BASE64, WAV_BASE64};
use serde_json::{Value, json};
use std::time::Duration;
use toolwire::proto::types::{ContentBlock, EmbeddedResource, LoggingLevel, TextResourceContents};
use toolwire::{
    ElicitAnswer, InputRequired, ListChanged, RegistrationError, RequestContext, Server, Tool,
    ToolBuilder, ToolError, ToolResult,
};

/// The input schema of every fixture that takes no arguments.
pub(crate) fn no_arguments() -> Value {
    json!({"type": "object", "properties": {}})
}

/// A tool with no arguments.
pub(crate) fn tool(name: &str, description: &str) -> ToolBuilder {
    Tool::builder(name)
        .description(description)
        .input_schema(no_arguments())
}

/// A text resource embedded in content.
pub(crate) fn embedded_text(uri: &str, mime_type: &str, text: &str) -> ContentBlock {
    let mut contents = TextResourceContents::new(uri, text);
    contents.mime_type = Some(mime_type.to_owned());
    ContentBlock::Resource(EmbeddedResource::new(contents))
}

pub(crate) fn register(server: &Server) -> Result<(), RegistrationError> {
    server.add_tool(
        tool("test_simple_text", "Returns a simple text response")
            .handler(|_: Value, _| async { "This is a simple text response for testing." })?,
    )?;
    server.add_tool(
        tool("test_image_content", "Returns a 1x1 PNG image")
            .handler(|_: Value, _| async { ContentBlock::image(PNG_BASE64, "image/png") })?,
    )?;
    server.add_tool(
        tool("test_audio_content", "Returns a short WAV audio clip")
            .handler(|_: Value, _| async { ContentBlock::audio(WAV_BASE64, "audio/wav") })?,
    )?;
    server.add_tool(
        tool(
            "test_embedded_resource",
            "Returns an embedded text resource",
        )
        .handler(|_: Value, _| async {
            embedded_text(
                "test://embedded-resource",
                "text/plain",
                "This is an embedded resource content.",
            )
        })?,
    )?;
    server.add_tool(
        tool(
            "test_multiple_content_types",
            "Returns text, an image and an embedded resource",
        )
        .handler(|_: Value, _| async {
            vec![
                ContentBlock::text("Multiple content types test:"),
                ContentBlock::image(PNG_BASE64, "image/png"),
                embedded_text(
                    "test://mixed-content-resource",
                    "application/json",
                    r#"{"test":"data","value":123}"#,
                ),
            ]
        })?,
    )?;
    server.add_tool(
        tool(
            "test_error_handling",
            "Always fails, with an error result the model can read",
        )
        .handler(|_: Value, _| async {
            Err::<String, _>(ToolError::failed(
                "This tool intentionally returns an error for testing",
            ))
        })?,
    )?;
    server.add_tool(
        tool(
            "test_tool_with_progress",
            "Reports progress 0, 50 and 100 of 100, then finishes",
        )
        .handler(|_: Value, cx: RequestContext| async move {
            for (i, progress) in [0.0, 50.0, 100.0].into_iter().enumerate() {
                if i > 0 {
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
                cx.report_progress(progress, Some(100.0), None);
            }
            "Progress test completed"
        })?,
    )?;
    server.add_tool(
        tool(
            "test_missing_capability",
            "Needs the client's sampling capability; fails with -32021 without it",
        )
        .require_capability("sampling")
        .handler(|_: Value, _| async { "The client declared sampling." })?,
    )?;
    server.add_tool(
        tool(
            "test_streaming_elicitation",
            "Asks for the user's name through an input_required result (never a request on the stream)",
        )
        .handler(|_: Value, cx: RequestContext| async move {
            streaming_elicitation(&cx)
        })?,
    )?;
    server.add_tool(
        tool(
            "test_logging_tool",
            "Logs one message (only if the request set a log level), then finishes",
        )
        .handler(|_: Value, cx: RequestContext| async move {
            cx.log(
                LoggingLevel::Info,
                Some("conformance"),
                "test_logging_tool ran",
            );
            "Logging test completed"
        })?,
    )?;
    let bus = server.notification_bus().clone();
    server.add_tool(
        tool(
            "test_trigger_tool_change",
            "Announces a tool list change to open subscriptions",
        )
        .handler(move |_: Value, _| {
            bus.publish(ListChanged::Tools.into());
            async { "Tool list change sent" }
        })?,
    )?;
    let bus = server.notification_bus().clone();
    server.add_tool(
        tool(
            "test_trigger_prompt_change",
            "Announces a prompt list change to open subscriptions",
        )
        .handler(move |_: Value, _| {
            bus.publish(ListChanged::Prompts.into());
            async { "Prompt list change sent" }
        })?,
    )?;
    server.add_tool(
        Tool::builder("test_custom_header")
            .description("Echoes its value, which clients mirror into the Mcp-Param-Value header")
            .input_schema(json!({
                "type": "object",
                "properties": {
                    "value": {"type": "string", "x-mcp-header": "Value"}
                },
                "required": ["value"]
            }))
            .handler(|args: Value, _| async move {
                let value = args
                    .get("value")
                    .and_then(Value::as_str)
                    .unwrap_or_default();
                format!("value: {value}")
            })?,
    )?;
    server.add_tool(
        Tool::builder("json_schema_2020_12_tool")
            .description("Tool with JSON Schema 2020-12 features")
            .input_schema(json_schema_2020_12())
            .handler(|_: Value, _| async { "ok" })?,
    )?;
    Ok(())
}

/// Round 1 asks for a name if the client can be asked; a retry with the
/// answer (or a client that cannot be asked) completes.
fn streaming_elicitation(cx: &RequestContext) -> Result<ToolResult, ToolError> {
    if let Some(answer) = cx.input::<ElicitAnswer<UserName>>("user_name")? {
        return Ok(ToolResult::text(match answer.accepted() {
            Some(u) => format!("Hello, {}!", u.name),
            None => "No name given.".to_owned(),
        }));
    }
    if !cx.client_capabilities().supports_elicitation_form() {
        return Ok(ToolResult::text(
            "The client cannot answer elicitation requests.",
        ));
    }
    Ok(InputRequired::new()
        .elicit::<UserName>("user_name", "What is your name?")
        .into())
}

/// The input schema of `json_schema_2020_12_tool`, verbatim from the
/// `json-schema-2020-12` scenario.
pub(crate) fn json_schema_2020_12() -> Value {
    json!({
        "$schema": "https://json-schema.org/draft/2020-12/schema",
        "type": "object",
        "$defs": {
            "address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {
                    "street": {"type": "string"},
                    "city": {"type": "string"}
                }
            }
        },
        "properties": {
            "name": {"type": "string"},
            "address": {"$ref": "#/$defs/address"},
            "contactMethod": {"type": "string", "enum": ["phone", "email"]},
            "phone": {"type": "string"},
            "email": {"type": "string"}
        },
        "allOf": [
            {"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}
        ],
        "if": {
            "properties": {"contactMethod": {"const": "phone"}},
            "required": ["contactMethod"]
        },
        "then": {"required": ["phone"]},
        "else": {"required": ["email"]},
        "additionalProperties": false
    })
}
