//! What goes on the wire: `_meta`, ids, version negotiation, result types,
//! rejected tools, output schemas, notifications, cancellation, listen.

use super::fake::{FakeStdio, error, plain_tool, result, text_result, tools_page};
use crate::client::{
    ChangeNotification, ClientBuilder, ClientError, InputError, RequestOptions, ToolCall,
};
use serde_json::{Value, json};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use toolwire_proto::types::{
    ElicitAction, ElicitRequestParams, ElicitResult, ListRootsRequestParams, ListRootsResult,
    LoggingLevel, SubscriptionFilter,
};

/// Answers tools/list with `tools` and tools/call with "ok".
fn simple(tools: Value) -> impl Fn(&Value) -> Vec<Value> + Send + Sync + 'static {
    move |req| match req["method"].as_str() {
        Some("tools/list") => vec![result(req, tools_page(tools.clone(), 0))],
        Some("tools/call") => vec![result(req, text_result("ok"))],
        _ => vec![error(req, -32601, "no", None)],
    }
}

#[tokio::test]
async fn every_request_carries_the_protocol_meta() {
    let fake = FakeStdio::start(ClientBuilder::new(), simple(json!([plain_tool("t")])));
    fake.client.list_tools().await.expect("list");
    fake.client
        .call_tool("t", json!({"x": 1}))
        .await
        .expect("call");
    let all = fake.all();
    assert_eq!(all.len(), 2, "{all:?}");
    for m in &all {
        let meta = &m["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"]["name"],
            "toolwire-client"
        );
        assert!(meta.get("progressToken").is_none());
    }
    assert_ne!(all[0]["id"], all[1]["id"]);
    assert_eq!(all[1]["params"]["arguments"], json!({"x": 1}));
}

#[tokio::test]
async fn client_info_can_be_left_out() {
    let fake = FakeStdio::start(
        ClientBuilder::new().without_client_info(),
        simple(json!([])),
    );
    fake.client.list_tools().await.expect("list");
    let meta = &fake.all()[0]["params"]["_meta"];
    assert!(
        meta.get("io.modelcontextprotocol/clientInfo").is_none(),
        "{meta}"
    );
}

#[tokio::test]
async fn capabilities_follow_the_registered_handlers() {
    let builder = ClientBuilder::new()
        .with_elicitation(|_k: String, _p: ElicitRequestParams| async {
            Ok::<_, InputError>(ElicitResult {
                action: ElicitAction::Decline,
                content: None,
            })
        })
        .with_roots(|_k: String, _p: ListRootsRequestParams| async {
            Ok::<_, InputError>(ListRootsResult { roots: vec![] })
        });
    let fake = FakeStdio::start(builder, simple(json!([])));
    fake.client.list_tools().await.expect("list");
    assert_eq!(
        fake.all()[0]["params"]["_meta"]["io.modelcontextprotocol/clientCapabilities"],
        json!({"elicitation": {}, "roots": {}})
    );
}

#[tokio::test]
async fn unsupported_version_is_retried_once_with_a_supported_one() {
    let seen = Arc::new(Mutex::new(0));
    let counter = Arc::clone(&seen);
    let fake = FakeStdio::start(
        ClientBuilder::new().with_protocol_versions(["2099-01-01", "2026-07-28"]),
        move |req| {
            *counter.lock().expect("count") += 1;
            let v = &req["params"]["_meta"]["io.modelcontextprotocol/protocolVersion"];
            if v == "2026-07-28" {
                vec![result(req, tools_page(json!([]), 0))]
            } else {
                let data = json!({"supported": ["2025-11-25", "2026-07-28"], "requested": v});
                vec![error(
                    req,
                    -32022,
                    "Unsupported protocol version",
                    Some(data),
                )]
            }
        },
    );
    fake.client.list_tools().await.expect("retried");
    let reqs = fake.requests("tools/list");
    assert_eq!(reqs.len(), 2);
    assert_ne!(reqs[0]["id"], reqs[1]["id"]);
    assert_eq!(fake.client.protocol_version(), "2026-07-28");
    // Later requests use the negotiated version straight away.
    fake.client.clear_cache();
    fake.client.list_tools().await.expect("list");
    assert_eq!(*seen.lock().expect("count"), 3);
}

