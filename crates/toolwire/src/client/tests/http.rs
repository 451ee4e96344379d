//! The HTTP-only rules, on a recording transport: standard headers,
//! `Mcp-Param-*` mirrors, and the `-32020` refresh-and-retry.

use super::fake::{FakeHttp, error, requests, result, text_result, tools_page};
use crate::client::{ClientBuilder, ClientError};
use serde_json::{Value, json};

fn regional() -> Value {
    json!({"name": "regional_echo", "inputSchema": {"type": "object", "properties": {
        "region": {"type": "string", "x-mcp-header": "Region"},
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "flag": {"type": "boolean", "x-mcp-header": "Flag"},
        "text": {"type": "string"}
    }}})
}

#[tokio::test]
async fn requests_carry_the_standard_headers() {
    let (client, log) =
        FakeHttp::client(ClientBuilder::new(), |req| match req["method"].as_str() {
            Some("tools/list") => vec![result(req, tools_page(json!([regional()]), 60_000))],
            Some("resources/read") => vec![result(req, json!({"contents": []}))],
            Some("prompts/get") => vec![result(req, json!({"messages": []}))],
            _ => vec![result(req, text_result("ok"))],
        });
    client.list_tools().await.expect("list");
    client
        .call_tool(
            "regional_echo",
            json!({"region": "us-west1", "priority": 3, "text": "hi"}),
        )
        .await
        .expect("call");
    client
        .read_resource("file:///path/to/file%20name.txt")
        .await
        .expect("read");
    client
        .get_prompt("caf\u{e9}", Default::default())
        .await
        .expect("prompt");

    let list = &requests(&log, "tools/list")[0]["headers"];
    assert_eq!(list["mcp-protocol-version"], "2026-07-28");
    assert_eq!(list["mcp-method"], "tools/list");
    assert!(list.get("mcp-name").is_none());

    let call = &requests(&log, "tools/call")[0]["headers"];
    assert_eq!(call["mcp-method"], "tools/call");
    assert_eq!(call["mcp-name"], "regional_echo");
    assert_eq!(call["mcp-param-region"], "us-west1");
    assert_eq!(call["mcp-param-priority"], "3");
    assert!(
        call.get("mcp-param-flag").is_none(),
        "absent values get no header"
    );
    assert!(call.get("mcp-param-text").is_none(), "unannotated");

    let read = &requests(&log, "resources/read")[0]["headers"];
    assert_eq!(read["mcp-name"], "file:///path/to/file%20name.txt");
    let prompt = &requests(&log, "prompts/get")[0]["headers"];
    assert_eq!(prompt["mcp-name"], "=?base64?Y2Fmw6k=?=");
}

#[tokio::test]
async fn values_are_encoded_and_nulls_omitted() {
    let (client, log) =
        FakeHttp::client(ClientBuilder::new(), |req| match req["method"].as_str() {
            Some("tools/list") => vec![result(req, tools_page(json!([regional()]), 60_000))],
            _ => vec![result(req, text_result("ok"))],
        });
    client
        .call_tool(
            "regional_echo",
            json!({"region": " padded ", "priority": null, "flag": false}),
        )
        .await
        .expect("call");
    let h = &requests(&log, "tools/call")[0]["headers"];
    assert_eq!(h["mcp-param-region"], "=?base64?IHBhZGRlZCA=?=");
    assert_eq!(h["mcp-param-flag"], "false");
    assert!(h.get("mcp-param-priority").is_none());
}

#[tokio::test]
async fn header_mismatch_refreshes_tools_once_and_retries_once() {
    // The first listing lacks the annotation; the server then insists on it.
    let (client, log) = FakeHttp::client(ClientBuilder::new(), {
        let lists = std::sync::atomic::AtomicUsize::new(0);
        move |req| match req["method"].as_str() {
            Some("tools/list") => {
                let n = lists.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
                let tool = if n == 0 {
                    json!({"name": "regional_echo", "inputSchema": {"type": "object"}})
                } else {
                    regional()
                };
                vec![result(req, tools_page(json!([tool]), 60_000))]
            }
            _ if req["headers"].get("mcp-param-region").is_none() => {
                vec![error(
                    req,
                    -32020,
                    "Mcp-Param-Region header is missing",
                    None,
                )]
            }
            _ => vec![result(req, text_result("ok"))],
        }
    });
    client
        .call_tool("regional_echo", json!({"region": "eu"}))
        .await
        .expect("retried with the header");
    assert_eq!(requests(&log, "tools/list").len(), 2);
    let calls = requests(&log, "tools/call");
    assert_eq!(calls.len(), 2);
    assert_ne!(calls[0]["id"], calls[1]["id"]);
}

