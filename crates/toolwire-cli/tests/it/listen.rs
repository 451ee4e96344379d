//! `subscriptions/listen` through `toolwire serve`: the acknowledgment,
//! filtering, subscription ids, list changes from tools registered at run
//! time, cancellation, and the graceful close on shutdown.

use crate::support::Proc;
use serde_json::{Value, json};
use std::time::Duration;

const SUB_ID: &str = "io.modelcontextprotocol/subscriptionId";
const QUIET: Duration = Duration::from_millis(300);

async fn listen(p: &mut Proc, id: Value, filter: Value) -> Value {
    p.send(
        &json!({"jsonrpc": "2.0", "id": id, "method": "subscriptions/listen",
                   "params": {"notifications": filter, "_meta": crate::support::meta()}}),
    )
    .await;
    let ack = p.next().await;
    assert_eq!(
        ack["method"], "notifications/subscriptions/acknowledged",
        "the first message of a stream is its ack: {ack}"
    );
    assert_eq!(ack["params"]["_meta"][SUB_ID], id, "{ack}");
    assert!(ack.get("id").is_none(), "{ack}");
    ack
}

fn sub_id(m: &Value) -> Option<&Value> {
    m["params"]["_meta"].get(SUB_ID)
}

fn truthy(v: &Value) -> bool {
    match v {
        Value::Null | Value::Bool(false) => false,
        Value::Number(n) => n.as_f64() != Some(0.0),
        Value::String(s) => !s.is_empty(),
        _ => true,
    }
}

/// Calls `define_tool`, returning the messages seen before its response and
/// shortly after it.
async fn define(p: &mut Proc, id: i64, name: &str) -> Vec<Value> {
    p.request(
        id,
        "tools/call",
        json!({"name": "define_tool", "arguments": {"name": name, "text": format!("I am {name}")}}),
    )
    .await;
    let (r, mut seen) = p.response(id).await;
    assert_eq!(
        r["result"]["content"][0]["text"],
        format!("defined {name}"),
        "{r}"
    );
    seen.extend(p.drain(QUIET).await);
    seen
}

#[tokio::test]
async fn the_ack_comes_first_with_the_honoured_subset_of_the_filter() {
    let mut p = Proc::spawn();
    let requested = json!({
        "toolsListChanged": true,
        "promptsListChanged": true,
        "resourcesListChanged": true,
        "resourceSubscriptions": ["file:///project/config.json"]
    });
    let ack = listen(&mut p, json!(41), requested.clone()).await;
    let honoured = ack["params"]["notifications"]
        .as_object()
        .expect("notifications");
    assert_eq!(honoured["toolsListChanged"], true, "{ack}");
    for (k, v) in honoured {
        assert_eq!(&requested[k], v, "{k} was not asked for like that: {ack}");
    }
    // The stream stays open: no response, nothing else.
    assert!(p.drain(QUIET).await.is_empty());
}