#[tokio::test]
async fn unsupported_version_retries_only_once_and_fails_without_a_common_one() {
    // Rejects everything, even the version it claims to support.
    let fake = FakeStdio::start(ClientBuilder::new(), |req| {
        let data = json!({"supported": ["2026-07-28"], "requested": "2026-07-28"});
        vec![error(req, -32022, "Unsupported", Some(data))]
    });
    let err = fake.client.list_tools().await.expect_err("fails");
    assert_eq!(err.rpc().map(|e| e.code.0), Some(-32022), "{err}");
    assert_eq!(fake.requests("tools/list").len(), 2);

    let fake = FakeStdio::start(ClientBuilder::new(), |req| {
        let data = json!({"supported": ["1999-01-01"], "requested": "2026-07-28"});
        vec![error(req, -32022, "Unsupported", Some(data))]
    });
    let err = fake.client.list_tools().await.expect_err("fails");
    assert!(
        matches!(err, ClientError::UnsupportedVersion { .. }),
        "{err}"
    );
    assert_eq!(fake.requests("tools/list").len(), 1);
}

#[tokio::test]
async fn absent_result_type_is_complete_and_an_unknown_one_is_an_error() {
    let fake = FakeStdio::start(ClientBuilder::new(), |req| {
        match req["params"]["name"].as_str() {
            Some("legacy") => vec![result(
                req,
                json!({"content": [{"type": "text", "text": "old"}]}),
            )],
            Some("weird") => vec![result(req, json!({"resultType": "partial", "content": []}))],
            _ => vec![result(
                req,
                tools_page(json!([plain_tool("legacy"), plain_tool("weird")]), 0),
            )],
        }
    });
    let r = fake
        .client
        .call_tool("legacy", Value::Null)
        .await
        .expect("complete");
    assert_eq!(r.content.len(), 1);
    let err = fake
        .client
        .call_tool("weird", Value::Null)
        .await
        .expect_err("unknown");
    assert!(
        matches!(err, ClientError::UnknownResultType(ref t) if t == "partial"),
        "{err}"
    );
    assert_eq!(fake.requests("tools/call").len(), 2, "no retries");
}

#[tokio::test]
async fn tools_with_invalid_headers_are_dropped_and_never_called() {
    let tools = json!([
        {"name": "valid_tool", "inputSchema": {"type": "object", "properties": {
            "region": {"type": "string", "x-mcp-header": "Region"}}}},
        {"name": "bad_space", "inputSchema": {"type": "object", "properties": {
            "v": {"type": "string", "x-mcp-header": "My Region"}}}},
        {"name": "bad_dup", "inputSchema": {"type": "object", "properties": {
            "a": {"type": "string", "x-mcp-header": "X"}, "b": {"type": "string", "x-mcp-header": "x"}}}},
        {"name": "bad_object", "inputSchema": {"type": "object", "properties": {
            "o": {"type": "object", "x-mcp-header": "O"}}}},
        {"name": "malformed"}
    ]);
    let fake = FakeStdio::start(ClientBuilder::new(), simple(tools));
    let names: Vec<String> = fake
        .client
        .list_tools()
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(names, ["valid_tool"]);
    for bad in ["bad_space", "bad_dup", "bad_object"] {
        let err = fake
            .client
            .call_tool(bad, json!({}))
            .await
            .expect_err("refused");
        assert!(
            matches!(err, ClientError::InvalidTool { ref name, .. } if name == bad),
            "{err}"
        );
    }
    fake.client
        .call_tool("valid_tool", json!({"region": "eu"}))
        .await
        .expect("valid tool is callable");
    let called: Vec<Value> = fake
        .requests("tools/call")
        .iter()
        .map(|r| r["params"]["name"].clone())
        .collect();
    assert_eq!(called, [json!("valid_tool")]);
}

