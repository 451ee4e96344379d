//! What each kind of handler's output and errors become on the wire, through
//! `Server`: the one result shape (typed-output tools asking for input
//! included), `?` on common errors, and the one duplicate-name error.

use crate::server::completion::support::{call, call_with};
use crate::{
    ElicitAnswer, EntryKind, HandlerError, HandlerOutput, InputRequired, Prompt, PromptArguments,
    RegistrationError, RequestContext, Resource, ResourceTemplate, Server, ServerConfig, Tool,
    UriVariables,
};
use serde_json::{Value, json};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Count {
    count: u32,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Total {
    total: u32,
    round: u32,
}

/// Round 1 asks for a count; round 2 answers with structured output.
async fn typed_total(_: Value, cx: RequestContext) -> Result<HandlerOutput<Total>, HandlerError> {
    match cx.input::<ElicitAnswer<Count>>("count")? {
        Some(ElicitAnswer::Accept(c)) => Ok(HandlerOutput::Complete(Total {
            total: c.count * 2,
            round: cx.input_round(),
        })),
        Some(_) => Err(HandlerError::failed("no count given")),
        None => Ok(InputRequired::new()
            .elicit::<Count>("count", "How many?")
            .into()),
    }
}

fn typed_server() -> Server {
    let s = Server::new(ServerConfig::new("t", "1"));
    s.add_tool(
        Tool::builder("typed_total")
            .input_schema(json!({"type": "object"}))
            .output::<Total>()
            .handler(typed_total)
            .expect("valid"),
    )
    .expect("new");
    // Returns a bare `InputRequired` or a bare output value, through
    // `HandlerOutput`'s `From` and `IntoTypedOutput`.
    s.add_tool(
        Tool::builder("typed_bare")
            .input_schema(json!({"type": "object"}))
            .output::<Total>()
            .handler(|_: Value, cx: RequestContext| async move {
                if cx.input_round() == 1 {
                    InputRequired::new().list_roots("roots").into()
                } else {
                    HandlerOutput::Complete(Total {
                        total: 0,
                        round: cx.input_round(),
                    })
                }
            })
            .expect("valid"),
    )
    .expect("new");
    s
}

#[tokio::test]
async fn a_typed_output_tool_asks_for_input_then_completes_with_structured_output() {
    let s = typed_server();
    let caps = json!({"elicitation": {"form": {}}});
    let r1 = call_with(
        &s,
        "tools/call",
        json!({"name": "typed_total"}),
        caps.clone(),
    )
    .await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    assert_eq!(
        r1["result"]["inputRequests"]["count"]["method"],
        "elicitation/create"
    );
    let state = r1["result"]["requestState"].clone();
    assert!(state.is_string(), "{r1}");
    let r2 = call_with(
        &s,
        "tools/call",
        json!({
            "name": "typed_total",
            "requestState": state,
            "inputResponses": {"count": {"action": "accept", "content": {"count": 21}}},
        }),
        caps.clone(),
    )
    .await;
    let res = &r2["result"];
    assert_eq!(res["resultType"], "complete", "{r2}");
    assert_eq!(res["structuredContent"], json!({"total": 42, "round": 2}));
    let mirrored: Value =
        serde_json::from_str(res["content"][0]["text"].as_str().expect("text")).expect("json");
    assert_eq!(mirrored, res["structuredContent"]);
    assert!(res.get("isError").is_none_or(|e| e == false), "{r2}");

    let declined = call_with(
        &s,
        "tools/call",
        json!({
            "name": "typed_total",
            "requestState": state,
            "inputResponses": {"count": {"action": "decline"}},
        }),
        caps,
    )
    .await;
    assert_eq!(declined["result"]["isError"], true, "{declined}");
    assert_eq!(declined["result"]["content"][0]["text"], "no count given");
}

#[tokio::test]
async fn a_typed_output_tool_may_return_a_bare_input_request() {
    let s = typed_server();
    let caps = json!({"roots": {}});
    let r1 = call_with(
        &s,
        "tools/call",
        json!({"name": "typed_bare"}),
        caps.clone(),
    )
    .await;
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let r2 = call_with(
        &s,
        "tools/call",
        json!({
            "name": "typed_bare",
            "requestState": r1["result"]["requestState"],
            "inputResponses": {"roots": {"roots": []}},
        }),
        caps,
    )
    .await;
    assert_eq!(
        r2["result"]["structuredContent"],
        json!({"total": 0, "round": 2}),
        "{r2}"
    );
}

fn io_failure() -> std::io::Error {
    std::io::Error::new(std::io::ErrorKind::PermissionDenied, "disk says no")
}

/// `?` works the same in every kind of handler; only what the client
/// sees differs (a tool has `isError` results, the others do not).
fn question_mark_server() -> Server {
    let s = Server::new(ServerConfig::new("t", "1"));
    s.add_tool(
        Tool::builder("io")
            .input_schema(json!({"type": "object"}))
            .handler(|_: Value, _| async {
                Err(io_failure())?;
                Ok::<_, HandlerError>("unreachable")
            })
            .expect("valid"),
    )
    .expect("new");
    s.add_tool(
        Tool::builder("json")
            .input_schema(json!({"type": "object"}))
            .handler(|_: Value, _| async {
                let n: u32 = serde_json::from_str("\"seven\"")?;
                Ok::<_, HandlerError>(n.to_string())
            })
            .expect("valid"),
    )
    .expect("new");
    s.add_tool(
        Tool::builder("boxed")
            .input_schema(json!({"type": "object"}))
            .handler(|_: Value, _| async {
                let e: Box<dyn std::error::Error + Send + Sync> = "boxed words".into();
                Err(e)?;
                Ok::<_, HandlerError>("unreachable")
            })
            .expect("valid"),
    )
    .expect("new");
    s.add_tool(
        Tool::builder("typed_io")
            .input_schema(json!({"type": "object"}))
            .output::<Total>()
            .handler(|_: Value, _| async {
                Err(io_failure())?;
                Ok(Total { total: 1, round: 1 })
            })
            .expect("valid"),
    )
    .expect("new");
    s.add_tool(
        Tool::builder("not_found")
            .input_schema(json!({"type": "object"}))
            .handler(|_: Value, _| async { Err::<String, _>(HandlerError::NotFound) })
            .expect("valid"),
    )
    .expect("new");
    s.add_prompt(
        Prompt::builder("io")
            .handler(|_: PromptArguments, _| async {
                Err(io_failure())?;
                Ok::<_, HandlerError>("unreachable")
            })
            .expect("valid"),
    )
    .expect("new");
    s.add_resource(
        Resource::builder("test://io", "io")
            .handler(|_| async {
                Err(io_failure())?;
                Ok::<_, HandlerError>("unreachable")
            })
            .expect("valid"),
    )
    .expect("new");
    s.add_resource_template(
        ResourceTemplate::builder("test://items/{id}", "items")
            .handler(|_: UriVariables, _| async { Err::<String, _>(HandlerError::NotFound) })
            .expect("valid"),
    )
    .expect("new");
    s
}

#[tokio::test]
async fn question_mark_failures_are_is_error_results_from_tools_with_the_display_text() {
    let s = question_mark_server();
    let json_text = serde_json::from_str::<u32>("\"seven\"")
        .expect_err("not a number")
        .to_string();
    for (tool, text) in [
        ("io", "disk says no"),
        ("json", json_text.as_str()),
        ("boxed", "boxed words"),
        ("typed_io", "disk says no"),
    ] {
        let r = call(&s, "tools/call", json!({"name": tool})).await;
        assert_eq!(r["result"]["isError"], true, "{tool}: {r}");
        assert_eq!(r["result"]["content"][0]["text"], text, "{tool}: {r}");
    }
    let r = call(&s, "tools/call", json!({"name": "not_found"})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
}

#[tokio::test]
async fn question_mark_failures_are_internal_errors_from_prompts_and_reads() {
    let s = question_mark_server();
    let r = call(&s, "prompts/get", json!({"name": "io"})).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(r["error"]["message"], "disk says no");
    let r = call(&s, "resources/read", json!({"uri": "test://io"})).await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    assert_eq!(r["error"]["message"], "disk says no");
    let r = call(&s, "resources/read", json!({"uri": "test://items/1"})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["message"], "Resource not found");
    assert_eq!(r["error"]["data"], json!({"uri": "test://items/1"}));
}

#[test]
fn a_taken_name_is_one_duplicate_error_for_every_kind() {
    let s = question_mark_server();
    let again_tool = Tool::builder("io")
        .input_schema(json!({"type": "object"}))
        .handler(|_: Value, _| async { "x" })
        .expect("valid");
    let again_prompt = Prompt::builder("io")
        .handler(|_: PromptArguments, _| async { "x" })
        .expect("valid");
    let again_resource = Resource::builder("test://io", "io")
        .text("x")
        .expect("valid");
    let again_template = ResourceTemplate::builder("test://items/{id}", "again")
        .handler(|_: UriVariables, _| async { "x" })
        .expect("valid");
    let results = [
        (EntryKind::Tool, "io", s.add_tool(again_tool)),
        (EntryKind::Prompt, "io", s.add_prompt(again_prompt)),
        (
            EntryKind::Resource,
            "test://io",
            s.add_resource(again_resource),
        ),
        (
            EntryKind::ResourceTemplate,
            "test://items/{id}",
            s.add_resource_template(again_template),
        ),
    ];
    for (kind, taken, result) in results {
        match result {
            Err(RegistrationError::Duplicate { kind: k, name }) => {
                assert_eq!((k, name.as_str()), (kind, taken));
            }
            other => panic!("{kind:?}: expected a duplicate, got {other:?}"),
        }
    }
}
