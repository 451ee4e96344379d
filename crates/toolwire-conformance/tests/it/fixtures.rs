//! Every fixture over stdio, with the exact texts of CONFORMANCE.md §2.4.

use crate::support::{Stdio, all_caps};
use serde_json::{Value, json};

const PNG: &str = "iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5ErkJggg==";
const WAV: &str = "UklGRiYAAABXQVZFZm10IBAAAAABAAEAQB8AAAB9AAACABAAZGF0YQIAAAA=";
const NO_ARGS: &str = r#"{"type":"object","properties":{}}"#;

fn names(list: &Value, key: &str, field: &str) -> Vec<String> {
    list[key]
        .as_array()
        .unwrap_or_else(|| panic!("{key}: {list}"))
        .iter()
        .map(|t| t[field].as_str().expect(field).to_owned())
        .collect()
}

#[tokio::test]
async fn discover_declares_every_primitive_with_list_changes() {
    let mut p = Stdio::spawn();
    let r = p.result("server/discover", json!({})).await;
    let caps = &r["capabilities"];
    assert_eq!(caps["tools"]["listChanged"], true);
    assert_eq!(caps["prompts"], json!({"listChanged": true}));
    assert_eq!(caps["resources"]["listChanged"], true);
    assert_eq!(caps["completions"], json!({}));
    // Spec: extensions/tasks#capability-negotiation — some fixtures run as
    // tasks.
    assert_eq!(
        caps["extensions"]["io.modelcontextprotocol/tasks"],
        json!({})
    );
    assert_eq!(r["resultType"], "complete");
    assert_eq!(
        r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "toolwire-conformance"
    );
}

#[tokio::test]
async fn tools_list_has_every_fixture_with_a_description() {
    let mut p = Stdio::spawn();
    let r = p.result("tools/list", json!({})).await;
    assert_eq!(
        names(&r, "tools", "name"),
        [
            "test_simple_text",
            "test_image_content",
            "test_audio_content",
            "test_embedded_resource",
            "test_multiple_content_types",
            "test_error_handling",
            "test_tool_with_progress",
            "test_missing_capability",
            "test_streaming_elicitation",
            "test_logging_tool",
            "test_trigger_tool_change",
            "test_trigger_prompt_change",
            "test_custom_header",
            "json_schema_2020_12_tool",
            "test_input_required_result_elicitation",
            "test_input_required_result_sampling",
            "test_input_required_result_list_roots",
            "test_input_required_result_request_state",
            "test_input_required_result_multiple_inputs",
            "test_input_required_result_multi_round",
            "test_input_required_result_tampered_state",
            "test_input_required_result_capabilities",
            "test_tool_with_logging",
            "test_sampling",
            "test_elicitation",
            "test_elicitation_sep1034_defaults",
            "test_elicitation_sep1330_enums",
            "test_reconnection",
            "greet",
            "slow_compute",
            "failing_job",
            "protocol_error_job",
            "confirm_delete",
            "multi_input",
            "test_tool_with_task",
        ]
    );
    let no_args: Value = serde_json::from_str(NO_ARGS).expect("JSON");
    for t in r["tools"].as_array().expect("tools") {
        assert!(
            !t["description"].as_str().unwrap_or_default().is_empty(),
            "{t}"
        );
        match t["name"].as_str() {
            Some("test_custom_header") => assert_eq!(
                t["inputSchema"],
                json!({
                    "type": "object",
                    "properties": {"value": {"type": "string", "x-mcp-header": "Value"}},
                    "required": ["value"]
                })
            ),
            Some(
                "json_schema_2020_12_tool"
                | "test_sampling"
                | "test_elicitation"
                | "greet"
                | "slow_compute"
                | "confirm_delete",
            ) => {}
            _ => assert_eq!(t["inputSchema"], no_args, "{t}"),
        }
    }
    assert_eq!(r["resultType"], "complete");
    assert!(r["ttlMs"].is_u64());
    assert!(r.get("nextCursor").is_none());
}

