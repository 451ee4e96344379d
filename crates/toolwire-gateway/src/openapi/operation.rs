//! An OpenAPI document's operations as tools: one tool per operation, its
//! arguments the operation's parameters and body in one `inputSchema`, its
//! `outputSchema` the JSON of its 2xx response, its annotations from its
//! method; and, beside each tool, the plan of the HTTP request a call
//! becomes.

use super::schema::{Direction, Resolver};
use serde_json::{Map, Value, json};
use std::collections::{BTreeSet, HashMap};
use toolwire::proto::types::Tool;

/// The methods OpenAPI path items hold, in the order tools are listed.
const METHODS: &[&str] = &[
    "get", "put", "post", "delete", "options", "head", "patch", "trace",
];
/// The longest tool name (the tool-name rules' limit).
const MAX_NAME: usize = 128;

/// Where a parameter goes in the request.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Location {
    Path,
    Query,
    Header,
    Cookie,
}

impl Location {
    fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "path" => Self::Path,
            "query" => Self::Query,
            "header" => Self::Header,
            "cookie" => Self::Cookie,
            _ => return None,
        })
    }

    fn name(self) -> &'static str {
        match self {
            Self::Path => "path",
            Self::Query => "query",
            Self::Header => "header",
            Self::Cookie => "cookie",
        }
    }
}

/// One parameter: the argument it is read from and where it goes.
#[derive(Debug, Clone)]
pub(crate) struct Param {
    /// The argument's name in the tool's input.
    pub(crate) arg: String,
    /// The parameter's name in the request.
    pub(crate) name: String,
    pub(crate) location: Location,
    /// A query array or object as repeated `name=value` pairs (`form`
    /// with `explode`, OpenAPI's default) rather than one comma-separated
    /// value.
    pub(crate) explode: bool,
    /// The value goes as JSON text (a parameter described by `content`).
    pub(crate) json: bool,
}

/// How the request body is encoded.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Encoding {
    Json,
    Form,
    Text,
}

impl Encoding {
    pub(crate) fn content_type(self) -> &'static str {
        match self {
            Self::Json => "application/json",
            Self::Form => "application/x-www-form-urlencoded",
            Self::Text => "text/plain; charset=utf-8",
        }
    }
}

/// Where the request body's value comes from.
#[derive(Debug, Clone)]
pub(crate) enum Body {
    /// Its properties are top-level arguments (those named).
    Spread(Vec<String>),
    /// It is the whole value of one argument.
    Whole(String),
}

/// The HTTP request a call of one tool becomes.
#[derive(Debug, Clone)]
pub(crate) struct Operation {
    pub(crate) method: http::Method,
    /// The path template, `{name}` for path parameters.
    pub(crate) path: String,
    pub(crate) params: Vec<Param>,
    pub(crate) body: Option<(Body, Encoding)>,
    /// The 2xx JSON goes into `structuredContent` as `{"result": …}`: the
    /// response is not an object, and an `outputSchema` must be.
    pub(crate) wrap: bool,
    /// The tool has an `outputSchema`, so a 2xx answer must be JSON.
    pub(crate) output: bool,
}

impl Operation {
    /// The tool's arguments in the document's order: the parameters as
    /// declared, then the body's.
    pub(crate) fn argument_order(&self) -> Vec<String> {
        let mut order: Vec<String> = self.params.iter().map(|p| p.arg.clone()).collect();
        match &self.body {
            Some((Body::Spread(names), _)) => order.extend(names.iter().cloned()),
            Some((Body::Whole(arg), _)) => order.push(arg.clone()),
            None => {}
        }
        order
    }
}

/// The tools of a document, and each tool's operation by tool name. What
/// could not be turned into a tool is logged and left out. A header
/// parameter named in `supplied` (lowercase: headers the gateway sends
/// itself) is no argument.
pub(crate) fn tools(
    doc: &Value,
    upstream: &str,
    supplied: &[String],
) -> (Vec<Tool>, HashMap<String, Operation>) {
    let resolver = Resolver::new(doc);
    let mut tools = Vec::new();
    let mut operations = HashMap::new();
    let mut taken = BTreeSet::new();
    let Some(paths) = doc.get("paths").and_then(Value::as_object) else {
        return (tools, operations);
    };
    for (path, item) in paths {
        let item = resolver.deref(item);
        let shared = item.get("parameters");
        for method in METHODS {
            let Some(op) = item.get(*method).filter(|o| o.is_object()) else {
                continue;
            };
            let name = unique(tool_name(op, method, path), &mut taken);
            match convert(&resolver, &name, method, path, op, shared, supplied) {
                Ok((tool, operation)) => {
                    tools.push(tool);
                    operations.insert(name, operation);
                }
                Err(why) => tracing::warn!(
                    upstream,
                    "{} {path} left out: {why}",
                    method.to_ascii_uppercase()
                ),
            }
        }
    }
    (tools, operations)
}