#[tokio::test]
async fn structured_content_is_checked_against_the_output_schema() {
    let tools = json!([
        {"name": "typed", "inputSchema": {"type": "object"},
         "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}},
        {"name": "remote", "inputSchema": {"type": "object"},
         "outputSchema": {"type": "object", "properties": {"p": {"$ref": "http://127.0.0.1:9/never.json"}}}}
    ]);
    let fake = FakeStdio::start(ClientBuilder::new(), move |req| {
        let out = req["params"]["arguments"]["out"].clone();
        match req["method"].as_str() {
            Some("tools/list") => vec![result(req, tools_page(tools.clone(), 0))],
            _ if out == "missing" => vec![result(req, json!({"content": []}))],
            _ if out == "error" => vec![result(req, json!({"content": [], "isError": true}))],
            _ => vec![result(
                req,
                json!({"content": [], "structuredContent": out}),
            )],
        }
    });
    let c = &fake.client;
    c.call_tool("typed", json!({"out": {"n": 1}}))
        .await
        .expect("valid");
    c.call_tool("typed", json!({"out": "error"}))
        .await
        .expect("isError skips the check");
    for bad in [json!({"n": "x"}), json!({}), json!("missing")] {
        let err = c
            .call_tool("typed", json!({"out": bad}))
            .await
            .expect_err("invalid");
        assert!(matches!(err, ClientError::OutputSchema { .. }), "{err}");
    }
    // A network $ref is never fetched, so the schema cannot be used: the
    // tool is dropped at list time and never called.
    let listed: Vec<String> = c
        .list_tools()
        .await
        .expect("list")
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert_eq!(listed, ["typed"]);
    let err = c
        .call_tool("remote", json!({"out": {"p": 1}}))
        .await
        .expect_err("rejected");
    let ClientError::InvalidTool { reason, .. } = err else {
        panic!("expected an invalid tool error")
    };
    assert!(reason.contains("outputSchema cannot be used"), "{reason}");
    let called: Vec<Value> = fake
        .requests("tools/call")
        .iter()
        .map(|r| r["params"]["name"].clone())
        .collect();
    assert!(!called.contains(&json!("remote")), "{called:?}");
}

#[tokio::test]
async fn progress_and_logs_of_a_request_reach_its_callbacks() {
    let fake = FakeStdio::start(ClientBuilder::new(), |req| {
        let token = req["params"]["_meta"]["progressToken"].clone();
        if req["method"] == "tools/list" {
            return vec![result(req, tools_page(json!([plain_tool("t")]), 0))];
        }
        vec![
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": token, "progress": 1, "total": 2}}),
            json!({"jsonrpc": "2.0", "method": "notifications/progress",
                   "params": {"progressToken": "someone-else", "progress": 9}}),
            json!({"jsonrpc": "2.0", "method": "notifications/message",
                   "params": {"level": "info", "data": "hello"}}),
            result(req, text_result("done")),
        ]
    });
    let progress = Arc::new(Mutex::new(Vec::new()));
    let logs = Arc::new(Mutex::new(Vec::new()));
    let (p, l) = (Arc::clone(&progress), Arc::clone(&logs));
    let options = RequestOptions::new()
        .with_progress(move |n| p.lock().expect("p").push(n.progress))
        .with_log(LoggingLevel::Debug, move |m| {
            l.lock().expect("l").push(m.data.clone())
        });
    fake.client
        .call_tool_with(ToolCall::new("t").with_options(options))
        .await
        .expect("call");
    assert_eq!(*progress.lock().expect("p"), [1.0]);
    assert_eq!(*logs.lock().expect("l"), [json!("hello")]);
    let call = &fake.requests("tools/call")[0];
    assert!(call["params"]["_meta"]["progressToken"].is_string());
    assert_eq!(
        call["params"]["_meta"]["io.modelcontextprotocol/logLevel"],
        "debug"
    );
}

#[tokio::test]
async fn dropping_a_call_sends_cancelled_on_stdio() {
    let fake = FakeStdio::start(ClientBuilder::new(), |req| {
        if req["method"] == "tools/list" {
            vec![result(req, tools_page(json!([plain_tool("slow")]), 60_000))]
        } else {
            Vec::new() // never answers
        }
    });
    fake.client.list_tools().await.expect("list");
    let call = fake.client.call_tool("slow", json!({}));
    assert!(
        tokio::time::timeout(Duration::from_millis(100), call)
            .await
            .is_err()
    );
    let call_id = fake.requests("tools/call")[0]["id"].clone();
    let mut cancelled = None;
    for _ in 0..50 {
        cancelled = fake
            .all()
            .into_iter()
            .find(|m| m["method"] == "notifications/cancelled");
        if cancelled.is_some() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    let cancelled = cancelled.expect("notifications/cancelled sent");
    assert_eq!(cancelled["params"]["requestId"], call_id);
    assert!(cancelled.get("id").is_none());
}

#[tokio::test]
async fn request_timeout_cancels_the_request() {
    let fake = FakeStdio::start(
        ClientBuilder::new().with_request_timeout(Some(Duration::from_millis(50))),
        |_req| Vec::new(),
    );
    let err = fake.client.discover().await.expect_err("times out");
    assert!(matches!(err, ClientError::Timeout(_)), "{err}");
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        fake.all()
            .iter()
            .any(|m| m["method"] == "notifications/cancelled")
    );
}

#[tokio::test]
async fn client_limits_at_their_extremes_are_kept_in_range_and_never_panic() {
    let builder = ClientBuilder::new()
        .with_request_timeout(Some(Duration::ZERO))
        .with_max_input_rounds(0);
    assert_eq!(builder.request_timeout(), Some(Duration::from_millis(1)));
    assert_eq!(builder.max_input_rounds(), 1);
    // A zero timeout is a 1 ms one: a silent server times out cleanly.
    let fake = FakeStdio::start(builder, |_req| Vec::new());
    let err = fake.client.discover().await.expect_err("times out");
    assert!(matches!(err, ClientError::Timeout(_)), "{err}");

    let huge = ClientBuilder::new().with_request_timeout(Some(Duration::MAX));
    assert_eq!(
        huge.request_timeout(),
        Some(Duration::from_secs(365 * 24 * 60 * 60))
    );
    let options = RequestOptions::new().with_timeout(Duration::MAX);
    assert_eq!(options.timeout(), huge.request_timeout());
    // The largest timeout and the largest `ttlMs` a server can send: served
    // and cached, no overflow.
    let fake = FakeStdio::start(huge, move |req| match req["method"].as_str() {
        Some("tools/list") => vec![result(req, tools_page(json!([plain_tool("t")]), u64::MAX))],
        _ => vec![error(req, -32601, "no", None)],
    });
    for _ in 0..2 {
        let tools = fake.client.list_tools().await.expect("list");
        assert_eq!(tools.len(), 1);
    }
    assert_eq!(
        fake.all()
            .iter()
            .filter(|m| m["method"] == "tools/list")
            .count(),
        1,
        "the second list came from the cache"
    );
}

#[tokio::test]
async fn listen_yields_typed_notifications_and_invalidates_the_cache() {
    let lists = Arc::new(Mutex::new(0));
    let count = Arc::clone(&lists);
    let fake = FakeStdio::start(ClientBuilder::new(), move |req| {
        match req["method"].as_str() {
            Some("tools/list") => {
                *count.lock().expect("count") += 1;
                vec![result(req, tools_page(json!([]), 60_000))]
            }
            Some("subscriptions/listen") => vec![json!({
                "jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                "params": {"_meta": {"io.modelcontextprotocol/subscriptionId": req["id"]},
                           "notifications": {"toolsListChanged": true}}
            })],
            _ => Vec::new(),
        }
    });
    let c = &fake.client;
    c.list_tools().await.expect("list");
    c.list_tools().await.expect("cached");
    assert_eq!(*lists.lock().expect("count"), 1);

    let filter = SubscriptionFilter {
        tools_list_changed: Some(true),
        prompts_list_changed: Some(true),
        ..SubscriptionFilter::default()
    };
    let mut sub = c.listen(filter).await.expect("listen");
    assert_eq!(sub.acknowledged().tools_list_changed, Some(true));
    assert_eq!(sub.acknowledged().prompts_list_changed, None);
    let sub_id = fake.requests("subscriptions/listen")[0]["id"].clone();
    assert_eq!(serde_json::to_value(sub.id()).expect("id"), sub_id);
    let note = |method: &str, extra: Value| {
        let mut params = json!({"_meta": {"io.modelcontextprotocol/subscriptionId": sub_id}});
        if let (Some(p), Some(e)) = (params.as_object_mut(), extra.as_object()) {
            p.extend(e.clone());
        }
        json!({"jsonrpc": "2.0", "method": method, "params": params})
    };
    fake.inject
        .send(note("notifications/tools/list_changed", json!({})))
        .expect("inject");
    fake.inject
        .send(note(
            "notifications/resources/updated",
            json!({"uri": "file:///x"}),
        ))
        .expect("inject");
    assert_eq!(
        sub.next().await.expect("note").expect("ok"),
        ChangeNotification::ToolsListChanged
    );
    assert_eq!(
        sub.next().await.expect("note").expect("ok"),
        ChangeNotification::ResourceUpdated {
            uri: "file:///x".into()
        }
    );
    c.list_tools().await.expect("refetched");
    assert_eq!(*lists.lock().expect("count"), 2);

    // Dropping the subscription cancels it.
    drop(sub);
    let mut cancelled = false;
    for _ in 0..50 {
        cancelled = fake.all().iter().any(|m| {
            m["method"] == "notifications/cancelled" && m["params"]["requestId"] == sub_id
        });
        if cancelled {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(cancelled, "{:?}", fake.all());
}

#[tokio::test]
async fn a_graceful_close_ends_the_subscription() {
    let fake = FakeStdio::start(ClientBuilder::new(), |req| {
        let sub = json!({"io.modelcontextprotocol/subscriptionId": req["id"]});
        vec![
            json!({"jsonrpc": "2.0", "method": "notifications/subscriptions/acknowledged",
                   "params": {"_meta": sub, "notifications": {}}}),
            result(req, json!({"resultType": "complete", "_meta": sub})),
        ]
    });
    let mut sub = fake
        .client
        .listen(SubscriptionFilter::default())
        .await
        .expect("listen");
    assert!(sub.next().await.is_none());
}

/// A child that ignores the end of its input; on SIGTERM it writes
/// `marker` and exits, unless `ignore_term`.
#[cfg(unix)]
fn stubborn_child(marker: &std::path::Path, ignore_term: bool) -> tokio::process::Command {
    let trap = if ignore_term {
        "trap '' TERM".to_owned()
    } else {
        format!("trap 'echo term > {}; exit 0' TERM", marker.display())
    };
    let mut cmd = tokio::process::Command::new("sh");
    cmd.args([
        "-c",
        &format!("{trap}; exec 0</dev/null; while true; do sleep 0.05; done"),
    ]);
    cmd
}

#[cfg(unix)]
#[tokio::test]
async fn close_escalates_from_sigterm_to_sigkill() {
    for ignore_term in [false, true] {
        let marker = std::env::temp_dir().join(format!(
            "toolwire-term-{}-{ignore_term}",
            std::process::id()
        ));
        let _ = std::fs::remove_file(&marker);
        let client = ClientBuilder::new()
            .spawn(stubborn_child(&marker, ignore_term))
            .expect("spawn");
        let started = std::time::Instant::now();
        tokio::time::timeout(Duration::from_secs(15), client.close())
            .await
            .expect("close ends")
            .expect("close");
        let took = started.elapsed();
        // Stdin closed, a grace, then SIGTERM (which ends the first child),
        // and for the second a second grace and SIGKILL.
        assert!(took >= Duration::from_secs(2), "{took:?}");
        if ignore_term {
            assert!(took >= Duration::from_secs(4), "{took:?}");
            assert!(!marker.exists());
        } else {
            assert!(took < Duration::from_secs(4), "{took:?}");
            assert_eq!(std::fs::read_to_string(&marker).expect("marker"), "term\n");
            let _ = std::fs::remove_file(&marker);
        }
    }
}

/// The `_meta` is written straight into the body: the caller's members,
/// then the options' defaults it lacks, then the protocol members, which
/// replace any member of the same name; never a name twice; and a legacy
/// request without the modern version key.
#[tokio::test]
async fn meta_members_are_merged_once_each() {
    use crate::client::engine::Wire;
    use serde_json::Map;
    use toolwire_proto::RequestId;
    let fake = FakeStdio::start(ClientBuilder::new(), simple(json!([])));
    let options = RequestOptions::new()
        .with_meta("traceparent", json!("00-from-options"))
        .with_meta("shared", json!("options"))
        .with_meta(
            "io.modelcontextprotocol/protocolVersion",
            json!("1999-01-01"),
        )
        .with_meta(
            "io.modelcontextprotocol/clientInfo",
            json!({"name": "mine", "version": "2"}),
        );
    let mut params = Map::new();
    params.insert("name".into(), json!("t"));
    params.insert(
        "_meta".into(),
        json!({"shared": "caller", "io.modelcontextprotocol/clientCapabilities": {"x": {}}}),
    );
    let encode = |wire| {
        let (body, _) =
            fake.client
                .encode(&RequestId::Number(7), "tools/call", &params, wire, &options);
        let text = std::str::from_utf8(&body).expect("UTF-8").to_owned();
        let unique: toolwire_proto::UniqueValue =
            toolwire_proto::from_str_unique(&text).expect("no member named twice");
        unique.0
    };
    let modern = encode(Wire::Modern("2026-07-28"));
    let meta = &modern["params"]["_meta"];
    assert_eq!(modern["params"]["name"], "t");
    assert_eq!(meta["shared"], "caller", "the caller's own member wins");
    assert_eq!(meta["traceparent"], "00-from-options");
    assert_eq!(
        meta["io.modelcontextprotocol/protocolVersion"],
        "2026-07-28"
    );
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({}),
        "the client's declared capabilities, not the caller's: {meta}"
    );
    assert_eq!(meta["io.modelcontextprotocol/clientInfo"]["name"], "mine");
    let legacy = encode(Wire::Legacy("2025-11-25"));
    let meta = &legacy["params"]["_meta"];
    assert!(
        meta.get("io.modelcontextprotocol/protocolVersion")
            .is_none(),
        "{meta}"
    );
    assert_eq!(meta["shared"], "caller");
    assert_eq!(
        meta["io.modelcontextprotocol/clientCapabilities"],
        json!({"x": {}})
    );
}

/// `call_tool_encoded` hands over the result as the server wrote it, adds
/// `resultType` when the server left it out, and refuses a result without
/// a `content` array.
#[tokio::test]
async fn encoded_results_are_passed_on_as_written() {
    let written = r#"{"resultType":"complete","content":[{"type":"text","text":"hi"}],"x-extra":{"b":1,"a":2}}"#;
    let fake = FakeStdio::start(ClientBuilder::new(), move |req| {
        let name = req["params"]["name"].as_str().unwrap_or_default();
        match req["method"].as_str() {
            Some("tools/list") => vec![result(req, tools_page(json!([]), 0))],
            Some("tools/call") if name == "as_is" => {
                vec![result(req, serde_json::from_str(written).expect("json"))]
            }
            Some("tools/call") if name == "untyped" => {
                vec![result(req, json!({"content": []}))]
            }
            _ => vec![result(
                req,
                json!({"resultType": "complete", "content": "no"}),
            )],
        }
    });
    let Ok(toolwire_proto::types::ResultOrInputRequired::Complete(json)) =
        fake.client.call_tool_encoded(ToolCall::new("as_is")).await
    else {
        panic!("a complete result");
    };
    let v: Value = serde_json::from_str(json.get()).expect("json");
    assert_eq!(v, serde_json::from_str::<Value>(written).expect("json"));
    let Ok(toolwire_proto::types::ResultOrInputRequired::Complete(json)) = fake
        .client
        .call_tool_encoded(ToolCall::new("untyped"))
        .await
    else {
        panic!("a complete result");
    };
    let v: Value = serde_json::from_str(json.get()).expect("json");
    assert_eq!(v["resultType"], "complete", "{v}");
    let err = fake
        .client
        .call_tool_encoded(ToolCall::new("bad"))
        .await
        .expect_err("content is not an array");
    assert!(
        err.to_string().contains("malformed tools/call result"),
        "{err}"
    );
}

/// `call_tool_relayed` says from its one scan whether a result is a task
/// handle or a complete result, passes both on as written, and checks a
/// complete one's members (`isError` must be a boolean).
#[tokio::test]
async fn relayed_results_tell_a_task_from_a_complete_result() {
    let fake = FakeStdio::start(ClientBuilder::new().with_tasks(), move |req| {
        let name = req["params"]["name"].as_str().unwrap_or_default();
        match (req["method"].as_str(), name) {
            (Some("tools/list"), _) => vec![result(req, tools_page(json!([]), 0))],
            (Some("tools/call"), "slow") => vec![result(
                req,
                json!({"resultType": "task", "taskId": "tR", "status": "working",
                       "createdAt": "2026-12-01T00:00:00Z", "lastUpdatedAt": "2026-12-01T00:00:00Z",
                       "ttlMs": 60000}),
            )],
            (Some("tools/call"), "quick") => vec![result(
                req,
                json!({"resultType": "complete", "content": [], "isError": false}),
            )],
            _ => vec![result(
                req,
                json!({"resultType": "complete", "content": [], "isError": "yes"}),
            )],
        }
    });
    let c = &fake.client;
    let Ok(crate::client::Relayed::Task(raw)) = c.call_tool_relayed(ToolCall::new("slow")).await
    else {
        panic!("a task handle");
    };
    assert_eq!(
        serde_json::from_str::<Value>(raw.get()).expect("json")["taskId"],
        "tR"
    );
    let Ok(crate::client::Relayed::Complete(raw)) =
        c.call_tool_relayed(ToolCall::new("quick")).await
    else {
        panic!("a complete result");
    };
    assert_eq!(
        serde_json::from_str::<Value>(raw.get()).expect("json")["isError"],
        false
    );
    // `call_tool_encoded` passes a task handle on as a complete answer.
    let Ok(toolwire_proto::types::ResultOrInputRequired::Complete(raw)) =
        c.call_tool_encoded(ToolCall::new("slow")).await
    else {
        panic!("passed on");
    };
    assert!(
        raw.get().contains(r#""resultType":"task""#),
        "{}",
        raw.get()
    );
    let err = c
        .call_tool_relayed(ToolCall::new("flagged"))
        .await
        .expect_err("isError is not a boolean");
    assert!(
        err.to_string().contains("malformed tools/call result"),
        "{err}"
    );
}

/// Spec: server/tools.mdx#output-schema — a task's result is checked
/// against the tool's `outputSchema` like a plain call's, when the handle
/// knows the tool (`start_tool`); a handle from a bare id cannot.
#[tokio::test]
async fn a_tasks_result_is_checked_against_the_output_schema() {
    let tools = json!([
        {"name": "typed", "inputSchema": {"type": "object"},
         "outputSchema": {"type": "object", "properties": {"n": {"type": "integer"}}, "required": ["n"]}}
    ]);
    let fake = FakeStdio::start(ClientBuilder::new().with_tasks(), move |req| {
        let task = |status: &str| {
            json!({"taskId": "tX", "status": status, "createdAt": "2026-12-01T00:00:00Z",
                   "lastUpdatedAt": "2026-12-01T00:00:00Z", "ttlMs": 60000, "pollIntervalMs": 10})
        };
        match req["method"].as_str() {
            Some("tools/list") => vec![result(req, tools_page(tools.clone(), 0))],
            Some("tools/call") => {
                let mut created = task("working");
                created["resultType"] = json!("task");
                vec![result(req, created)]
            }
            Some("tasks/get") => {
                let mut done = task("completed");
                done["resultType"] = json!("complete");
                done["result"] = json!({"content": [], "structuredContent": {"n": "not a number"}});
                vec![result(req, done)]
            }
            _ => vec![error(req, -32601, "no", None)],
        }
    });
    let c = &fake.client;
    let crate::client::Started::Task(handle) =
        c.start_tool(ToolCall::new("typed")).await.expect("started")
    else {
        panic!("not a task")
    };
    let err = handle.wait().await.expect_err("invalid");
    assert!(matches!(err, ClientError::OutputSchema { .. }), "{err}");
    // By id alone, the tool is unknown: the result is returned unchecked.
    let r = c.task("tX").wait().await.expect("unchecked");
    assert_eq!(r.structured_content, Some(json!({"n": "not a number"})));
}