#[tokio::test]
async fn json_schema_2020_12_tool_schema_is_returned_verbatim() {
    let mut p = Stdio::spawn();
    let r = p.result("tools/list", json!({})).await;
    let tool = r["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .find(|t| t["name"] == "json_schema_2020_12_tool")
        .expect("listed")
        .clone();
    assert_eq!(
        tool["description"],
        "Tool with JSON Schema 2020-12 features"
    );
    assert_eq!(
        tool["inputSchema"],
        json!({
            "$schema": "https://json-schema.org/draft/2020-12/schema",
            "type": "object",
            "$defs": {"address": {
                "$anchor": "addressDef",
                "type": "object",
                "properties": {"street": {"type": "string"}, "city": {"type": "string"}}
            }},
            "properties": {
                "name": {"type": "string"},
                "address": {"$ref": "#/$defs/address"},
                "contactMethod": {"type": "string", "enum": ["phone", "email"]},
                "phone": {"type": "string"},
                "email": {"type": "string"}
            },
            "allOf": [{"anyOf": [{"required": ["phone"]}, {"required": ["email"]}]}],
            "if": {"properties": {"contactMethod": {"const": "phone"}}, "required": ["contactMethod"]},
            "then": {"required": ["phone"]},
            "else": {"required": ["email"]},
            "additionalProperties": false
        })
    );
    let ok = p
        .result(
            "tools/call",
            json!({"name": "json_schema_2020_12_tool", "arguments": {"name": "a", "email": "a@b.c"}}),
        )
        .await;
    assert_eq!(ok["content"], json!([{"type": "text", "text": "ok"}]));
}

#[tokio::test]
async fn content_tools_return_the_exact_fixture_content() {
    let mut p = Stdio::spawn();
    // Called without an `arguments` member, as the suite does.
    let r = p
        .result("tools/call", json!({"name": "test_simple_text"}))
        .await;
    assert_eq!(
        r["content"],
        json!([{"type": "text", "text": "This is a simple text response for testing."}])
    );
    assert_eq!(r["resultType"], "complete");

    let cases = [
        (
            "test_image_content",
            json!([{"type": "image", "data": PNG, "mimeType": "image/png"}]),
        ),
        (
            "test_audio_content",
            json!([{"type": "audio", "data": WAV, "mimeType": "audio/wav"}]),
        ),
        (
            "test_embedded_resource",
            json!([{"type": "resource", "resource": {
                "uri": "test://embedded-resource",
                "mimeType": "text/plain",
                "text": "This is an embedded resource content."
            }}]),
        ),
        (
            "test_multiple_content_types",
            json!([
                {"type": "text", "text": "Multiple content types test:"},
                {"type": "image", "data": PNG, "mimeType": "image/png"},
                {"type": "resource", "resource": {
                    "uri": "test://mixed-content-resource",
                    "mimeType": "application/json",
                    "text": "{\"test\":\"data\",\"value\":123}"
                }}
            ]),
        ),
    ];
    for (name, content) in cases {
        let r = p
            .result("tools/call", json!({"name": name, "arguments": {}}))
            .await;
        assert_eq!(r["content"], content, "{name}");
        assert_ne!(r["isError"], true, "{name}");
    }

    let r = p
        .result(
            "tools/call",
            json!({"name": "test_error_handling", "arguments": {}}),
        )
        .await;
    assert_eq!(r["isError"], true);
    assert_eq!(
        r["content"],
        json!([{"type": "text", "text": "This tool intentionally returns an error for testing"}])
    );
}

#[tokio::test]
async fn progress_tool_reports_0_50_100_before_its_result() {
    let mut p = Stdio::spawn();
    let (r, notes) = p
        .request_with(
            "tools/call",
            json!({"name": "test_tool_with_progress", "arguments": {},
                   "_meta": {"progressToken": "progress-test-1"}}),
            &all_caps(),
        )
        .await;
    assert!(r.get("result").is_some(), "{r}");
    let progress: Vec<(&str, Option<f64>, Option<f64>)> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| {
            let p = &n["params"];
            (
                p["progressToken"].as_str().expect("token"),
                p["progress"].as_f64(),
                p["total"].as_f64(),
            )
        })
        .collect();
    assert_eq!(
        progress,
        [
            ("progress-test-1", Some(0.0), Some(100.0)),
            ("progress-test-1", Some(50.0), Some(100.0)),
            ("progress-test-1", Some(100.0), Some(100.0)),
        ]
    );
    // Without a token: no notifications, just the result.
    let (r, notes) = p
        .request_with(
            "tools/call",
            json!({"name": "test_tool_with_progress", "arguments": {}}),
            &all_caps(),
        )
        .await;
    assert!(r.get("result").is_some(), "{r}");
    assert!(notes.is_empty(), "{notes:?}");
}

