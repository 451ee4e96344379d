//! `conformance-client <url>`: the client the official MCP conformance suite
//! drives in its client leg (revision 2026-07-28).
//!
//! The suite runs `<command> <url>` with `MCP_CONFORMANCE_SCENARIO` naming
//! the scenario and, for some, `MCP_CONFORMANCE_CONTEXT` holding JSON (such
//! as the exact `toolCalls` of `http-custom-headers`). This binary does what
//! each scenario expects of a client with toolwire's `Client` over
//! Streamable HTTP; the checks are the suite's. Errors are printed to stderr
//! and make the exit status non-zero (the suite ignores it when running
//! every scenario, but a single-scenario run reads it).
//!
//! The `auth/*` scenarios run the same steps behind toolwire's
//! `OAuthProvider`; the user is `headless.rs`, which follows the mock
//! authorization server's immediate redirect. `auth/pre-registration`
//! passes its client in the context.

#[path = "conformance-client/headless.rs"]
mod headless;

use serde_json::{Map, Value, json};
use std::collections::BTreeMap;
use std::process::ExitCode;
use toolwire::oauth::{OAuthConfig, OAuthProvider};
use toolwire::proto::types::{
    CreateMessageRequestParams, CreateMessageResult, ElicitAction, ElicitRequestParams,
    ElicitResult, Implementation, ListRootsRequestParams, ListRootsResult,
    PrimitiveSchemaDefinition, Tool,
};
use toolwire::{Client, ClientBuilder, InputError};

/// The Client ID Metadata Document URL the suite expects
/// (`auth/basic-cimd`).
const CIMD_URL: &str = "https://conformance-test.local/client-metadata.json";

#[tokio::main(flavor = "current_thread")]
async fn main() -> ExitCode {
    tracing_subscriber::fmt()
        .with_writer(std::io::stderr)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_env("TOOLWIRE_LOG")
                .unwrap_or_else(|_| tracing_subscriber::EnvFilter::new("warn")),
        )
        .init();
    let Some(url) = std::env::args().skip(1).last() else {
        eprintln!("usage: conformance-client <server-url>");
        return ExitCode::from(2);
    };
    let scenario = std::env::var("MCP_CONFORMANCE_SCENARIO").unwrap_or_default();
    let context: Value = std::env::var("MCP_CONFORMANCE_CONTEXT")
        .ok()
        .and_then(|c| serde_json::from_str(&c).ok())
        .unwrap_or(Value::Null);
    let mut builder = builder();
    if scenario.starts_with("auth/") {
        match oauth(&url, &context) {
            Ok(provider) => builder = builder.with_auth(provider),
            Err(e) => {
                eprintln!("conformance-client: {e}");
                return ExitCode::FAILURE;
            }
        }
    }
    let client = match builder.connect_http(&url) {
        Ok(c) => c,
        Err(e) => {
            eprintln!("conformance-client: {e}");
            return ExitCode::FAILURE;
        }
    };
    let mut run = Run::default();
    match scenario.as_str() {
        // Listing must not dereference the network `$ref`; the scenario
        // serves no tools/call.
        "json-schema-ref-no-deref" => {
            run.step("tools/list", client.list_tools().await);
        }
        "http-custom-headers" => custom_headers(&client, &context, &mut run).await,
        "http-standard-headers" => {
            call_every_tool(&client, &mut run).await;
            read_every_resource(&client, &mut run).await;
            get_every_prompt(&client, &mut run).await;
        }
        // tools_call, request-metadata, sep-2322-client-request-state,
        // http-invalid-tool-headers, and anything else: list the tools and
        // call each valid one.
        _ => call_every_tool(&client, &mut run).await,
    }
    if run.failed {
        ExitCode::FAILURE
    } else {
        ExitCode::SUCCESS
    }
}

/// The OAuth provider of the auth scenarios: the pre-registered client
/// from the context if there is one, the suite's CIMD URL, the headless
/// user.
fn oauth(url: &str, context: &Value) -> Result<OAuthProvider, toolwire::oauth::AuthError> {
    let text = |k: &str| context.get(k).and_then(Value::as_str).map(str::to_owned);
    let mut config = OAuthConfig::new()
        .with_client_name("toolwire-conformance-client")
        .with_client_metadata_url(CIMD_URL);
    if let Some(id) = text("client_id") {
        config = config.with_client(id, text("client_secret"));
        if let Some(issuer) = text("issuer") {
            config = config.with_client_issuer(issuer);
        }
    }
    Ok(OAuthProvider::new(url, config)?.with_redirect(headless::Headless))
}

/// A client that answers every kind of input request, so that it can
/// declare (and the suite can check) all three capabilities.
fn builder() -> ClientBuilder {
    ClientBuilder::new()
        .with_client_info(Implementation::new(
            "toolwire-conformance-client",
            env!("CARGO_PKG_VERSION"),
        ))
        .with_elicitation(|_key: String, request: ElicitRequestParams| async move {
            Ok::<_, InputError>(accept(&request))
        })
        .with_sampling(|_key: String, _request: CreateMessageRequestParams| async {
            serde_json::from_value::<CreateMessageResult>(json!({
                "role": "assistant",
                "content": {"type": "text", "text": "This is a sampled answer."},
                "model": "toolwire-conformance",
                "stopReason": "endTurn"
            }))
            .map_err(|e| InputError::new(e.to_string()))
        })
        .with_roots(|_key: String, _request: ListRootsRequestParams| async {
            serde_json::from_value::<ListRootsResult>(
                json!({"roots": [{"uri": "file:///tmp/conformance", "name": "conformance"}]}),
            )
            .map_err(|e| InputError::new(e.to_string()))
        })
}