/// The operation's `operationId` under the tool-name rules, or its method
/// and path when it has none.
fn tool_name(op: &Value, method: &str, path: &str) -> String {
    let raw = match op.get("operationId").and_then(Value::as_str) {
        Some(id) if !id.trim().is_empty() => id.to_owned(),
        _ => {
            let mut name = method.to_owned();
            for segment in path.split('/').filter(|s| !s.is_empty()) {
                name.push('_');
                name.push_str(segment.trim_start_matches('{').trim_end_matches('}'));
            }
            name
        }
    };
    let mut name: String = raw
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.') {
                c
            } else {
                '_'
            }
        })
        .collect();
    name.truncate(MAX_NAME);
    name
}

/// `name`, or `name_2`, `name_3`… when taken.
fn unique(name: String, taken: &mut BTreeSet<String>) -> String {
    let mut candidate = name.clone();
    let mut n = 2;
    while taken.contains(&candidate) {
        let suffix = format!("_{n}");
        let mut base = name.clone();
        base.truncate(MAX_NAME - suffix.len());
        candidate = base + &suffix;
        n += 1;
    }
    taken.insert(candidate.clone());
    candidate
}

fn convert(
    resolver: &Resolver<'_>,
    name: &str,
    method: &str,
    path: &str,
    op: &Value,
    shared: Option<&Value>,
    supplied: &[String],
) -> Result<(Tool, Operation), String> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    let mut params: Vec<Param> = Vec::new();
    // The operation's parameters override the path item's of the same
    // name and location.
    let mut declared: Vec<&Value> = Vec::new();
    for list in [op.get("parameters"), shared].into_iter().flatten() {
        for p in list.as_array().into_iter().flatten() {
            let p = resolver.deref(p);
            let key = (p.get("name"), p.get("in"));
            if !declared.iter().any(|d| (d.get("name"), d.get("in")) == key) {
                declared.push(p);
            }
        }
    }
    // Path parameters first: a query or header parameter of the same name
    // is the one renamed.
    declared.sort_by_key(|p| p.get("in").and_then(Value::as_str) != Some("path"));
    for p in declared {
        let (Some(pname), Some(location)) = (
            p.get("name").and_then(Value::as_str),
            p.get("in")
                .and_then(Value::as_str)
                .and_then(Location::parse),
        ) else {
            return Err("a parameter has no name or no valid `in`".into());
        };
        // Spec (OpenAPI 3.x, Parameter Object): these three header
        // parameters are ignored; the request sets them itself.
        let lower = pname.to_ascii_lowercase();
        if location == Location::Header
            && (["accept", "content-type", "authorization"].contains(&lower.as_str())
                || supplied.contains(&lower))
        {
            continue;
        }
        let (schema, json) = match (p.get("schema"), p.get("content").and_then(Value::as_object)) {
            (Some(s), _) => (resolver.schema(s, Direction::Request), false),
            (None, Some(content)) => match content.values().next().and_then(|m| m.get("schema")) {
                Some(s) => (resolver.schema(s, Direction::Request), true),
                None => (json!({}), true),
            },
            (None, None) => (json!({"type": "string"}), false),
        };
        let mut schema = schema;
        if let (Some(d), Value::Object(s)) =
            (p.get("description").and_then(Value::as_str), &mut schema)
            && !s.contains_key("description")
        {
            s.insert("description".into(), Value::from(d));
        }
        let arg = free_name(pname, location.name(), &properties);
        let must = location == Location::Path || p.get("required") == Some(&Value::Bool(true));
        if must {
            required.push(Value::from(arg.clone()));
        }
        properties.insert(arg.clone(), schema);
        let style_form = p
            .get("style")
            .and_then(Value::as_str)
            .is_none_or(|s| s == "form");
        params.push(Param {
            arg,
            name: pname.to_owned(),
            location,
            explode: p
                .get("explode")
                .and_then(Value::as_bool)
                .unwrap_or(style_form),
            json,
        });
    }
    let body = match op.get("requestBody") {
        None => None,
        Some(rb) => Some(body(resolver, rb, &mut properties, &mut required)?),
    };
    let mut input = json!({"type": "object", "properties": properties});
    if !required.is_empty() {
        input["required"] = Value::Array(required);
    }
    input["additionalProperties"] = Value::Bool(false);
    let (output, wrap) = output_schema(resolver, op);
    let summary = op.get("summary").and_then(Value::as_str).map(str::trim);
    let details = op.get("description").and_then(Value::as_str).map(str::trim);
    let description = match (summary, details) {
        (Some(s), Some(d)) if !s.is_empty() && !d.is_empty() => format!("{s}\n\n{d}"),
        (Some(s), _) if !s.is_empty() => s.to_owned(),
        (_, Some(d)) => d.to_owned(),
        _ => format!("{} {path}", method.to_ascii_uppercase()),
    };
    let (read_only, destructive, idempotent) = match method {
        "get" | "head" | "options" | "trace" => (true, false, true),
        "put" => (false, false, true),
        "delete" => (false, true, true),
        _ => (false, false, false),
    };
    let mut tool = json!({
        "name": name,
        "description": description,
        "inputSchema": input,
        "annotations": {
            "readOnlyHint": read_only,
            "destructiveHint": destructive,
            "idempotentHint": idempotent,
            "openWorldHint": true,
        },
    });
    if let Some(s) = summary.filter(|s| !s.is_empty()) {
        tool["title"] = Value::from(s);
    }
    if let Some(schema) = &output {
        tool["outputSchema"] = schema.clone();
    }
    let tool: Tool = serde_json::from_value(tool).map_err(|e| format!("not a valid tool: {e}"))?;
    let method = http::Method::from_bytes(method.to_ascii_uppercase().as_bytes())
        .map_err(|e| e.to_string())?;
    Ok((
        tool,
        Operation {
            method,
            path: path.to_owned(),
            params,
            body,
            wrap,
            output: output.is_some(),
        },
    ))
}

