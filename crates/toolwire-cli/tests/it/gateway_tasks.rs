//! Tasks through `toolwire gateway` (issue 26): two gateway replicas over
//! HTTP, sharing one keyring, in front of one `toolwire serve --http` (whose
//! `report` runs as a task) and the TypeScript SDK v1 server (legacy, no
//! tasks). A task created through one replica is followed, answered and
//! cancelled through the other, by its id alone; the id does not open when
//! tampered with; the legacy upstream's tools never become tasks; and a
//! gateway whose upstreams offer no tasks does not declare the extension.

use super::auth::harness::{node, repo_root};
use super::era::http_server;
use super::gateway::{gateway_http, scratch, write_config};
use serde_json::{Map, Value, json};
use std::time::Duration;
use toolwire::proto::ErrorCode;
use toolwire::proto::types::{
    ElicitAction, ElicitRequestParams, ElicitResult, TASKS_EXTENSION, TaskStatus,
};
use toolwire::{Client, ClientBuilder, ClientError, InputError, Started, ToolCall};

const KEYRING: &str = "AgICAgICAgICAgICAgICAgICAgICAgICAgICAgICAgI=";

fn ts_upstream() -> String {
    let script = repo_root().join("tests/interop/legacy-server.mjs");
    format!(
        "[upstreams.ts]\ncommand = [{:?}, {:?}, \"stdio\"]\nprotocol = \"legacy\"\n",
        node().display().to_string(),
        script.display().to_string()
    )
}

/// A client of `url` declaring the Tasks extension, publishing when asked.
fn tasks_client(url: &str) -> Client {
    ClientBuilder::new()
        .with_tasks()
        .with_elicitation(|_key: String, _p: ElicitRequestParams| async {
            let mut content = Map::new();
            content.insert("publish".into(), Value::Bool(true));
            Ok::<_, InputError>(ElicitResult {
                action: ElicitAction::Accept,
                content: Some(content),
            })
        })
        .connect_http(url)
        .expect("client")
}

fn text(r: &toolwire::proto::types::CallToolResult) -> String {
    serde_json::to_value(&r.content).expect("content")[0]["text"]
        .as_str()
        .unwrap_or_default()
        .to_owned()
}

async fn declares_tasks(client: &Client) -> bool {
    client
        .discover()
        .await
        .expect("discover")
        .capabilities
        .extensions
        .is_some_and(|e| e.contains_key(TASKS_EXTENSION))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tasks_pass_through_two_gateway_replicas_by_their_id_alone() {
    let (_web, web) = http_server().await;
    let dir = scratch("tasks");
    let config = write_config(
        &dir,
        &format!("[upstreams.web]\nurl = {web:?}\n{}", ts_upstream()),
    );
    let keys = [("TOOLWIRE_STATE_KEYS", KEYRING)];
    let (_a, a_url) = gateway_http(&config, &keys).await;
    let (_b, b_url) = gateway_http(&config, &keys).await;
    let a = tasks_client(&a_url);
    let b = tasks_client(&b_url);
    assert!(declares_tasks(&a).await, "an upstream offers tasks");

    // Created through A, followed through B (its confirmation answered
    // there with tasks/update), by the id alone.
    let started = a
        .start_tool(
            ToolCall::new("web__report")
                .with_argument("pages", json!(2))
                .with_argument("publish", json!(true)),
        )
        .await
        .expect("start");
    let Started::Task(task) = started else {
        panic!("not a task: {started:?}");
    };
    assert!(task.id().starts_with('f'), "a forwarded id: {}", task.id());
    let done = b.task(task.id()).wait().await.expect("wait through B");
    assert_eq!(
        text(&done),
        "report of 2 pages written and published, as a task"
    );
    let seen = a.task(task.id()).get().await.expect("get through A");
    assert_eq!(
        seen.info.task_id,
        task.id(),
        "the downstream id, not the upstream's"
    );
    assert_eq!(seen.state.status(), TaskStatus::Completed);

    // Cancelled through B: the upstream's runner stops.
    let Started::Task(long) = a
        .start_tool(ToolCall::new("web__report").with_argument("pages", json!(100)))
        .await
        .expect("start")
    else {
        panic!("not a task");
    };
    b.task(long.id()).cancel().await.expect("cancel through B");
    let cancelled = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let t = a.task(long.id()).get().await.expect("get");
            if t.state.status() == TaskStatus::Cancelled {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("cancelled in time");
    assert_eq!(cancelled.info.task_id, long.id());

    // A tampered id (one character changed) and the upstream's own id are
    // unknown tasks, like any other.
    let mut tampered = long.id().to_owned().into_bytes();
    let last = tampered.len() - 2;
    tampered[last] = if tampered[last] == b'A' { b'B' } else { b'A' };
    let tampered = String::from_utf8(tampered).expect("ascii");
    for id in [tampered.as_str(), "f", "tnotatask"] {
        match b.task(id).get().await {
            Err(ClientError::Rpc(e)) => {
                assert_eq!(e.code, ErrorCode::INVALID_PARAMS, "{id}: {e:?}")
            }
            other => panic!("{id}: {other:?}"),
        }
    }

    // The legacy upstream's tools are never tasks, even for a client that
    // declared the extension.
    let echoed = a
        .start_tool(ToolCall::new("ts__echo").with_argument("text", json!("hi")))
        .await
        .expect("echo");
    let Started::Done(echoed) = echoed else {
        panic!("a legacy upstream's tool became a task: {echoed:?}");
    };
    assert_eq!(text(&echoed), "hi");

    // A client that did not declare the extension gets a plain call.
    let plain = ClientBuilder::new().connect_http(&a_url).expect("client");
    let r = plain
        .call_tool("web__report", json!({"pages": 1}))
        .await
        .expect("plain");
    assert_eq!(text(&r), "report of 1 pages written");
}

#[tokio::test]
async fn a_gateway_whose_upstreams_offer_no_tasks_does_not_declare_them() {
    let dir = scratch("tasks-none");
    let config = write_config(&dir, &ts_upstream());
    let (_gw, url) = gateway_http(&config, &[]).await;
    let client = tasks_client(&url);
    assert!(!declares_tasks(&client).await);
    let r = client
        .call_tool("ts__echo", json!({"text": "plain"}))
        .await
        .expect("echo");
    assert_eq!(text(&r), "plain");
}
