//! Human-readable output of `discover`, `list` and `call`.

use serde_json::{Map, Value};
use std::fmt::Write as _;
use toolwire::proto::types::{
    CallToolResult, ContentBlock, DiscoverResult, ResourceContents, ServerCapabilities, Tool,
};

/// `server/discover` as a few labelled lines.
pub(crate) fn discover(d: &DiscoverResult) -> String {
    let mut out = String::new();
    if let Some(info) = d
        .meta
        .as_ref()
        .and_then(|m| m.get("io.modelcontextprotocol/serverInfo"))
    {
        let name = info.get("name").and_then(Value::as_str).unwrap_or("?");
        let version = info.get("version").and_then(Value::as_str).unwrap_or("?");
        let _ = writeln!(out, "server:       {name} {version}");
    }
    let _ = writeln!(out, "versions:     {}", d.supported_versions.join(", "));
    let _ = writeln!(out, "capabilities: {}", capabilities(&d.capabilities));
    if let Some(i) = &d.instructions {
        let _ = writeln!(out, "instructions: {i}");
    }
    out
}

/// `server/discover` as JSON, with the era and version in use beside the
/// result's own members.
pub(crate) fn discover_json(d: &DiscoverResult, era: &str, version: &str) -> String {
    let mut v = serde_json::to_value(d).unwrap_or(Value::Null);
    if let Some(o) = v.as_object_mut() {
        o.insert("era".into(), Value::from(era));
        o.insert("protocolVersion".into(), Value::from(version));
    }
    json(&v)
}

fn capabilities(c: &ServerCapabilities) -> String {
    let mut parts = Vec::new();
    if let Some(t) = &c.tools {
        parts.push(flagged("tools", &[("listChanged", t.list_changed)]));
    }
    if let Some(p) = &c.prompts {
        parts.push(flagged("prompts", &[("listChanged", p.list_changed)]));
    }
    if let Some(r) = &c.resources {
        parts.push(flagged(
            "resources",
            &[("subscribe", r.subscribe), ("listChanged", r.list_changed)],
        ));
    }
    if c.completions.is_some() {
        parts.push("completions".to_owned());
    }
    if c.logging.is_some() {
        parts.push("logging".to_owned());
    }
    for name in c.extensions.iter().flat_map(|e| e.keys()) {
        parts.push(format!("extension {name}"));
    }
    if parts.is_empty() {
        "(none)".to_owned()
    } else {
        parts.join(", ")
    }
}

fn flagged(name: &str, flags: &[(&str, Option<bool>)]) -> String {
    let on: Vec<&str> = flags
        .iter()
        .filter(|(_, v)| *v == Some(true))
        .map(|(f, _)| *f)
        .collect();
    if on.is_empty() {
        name.to_owned()
    } else {
        format!("{name} ({})", on.join(", "))
    }
}

/// Each tool: its name and description, then one line per parameter.
pub(crate) fn tools(tools: &[Tool]) -> String {
    if tools.is_empty() {
        return "(no tools)\n".to_owned();
    }
    let mut out = String::new();
    for tool in tools {
        let title = tool
            .title
            .as_deref()
            .map(|t| format!(" ({t})"))
            .unwrap_or_default();
        let _ = writeln!(out, "{}{title}", tool.name);
        if let Some(d) = &tool.description {
            for line in d.lines() {
                let _ = writeln!(out, "    {line}");
            }
        }
        let required: Vec<&str> = tool
            .input_schema
            .get("required")
            .and_then(Value::as_array)
            .map(|r| r.iter().filter_map(Value::as_str).collect())
            .unwrap_or_default();
        if let Some(Value::Object(props)) = tool.input_schema.get("properties") {
            for (name, schema) in props {
                let _ = writeln!(
                    out,
                    "    {}",
                    parameter(name, schema, required.contains(&name.as_str()))
                );
            }
        }
        if tool.output_schema.is_some() {
            let _ = writeln!(out, "    -> structured output");
        }
    }
    out
}

fn parameter(name: &str, schema: &Value, required: bool) -> String {
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ => "any".to_owned(),
    };
    let mut line = format!("{name}: {ty}");
    if required {
        line.push_str(" (required)");
    }
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        let _ = write!(line, " - {d}");
    }
    line
}

/// A tool result: text as is, other content summarised, and the structured
/// content when there is no text.
pub(crate) fn call(result: &CallToolResult) -> String {
    let mut out = String::new();
    let mut texts = 0;
    for b in &result.content {
        if matches!(b, ContentBlock::Text(_)) {
            texts += 1;
        }
        block(&mut out, b);
    }
    if texts == 0
        && let Some(s) = &result.structured_content
    {
        out.push_str(&serde_json::to_string_pretty(s).unwrap_or_default());
        out.push('\n');
    }
    out
}

/// One content block: text as is, other content summarised; always ends
/// with a newline.
pub(crate) fn block(out: &mut String, block: &ContentBlock) {
    match block {
        ContentBlock::Text(t) => {
            out.push_str(&t.text);
        }
        ContentBlock::Image(i) => {
            let _ = write!(
                out,
                "[image {}, {} base64 bytes]",
                i.mime_type,
                i.data.len()
            );
        }
        ContentBlock::Audio(a) => {
            let _ = write!(
                out,
                "[audio {}, {} base64 bytes]",
                a.mime_type,
                a.data.len()
            );
        }
        ContentBlock::ResourceLink(l) => {
            let _ = write!(out, "[link {} <{}>]", l.name, l.uri);
        }
        ContentBlock::Resource(r) => match &r.resource {
            ResourceContents::Text(t) => {
                let _ = write!(out, "[resource {}]\n{}", t.uri, t.text);
            }
            ResourceContents::Blob(b) => {
                let _ = write!(out, "[resource {}, {} base64 bytes]", b.uri, b.blob.len());
            }
        },
    }
    if !out.ends_with('\n') {
        out.push('\n');
    }
}

/// A JSON value, pretty-printed, with a newline.
pub(crate) fn json(v: &impl serde::Serialize) -> String {
    let mut s = serde_json::to_string_pretty(v).unwrap_or_else(|_| "null".to_owned());
    s.push('\n');
    s
}

/// The input schema of a tool as a map, for typing arguments.
pub(crate) fn schema_of(tool: &Tool) -> &Map<String, Value> {
    &tool.input_schema
}