/// The request body's arguments: an object's properties spread among the
/// parameters when no name clashes, otherwise the whole body as `body`.
fn body(
    resolver: &Resolver<'_>,
    rb: &Value,
    properties: &mut Map<String, Value>,
    required: &mut Vec<Value>,
) -> Result<(Body, Encoding), String> {
    let rb = resolver.deref(rb);
    let content = rb
        .get("content")
        .and_then(Value::as_object)
        .ok_or("its requestBody has no content")?;
    let pick =
        |want: &dyn Fn(&str) -> bool| content.iter().find(|(t, _)| want(&t.to_ascii_lowercase()));
    let (media, encoding) =
        if let Some((_, m)) = pick(&|t| t.starts_with("application/json") || t.contains("+json")) {
            (m, Encoding::Json)
        } else if let Some((_, m)) = pick(&|t| t.starts_with("application/x-www-form-urlencoded")) {
            (m, Encoding::Form)
        } else if let Some((_, m)) = pick(&|t| t.starts_with("text/")) {
            (m, Encoding::Text)
        } else {
            let types: Vec<&str> = content.keys().map(String::as_str).collect();
            return Err(format!(
                "its request body is {} only; tools send JSON, form or text bodies",
                types.join(", ")
            ));
        };
    let schema = media
        .get("schema")
        .map_or_else(|| json!({}), |s| resolver.schema(s, Direction::Request));
    let must = rb.get("required") == Some(&Value::Bool(true));
    let spreadable = encoding != Encoding::Text
        && schema.get("properties").is_some_and(Value::is_object)
        && ["allOf", "anyOf", "oneOf", "$ref"]
            .iter()
            .all(|k| schema.get(*k).is_none())
        && schema["properties"]
            .as_object()
            .is_some_and(|p| p.keys().all(|k| !properties.contains_key(k)));
    if spreadable {
        let props = schema["properties"]
            .as_object()
            .cloned()
            .unwrap_or_default();
        let inner: Vec<&str> = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .collect();
        let mut names = Vec::new();
        for (k, v) in props {
            // A property the body requires is required of the call only
            // when the body itself is.
            if must && inner.contains(&k.as_str()) {
                required.push(Value::from(k.clone()));
            }
            names.push(k.clone());
            properties.insert(k, v);
        }
        return Ok((Body::Spread(names), encoding));
    }
    let arg = free_name("body", "request", properties);
    let mut schema = schema;
    if let (Some(d), Value::Object(s)) =
        (rb.get("description").and_then(Value::as_str), &mut schema)
        && !s.contains_key("description")
    {
        s.insert("description".into(), Value::from(d));
    }
    if must {
        required.push(Value::from(arg.clone()));
    }
    properties.insert(arg.clone(), schema);
    Ok((Body::Whole(arg), encoding))
}

