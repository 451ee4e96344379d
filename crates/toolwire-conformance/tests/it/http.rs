//! The fixtures over Streamable HTTP (`--http 127.0.0.1:0`, endpoint `/mcp`),
//! as the conformance suite reaches them.

use crate::support::{Http, all_caps};
use serde_json::json;

#[tokio::test]
async fn resources_and_prompts_over_http() {
    let s = Http::spawn().await;
    let r = s
        .post(
            "resources/read",
            json!({"uri": "test://static-text"}),
            &all_caps(),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert!(r.content_type.starts_with("application/json"), "{r:?}");
    let res = r.response();
    assert_eq!(
        res["result"]["contents"],
        json!([{
            "uri": "test://static-text",
            "mimeType": "text/plain",
            "text": "This is the content of the static text resource."
        }])
    );
    assert_eq!(res["id"], 1);

    let r = s
        .post(
            "prompts/get",
            json!({"name": "test_prompt_with_arguments",
                   "arguments": {"arg1": "testValue1", "arg2": "testValue2"}}),
            &all_caps(),
        )
        .await;
    assert_eq!(r.status, 200, "{r:?}");
    assert_eq!(
        r.response()["result"]["messages"][0]["content"]["text"],
        "Prompt with arguments: arg1='testValue1', arg2='testValue2'"
    );

    let r = s
        .post(
            "completion/complete",
            json!({"ref": {"type": "ref/prompt", "name": "test_prompt_with_arguments"},
                   "argument": {"name": "arg1", "value": "test"}}),
            &all_caps(),
        )
        .await;
    assert_eq!(
        r.response()["result"]["completion"]["values"],
        json!(["test", "testValue1", "testValue2"])
    );

    for method in ["prompts/list", "resources/list", "resources/templates/list"] {
        let r = s.post(method, json!({}), &json!({})).await;
        assert_eq!(r.status, 200, "{method}: {r:?}");
        let res = r.response();
        assert_eq!(res["result"]["resultType"], "complete", "{method}");
        assert!(res["result"]["ttlMs"].is_u64(), "{method}");
        assert_eq!(res["result"]["cacheScope"], "public", "{method}");
    }
}

#[tokio::test]
async fn unknown_resource_is_400_with_invalid_params_and_the_uri() {
    let s = Http::spawn().await;
    let uri = "test://nonexistent-resource-for-conformance-testing";
    let r = s
        .post("resources/read", json!({"uri": uri}), &all_caps())
        .await;
    assert_eq!(r.status, 400, "{r:?}");
    let res = r.response();
    assert_eq!(res["error"]["code"], -32602);
    assert_eq!(res["error"]["data"], json!({"uri": uri}));
    assert_eq!(res["id"], 1);
}

#[tokio::test]
async fn input_required_prompt_round_trips_over_http() {
    let s = Http::spawn().await;
    let r1 = s
        .post(
            "prompts/get",
            json!({"name": "test_input_required_result_prompt"}),
            &all_caps(),
        )
        .await
        .response();
    assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
    let r2 = s
        .post(
            "prompts/get",
            json!({
                "name": "test_input_required_result_prompt",
                "inputResponses": {"user_context": {"action": "accept", "content": {"context": "over http"}}},
                "requestState": r1["result"]["requestState"],
            }),
            &all_caps(),
        )
        .await
        .response();
    assert_eq!(
        r2["result"]["messages"][0]["content"]["text"],
        "Prompt with context: over http"
    );
}

#[tokio::test]
async fn progress_streams_before_the_result_over_sse() {
    let s = Http::spawn().await;
    let r = s
        .post(
            "tools/call",
            json!({"name": "test_tool_with_progress", "arguments": {},
                   "_meta": {"progressToken": "progress-test-1"}}),
            &all_caps(),
        )
        .await;
    assert_eq!(r.status, 200);
    assert!(r.content_type.starts_with("text/event-stream"), "{r:?}");
    let messages = r.messages();
    let methods: Vec<&str> = messages
        .iter()
        .map(|m| m["method"].as_str().unwrap_or("(response)"))
        .collect();
    assert_eq!(
        methods,
        [
            "notifications/progress",
            "notifications/progress",
            "notifications/progress",
            "(response)"
        ]
    );
    assert_eq!(
        messages[3]["result"]["content"][0]["text"],
        "Progress test completed"
    );
}

#[tokio::test]
async fn a_foreign_host_is_refused() {
    let s = Http::spawn().await;
    let body = json!({"jsonrpc": "2.0", "id": 1, "method": "server/discover",
        "params": crate::support::with_meta(json!({}), &json!({}))})
    .to_string();
    let r = s
        .raw(
            "evil.example.com",
            &[("Mcp-Method".into(), "server/discover".into())],
            &body,
        )
        .await;
    assert!((400..500).contains(&r.status), "{r:?}");
}