#[tokio::test]
async fn missing_capability_tool_needs_sampling() {
    let mut p = Stdio::spawn();
    let (r, _) = p
        .request_with(
            "tools/call",
            json!({"name": "test_missing_capability", "arguments": {}}),
            &json!({}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32021, "{r}");
    assert_eq!(
        r["error"]["data"]["requiredCapabilities"],
        json!({"sampling": {}})
    );
    let ok = p
        .result(
            "tools/call",
            json!({"name": "test_missing_capability", "arguments": {}}),
        )
        .await;
    assert_ne!(ok["isError"], true);
}

#[tokio::test]
async fn logging_tool_logs_only_when_asked() {
    let mut p = Stdio::spawn();
    let call = json!({"name": "test_logging_tool", "arguments": {}});
    let (r, notes) = p
        .request_with("tools/call", call.clone(), &all_caps())
        .await;
    assert!(r.get("result").is_some(), "{r}");
    assert!(notes.is_empty(), "{notes:?}");
    let mut with_level = call;
    with_level["_meta"] = json!({"io.modelcontextprotocol/logLevel": "debug"});
    let (_, notes) = p.request_with("tools/call", with_level, &all_caps()).await;
    assert_eq!(notes.len(), 1, "{notes:?}");
    assert_eq!(notes[0]["method"], "notifications/message");
    assert_eq!(notes[0]["params"]["level"], "info");
}

#[tokio::test]
async fn resources_are_listed_and_read_exactly() {
    let mut p = Stdio::spawn();
    let r = p.result("resources/list", json!({})).await;
    assert_eq!(
        names(&r, "resources", "uri"),
        ["test://static-text", "test://static-binary"]
    );
    assert_eq!(r["resources"][0]["name"], "static-text");
    assert_eq!(r["resources"][0]["mimeType"], "text/plain");
    assert_eq!(r["resources"][1]["mimeType"], "image/png");
    for key in ["resultType", "ttlMs", "cacheScope"] {
        assert!(r.get(key).is_some(), "{key}: {r}");
    }

    let r = p.result("resources/templates/list", json!({})).await;
    assert_eq!(
        r["resourceTemplates"],
        json!([{
            "uriTemplate": "test://template/{id}/data",
            "name": "template-data",
            "title": "Template data",
            "description": "A resource template with an id parameter",
            "mimeType": "application/json"
        }])
    );
    assert!(r["ttlMs"].is_u64());
    assert_eq!(r["cacheScope"], "public");

    let r = p
        .result("resources/read", json!({"uri": "test://static-text"}))
        .await;
    assert_eq!(
        r["contents"],
        json!([{
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource."
        }])
    );
    assert!(r["ttlMs"].is_u64());
    assert_eq!(r["cacheScope"], "public");
    assert_eq!(r["resultType"], "complete");

    let r = p
        .result("resources/read", json!({"uri": "test://static-binary"}))
        .await;
    assert_eq!(
        r["contents"],
        json!([{"uri": "test://static-binary", "mimeType": "image/png", "blob": PNG}])
    );

    let r = p
        .result("resources/read", json!({"uri": "test://template/123/data"}))
        .await;
    assert_eq!(
        r["contents"],
        json!([{
            "uri": "test://template/123/data",
            "mimeType": "application/json",
            "text": "{\"id\":\"123\",\"templateTest\":true,\"data\":\"Data for ID: 123\"}"
        }])
    );
    // Escaped values stay valid JSON.
    let r = p
        .result(
            "resources/read",
            json!({"uri": "test://template/a%22b/data"}),
        )
        .await;
    let data: Value =
        serde_json::from_str(r["contents"][0]["text"].as_str().expect("text")).expect("JSON text");
    assert_eq!(data["id"], "a\"b");
}

#[tokio::test]
async fn unknown_resource_is_invalid_params_with_the_uri() {
    let mut p = Stdio::spawn();
    for uri in [
        "test://nonexistent-resource-for-conformance-testing",
        "test://template/123/other",
        "test://template//data",
    ] {
        let r = p.call("resources/read", json!({"uri": uri})).await;
        assert_eq!(r["error"]["code"], -32602, "{uri}: {r}");
        assert_eq!(r["error"]["data"], json!({"uri": uri}));
        assert!(r.get("result").is_none());
    }
}

#[tokio::test]
async fn prompts_are_listed_with_their_arguments() {
    let mut p = Stdio::spawn();
    let r = p.result("prompts/list", json!({})).await;
    assert_eq!(
        names(&r, "prompts", "name"),
        [
            "test_simple_prompt",
            "test_prompt_with_arguments",
            "test_prompt_with_embedded_resource",
            "test_prompt_with_image",
            "test_input_required_result_prompt",
        ]
    );
    for prompt in r["prompts"].as_array().expect("prompts") {
        assert!(
            !prompt["description"]
                .as_str()
                .unwrap_or_default()
                .is_empty(),
            "{prompt}"
        );
    }
    assert_eq!(
        r["prompts"][1]["arguments"],
        json!([
            {"name": "arg1", "description": "First test argument", "required": true},
            {"name": "arg2", "description": "Second test argument", "required": true}
        ])
    );
    assert_eq!(
        r["prompts"][2]["arguments"],
        json!([{"name": "resourceUri", "description": "URI of the resource to embed", "required": true}])
    );
    assert!(r["ttlMs"].is_u64());
    assert_eq!(r["cacheScope"], "public");
}

#[tokio::test]
async fn prompts_render_the_exact_fixture_messages() {
    let mut p = Stdio::spawn();
    let r = p
        .result("prompts/get", json!({"name": "test_simple_prompt"}))
        .await;
    assert_eq!(
        r["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "This is a simple prompt for testing."}}])
    );
    assert_eq!(r["resultType"], "complete");

    let r = p
        .result(
            "prompts/get",
            json!({"name": "test_prompt_with_arguments",
                   "arguments": {"arg1": "testValue1", "arg2": "testValue2"}}),
        )
        .await;
    assert_eq!(
        r["messages"],
        json!([{"role": "user", "content": {"type": "text",
            "text": "Prompt with arguments: arg1='testValue1', arg2='testValue2'"}}])
    );

    let r = p
        .result(
            "prompts/get",
            json!({"name": "test_prompt_with_embedded_resource",
                   "arguments": {"resourceUri": "test://example-resource"}}),
        )
        .await;
    assert_eq!(
        r["messages"],
        json!([
            {"role": "user", "content": {"type": "resource", "resource": {
                "uri": "test://example-resource",
                "mimeType": "text/plain",
                "text": "Embedded resource content for testing."
            }}},
            {"role": "user", "content": {"type": "text", "text": "Please process the embedded resource above."}}
        ])
    );

    let r = p
        .result("prompts/get", json!({"name": "test_prompt_with_image"}))
        .await;
    assert_eq!(
        r["messages"],
        json!([
            {"role": "user", "content": {"type": "image", "data": PNG, "mimeType": "image/png"}},
            {"role": "user", "content": {"type": "text", "text": "Please analyze the image above."}}
        ])
    );
}

#[tokio::test]
async fn prompt_argument_errors_are_invalid_params() {
    let mut p = Stdio::spawn();
    let r = p
        .call(
            "prompts/get",
            json!({"name": "test_prompt_with_arguments", "arguments": {"arg1": "x"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["error"]["data"], json!({"missing": ["arg2"]}));
    let r = p
        .call(
            "prompts/get",
            json!({"name": "test_prompt_with_embedded_resource"}),
        )
        .await;
    assert_eq!(r["error"]["data"], json!({"missing": ["resourceUri"]}));
    // Spec: server/prompts.mdx#embedded-resources — an embedded resource
    // carries a valid URI: the server refuses to send one that is not.
    let r = p
        .call(
            "prompts/get",
            json!({"name": "test_prompt_with_embedded_resource",
                   "arguments": {"resourceUri": "not a uri"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32603, "{r}");
    let message = r["error"]["message"].as_str().unwrap_or_default();
    assert!(message.contains("\"not a uri\""), "{message}");
    let r = p
        .call("prompts/get", json!({"name": "no_such_prompt"}))
        .await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn input_required_prompt_asks_for_context_then_renders() {
    let mut p = Stdio::spawn();
    let r1 = p
        .result(
            "prompts/get",
            json!({"name": "test_input_required_result_prompt"}),
        )
        .await;
    assert_eq!(r1["resultType"], "input_required");
    assert_eq!(
        r1["inputRequests"],
        json!({"user_context": {"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "What context should the prompt use?",
            "requestedSchema": {"type": "object", "properties": {"context": {"type": "string"}}, "required": ["context"]}
        }}})
    );
    let r2 = p
        .result(
            "prompts/get",
            json!({
                "name": "test_input_required_result_prompt",
                "inputResponses": {"user_context": {"action": "accept", "content": {"context": "test context"}}},
                "requestState": r1["requestState"],
            }),
        )
        .await;
    assert_eq!(r2["resultType"], "complete");
    assert_eq!(
        r2["messages"],
        json!([{"role": "user", "content": {"type": "text", "text": "Prompt with context: test context"}}])
    );
}

#[tokio::test]
async fn completions_for_prompt_arguments_and_template_variables() {
    let mut p = Stdio::spawn();
    let r = p
        .result(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg1", "value": "test"}}),
        )
        .await;
    assert_eq!(
        r["completion"],
        json!({"values": ["test", "testValue1", "testValue2"]})
    );
    assert_eq!(r["resultType"], "complete");
    let r = p
        .result(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg2", "value": "PAR"}}),
        )
        .await;
    assert_eq!(r["completion"]["values"], json!(["paris", "park", "party"]));
    let r = p
        .result(
            "completion/complete",
            json!({"ref": {"type": "ref/resource", "uri": "test://template/{id}/data"},
                   "argument": {"name": "id", "value": "4"}}),
        )
        .await;
    assert_eq!(r["completion"]["values"], json!(["456"]));
    let r = p
        .call(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "nope"},
                   "argument": {"name": "arg1", "value": ""}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602);
}

#[tokio::test]
async fn elicitation_tool_asks_then_greets() {
    let mut p = Stdio::spawn();
    let call = json!({"name": "test_input_required_result_elicitation", "arguments": {}});
    let r1 = p.result("tools/call", call.clone()).await;
    assert_eq!(r1["resultType"], "input_required");
    assert_eq!(
        r1["inputRequests"],
        json!({"user_name": {"method": "elicitation/create", "params": {
            "mode": "form",
            "message": "What is your name?",
            "requestedSchema": {"type": "object", "properties": {"name": {"type": "string"}}, "required": ["name"]}
        }}})
    );
    // Completes without the state and ignores extra keys.
    let mut retry = call.clone();
    retry["inputResponses"] = json!({
        "user_name": {"action": "accept", "content": {"name": "Alice"}},
        "unknown_extra_key": {"x": 1}
    });
    let r2 = p.result("tools/call", retry).await;
    assert_eq!(r2["resultType"], "complete");
    assert_eq!(
        r2["content"],
        json!([{"type": "text", "text": "Hello, Alice!"}])
    );
    // The wrong key asks again; a malformed answer is an error.
    let mut wrong = call.clone();
    wrong["inputResponses"] = json!({"wrong_key": {"action": "accept", "content": {"name": "A"}}});
    assert_eq!(
        p.result("tools/call", wrong).await["resultType"],
        "input_required"
    );
    let mut bad = call.clone();
    bad["inputResponses"] = json!({"user_name": 12345});
    assert_eq!(p.call("tools/call", bad).await["error"]["code"], -32602);
    let mut null = call;
    null["inputResponses"] = Value::Null;
    assert_eq!(p.call("tools/call", null).await["error"]["code"], -32602);
}

#[tokio::test]
async fn sampling_roots_and_state_tools_complete_on_retry() {
    let mut p = Stdio::spawn();
    let call = |name: &str| json!({"name": name, "arguments": {}});

    let r1 = p
        .result("tools/call", call("test_input_required_result_sampling"))
        .await;
    assert_eq!(
        r1["inputRequests"],
        json!({"capital_question": {"method": "sampling/createMessage", "params": {
            "messages": [{"role": "user", "content": {"type": "text", "text": "What is the capital of France?"}}],
            "maxTokens": 100
        }}})
    );
    let mut retry = call("test_input_required_result_sampling");
    retry["inputResponses"] = json!({"capital_question": {"role": "assistant",
        "content": {"type": "text", "text": "The capital of France is Paris."},
        "model": "test-model", "stopReason": "endTurn"}});
    retry["requestState"] = r1["requestState"].clone();
    let r2 = p.result("tools/call", retry).await;
    assert_eq!(
        r2["content"][0]["text"],
        "Sampling response: The capital of France is Paris."
    );

    let r1 = p
        .result("tools/call", call("test_input_required_result_list_roots"))
        .await;
    assert_eq!(
        r1["inputRequests"],
        json!({"client_roots": {"method": "roots/list"}})
    );
    let mut retry = call("test_input_required_result_list_roots");
    retry["inputResponses"] =
        json!({"client_roots": {"roots": [{"uri": "file:///test/root", "name": "Test Root"}]}});
    retry["requestState"] = r1["requestState"].clone();
    let r2 = p.result("tools/call", retry).await;
    assert_eq!(r2["content"][0]["text"], "Found 1 root(s)");

    let r1 = p
        .result(
            "tools/call",
            call("test_input_required_result_request_state"),
        )
        .await;
    let state = r1["requestState"].as_str().expect("state");
    assert!(!state.is_empty());
    assert_eq!(
        r1["inputRequests"]["confirm"]["params"]["message"],
        "Please confirm"
    );
    let mut retry = call("test_input_required_result_request_state");
    retry["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    retry["requestState"] = json!(state);
    let r2 = p.result("tools/call", retry).await;
    assert!(
        r2["content"][0]["text"]
            .as_str()
            .expect("text")
            .contains("state-ok"),
        "{r2}"
    );

    let r1 = p
        .result(
            "tools/call",
            call("test_input_required_result_tampered_state"),
        )
        .await;
    let mut retry = call("test_input_required_result_tampered_state");
    retry["inputResponses"] = json!({"confirm": {"action": "accept", "content": {"ok": true}}});
    retry["requestState"] = json!(format!(
        "{}-TAMPERED",
        r1["requestState"].as_str().expect("state")
    ));
    assert_eq!(p.call("tools/call", retry).await["error"]["code"], -32602);
}

#[tokio::test]
async fn multi_round_and_multiple_inputs() {
    let mut p = Stdio::spawn();
    let call = json!({"name": "test_input_required_result_multi_round", "arguments": {}});
    let r1 = p.result("tools/call", call.clone()).await;
    assert_eq!(
        r1["inputRequests"]["step1"]["params"]["message"],
        "Step 1: What is your name?"
    );
    let mut retry = call.clone();
    retry["inputResponses"] = json!({"step1": {"action": "accept", "content": {"name": "Alice"}}});
    retry["requestState"] = r1["requestState"].clone();
    let r2 = p.result("tools/call", retry).await;
    assert_eq!(r2["resultType"], "input_required");
    assert_eq!(
        r2["inputRequests"]["step2"]["params"]["message"],
        "Step 2: What is your favorite color?"
    );
    assert_ne!(r2["requestState"], r1["requestState"]);
    let mut last = call;
    last["inputResponses"] = json!({"step2": {"action": "accept", "content": {"color": "blue"}}});
    last["requestState"] = r2["requestState"].clone();
    let r3 = p.result("tools/call", last).await;
    assert_eq!(
        r3["content"],
        json!([{"type": "text", "text": "Multi-round complete for Alice who likes blue"}])
    );

    let call = json!({"name": "test_input_required_result_multiple_inputs", "arguments": {}});
    let r1 = p.result("tools/call", call.clone()).await;
    let methods: Vec<(String, Value)> = r1["inputRequests"]
        .as_object()
        .expect("requests")
        .iter()
        .map(|(k, v)| (k.clone(), v["method"].clone()))
        .collect();
    assert_eq!(
        methods,
        [
            ("client_roots".to_owned(), json!("roots/list")),
            ("greeting".to_owned(), json!("sampling/createMessage")),
            ("user_name".to_owned(), json!("elicitation/create")),
        ]
    );
    assert_eq!(r1["inputRequests"]["greeting"]["params"]["maxTokens"], 50);
    let mut retry = call;
    retry["inputResponses"] = json!({
        "user_name": {"action": "accept", "content": {"name": "Alice"}},
        "greeting": {"role": "assistant", "content": {"type": "text", "text": "Hi"}, "model": "m"},
        "client_roots": {"roots": []}
    });
    retry["requestState"] = r1["requestState"].clone();
    let r2 = p.result("tools/call", retry).await;
    assert_eq!(r2["resultType"], "complete");
}

#[tokio::test]
async fn capabilities_tool_asks_only_what_the_client_declared() {
    let mut p = Stdio::spawn();
    let call = json!({"name": "test_input_required_result_capabilities", "arguments": {}});
    let (r, _) = p
        .request_with("tools/call", call.clone(), &json!({"sampling": {}}))
        .await;
    let requests = r["result"]["inputRequests"].as_object().expect("requests");
    assert_eq!(r["result"]["resultType"], "input_required");
    assert!(
        requests
            .values()
            .all(|v| v["method"] != "elicitation/create"),
        "{r}"
    );
    assert!(!requests.is_empty());
    let (r, _) = p.request_with("tools/call", call, &json!({})).await;
    assert_eq!(r["result"]["resultType"], "complete", "{r}");
}