/// `name` if no argument has it yet, else `<where>_<name>` (then with a
/// number).
fn free_name(name: &str, place: &str, taken: &Map<String, Value>) -> String {
    if !taken.contains_key(name) {
        return name.to_owned();
    }
    let mut candidate = format!("{place}_{name}");
    let mut n = 2;
    while taken.contains_key(&candidate) {
        candidate = format!("{place}_{name}_{n}");
        n += 1;
    }
    candidate
}

/// The `outputSchema` of an operation whose every 2xx answer is JSON: the
/// first one's schema, wrapped in `{"result": …}` when it is not an object.
fn output_schema(resolver: &Resolver<'_>, op: &Value) -> (Option<Value>, bool) {
    let Some(responses) = op.get("responses").and_then(Value::as_object) else {
        return (None, false);
    };
    let mut first = None;
    for (status, response) in responses {
        if !status.starts_with('2') {
            continue;
        }
        let response = resolver.deref(response);
        let json = response
            .get("content")
            .and_then(Value::as_object)
            .and_then(|c| {
                c.iter()
                    .find(|(t, _)| {
                        let t = t.to_ascii_lowercase();
                        t.starts_with("application/json") || t.contains("+json")
                    })
                    .map(|(_, m)| m)
            });
        match json.and_then(|m| m.get("schema")) {
            Some(schema) => {
                if first.is_none() {
                    first = Some(schema);
                }
            }
            // A 2xx answer without JSON (a 204): no schema can promise
            // structured output.
            None => return (None, false),
        }
    }
    let Some(schema) = first else {
        return (None, false);
    };
    let schema = resolver.schema(schema, Direction::Response);
    let object = schema.get("type") == Some(&Value::from("object"))
        || (schema.get("type").is_none() && schema.get("properties").is_some());
    if object {
        let mut schema = schema;
        schema["type"] = Value::from("object");
        (Some(schema), false)
    } else {
        (
            Some(json!({
                "type": "object",
                "properties": {"result": schema},
                "required": ["result"],
            })),
            true,
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn doc() -> Value {
        json!({
            "openapi": "3.1.0",
            "paths": {
                "/pets/{pet_id}": {
                    "parameters": [{"name": "pet_id", "in": "path", "required": true, "schema": {"type": "integer"}}],
                    "get": {
                        "operationId": "get pet!",
                        "summary": "Read a pet",
                        "description": "By its id.",
                        "parameters": [
                            {"name": "verbose", "in": "query", "schema": {"type": "boolean"}},
                            {"name": "Accept", "in": "header", "schema": {"type": "string"}},
                            {"name": "pet_id", "in": "header", "schema": {"type": "string"}},
                            {"name": "X-Key", "in": "header", "schema": {"type": "string"}}
                        ],
                        "responses": {"200": {"content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}}
                    },
                    "delete": {"responses": {"204": {"description": "gone"}}},
                    "put": {
                        "requestBody": {"required": true, "content": {"application/json": {"schema": {"$ref": "#/components/schemas/PetIn"}}}},
                        "responses": {"200": {"content": {"application/json": {"schema": {"type": "array", "items": {"type": "string"}}}}}}
                    }
                },
                "/pets": {
                    "post": {
                        "operationId": "add",
                        "requestBody": {"content": {"application/json": {"schema": {"type": "array"}}}},
                        "responses": {"201": {"content": {"application/json": {"schema": {}}}}}
                    }
                },
                "/upload": {"post": {"operationId": "upload", "requestBody": {"content": {"multipart/form-data": {}}}, "responses": {}}}
            },
            "components": {"schemas": {
                "Pet": {"type": "object", "properties": {"id": {"type": "integer"}, "name": {"type": "string"}}},
                "PetIn": {"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}, "id": {"type": "integer", "readOnly": true}}}
            }}
        })
    }

    fn by_name<'a>(tools: &'a [Tool], name: &str) -> &'a Tool {
        tools
            .iter()
            .find(|t| t.name == name)
            .unwrap_or_else(|| panic!("no tool {name}"))
    }

    #[test]
    fn operations_become_tools_with_names_schemas_and_annotations() {
        let (tools, ops) = tools(&doc(), "pets", &["x-key".to_owned()]);
        let mut names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
        // The multipart upload is left out.
        names.sort_unstable();
        assert_eq!(
            names,
            ["add", "delete_pets_pet_id", "get_pet_", "put_pets_pet_id"]
        );

        let get = by_name(&tools, "get_pet_");
        assert_eq!(get.description.as_deref(), Some("Read a pet\n\nBy its id."));
        assert_eq!(get.title.as_deref(), Some("Read a pet"));
        let input = Value::Object(get.input_schema.clone());
        // The path item's parameter, the operation's own, the header
        // parameter of the same name renamed; Accept, and X-Key which the
        // gateway sends itself, are no arguments.
        assert_eq!(
            input["properties"]
                .as_object()
                .unwrap()
                .keys()
                .collect::<Vec<_>>(),
            ["header_pet_id", "pet_id", "verbose"]
        );
        assert_eq!(input["required"], json!(["pet_id"]));
        assert_eq!(input["additionalProperties"], json!(false));
        let a = get.annotations.as_ref().unwrap();
        assert_eq!(
            (a.read_only_hint, a.idempotent_hint),
            (Some(true), Some(true))
        );
        let out = Value::Object(get.output_schema.clone().unwrap());
        assert_eq!(out["properties"]["name"], json!({"type": "string"}));
        assert!(!ops["get_pet_"].wrap);

        let put = by_name(&tools, "put_pets_pet_id");
        let input = Value::Object(put.input_schema.clone());
        // The $ref'd body spread, its read-only id left out.
        assert_eq!(input["properties"]["name"], json!({"type": "string"}));
        assert!(input["properties"].get("id").is_none());
        assert_eq!(input["required"], json!(["pet_id", "name"]));
        assert!(
            matches!(&ops["put_pets_pet_id"].body, Some((Body::Spread(p), Encoding::Json)) if p == &["name"])
        );
        // An array answer is wrapped.
        assert!(ops["put_pets_pet_id"].wrap);
        let a = put.annotations.as_ref().unwrap();
        assert_eq!(
            (a.read_only_hint, a.destructive_hint, a.idempotent_hint),
            (Some(false), Some(false), Some(true))
        );

        let delete = by_name(&tools, "delete_pets_pet_id");
        assert!(delete.output_schema.is_none());
        let a = delete.annotations.as_ref().unwrap();
        assert_eq!(
            (a.destructive_hint, a.idempotent_hint),
            (Some(true), Some(true))
        );

        let add = by_name(&tools, "add");
        assert!(matches!(&ops["add"].body, Some((Body::Whole(b), _)) if b == "body"));
        let input = Value::Object(add.input_schema.clone());
        assert!(input.get("required").is_none(), "{input}");
        let a = add.annotations.as_ref().unwrap();
        assert_eq!(
            (a.read_only_hint, a.idempotent_hint),
            (Some(false), Some(false))
        );
    }

    #[test]
    fn names_are_made_valid_and_unique() {
        let mut taken = BTreeSet::new();
        let a = unique(tool_name(&json!({}), "get", "/a/{id}/b.c"), &mut taken);
        let b = unique(
            tool_name(&json!({"operationId": "get_a_id_b.c"}), "get", "/x"),
            &mut taken,
        );
        assert_eq!((a.as_str(), b.as_str()), ("get_a_id_b.c", "get_a_id_b.c_2"));
        let long = unique(
            tool_name(&json!({"operationId": "x".repeat(300)}), "get", "/"),
            &mut taken,
        );
        assert_eq!(long.len(), MAX_NAME);
        for name in [&a, &b, &long] {
            toolwire::proto::validate_tool_name(name).unwrap();
        }
    }
}