#[tokio::test]
async fn list_changes_reach_only_the_streams_that_asked() {
    let mut p = Proc::spawn();
    listen(&mut p, json!(1), json!({"toolsListChanged": true})).await;
    let prompts_only = listen(&mut p, json!("b"), json!({"promptsListChanged": true})).await;
    assert!(
        prompts_only["params"]["notifications"]
            .get("toolsListChanged")
            .is_none(),
        "{prompts_only}"
    );
    listen(&mut p, json!(3), json!({"toolsListChanged": false})).await;
    listen(
        &mut p,
        json!(1_712_345_678_901_i64),
        json!({"toolsListChanged": true}),
    )
    .await;

    let seen = define(&mut p, 10, "greeter").await;
    let changes: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .collect();
    let mut ids: Vec<&Value> = changes.iter().filter_map(|m| sub_id(m)).collect();
    ids.sort_by_key(|v| v.to_string());
    assert_eq!(ids, [&json!(1), &json!(1_712_345_678_901_i64)], "{seen:?}");
    assert_eq!(changes.len(), 2, "{seen:?}");
    for m in &seen {
        if m.get("method").is_some() {
            let id = sub_id(m).unwrap_or_else(|| panic!("untagged notification {m}"));
            assert!(truthy(id), "{m}");
        }
    }

    // The new tool is listed and callable.
    let list = p.call(11, "tools/list", json!({})).await;
    assert!(
        list["result"]["tools"]
            .as_array()
            .expect("tools")
            .iter()
            .any(|t| t["name"] == "greeter"),
        "{list}"
    );
    let r = p
        .call(
            12,
            "tools/call",
            json!({"name": "greeter", "arguments": {}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "I am greeter");

    // Removing it notifies the same streams again.
    p.request(
        13,
        "tools/call",
        json!({"name": "undefine_tool", "arguments": {"name": "greeter"}}),
    )
    .await;
    let (r, mut seen) = p.response(13).await;
    assert_eq!(
        r["result"]["content"][0]["text"], "undefined greeter",
        "{r}"
    );
    seen.extend(p.drain(QUIET).await);
    let ids: Vec<&Value> = seen
        .iter()
        .filter(|m| m["method"] == "notifications/tools/list_changed")
        .filter_map(sub_id)
        .collect();
    assert_eq!(ids.len(), 2, "{seen:?}");
    assert!(
        ids.iter()
            .all(|id| *id == &json!(1) || *id == &json!(1_712_345_678_901_i64))
    );
}

#[tokio::test]
async fn a_cancelled_stream_stops_without_a_response_and_its_id_is_free_again() {
    let mut p = Proc::spawn();
    listen(&mut p, json!(7), json!({"toolsListChanged": true})).await;
    // A second request with the id of the open stream is refused.
    let r = p.call(7, "tools/list", json!({})).await;
    assert_eq!(r["error"]["code"], -32600, "{r}");

    p.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
                   "params": {"requestId": 7, "reason": "done"}}),
    )
    .await;
    let seen = define(&mut p, 8, "after_cancel").await;
    assert!(
        seen.iter().all(|m| sub_id(m).is_none() && m["id"] != 7),
        "{seen:?}"
    );
    // The id may open a new stream.
    listen(&mut p, json!(7), json!({"toolsListChanged": true})).await;
}

#[tokio::test]
async fn shutdown_closes_every_stream_with_its_listen_result() {
    let mut p = Proc::spawn();
    listen(&mut p, json!(1), json!({"toolsListChanged": true})).await;
    listen(&mut p, json!("second"), json!({})).await;
    p.terminate();
    let mut closed = Vec::new();
    for _ in 0..2 {
        let m = p.next().await;
        assert!(m.get("method").is_none(), "{m}");
        assert_eq!(m["result"]["resultType"], "complete", "{m}");
        assert_eq!(m["result"]["_meta"][SUB_ID], m["id"], "{m}");
        closed.push(m["id"].clone());
    }
    closed.sort_by_key(Value::to_string);
    assert_eq!(closed, [json!("second"), json!(1)]);
    let status = tokio::time::timeout(Duration::from_secs(10), p.child.wait())
        .await
        .expect("exits promptly")
        .expect("wait");
    assert!(status.success(), "{status:?}");
}

#[tokio::test]
async fn listen_without_a_filter_or_with_a_bad_version_is_refused() {
    let mut p = Proc::spawn();
    let r = p.call(1, "subscriptions/listen", json!({})).await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let r = p
        .call(
            2,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}, "_meta": {
                "io.modelcontextprotocol/protocolVersion": "v999.0.0"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32022, "{r}");
}

#[tokio::test]
async fn progress_and_logs_stay_on_their_request_not_on_streams() {
    let mut p = Proc::spawn();
    listen(&mut p, json!(1), json!({"toolsListChanged": true})).await;
    p.request(
        2,
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 3, "interval_ms": 1},
               "_meta": {"progressToken": "p-2", "io.modelcontextprotocol/logLevel": "debug"}}),
    )
    .await;
    let (r, notes) = p.response(2).await;
    assert_eq!(r["result"]["content"][0]["text"], "done after 3 steps");
    let progress: Vec<f64> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .map(|n| {
            assert_eq!(n["params"]["progressToken"], "p-2");
            n["params"]["progress"].as_f64().expect("number")
        })
        .collect();
    assert_eq!(progress, [1.0, 2.0, 3.0]);
    let logs = notes
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .count();
    assert_eq!(logs, 3, "{notes:?}");
    assert!(notes.iter().all(|n| sub_id(n).is_none()), "{notes:?}");

    // Above the level of every message: none at all.
    p.request(
        3,
        "tools/call",
        json!({"name": "countdown", "arguments": {"steps": 2, "interval_ms": 1},
               "_meta": {"io.modelcontextprotocol/logLevel": "warning"}}),
    )
    .await;
    let (_, notes) = p.response(3).await;
    assert!(notes.is_empty(), "{notes:?}");
    assert!(p.drain(QUIET).await.is_empty());
}
