//! `toolwire serve` over stdio: the demo tools, concurrency, cancellation,
//! parse errors, EOF, and the `_meta` and version errors.

use crate::support::{Proc, VERSION};
use serde_json::{Value, json};
use std::time::{Duration, Instant};

fn text_of(result: &Value) -> &str {
    result["content"][0]["text"].as_str().expect("text content")
}

#[tokio::test]
async fn discover_advertises_versions_capabilities_and_cache_hints() {
    let mut p = Proc::spawn();
    let r = p.call(1, "server/discover", json!({})).await;
    let res = &r["result"];
    assert_eq!(res["resultType"], "complete");
    assert!(
        res["supportedVersions"]
            .as_array()
            .expect("array")
            .contains(&json!(VERSION))
    );
    assert_eq!(res["capabilities"]["tools"]["listChanged"], true);
    assert!(res["ttlMs"].is_u64());
    assert!(["public", "private"].contains(&res["cacheScope"].as_str().expect("scope")));
    assert_eq!(
        res["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "toolwire-demo"
    );
}

#[tokio::test]
async fn lists_demo_tools_in_order_with_schemas() {
    let mut p = Proc::spawn();
    let r = p.call(1, "tools/list", json!({})).await;
    let res = &r["result"];
    let names: Vec<&str> = res["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(
        names,
        [
            "echo",
            "add",
            "countdown",
            "regional_echo",
            "confirm_action",
            "define_tool",
            "undefine_tool",
            "report"
        ]
    );
    for t in res["tools"].as_array().expect("tools") {
        assert_eq!(t["inputSchema"]["type"], "object", "{t}");
        assert!(!t["description"].as_str().expect("description").is_empty());
    }
    assert_eq!(
        res["tools"][1]["outputSchema"]["properties"]["sum"]["type"],
        "number"
    );
    assert_eq!(
        res["tools"][3]["inputSchema"]["properties"]["region"]["x-mcp-header"],
        "Region"
    );
    assert_eq!(res["resultType"], "complete");
    assert!(res["ttlMs"].is_u64());
    assert!(res.get("nextCursor").is_none());
    // Deterministic: the same bytes twice.
    let again = p.call(2, "tools/list", json!({})).await;
    assert_eq!(again["result"], r["result"]);
}

#[tokio::test]
async fn echo_add_and_regional_echo_answer_exactly() {
    let mut p = Proc::spawn();
    let r = p
        .call(
            1,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "héllo\nworld"}}),
        )
        .await;
    assert_eq!(
        r["result"]["content"],
        json!([{"type": "text", "text": "héllo\nworld"}])
    );
    assert_eq!(r["result"]["resultType"], "complete");
    assert_eq!(
        r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
        "toolwire-demo"
    );

    let r = p
        .call(
            2,
            "tools/call",
            json!({"name": "add", "arguments": {"a": 2, "b": 0.5}}),
        )
        .await;
    assert_eq!(r["result"]["structuredContent"], json!({"sum": 2.5}));
    let mirrored: Value = serde_json::from_str(text_of(&r["result"])).expect("JSON text");
    assert_eq!(mirrored, json!({"sum": 2.5}));
    assert_ne!(r["result"]["isError"], true);

    let r = p
        .call(
            3,
            "tools/call",
            json!({"name": "regional_echo", "arguments": {"region": "eu-west1", "priority": 3, "text": "hi"}}),
        )
        .await;
    assert_eq!(text_of(&r["result"]), "eu-west1: hi");
}

