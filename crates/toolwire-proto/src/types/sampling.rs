//! Sampling, the `sampling/createMessage` input request and its result
//! (schema `CreateMessageRequestParams`, `SamplingMessage`,
//! `SamplingMessageContentBlock`, `ToolUseContent`, `ToolResultContent`,
//! `ModelPreferences`, `ToolChoice`, `CreateMessageResult`).
//!
//! Spec: client/sampling.mdx

use super::common::{JsonObject, Meta, Role};
use super::content::{AudioContent, ContentBlock, ImageContent, TextContent};
use super::tools::Tool;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// Parameters of `sampling/createMessage` (schema `CreateMessageRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageRequestParams {
    /// The conversation so far.
    pub messages: Vec<SamplingMessage>,
    /// The most tokens to generate.
    pub max_tokens: u64,
    /// Which model to prefer.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_preferences: Option<ModelPreferences>,
    /// A system prompt.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub system_prompt: Option<String>,
    /// Which MCP context to include (deprecated beyond `"none"`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub include_context: Option<IncludeContext>,
    /// Sampling temperature.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::number::opt_f64"
    )]
    pub temperature: Option<f64>,
    /// Sequences that stop generation.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_sequences: Option<Vec<String>>,
    /// Provider-specific metadata.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metadata: Option<JsonObject>,
    /// Tools the model may use.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools: Option<Vec<Tool>>,
    /// How the model may use the tools.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool_choice: Option<ToolChoice>,
}

/// Which MCP context a sampling request includes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub enum IncludeContext {
    /// `"none"`.
    None,
    /// `"thisServer"` (deprecated).
    ThisServer,
    /// `"allServers"` (deprecated).
    AllServers,
}

/// How a sampled model may use tools (schema `ToolChoice`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ToolChoice {
    /// The mode; `auto` when absent.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<ToolChoiceMode>,
}

/// The mode of a [`ToolChoice`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolChoiceMode {
    /// `"auto"`: the model decides.
    Auto,
    /// `"required"`: the model must use a tool.
    Required,
    /// `"none"`: the model must not use tools.
    None,
}

/// The server's model preferences (schema `ModelPreferences`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ModelPreferences {
    /// Model name hints, in order of preference.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hints: Option<Vec<ModelHint>>,
    /// Importance of low cost, 0 to 1.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::number::opt_f64"
    )]
    pub cost_priority: Option<f64>,
    /// Importance of low latency, 0 to 1.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::number::opt_f64"
    )]
    pub speed_priority: Option<f64>,
    /// Importance of capability, 0 to 1.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::number::opt_f64"
    )]
    pub intelligence_priority: Option<f64>,
}

/// A model name hint (schema `ModelHint`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ModelHint {
    /// A full or partial model name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub name: Option<String>,
}

/// A message in a sampling conversation (schema `SamplingMessage`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SamplingMessage {
    /// Who sent it.
    pub role: Role,
    /// One block or several.
    pub content: SamplingContent,
    /// Message `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl SamplingMessage {
    /// A user message with one text block.
    pub fn user_text(text: impl Into<String>) -> Self {
        Self {
            role: Role::User,
            content: SamplingContent::Single(SamplingMessageContentBlock::Text(TextContent::new(
                text,
            ))),
            meta: None,
        }
    }
}

/// The content of a sampling message or result: one block or an array.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum SamplingContent {
    /// A single block.
    Single(SamplingMessageContentBlock),
    /// Several blocks.
    Multiple(Vec<SamplingMessageContentBlock>),
}

/// A block of sampling content, tagged by `type` (schema
/// `SamplingMessageContentBlock`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum SamplingMessageContentBlock {
    /// `"text"`.
    Text(TextContent),
    /// `"image"`.
    Image(ImageContent),
    /// `"audio"`.
    Audio(AudioContent),
    /// `"tool_use"`: the model calls a tool.
    ToolUse(ToolUseContent),
    /// `"tool_result"`: the result of a tool call.
    ToolResult(ToolResultContent),
}

/// A model's call of a tool (schema `ToolUseContent`, `type: "tool_use"`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ToolUseContent {
    /// Identifies this call, for the matching `tool_result`.
    pub id: String,
    /// The tool's name.
    pub name: String,
    /// The arguments.
    pub input: JsonObject,
    /// Content `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result of a tool call in sampling (schema `ToolResultContent`,
/// `type: "tool_result"`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResultContent {
    /// The `id` of the `tool_use` this answers.
    pub tool_use_id: String,
    /// Unstructured result content.
    pub content: Vec<ContentBlock>,
    /// Structured result content.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Content `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The client's answer to `sampling/createMessage` (schema `CreateMessageResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CreateMessageResult {
    /// Who produced it (normally the assistant).
    pub role: Role,
    /// The generated content.
    pub content: SamplingContent,
    /// The model that produced it.
    pub model: String,
    /// Why generation stopped, e.g. `"endTurn"`, `"stopSequence"`, `"maxTokens"`, `"toolUse"`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub stop_reason: Option<String>,
    /// Result `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn sampling_content_is_one_block_or_an_array() {
        let one: SamplingContent =
            serde_json::from_value(json!({"type": "text", "text": "hi"})).expect("one");
        assert!(matches!(
            one,
            SamplingContent::Single(SamplingMessageContentBlock::Text(_))
        ));
        let many: SamplingContent = serde_json::from_value(json!([
            {"type": "tool_use", "id": "1", "name": "t", "input": {}},
            {"type": "tool_result", "toolUseId": "1", "content": []}
        ]))
        .expect("many");
        let SamplingContent::Multiple(blocks) = many else {
            panic!("not multiple")
        };
        assert!(matches!(
            blocks[1],
            SamplingMessageContentBlock::ToolResult(_)
        ));
    }

    #[test]
    fn include_context_is_camel_case() {
        assert_eq!(
            serde_json::to_value(IncludeContext::ThisServer).expect("ok"),
            json!("thisServer")
        );
    }
}
