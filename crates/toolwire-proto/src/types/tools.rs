//! Tools: the tool definition, `tools/list` and `tools/call` (schema `Tool`,
//! `ToolAnnotations`, `ListToolsResult`, `CallToolRequestParams`,
//! `CallToolResult`).

use super::common::{CacheScope, Cursor, Icon, JsonObject, Meta, RequestMeta, ResultType};
use super::content::ContentBlock;
use super::mrtr::InputResponses;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// A tool the server offers (schema `Tool`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Tool {
    /// Programmatic name, unique within the server.
    pub name: String,
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// What the tool does, for the model.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// JSON Schema of the arguments; its `type` is `"object"`.
    pub input_schema: JsonObject,
    /// JSON Schema of `structuredContent`, if the tool returns any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub output_schema: Option<JsonObject>,
    /// Behaviour hints.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub annotations: Option<ToolAnnotations>,
    /// Icons for display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub icons: Option<Vec<Icon>>,
    /// Tool `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl Tool {
    /// A tool called `name` taking arguments described by `input_schema`.
    pub fn new(name: impl Into<String>, input_schema: JsonObject) -> Self {
        Self {
            name: name.into(),
            input_schema,
            ..Self::default()
        }
    }

    /// Sets the description.
    #[must_use]
    pub fn with_description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Sets the title.
    #[must_use]
    pub fn with_title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// Sets the output schema.
    #[must_use]
    pub fn with_output_schema(mut self, output_schema: JsonObject) -> Self {
        self.output_schema = Some(output_schema);
        self
    }

    /// Sets the annotations.
    #[must_use]
    pub fn with_annotations(mut self, annotations: ToolAnnotations) -> Self {
        self.annotations = Some(annotations);
        self
    }
}

/// Hints about a tool's behaviour; untrusted unless the server is trusted
/// (schema `ToolAnnotations`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnnotations {
    /// Human-readable display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// The tool does not modify its environment (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub read_only_hint: Option<bool>,
    /// The tool may destroy data (default true; meaningful when not read-only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub destructive_hint: Option<bool>,
    /// Repeating a call with the same arguments has no further effect (default false).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub idempotent_hint: Option<bool>,
    /// The tool interacts with an open world of external entities (default true).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub open_world_hint: Option<bool>,
}

/// The result of `tools/list` (schema `ListToolsResult`; cacheable).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ListToolsResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// The tools on this page.
    pub tools: Vec<Tool>,
    /// Cursor of the next page, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_cursor: Option<Cursor>,
    /// How long the result stays fresh, in milliseconds.
    pub ttl_ms: u64,
    /// Who may cache the result.
    pub cache_scope: CacheScope,
    /// Result `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Parameters of `tools/call` (schema `CallToolRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolRequestParams {
    /// The tool to call.
    pub name: String,
    /// The arguments.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub arguments: Option<JsonObject>,
    /// Answers to the input requests of an earlier `input_required` result.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub input_responses: Option<InputResponses>,
    /// The `requestState` of an earlier `input_required` result, echoed back.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_state: Option<String>,
    /// The request `_meta` (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// The final result of `tools/call` (schema `CallToolResult`).
///
/// A tool execution error is a result with `isError: true`, not a JSON-RPC error.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallToolResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// Unstructured content.
    pub content: Vec<ContentBlock>,
    /// Structured content: any JSON value, matching the tool's output schema if it has one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub structured_content: Option<Value>,
    /// Whether the call failed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub is_error: Option<bool>,
    /// Result `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl CallToolResult {
    /// A successful result with `content`.
    pub fn new(content: Vec<ContentBlock>) -> Self {
        Self {
            content,
            ..Self::default()
        }
    }

    /// A successful result with one text block.
    pub fn text(text: impl Into<String>) -> Self {
        Self::new(vec![ContentBlock::text(text)])
    }

    /// A failed result (`isError: true`) with one text block the model can act on.
    pub fn error_text(text: impl Into<String>) -> Self {
        Self {
            is_error: Some(true),
            ..Self::text(text)
        }
    }

    /// A successful result with `structured` content and its JSON text as a text block.
    pub fn structured(structured: Value) -> Self {
        Self {
            structured_content: Some(structured.clone()),
            ..Self::text(structured.to_string())
        }
    }

    /// Sets the structured content.
    #[must_use]
    pub fn with_structured_content(mut self, structured: Value) -> Self {
        self.structured_content = Some(structured);
        self
    }

    /// Whether this result reports a failure.
    pub fn is_error(&self) -> bool {
        self.is_error == Some(true)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn error_text_sets_is_error_and_result_type() {
        let v = serde_json::to_value(CallToolResult::error_text("bad date")).expect("ok");
        assert_eq!(
            v,
            json!({
                "resultType": "complete",
                "content": [{"type": "text", "text": "bad date"}],
                "isError": true
            })
        );
    }

    #[test]
    fn structured_content_may_be_any_json_value() {
        let r: CallToolResult = serde_json::from_value(json!({
            "resultType": "complete", "content": [], "structuredContent": [1, "two"]
        }))
        .expect("parses");
        assert_eq!(r.structured_content, Some(json!([1, "two"])));
    }

    #[test]
    fn list_tools_result_requires_cache_hints() {
        let v = json!({"resultType": "complete", "tools": []});
        assert!(serde_json::from_value::<ListToolsResult>(v).is_err());
    }
}