#[tokio::test]
async fn invalid_arguments_are_tool_errors_the_model_can_read() {
    let mut p = Proc::spawn();
    let r = p
        .call(
            1,
            "tools/call",
            json!({"name": "add", "arguments": {"a": "two", "b": 1}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = text_of(&r["result"]);
    assert!(text.contains("/a"), "{text}");
    assert!(text.contains("add"), "{text}");

    // A missing `arguments` is `{}`, which lacks the required `text`.
    let r = p.call(2, "tools/call", json!({"name": "echo"})).await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    assert!(text_of(&r["result"]).contains("text"));

    // Out of the declared range.
    let r = p
        .call(
            3,
            "tools/call",
            json!({"name": "countdown", "arguments": {"steps": 0, "interval_ms": 0}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
}

#[tokio::test]
async fn unknown_tool_is_invalid_params() {
    let mut p = Proc::spawn();
    let r = p
        .call(1, "tools/call", json!({"name": "nope", "arguments": {}}))
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    assert_eq!(r["id"], 1);
}

#[tokio::test]
async fn meta_errors_and_version_errors() {
    let mut p = Proc::spawn();
    for (id, params) in [
        (1, json!({})),
        (
            2,
            json!({"_meta": {"io.modelcontextprotocol/clientCapabilities": {}}}),
        ),
        (
            3,
            json!({"_meta": {"io.modelcontextprotocol/protocolVersion": VERSION}}),
        ),
    ] {
        p.send(&json!({"jsonrpc": "2.0", "id": id, "method": "tools/list", "params": params}))
            .await;
        let (r, _) = p.response(id).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }
    // No params at all.
    p.send(&json!({"jsonrpc": "2.0", "id": 4, "method": "tools/list"}))
        .await;
    assert_eq!(p.response(4).await.0["error"]["code"], -32602);

    // clientInfo is optional.
    p.send(
        &json!({"jsonrpc": "2.0", "id": 5, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": VERSION,
            "io.modelcontextprotocol/clientCapabilities": {}
        }}}),
    )
    .await;
    assert!(p.response(5).await.0.get("result").is_some());

    p.send(
        &json!({"jsonrpc": "2.0", "id": 6, "method": "tools/list", "params": {"_meta": {
            "io.modelcontextprotocol/protocolVersion": "v999.0.0",
            "io.modelcontextprotocol/clientCapabilities": {}
        }}}),
    )
    .await;
    let r = p.response(6).await.0;
    assert_eq!(r["error"]["code"], -32022);
    assert_eq!(r["error"]["data"]["requested"], "v999.0.0");
    assert_eq!(r["error"]["data"]["supported"], json!([VERSION]));
}

#[tokio::test]
async fn removed_and_unknown_methods_are_method_not_found() {
    let mut p = Proc::spawn();
    for (i, m) in [
        "initialize",
        "ping",
        "logging/setLevel",
        "resources/subscribe",
        "resources/unsubscribe",
        "unknown/method",
    ]
    .into_iter()
    .enumerate()
    {
        let id = i64::try_from(i).expect("small") + 10;
        let r = p.call(id, m, json!({})).await;
        assert_eq!(r["error"]["code"], -32601, "{m}: {r}");
        assert_eq!(r["id"], id);
    }
}

#[tokio::test]
async fn parse_errors_get_no_id_and_serving_goes_on() {
    let mut p = Proc::spawn();
    p.send_raw("{this is not json").await;
    let r = p.next().await;
    assert_eq!(r["error"]["code"], -32700);
    // Spec: basic/index.mdx — ids are never null; an unreadable id is omitted.
    assert!(r.get("id").is_none(), "{r}");

    p.send_raw(r#"[{"jsonrpc":"2.0","id":1,"method":"tools/list"}]"#)
        .await;
    assert_eq!(p.next().await["error"]["code"], -32600);

    p.send_raw(r#"{"jsonrpc":"2.0","id":"x","method":7}"#).await;
    let r = p.next().await;
    assert_eq!(r["error"]["code"], -32600);
    assert_eq!(r["id"], "x");

    let mut deep = String::from(r#"{"jsonrpc":"2.0","id":9,"method":"tools/list","params":{"x":"#);
    deep.push_str(&"[".repeat(100_000));
    p.send_raw(&deep).await;
    let r = p.next().await;
    assert!(
        r["error"]["code"] == -32700 || r["error"]["code"] == -32602,
        "{r}"
    );

    let r = p
        .call(
            2,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": "still here"}}),
        )
        .await;
    assert_eq!(text_of(&r["result"]), "still here");
}

#[tokio::test]
async fn slow_tool_does_not_block_others() {
    let mut p = Proc::spawn();
    p.request(
        1,
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 20, "interval_ms": 50}}),
    )
    .await;
    p.request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "fast"}}),
    )
    .await;
    let first = p.next().await;
    assert_eq!(first["id"], 2, "echo must not wait for countdown: {first}");
    let (r, _) = p.response(1).await;
    assert_eq!(text_of(&r["result"]), "done after 20 steps");
}

#[tokio::test]
async fn many_concurrent_requests_each_get_one_whole_line() {
    let mut p = Proc::spawn();
    for id in 0..200 {
        p.request(
            id,
            "tools/call",
            json!({"name": "echo", "arguments": {"text": format!("m{id}")}}),
        )
        .await;
    }
    let mut seen = std::collections::HashSet::new();
    for _ in 0..200 {
        let m = p.next().await;
        let id = m["id"].as_i64().expect("id");
        assert_eq!(text_of(&m["result"]), format!("m{id}"));
        assert!(seen.insert(id));
    }
}

#[tokio::test]
async fn progress_is_reported_in_order_before_the_result() {
    let mut p = Proc::spawn();
    p.request(
        1,
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 3, "interval_ms": 1},
               "_meta": {"progressToken": "tok-1"}}),
    )
    .await;
    let (r, notes) = p.response(1).await;
    assert_eq!(text_of(&r["result"]), "done after 3 steps");
    let progress: Vec<f64> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| {
            assert_eq!(n["params"]["progressToken"], "tok-1");
            n["params"]["progress"].as_f64().expect("progress")
        })
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    // No logLevel: no log messages.
    assert!(notes.iter().all(|n| n["method"] != "notifications/message"));
}

