//! `toolwire gateway check`: the merged tool table with an estimated token
//! cost per tool, and what the function-calling dialects of the major
//! model providers would reject.
//!
//! The dialect rules are the documented limits at the time of writing:
//! tool names (OpenAI and Anthropic: `^[a-zA-Z0-9_-]{1,64}$`; Gemini: a
//! letter or `_` first, then letters, digits, `_`, `.`, `:` or `-`, at most
//! 64) and the top of the input schema (an object, without `anyOf`, `oneOf`,
//! `allOf` or `$ref` there; Gemini's OpenAPI subset has no `oneOf`,
//! `allOf` or `$ref` at all at that level).

use crate::Gateway;
use serde::Serialize;
use serde_json::{Map, Value};
use std::fmt;
use toolwire::proto::types::Tool as ToolDefinition;

/// A model provider's function-calling dialect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Dialect {
    /// OpenAI function calling (Chat Completions and Responses).
    OpenAi,
    /// Anthropic tool use.
    Anthropic,
    /// Google Gemini function declarations.
    Gemini,
}

impl Dialect {
    /// Every dialect checked.
    pub const ALL: [Dialect; 3] = [Self::OpenAi, Self::Anthropic, Self::Gemini];
}

impl fmt::Display for Dialect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::OpenAi => "OpenAI",
            Self::Anthropic => "Anthropic",
            Self::Gemini => "Gemini",
        })
    }
}

/// One thing a dialect rejects about one tool.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct DialectIssue {
    /// The dialect.
    pub dialect: Dialect,
    /// What it rejects.
    pub problem: String,
}

/// One row of the merged tool table.
#[derive(Debug, Clone, Serialize)]
pub struct ToolReport {
    /// The exposed name.
    pub name: String,
    /// Estimated tokens of name, description and schemas.
    pub tokens: usize,
    /// What each dialect rejects.
    pub issues: Vec<DialectIssue>,
}

/// The report rows of every tool the gateway serves, in list order.
pub fn check(gateway: &Gateway) -> Vec<ToolReport> {
    let server = gateway.server();
    server
        .tool_names()
        .iter()
        .filter_map(|n| server.tool(n))
        .map(|t| report(t.definition()))
        .collect()
}

fn report(def: &ToolDefinition) -> ToolReport {
    let mut issues = Vec::new();
    for dialect in Dialect::ALL {
        if let Some(p) = name_problem(dialect, &def.name) {
            issues.push(DialectIssue {
                dialect,
                problem: p,
            });
        }
        for p in schema_problems(dialect, &def.input_schema) {
            issues.push(DialectIssue {
                dialect,
                problem: p,
            });
        }
    }
    ToolReport {
        name: def.name.clone(),
        tokens: estimate_tokens(def),
        issues,
    }
}

/// A rough token count of what a model reads of a tool: its name,
/// description and schemas as JSON, at four characters a token (the usual
/// rule of thumb for English and JSON with BPE tokenizers).
pub fn estimate_tokens(def: &ToolDefinition) -> usize {
    let mut chars = def.name.len() + def.description.as_deref().map_or(0, str::len);
    chars += serde_json::to_string(&def.input_schema).map_or(0, |s| s.len());
    if let Some(out) = &def.output_schema {
        chars += serde_json::to_string(out).map_or(0, |s| s.len());
    }
    chars.div_ceil(4)
}

fn name_problem(dialect: Dialect, name: &str) -> Option<String> {
    let len = name.chars().count();
    if len > 64 {
        return Some(format!("name has {len} characters (at most 64)"));
    }
    match dialect {
        Dialect::OpenAi | Dialect::Anthropic => name
            .chars()
            .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '-')))
            .map(|c| format!("name contains {c:?} (only letters, digits, `_` and `-`)")),
        Dialect::Gemini => {
            let first_ok = name
                .chars()
                .next()
                .is_some_and(|c| c.is_ascii_alphabetic() || c == '_');
            if !first_ok {
                return Some("name must start with a letter or `_`".into());
            }
            name.chars()
                .find(|c| !(c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | ':' | '-')))
                .map(|c| format!("name contains {c:?}"))
        }
    }
}

fn schema_problems(dialect: Dialect, schema: &Map<String, Value>) -> Vec<String> {
    let mut out = Vec::new();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        out.push("input schema is not `type: object` at the top".into());
    }
    let top: &[&str] = match dialect {
        Dialect::OpenAi => &["anyOf", "oneOf", "allOf", "not", "enum", "$ref"],
        Dialect::Anthropic => &["anyOf", "oneOf", "allOf", "$ref"],
        Dialect::Gemini => &["oneOf", "allOf", "$ref", "not"],
    };
    for key in top {
        if schema.contains_key(*key) {
            out.push(format!("`{key}` at the top of the input schema"));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn def(name: &str, schema: Value) -> ToolDefinition {
        let Value::Object(schema) = schema else {
            panic!("object")
        };
        ToolDefinition::new(name, schema)
    }

    #[test]
    fn dotted_names_are_rejected_by_openai_and_anthropic_not_gemini() {
        let r = report(&def("demo__a.b", json!({"type": "object"})));
        let who: Vec<Dialect> = r.issues.iter().map(|i| i.dialect).collect();
        assert_eq!(who, [Dialect::OpenAi, Dialect::Anthropic]);
    }

    #[test]
    fn long_names_and_top_level_combinators_are_reported_per_dialect() {
        let long = "x".repeat(65);
        let r = report(&def(
            &long,
            json!({"type": "object", "anyOf": [], "$ref": "#/x"}),
        ));
        let count = |d| r.issues.iter().filter(|i| i.dialect == d).count();
        // name + anyOf + $ref; name + anyOf + $ref; name + $ref
        assert_eq!(count(Dialect::OpenAi), 3, "{:?}", r.issues);
        assert_eq!(count(Dialect::Anthropic), 3);
        assert_eq!(count(Dialect::Gemini), 2);
        let clean = report(&def("demo__echo", json!({"type": "object"})));
        assert!(clean.issues.is_empty());
    }

    #[test]
    fn tokens_grow_with_description_and_schema() {
        let small = estimate_tokens(&def("a", json!({"type": "object"})));
        let big = estimate_tokens(
            &def(
                "a",
                json!({"type": "object", "properties": {"text": {"type": "string"}}}),
            )
            .with_description("Sends the text back"),
        );
        assert!(small >= 1 && big > small + 5, "{small} {big}");
    }
}