/// Accepts a form with a plausible value for every field.
fn accept(request: &ElicitRequestParams) -> ElicitResult {
    let ElicitRequestParams::Form(form) = request else {
        return ElicitResult {
            action: ElicitAction::Accept,
            content: None,
        };
    };
    let content: Map<String, Value> = form
        .requested_schema
        .properties
        .iter()
        .map(|(name, field)| (name.clone(), sample_field(field)))
        .collect();
    ElicitResult {
        action: ElicitAction::Accept,
        content: Some(content),
    }
}

fn sample_field(field: &PrimitiveSchemaDefinition) -> Value {
    use PrimitiveSchemaDefinition as P;
    match field {
        P::String(s) => Value::from(s.default.clone().unwrap_or_else(|| "conformance".into())),
        P::Number(n) => n
            .default
            .or(n.minimum)
            .and_then(serde_json::Number::from_f64)
            .map_or_else(|| Value::from(1), Value::Number),
        P::Boolean(b) => Value::Bool(b.default.unwrap_or(true)),
        P::UntitledSingleSelectEnum(e) => Value::from(
            e.default
                .clone()
                .or_else(|| e.values.first().cloned())
                .unwrap_or_default(),
        ),
        P::TitledSingleSelectEnum(e) => Value::from(
            e.default
                .clone()
                .or_else(|| e.one_of.first().map(|o| o.value.clone()))
                .unwrap_or_default(),
        ),
        P::UntitledMultiSelectEnum(e) => json!(e.items.values.iter().take(1).collect::<Vec<_>>()),
        other => serde_json::to_value(other)
            .ok()
            .and_then(|v| v.get("enum").and_then(|e| e.get(0)).cloned())
            .unwrap_or(Value::Null),
    }
}

/// Arguments for a tool: a plausible value for every required property.
fn sample_arguments(tool: &Tool) -> Value {
    let required: Vec<&str> = tool
        .input_schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut args = Map::new();
    if let Some(Value::Object(props)) = tool.input_schema.get("properties") {
        for (name, schema) in props {
            if !required.contains(&name.as_str()) {
                continue;
            }
            let value = match schema.get("type").and_then(Value::as_str) {
                Some("integer" | "number") => json!(1),
                Some("boolean") => json!(true),
                Some("array") => json!([]),
                Some("object") => json!({}),
                _ => json!("conformance"),
            };
            args.insert(name.clone(), value);
        }
    }
    Value::Object(args)
}

/// Whether every step succeeded.
#[derive(Default)]
struct Run {
    failed: bool,
}

impl Run {
    fn step<T>(&mut self, what: &str, result: Result<T, toolwire::ClientError>) -> Option<T> {
        match result {
            Ok(v) => Some(v),
            Err(e) => {
                eprintln!("conformance-client: {what}: {e}");
                self.failed = true;
                None
            }
        }
    }
}

async fn call_every_tool(client: &Client, run: &mut Run) {
    let Some(tools) = run.step("tools/list", client.list_tools().await) else {
        return;
    };
    for tool in &tools {
        let args = sample_arguments(tool);
        run.step(
            &format!("tools/call {}", tool.name),
            client.call_tool(&tool.name, args).await,
        );
    }
}

async fn read_every_resource(client: &Client, run: &mut Run) {
    let Some(resources) = run.step("resources/list", client.list_resources().await) else {
        return;
    };
    for r in &resources {
        run.step(
            &format!("resources/read {}", r.uri),
            client.read_resource(&r.uri).await,
        );
    }
}

async fn get_every_prompt(client: &Client, run: &mut Run) {
    let Some(prompts) = run.step("prompts/list", client.list_prompts().await) else {
        return;
    };
    for p in &prompts {
        let args: BTreeMap<String, String> = p
            .arguments
            .iter()
            .flatten()
            .filter(|a| a.required == Some(true))
            .map(|a| (a.name.clone(), "conformance".to_owned()))
            .collect();
        run.step(
            &format!("prompts/get {}", p.name),
            client.get_prompt(&p.name, args).await,
        );
    }
}

/// Calls each tool of `context.toolCalls` with exactly its arguments.
async fn custom_headers(client: &Client, context: &Value, run: &mut Run) {
    run.step("tools/list", client.list_tools().await);
    let calls = context
        .get("toolCalls")
        .and_then(Value::as_array)
        .cloned()
        .unwrap_or_default();
    if calls.is_empty() {
        eprintln!("conformance-client: MCP_CONFORMANCE_CONTEXT has no toolCalls");
        run.failed = true;
    }
    for call in calls {
        let Some(name) = call.get("name").and_then(Value::as_str) else {
            continue;
        };
        let args = call.get("arguments").cloned().unwrap_or(Value::Null);
        run.step(
            &format!("tools/call {name}"),
            client.call_tool(name, args).await,
        );
    }
}