#[tokio::test]
async fn logs_only_at_or_above_the_requested_level() {
    let mut p = Proc::spawn();
    let args = json!({"steps": 2, "interval_ms": 1});
    p.request(
        1,
        "tools/call",
        json!({"name": "countdown", "arguments": args,
        "_meta": {"io.modelcontextprotocol/logLevel": "debug"}}),
    )
    .await;
    let (_, notes) = p.response(1).await;
    let logs: Vec<&Value> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .collect();
    assert_eq!(logs.len(), 2, "{notes:?}");
    assert_eq!(logs[0]["params"]["level"], "debug");
    assert_eq!(logs[1]["params"]["data"]["step"], 2);

    p.request(
        2,
        "tools/call",
        json!({"name": "countdown", "arguments": args,
        "_meta": {"io.modelcontextprotocol/logLevel": "info"}}),
    )
    .await;
    let (_, notes) = p.response(2).await;
    assert!(notes.is_empty(), "{notes:?}");
}

#[tokio::test]
async fn cancelled_request_stops_and_gets_no_response() {
    let mut p = Proc::spawn();
    p.request(
        7,
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 1000, "interval_ms": 10},
               "_meta": {"progressToken": 7}}),
    )
    .await;
    // Wait for the first progress so the tool is surely running.
    let first = p.next().await;
    assert_eq!(first["method"], "notifications/progress");
    p.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 7, "reason": "test"}}),
    )
    .await;
    p.request(
        8,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "after"}}),
    )
    .await;
    let (r, _) = p.response(8).await;
    assert_eq!(text_of(&r["result"]), "after");
    // Nothing more for id 7: no result and no further progress.
    let mut extra = Vec::new();
    while let Some(m) = p.next_within(Duration::from_millis(400)).await {
        extra.push(m);
    }
    assert!(extra.iter().all(|m| m["id"] != 7), "{extra:?}");
    assert!(
        extra
            .iter()
            .filter(|m| m["method"] == "notifications/progress")
            .count()
            <= 1,
        "progress continued after cancellation: {extra:?}"
    );
}

#[tokio::test]
async fn eof_answers_requests_in_flight_then_exits_zero() {
    // `echo '<countdown call>' | toolwire serve`: the request is written and
    // stdin closed at once, before the tool is done.
    let mut p = Proc::spawn();
    p.request(
        1,
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 3, "interval_ms": 200}}),
    )
    .await;
    p.request(
        2,
        "tools/call",
        json!({"name": "echo", "arguments": {"text": "quick"}}),
    )
    .await;
    p.close_stdin();
    let mut answers = std::collections::HashMap::new();
    while let Some(m) = p.next_within(Duration::from_secs(10)).await {
        if let Some(id) = m["id"].as_i64() {
            answers.insert(id, m);
        }
    }
    assert_eq!(answers.len(), 2, "{answers:?}");
    assert_eq!(text_of(&answers[&1]["result"]), "done after 3 steps");
    assert_eq!(text_of(&answers[&2]["result"]), "quick");
    let status = tokio::time::timeout(Duration::from_secs(10), p.child.wait())
        .await
        .expect("exits once answered")
        .expect("wait");
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn eof_ends_listen_streams_at_once_and_answers_the_rest() {
    let mut p = Proc::spawn();
    p.request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    )
    .await;
    let ack = p.next().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "{ack}"
    );
    p.request(
        2,
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 2, "interval_ms": 100}}),
    )
    .await;
    let started = Instant::now();
    p.close_stdin();
    let (r, _) = p.response(2).await;
    assert_eq!(text_of(&r["result"]), "done after 2 steps");
    // The stream does not hold the exit until the grace period is over.
    let status = tokio::time::timeout(Duration::from_secs(10), p.child.wait())
        .await
        .expect("exits")
        .expect("wait");
    assert!(status.success(), "{status:?}");
    assert!(
        started.elapsed() < Duration::from_secs(4),
        "{:?}",
        started.elapsed()
    );
}

#[tokio::test]
async fn eof_cancels_work_past_the_grace_period_and_exits_zero() {
    let mut p = Proc::spawn_with(&["--eof-grace-ms", "300"], &[]);
    p.request(
        1,
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 1000, "interval_ms": 100}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    let started = Instant::now();
    p.close_stdin();
    let status = tokio::time::timeout(Duration::from_secs(10), p.child.wait())
        .await
        .expect("exits promptly")
        .expect("wait");
    assert!(status.success(), "{status:?}");
    assert!(started.elapsed() < Duration::from_secs(5));
    assert!(p.next_within(Duration::from_millis(200)).await.is_none());
}
