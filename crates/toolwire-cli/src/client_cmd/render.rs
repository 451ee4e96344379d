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

/// Each tool: its name and description, then one line per parameter, in
/// the order `order(tool)` gives (the server's), or sorted.
pub(crate) fn tools(tools: &[Tool], order: &dyn Fn(&str) -> Option<Vec<String>>) -> String {
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
            let order = order(&tool.name).unwrap_or_default();
            let listed = order.iter().filter_map(|n| props.get_key_value(n));
            let rest = props.iter().filter(|(n, _)| !order.contains(n));
            for (name, schema) in listed.chain(rest) {
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
        if let Some(ui) = toolwire::apps::ToolUi::of(tool.meta.as_ref()) {
            if let Some(uri) = &ui.resource_uri {
                let _ = writeln!(out, "    -> app interface {uri}");
            }
            match (ui.for_model(), ui.for_app()) {
                (false, true) => {
                    let _ = writeln!(
                        out,
                        "    app only: hidden from the model, called by its interface"
                    );
                }
                (true, false) => {
                    let _ = writeln!(out, "    model only: its interface may not call it");
                }
                _ => {}
            }
        }
    }
    out
}

fn parameter(name: &str, schema: &Value, required: bool) -> String {
    let mut line = format!("{name}: {}", type_text(schema));
    for c in constraints(schema) {
        let _ = write!(line, ", {c}");
    }
    if required {
        line.push_str(" (required)");
    }
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        let _ = write!(line, " - {d}");
    }
    line
}

/// A schema's type: `string`, `integer|null`, `array of string`, or `any`.
fn type_text(schema: &Value) -> String {
    let ty = match schema.get("type") {
        Some(Value::String(t)) => t.clone(),
        Some(Value::Array(ts)) => ts
            .iter()
            .filter_map(Value::as_str)
            .collect::<Vec<_>>()
            .join("|"),
        _ => "any".to_owned(),
    };
    match schema.get("items") {
        Some(items) if ty.split('|').any(|t| t == "array") && items.is_object() => {
            ty.replacen("array", &format!("array of {}", type_text(items)), 1)
        }
        _ => ty,
    }
}

/// What a schema allows beyond its type, in words: values, ranges,
/// lengths, counts, a pattern, and the default.
fn constraints(schema: &Value) -> Vec<String> {
    let get = |k: &str| schema.get(k).filter(|v| !v.is_null());
    let mut out = Vec::new();
    if let Some(Value::Array(values)) = get("enum") {
        let values: Vec<String> = values.iter().map(Value::to_string).collect();
        out.push(format!("one of {}", values.join(", ")));
    }
    if let Some(v) = get("const") {
        out.push(format!("always {v}"));
    }
    let range = |low: Option<&Value>, high: Option<&Value>, unit: &str| match (low, high) {
        (Some(l), Some(h)) => Some(format!("{l} to {h}{unit}")),
        (Some(l), None) => Some(format!("at least {l}{unit}")),
        (None, Some(h)) => Some(format!("at most {h}{unit}")),
        (None, None) => None,
    };
    out.extend(range(get("minimum"), get("maximum"), ""));
    if let Some(v) = get("exclusiveMinimum").filter(|v| v.is_number()) {
        out.push(format!("more than {v}"));
    }
    if let Some(v) = get("exclusiveMaximum").filter(|v| v.is_number()) {
        out.push(format!("less than {v}"));
    }
    out.extend(range(get("minLength"), get("maxLength"), " characters"));
    out.extend(range(get("minItems"), get("maxItems"), " items"));
    if let Some(p) = get("pattern").and_then(Value::as_str) {
        out.push(format!("matching /{p}/"));
    }
    if let Some(d) = get("default") {
        out.push(format!("default {d}"));
    }
    out
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

#[cfg(test)]
mod app_tests {
    use serde_json::json;
    use toolwire::proto::types::Tool;

    #[test]
    fn tools_with_an_app_interface_are_marked_and_so_is_their_audience() {
        let tool = |name: &str, meta: serde_json::Value| -> Tool {
            serde_json::from_value(
                json!({"name": name, "inputSchema": {"type": "object"}, "_meta": meta}),
            )
            .expect("a tool")
        };
        let out = super::tools(
            &[
                tool("chart", json!({"ui": {"resourceUri": "ui://s/chart"}})),
                tool(
                    "zoom",
                    json!({"ui": {"resourceUri": "ui://s/chart", "visibility": ["app"]}}),
                ),
                tool(
                    "raw",
                    json!({"ui/resourceUri": "ui://s/old", "ui": {"visibility": ["model"]}}),
                ),
                tool("plain", json!({})),
            ],
            &|_| None,
        );
        assert_eq!(
            out,
            "chart\n    -> app interface ui://s/chart\n\
             zoom\n    -> app interface ui://s/chart\n    app only: hidden from the model, called by its interface\n\
             raw\n    -> app interface ui://s/old\n    model only: its interface may not call it\n\
             plain\n"
        );
    }
}

#[cfg(test)]
mod order_tests {
    use serde_json::json;
    use toolwire::proto::types::Tool;

    #[test]
    fn parameters_come_in_the_servers_order_then_the_rest_sorted() {
        let tool: Tool = serde_json::from_value(json!({"name": "t", "inputSchema": {
            "type": "object",
            "properties": {"a": {"type": "string"}, "b": {}, "m": {}, "z": {}}
        }}))
        .expect("a tool");
        let out = super::tools(std::slice::from_ref(&tool), &|name| {
            (name == "t").then(|| vec!["z".to_owned(), "gone".to_owned(), "b".to_owned()])
        });
        assert_eq!(
            out,
            "t\n    z: any\n    b: any\n    a: string\n    m: any\n"
        );
        let sorted = super::tools(&[tool], &|_| None);
        assert_eq!(
            sorted,
            "t\n    a: string\n    b: any\n    m: any\n    z: any\n"
        );
    }
}

#[cfg(test)]
mod parameter_tests {
    use super::parameter;
    use serde_json::json;

    #[test]
    fn a_parameter_shows_its_item_type_ranges_values_and_default() {
        let cases = [
            (
                json!({"type": "integer", "minimum": 1, "maximum": 10, "default": 3}),
                true,
                "n: integer, 1 to 10, default 3 (required)",
            ),
            (
                json!({"type": "array", "items": {"type": "string"}, "maxItems": 5}),
                false,
                "n: array of string, at most 5 items",
            ),
            (
                json!({"type": ["array", "null"], "items": {"type": "integer"}}),
                false,
                "n: array of integer|null",
            ),
            (
                json!({"type": "string", "enum": ["a", "b"], "description": "pick"}),
                false,
                "n: string, one of \"a\", \"b\" - pick",
            ),
            (
                json!({"type": "string", "maxLength": 4096}),
                true,
                "n: string, at most 4096 characters (required)",
            ),
            (
                json!({"type": "number", "exclusiveMinimum": 0}),
                false,
                "n: number, more than 0",
            ),
            (
                json!({"type": "string", "pattern": "^[a-z]+$"}),
                false,
                "n: string, matching /^[a-z]+$/",
            ),
            (json!({}), false, "n: any"),
        ];
        for (schema, required, want) in cases {
            assert_eq!(parameter("n", &schema, required), want);
        }
    }
}
