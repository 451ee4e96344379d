//! Tasks across replicas (issue 26): three `toolwire serve --http --bus
//! URL --tasks URL` replicas behind haproxy (round-robin, no stickiness) on
//! a real Redis, and again on a real NATS with JetStream. A task created through one replica is read, answered and
//! cancelled through the others, a task whose replica is killed is run
//! again by a surviving one (the demo `report` is re-runnable), and while
//! the store is down, creating a task fails cleanly, plain calls go on, and
//! a running task records its end once the store is back.

use super::scale::servers::{BusServer, Engine};
use super::scale::{Replica, haproxy, post, post_any};
use serde_json::{Value, json};
use std::collections::HashSet;
use std::time::Duration;

/// The `_meta` of a client that declares the extension and form
/// elicitation.
fn task_meta() -> Value {
    json!({"io.modelcontextprotocol/clientCapabilities": {
        "extensions": {"io.modelcontextprotocol/tasks": {}},
        "elicitation": {"form": {}}
    }})
}

/// Starts `report` as a task through haproxy: the replica that created
/// it, and its id.
async fn start_report(lb: u16, arguments: Value) -> (String, String) {
    let (replica, r) = post(
        lb,
        "tools/call",
        json!({"name": "report", "arguments": arguments, "_meta": task_meta()}),
    )
    .await;
    assert_eq!(r["result"]["resultType"], "task", "{r}");
    let id = r["result"]["taskId"].as_str().expect("taskId").to_owned();
    (replica, id)
}

/// `tasks/*` through haproxy: the answering replica and the result.
async fn task_call(lb: u16, method: &str, params: Value) -> (String, Value) {
    let mut params = params;
    params["_meta"] = task_meta();
    let (replica, r) = post(lb, method, params).await;
    assert!(r.get("error").is_none(), "{method}: {r}");
    (replica, r["result"].clone())
}

/// Polls `tasks/get` through haproxy until the task is `status`; the task,
/// and every replica that answered meanwhile.
async fn until(lb: u16, id: &str, status: &str, within: Duration) -> (Value, HashSet<String>) {
    let mut answered = HashSet::new();
    let polled = tokio::time::timeout(within, async {
        loop {
            let (replica, task) = task_call(lb, "tasks/get", json!({"taskId": id})).await;
            answered.insert(replica);
            if task["status"] == status {
                return task;
            }
            let s = task["status"].as_str().unwrap_or_default();
            assert!(
                !["completed", "failed", "cancelled"].contains(&s),
                "ended {s}, not {status}: {task}"
            );
            tokio::time::sleep(Duration::from_millis(150)).await;
        }
    })
    .await;
    let task = polled.unwrap_or_else(|_| panic!("task {id} not {status} within {within:?}"));
    (task, answered)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_redis_any_replica_answers_for_any_task_a_killed_runner_is_replaced_and_a_store_outage_is_survived()
 {
    across_replicas(Engine::Redis).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn on_nats_any_replica_answers_for_any_task_a_killed_runner_is_replaced_and_a_store_outage_is_survived()
 {
    across_replicas(Engine::Nats).await;
}

async fn across_replicas(engine: Engine) {
    let mut bus = BusServer::start(engine).await;
    let url = bus.url();
    let extra = ["--tasks", url.as_str(), "--task-grace-ms", "0"];
    let mut replicas = Vec::new();
    for _ in 0..3 {
        replicas.push(Replica::start_with(&url, &extra).await);
    }
    let (_lb, lb) = haproxy(&replicas).await;

    // Created through one replica, asks for input; the answer goes in
    // through whichever replica haproxy picks and reaches the runner.
    let (_, id) = start_report(lb, json!({"pages": 1, "publish": true})).await;
    let (task, mut answered) = until(lb, &id, "input_required", Duration::from_secs(20)).await;
    let key = task["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .unwrap_or_else(|| panic!("no input request in {task}"));
    let answer = json!({"action": "accept", "content": {"publish": true}});
    let (by, ack) = task_call(
        lb,
        "tasks/update",
        json!({"taskId": id, "inputResponses": {key: answer}}),
    )
    .await;
    answered.insert(by);
    assert_eq!(ack["resultType"], "complete", "{ack}");
    let (done, more) = until(lb, &id, "completed", Duration::from_secs(20)).await;
    answered.extend(more);
    assert_eq!(
        done["result"]["content"][0]["text"], "report of 1 pages written and published, as a task",
        "{done}"
    );
    assert!(
        answered.len() >= 2,
        "one replica answered everything: {answered:?}"
    );

    // Cancelled through haproxy: the runner, wherever it is, stops.
    let (_, id) = start_report(lb, json!({"pages": 100})).await;
    let (by, ack) = task_call(lb, "tasks/cancel", json!({"taskId": id})).await;
    assert_eq!(ack["resultType"], "complete", "{by}: {ack}");
    until(lb, &id, "cancelled", Duration::from_secs(20)).await;

    // The replica running a task is killed: a surviving one notices its
    // lapsed lease and runs the (idempotent) report again.
    let (creator, id) = start_report(lb, json!({"pages": 10})).await;
    let index: usize = creator
        .trim_start_matches('r')
        .parse::<usize>()
        .unwrap_or_else(|_| panic!("replica header {creator:?}"))
        - 1;
    let mut lost = replicas.remove(index);
    lost.child.kill().await.expect("kill the runner");
    let (done, answered) = until(lb, &id, "completed", Duration::from_secs(40)).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "report of 10 pages written, as a task",
        "{done}"
    );
    assert!(!answered.contains(&creator), "{answered:?}");

    // The store goes down while a task runs (3 s of pages): creating a
    // task is refused with a clear error, plain calls go on, and the
    // running task records its end once the store is back.
    let (_, id) = start_report(lb, json!({"pages": 10})).await;
    bus.stop().await;
    let (_, status, refused) = post_any(
        lb,
        "tools/call",
        json!({"name": "report", "arguments": {"pages": 1}, "_meta": task_meta()}),
    )
    .await;
    let message = refused["error"]["message"].as_str().unwrap_or_default();
    assert!(
        refused["error"]["code"] == -32603 && message.contains("store"),
        "{status}: {refused}"
    );
    let (_, plain) = post(
        lb,
        "tools/call",
        json!({"name": "report", "arguments": {"pages": 1}}),
    )
    .await;
    assert_eq!(
        plain["result"]["content"][0]["text"], "report of 1 pages written",
        "{plain}"
    );
    bus.restart().await;
    let (done, _) = until(lb, &id, "completed", Duration::from_secs(40)).await;
    assert_eq!(
        done["result"]["content"][0]["text"], "report of 10 pages written, as a task",
        "{done}"
    );
}