#[tokio::test]
async fn a_second_header_mismatch_is_returned() {
    let (client, log) =
        FakeHttp::client(ClientBuilder::new(), |req| match req["method"].as_str() {
            Some("tools/list") => vec![result(req, tools_page(json!([regional()]), 60_000))],
            _ => vec![error(req, -32020, "no", None)],
        });
    let err = client
        .call_tool("regional_echo", json!({"region": "eu"}))
        .await
        .expect_err("gives up");
    assert!(
        matches!(err, ClientError::Rpc(ref e) if e.code.0 == -32020),
        "{err}"
    );
    assert_eq!(requests(&log, "tools/call").len(), 2);
    assert_eq!(requests(&log, "tools/list").len(), 2);
}

#[tokio::test]
async fn unsafe_integers_are_refused_locally_and_nullable_parameters_work() {
    let tool = json!({"name": "t", "inputSchema": {"type": "object", "properties": {
        "priority": {"type": "integer", "x-mcp-header": "Priority"},
        "region": {"type": ["string", "null"], "x-mcp-header": "Region"}
    }}});
    let (client, log) = FakeHttp::client(ClientBuilder::new(), move |req| {
        match req["method"].as_str() {
            Some("tools/list") => vec![result(req, tools_page(json!([tool.clone()]), 60_000))],
            _ => vec![result(req, text_result("ok"))],
        }
    });
    for big in [
        json!(9_007_199_254_740_992_u64),
        json!(-9_007_199_254_740_992_i64),
    ] {
        let err = client
            .call_tool("t", json!({"priority": big}))
            .await
            .expect_err("refused");
        assert!(
            matches!(&err, ClientError::InvalidArgument { parameter, .. } if parameter == "priority"),
            "{err}"
        );
        assert!(err.to_string().contains("2^53"), "{err}");
    }
    assert!(requests(&log, "tools/call").is_empty(), "nothing was sent");
    // The largest safe integer, and a null for the nullable parameter
    // (no header), are fine.
    client
        .call_tool(
            "t",
            json!({"priority": 9_007_199_254_740_991_u64, "region": null}),
        )
        .await
        .expect("safe");
    client
        .call_tool("t", json!({"region": "eu"}))
        .await
        .expect("nullable with a value");
    let calls = requests(&log, "tools/call");
    assert_eq!(calls.len(), 2);
    assert_eq!(
        calls[0]["headers"]["mcp-param-priority"],
        "9007199254740991"
    );
    assert!(calls[0]["headers"].get("mcp-param-region").is_none());
    assert_eq!(calls[1]["headers"]["mcp-param-region"], "eu");
}

#[tokio::test]
async fn a_request_may_carry_headers_of_its_own_and_a_bad_one_fails_it() {
    let (client, log) =
        FakeHttp::client(ClientBuilder::new(), |req| match req["method"].as_str() {
            Some("tools/list") => vec![result(req, tools_page(json!([regional()]), 60_000))],
            _ => vec![result(req, text_result("ok"))],
        });
    let call = |options| {
        crate::client::ToolCall::new("regional_echo")
            .with_arguments(json!({"text": "hi"}))
            .with_options(options)
    };
    client
        .call_tool_with(call(
            crate::client::RequestOptions::new()
                .with_http_header("Authorization", "Bearer alice-key")
                .with_http_header("X-Api-Key", "k1"),
        ))
        .await
        .expect("with headers");
    client
        .call_tool_with(call(crate::client::RequestOptions::new()))
        .await
        .expect("without");
    let calls = requests(&log, "tools/call");
    assert_eq!(calls[0]["headers"]["authorization"], "Bearer alice-key");
    assert_eq!(calls[0]["headers"]["x-api-key"], "k1");
    assert_eq!(calls[0]["headers"]["mcp-method"], "tools/call");
    assert!(
        calls[1]["headers"].get("x-api-key").is_none(),
        "{}",
        calls[1]
    );
    let err = client
        .call_tool_with(call(
            crate::client::RequestOptions::new().with_http_header("X-Api-Key", "line\nbreak"),
        ))
        .await
        .expect_err("not a header value");
    assert!(
        err.to_string().contains("X-Api-Key") || err.to_string().contains("x-api-key"),
        "{err}"
    );
    assert!(
        !err.to_string().contains("line"),
        "the value is not repeated: {err}"
    );
    assert_eq!(requests(&log, "tools/call").len(), 2, "nothing was sent");
}
