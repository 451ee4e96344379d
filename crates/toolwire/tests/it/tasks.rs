//! Tasks (the `io.modelcontextprotocol/tasks` extension) on the server,
//! through the pipeline (`toolwire::testing`): the per-request decision,
//! the lifecycle and its end states, input inside a task, cancellation,
//! the principal binding, the bounds and expiry, and the legacy era.

use serde_json::{Value, json};
use std::time::Duration;
use toolwire::proto::types::ClientCapabilities;
use toolwire::task::{TaskOptions, TaskSupport};
use toolwire::testing::{TestClient, TestError};
use toolwire::{
    ElicitAnswer, HandlerError, InputRequired, RequestContext, Server, ServerConfig, Tool,
    ToolError, ToolResult,
};

const TASKS: &str = "io.modelcontextprotocol/tasks";

/// A client declaring elicitation and, if `tasks`, the extension.
fn client(server: &Server, tasks: bool) -> TestClient {
    let mut caps = json!({"elicitation": {"form": {}}});
    if tasks {
        caps["extensions"] = json!({ TASKS: {} });
    }
    let caps: ClientCapabilities = serde_json::from_value(caps).expect("capabilities");
    TestClient::new(server).with_capabilities(caps)
}

fn no_args(name: &str) -> toolwire::ToolBuilder {
    Tool::builder(name).input_schema(json!({"type": "object"}))
}

/// Works `ms` milliseconds (the `ms` argument), reporting progress, until
/// done or cancelled.
async fn work(args: Value, cx: RequestContext) -> Result<ToolResult, ToolError> {
    let ms = args["ms"].as_u64().unwrap_or(0);
    for step in 1..=4u32 {
        tokio::select! {
            () = cx.cancelled() => return Err(ToolError::failed("stopped")),
            () = tokio::time::sleep(Duration::from_millis(ms / 4)) => {}
        }
        cx.report_progress(
            f64::from(step),
            Some(4.0),
            Some(&format!("step {step} of 4")),
        );
    }
    Ok(ToolResult::text(format!("worked {ms} ms")))
}

/// Asks to confirm twice under the same handler key (two rounds), then
/// reports both answers.
async fn confirm_twice(_: Value, cx: RequestContext) -> Result<ToolResult, ToolError> {
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Ok {
        ok: bool,
    }
    let first: Option<bool> = cx.state()?;
    let answer = cx
        .input::<ElicitAnswer<Ok>>("confirm")?
        .and_then(ElicitAnswer::accepted)
        .map(|a| a.ok);
    match (first, answer) {
        (Some(first), Some(second)) => Result::Ok(ToolResult::text(format!("{first} {second}"))),
        (None, Some(first)) => Result::Ok(
            InputRequired::new()
                .elicit::<Ok>("confirm", "Really?")
                .with_state(&first)
                .into(),
        ),
        (_, None) => Result::Ok(InputRequired::new().elicit::<Ok>("confirm", "Sure?").into()),
    }
}

fn server_with(options: TaskOptions) -> Server {
    let server = Server::new(ServerConfig::new("tasks", "1").with_tasks(options));
    let tools = [
        no_args("work").task(TaskSupport::Optional).handler(work),
        no_args("only_task")
            .task(TaskSupport::Required)
            .handler(|_: Value, _| async { "done" }),
        no_args("plain").handler(|_: Value, _| async { "plain" }),
        no_args("tool_error")
            .task(TaskSupport::Optional)
            .handler(|_: Value, _| async { ToolResult::error_text("it broke") }),
        no_args("protocol_error")
            .task(TaskSupport::Optional)
            .handler(|_: Value, _| async {
                Err::<ToolResult, _>(HandlerError::invalid_params("no such thing"))
            }),
        no_args("panics")
            .task(TaskSupport::Optional)
            .handler(|_: Value, _| async { panic!("the handler panics on purpose") as String }),
        no_args("confirm_twice")
            .task(TaskSupport::Optional)
            .handler(confirm_twice),
        no_args("big")
            .task(TaskSupport::Optional)
            .handler(|_: Value, _| async { "x".repeat(4096) }),
        no_args("slow")
            .task(TaskSupport::Optional)
            .timeout(Duration::from_millis(200))
            .handler(work),
        no_args("short_lived")
            .task(TaskSupport::Optional)
            .task_ttl(Duration::from_millis(300))
            .handler(|_: Value, _| async { "soon gone" }),
    ];
    for tool in tools {
        server.add_tool(tool.expect("tool")).expect("add");
    }
    server
}

fn server() -> Server {
    server_with(TaskOptions::new().poll_interval(Duration::from_millis(50)))
}

async fn create(c: &TestClient, tool: &str, args: Value) -> String {
    let created = c
        .request("tools/call", json!({"name": tool, "arguments": args}))
        .await
        .expect("created");
    assert_eq!(created["resultType"], "task", "{created}");
    assert_eq!(created["status"], "working", "{created}");
    for absent in ["result", "error", "inputRequests", "requestState", "task"] {
        assert!(created.get(absent).is_none(), "{absent} in {created}");
    }
    created["taskId"].as_str().expect("taskId").to_owned()
}

async fn get(c: &TestClient, id: &str) -> Result<Value, TestError> {
    c.request("tasks/get", json!({"taskId": id})).await
}

/// Polls until the task's status is `want` or terminal.
async fn until(c: &TestClient, id: &str, want: &str) -> Value {
    for _ in 0..200 {
        let task = get(c, id).await.expect("tasks/get");
        let status = task["status"].as_str().unwrap_or_default().to_owned();
        if status == want || ["completed", "failed", "cancelled"].contains(&status.as_str()) {
            return task;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    panic!("task {id} never reached {want}");
}

fn rpc_code(e: &TestError) -> i32 {
    match e {
        TestError::Rpc(e) => e.code.0,
        other => panic!("not a JSON-RPC error: {other}"),
    }
}

#[tokio::test]
async fn the_server_decides_per_request_and_refuses_a_required_tool_without_the_extension() {
    let server = server();
    let plain = client(&server, false);
    // Optional: a plain call for a request that did not declare it.
    let sync = plain
        .request(
            "tools/call",
            json!({"name": "work", "arguments": {"ms": 0}}),
        )
        .await
        .expect("sync");
    assert_eq!(sync["resultType"], "complete", "{sync}");
    assert!(sync.get("taskId").is_none());
    // Required: -32021 naming the extension.
    let err = plain
        .request("tools/call", json!({"name": "only_task", "arguments": {}}))
        .await
        .expect_err("refused");
    let TestError::Rpc(e) = err else {
        panic!("{err}")
    };
    assert_eq!(e.code.0, -32021);
    assert_eq!(
        e.data.expect("data")["requiredCapabilities"]["extensions"][TASKS],
        json!({})
    );
    // tasks/* without the extension: -32021 before anything else.
    for method in ["tasks/get", "tasks/cancel"] {
        let e = plain
            .request(method, json!({"taskId": "nope"}))
            .await
            .expect_err(method);
        assert_eq!(rpc_code(&e), -32021, "{method}");
    }
    // A forbidden tool stays synchronous for a declaring request.
    let tasks = client(&server, true);
    let r = tasks
        .request("tools/call", json!({"name": "plain", "arguments": {}}))
        .await
        .expect("plain");
    assert_eq!(r["resultType"], "complete");
    // The extension is declared while some tool supports tasks.
    let discovered = tasks.discover().await.expect("discover");
    let extensions = discovered.capabilities.extensions.expect("extensions");
    assert!(extensions.contains_key(TASKS));
    let bare = Server::new(ServerConfig::new("bare", "1"));
    let d = TestClient::new(&bare).discover().await.expect("discover");
    assert!(
        d.capabilities
            .extensions
            .is_none_or(|e| !e.contains_key(TASKS))
    );
}

#[tokio::test]
async fn a_task_reports_progress_as_its_status_message_and_completes_with_the_result() {
    let server = server();
    let c = client(&server, true);
    let id = create(&c, "work", json!({"ms": 400})).await;
    assert!(id.len() >= 22, "128 bits at least: {id}");
    // Visible at once: strongly consistent creation.
    let first = get(&c, &id).await.expect("visible at once");
    assert_eq!(first["resultType"], "complete");
    assert_eq!(first["taskId"], id.as_str());
    assert_eq!(first["pollIntervalMs"], 50);
    assert!(first["ttlMs"].as_u64().is_some_and(|t| t > 0));
    let mut messages = Vec::new();
    let done = loop {
        let task = get(&c, &id).await.expect("get");
        if let Some(m) = task["statusMessage"].as_str() {
            messages.push(m.to_owned());
        }
        if task["status"] == "completed" {
            break task;
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    };
    assert_eq!(
        done["result"]["content"][0]["text"], "worked 400 ms",
        "{done}"
    );
    assert!(done["result"].get("resultType").is_none(), "{done}");
    assert!(
        messages.iter().any(|m| m.starts_with("step ")),
        "progress became the status message: {messages:?}"
    );
}

#[tokio::test]
async fn a_tool_error_completes_and_a_protocol_error_or_a_panic_fails() {
    let server = server();
    let c = client(&server, true);
    let id = create(&c, "tool_error", json!({})).await;
    let t = until(&c, &id, "completed").await;
    assert_eq!(t["status"], "completed", "{t}");
    assert_eq!(t["result"]["isError"], true);
    let id = create(&c, "protocol_error", json!({})).await;
    let t = until(&c, &id, "failed").await;
    assert_eq!(t["status"], "failed", "{t}");
    assert_eq!(t["error"]["code"], -32602);
    assert!(t.get("result").is_none());
    let id = create(&c, "panics", json!({})).await;
    let t = until(&c, &id, "failed").await;
    assert_eq!(t["status"], "failed", "{t}");
    assert_eq!(t["error"]["code"], -32603);
    // The server goes on serving.
    let id = create(&c, "work", json!({"ms": 0})).await;
    assert_eq!(until(&c, &id, "completed").await["status"], "completed");
}

#[tokio::test]
async fn input_inside_a_task_uses_keys_unique_over_its_lifetime() {
    let server = server();
    let c = client(&server, true);
    let id = create(&c, "confirm_twice", json!({})).await;
    let t = until(&c, &id, "input_required").await;
    let first: Vec<String> = t["inputRequests"]
        .as_object()
        .expect("inputRequests")
        .keys()
        .cloned()
        .collect();
    assert_eq!(first, ["confirm"], "{t}");
    // An unknown key is ignored: still waiting.
    let ack = c
        .request(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {"other": {"action": "accept", "content": {"ok": true}}}}),
        )
        .await
        .expect("ack");
    assert_eq!(ack["resultType"], "complete");
    assert!(
        ack.get("taskId").is_none() && ack.get("status").is_none(),
        "{ack}"
    );
    assert_eq!(get(&c, &id).await.expect("get")["status"], "input_required");
    let answer = |key: &str, ok: bool| json!({"taskId": id, "inputResponses": {key: {"action": "accept", "content": {"ok": ok}}}});
    c.request("tasks/update", answer("confirm", true))
        .await
        .expect("answer 1");
    // The second round asks under the same handler key: a new task key.
    let t = loop {
        let t = until(&c, &id, "input_required").await;
        let keys: Vec<String> = t["inputRequests"]
            .as_object()
            .map(|m| m.keys().cloned().collect())
            .unwrap_or_default();
        if t["status"] != "input_required" || keys != ["confirm"] {
            break t;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    let second: Vec<String> = t["inputRequests"]
        .as_object()
        .expect("second round")
        .keys()
        .cloned()
        .collect();
    assert_eq!(second.len(), 1, "{t}");
    assert_ne!(second[0], "confirm", "a key is never reused");
    // Answering the first key again is ignored.
    c.request("tasks/update", answer("confirm", false))
        .await
        .expect("ignored");
    assert_eq!(get(&c, &id).await.expect("get")["status"], "input_required");
    c.request("tasks/update", answer(&second[0], false))
        .await
        .expect("answer 2");
    let done = until(&c, &id, "completed").await;
    assert_eq!(done["result"]["content"][0]["text"], "true false", "{done}");
}

#[tokio::test]
async fn cancel_is_acknowledged_at_once_and_stops_the_handler() {
    let server = server();
    let c = client(&server, true);
    let id = create(&c, "work", json!({"ms": 60_000})).await;
    let ack = c
        .request("tasks/cancel", json!({"taskId": id}))
        .await
        .expect("ack");
    assert_eq!(
        ack,
        json!({"resultType": "complete", "_meta": ack["_meta"]})
    );
    let t = until(&c, &id, "cancelled").await;
    assert_eq!(t["status"], "cancelled", "{t}");
    // Idempotent on a terminal task.
    c.request("tasks/cancel", json!({"taskId": id}))
        .await
        .expect("again");
    // A task waiting for input is cancelled too.
    let id = create(&c, "confirm_twice", json!({})).await;
    until(&c, &id, "input_required").await;
    c.request("tasks/cancel", json!({"taskId": id}))
        .await
        .expect("ack");
    assert_eq!(until(&c, &id, "cancelled").await["status"], "cancelled");
}

#[tokio::test]
async fn another_principals_task_reads_exactly_like_an_unknown_one() {
    let server = server();
    let alice = client(&server, true).with_principal("https://issuer alice");
    let bob = client(&server, true).with_principal("https://issuer bob");
    let anonymous = client(&server, true);
    let id = create(&alice, "work", json!({"ms": 60_000})).await;
    get(&alice, &id).await.expect("the owner reads it");
    let unknown = get(&bob, "AAAAAAAAAAAAAAAAAAAAAA")
        .await
        .expect_err("unknown");
    for other in [&bob, &anonymous] {
        let theirs = get(other, &id).await.expect_err("not theirs");
        assert_eq!(theirs.to_string(), unknown.to_string());
        assert_eq!(rpc_code(&theirs), -32602);
        let cancel = other
            .request("tasks/cancel", json!({"taskId": id}))
            .await
            .expect_err("no cancel");
        assert_eq!(rpc_code(&cancel), -32602);
    }
    assert_eq!(
        get(&alice, &id).await.expect("still running")["status"],
        "working"
    );
    alice
        .request("tasks/cancel", json!({"taskId": id}))
        .await
        .expect("ack");
}

#[tokio::test]
async fn tasks_are_bounded_per_principal_and_in_all_and_results_in_size() {
    let server = server_with(TaskOptions::new().max_tasks(2, 3).max_result_bytes(1024));
    let alice = client(&server, true).with_principal("i alice");
    let bob = client(&server, true).with_principal("i bob");
    let call = json!({"name": "work", "arguments": {"ms": 60_000}});
    create(&alice, "work", json!({"ms": 60_000})).await;
    create(&alice, "work", json!({"ms": 60_000})).await;
    let over = alice
        .request("tools/call", call.clone())
        .await
        .expect_err("alice is at her bound");
    assert_eq!(rpc_code(&over), -31429);
    // Bob is still served, up to the total.
    let id = create(&bob, "big", json!({})).await;
    let t = until(&bob, &id, "failed").await;
    assert_eq!(t["status"], "failed", "over the result bound: {t}");
    assert!(
        t["error"]["message"]
            .as_str()
            .unwrap_or_default()
            .contains("bytes")
    );
    let full = bob
        .request("tools/call", call)
        .await
        .expect_err("the server is full");
    assert_eq!(rpc_code(&full), -32603);
    // Plain calls go on.
    let r = bob
        .request("tools/call", json!({"name": "plain", "arguments": {}}))
        .await
        .expect("plain");
    assert_eq!(r["resultType"], "complete");
}

/// The tool's own time limit bounds a task's round as it bounds a plain
/// call: the task completes with the same `isError` result.
#[tokio::test]
async fn a_tools_time_limit_applies_inside_a_task() {
    let server = server();
    let c = client(&server, true);
    let id = create(&c, "slow", json!({"ms": 60_000})).await;
    let task = until(&c, &id, "completed").await;
    assert_eq!(task["status"], "completed", "{task}");
    assert_eq!(task["result"]["isError"], true, "{task}");
    let text = task["result"]["content"][0]["text"]
        .as_str()
        .unwrap_or_default();
    assert!(text.contains("did not finish within 200 ms"), "{task}");
    // Within the limit, it completes as usual.
    let id = create(&c, "slow", json!({"ms": 40})).await;
    let task = until(&c, &id, "completed").await;
    assert_eq!(
        task["result"]["content"][0]["text"], "worked 40 ms",
        "{task}"
    );
}

#[tokio::test]
async fn an_expired_task_is_unknown() {
    let server = server();
    let c = client(&server, true);
    let id = create(&c, "short_lived", json!({})).await;
    let t = get(&c, &id).await.expect("alive");
    assert_eq!(t["ttlMs"], 300);
    tokio::time::sleep(Duration::from_millis(400)).await;
    assert_eq!(rpc_code(&get(&c, &id).await.expect_err("expired")), -32602);
}

#[tokio::test]
async fn tasks_get_needs_mcp_name_equal_to_the_task_id_over_http() {
    let server = server();
    let c = client(&server, true);
    let id = create(&c, "work", json!({"ms": 60_000})).await;
    let version = toolwire::proto::meta::PROTOCOL_VERSION;
    let headers = |name: &str| {
        vec![
            ("MCP-Protocol-Version", version.to_owned()),
            ("Mcp-Method", "tasks/get".to_owned()),
            ("Mcp-Name", name.to_owned()),
        ]
    };
    let send = |h: Vec<(&'static str, String)>| {
        let c = &c;
        let id = id.clone();
        async move {
            let h: Vec<(&str, &str)> = h.iter().map(|(k, v)| (*k, v.as_str())).collect();
            c.request_with_headers("tasks/get", json!({"taskId": id}), &h)
                .await
        }
    };
    send(headers(&id)).await.expect("matching Mcp-Name");
    assert_eq!(
        rpc_code(&send(headers("someone-else")).await.expect_err("mismatch")),
        -32020
    );
    let mut missing = headers(&id);
    missing.pop();
    assert_eq!(rpc_code(&send(missing).await.expect_err("missing")), -32020);
    c.request("tasks/cancel", json!({"taskId": id}))
        .await
        .expect("ack");
}

#[tokio::test]
async fn a_legacy_session_gets_plain_calls_and_no_task_methods() {
    let server = server();
    let legacy = TestClient::legacy(&server, "2025-11-25")
        .await
        .expect("legacy session");
    let r = legacy
        .request(
            "tools/call",
            json!({"name": "work", "arguments": {"ms": 0}}),
        )
        .await
        .expect("sync");
    assert_eq!(r["content"][0]["text"], "worked 0 ms", "{r}");
    assert!(r.get("taskId").is_none());
    let e = legacy
        .request("tools/call", json!({"name": "only_task", "arguments": {}}))
        .await
        .expect_err("required");
    let TestError::Rpc(e) = e else { panic!("{e}") };
    assert!(e.message.contains("runs only as a task"), "{}", e.message);
    for method in ["tasks/get", "tasks/list", "tasks/result", "tasks/cancel"] {
        let e = legacy
            .request(method, json!({"taskId": "x"}))
            .await
            .expect_err(method);
        assert_eq!(rpc_code(&e), -32601, "{method}");
    }
}

#[tokio::test]
async fn listening_for_tasks_needs_the_extension_and_sends_the_whole_task_on_each_change() {
    let server = server();
    let with = client(&server, true);
    let id = create(&with, "work", json!({"ms": 400})).await;
    let filter = toolwire::proto::types::SubscriptionFilter {
        tools_list_changed: Some(true),
        task_ids: Some(vec![id.clone(), id.clone()]),
        ..Default::default()
    };
    let e = client(&server, false)
        .listen(filter.clone())
        .await
        .map(|_| ())
        .expect_err("refused");
    assert_eq!(rpc_code(&e), -32021);
    let mut sub = with.listen(filter).await.expect("listen");
    let ack = &sub.acknowledgment().params["notifications"];
    assert_eq!(ack["taskIds"], json!([id]), "{ack}");
    // Another principal listening for the same id hears nothing of it.
    let mut other = client(&server, true)
        .with_principal("mallory")
        .listen(toolwire::proto::types::SubscriptionFilter {
            task_ids: Some(vec![id.clone()]),
            ..Default::default()
        })
        .await
        .expect("listen");
    let mut seen = Vec::new();
    let last = loop {
        let n = sub.next_notification().await.expect("a notification");
        assert_eq!(n.method, "notifications/tasks", "{n:?}");
        assert_eq!(n.params["taskId"], id.as_str());
        let status = n.params["status"].as_str().unwrap_or_default().to_owned();
        seen.push(n.params["statusMessage"].clone());
        if status == "completed" {
            break n.params;
        }
        assert_eq!(status, "working", "{:?}", n.params);
    };
    // The whole task, as tasks/get shows it.
    let got = get(&with, &id).await.expect("tasks/get");
    for key in [
        "taskId",
        "status",
        "createdAt",
        "lastUpdatedAt",
        "ttlMs",
        "result",
    ] {
        assert_eq!(last[key], got[key], "{key}: {last} vs {got}");
    }
    assert!(seen.len() >= 2, "{seen:?}");
    let quiet = tokio::time::timeout(Duration::from_millis(200), other.next()).await;
    assert!(quiet.is_err(), "mallory heard: {quiet:?}");
}

/// Two servers on one shared store and one bus, as replicas on Redis or
/// NATS are: each keeps a lease on what it runs (300 ms here) and takes
/// over what another stopped running.
fn replicas() -> (Server, Server) {
    let store = std::sync::Arc::new(toolwire::task::MemoryTaskStore::for_replicas());
    let bus: std::sync::Arc<dyn toolwire::NotificationBus> =
        std::sync::Arc::new(toolwire::InMemoryBus::default());
    let one = || {
        let options = TaskOptions::new()
            .store(store.clone())
            .poll_interval(Duration::from_millis(50))
            .lease(Duration::from_millis(300));
        let server = Server::new(
            ServerConfig::new("tasks", "1")
                .with_tasks(options)
                .with_bus(bus.clone()),
        );
        let tools = [
            no_args("work").task(TaskSupport::Optional).handler(work),
            no_args("again")
                .task(TaskSupport::Optional)
                .rerun()
                .handler(work),
            no_args("confirm_twice")
                .task(TaskSupport::Optional)
                .handler(confirm_twice),
        ];
        for tool in tools {
            server.add_tool(tool.expect("tool")).expect("add");
        }
        server
    };
    (one(), one())
}

#[tokio::test]
async fn another_replica_answers_for_a_task_and_its_answers_and_cancels_reach_the_runner() {
    let (a, b) = replicas();
    let (on_a, on_b) = (client(&a, true), client(&b, true));

    let id = create(&on_a, "confirm_twice", json!({})).await;
    let task = until(&on_b, &id, "input_required").await;
    let key = task["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("a key");
    let accept = json!({"action": "accept", "content": {"ok": true}});
    on_b.request(
        "tasks/update",
        json!({"taskId": id, "inputResponses": {key.clone(): accept.clone()}}),
    )
    .await
    .expect("update through b");
    // The runner on a took the answer and asked again, under a new key.
    let again = tokio::time::timeout(Duration::from_secs(5), async {
        loop {
            let t = until(&on_b, &id, "input_required").await;
            if t["inputRequests"].get(&key).is_none() {
                return t;
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .expect("the runner on a went on");
    let second = again["inputRequests"]
        .as_object()
        .and_then(|m| m.keys().next().cloned())
        .expect("a second key");
    on_b.request(
        "tasks/update",
        json!({"taskId": id, "inputResponses": {second: accept}}),
    )
    .await
    .expect("update through b");
    let done = until(&on_a, &id, "completed").await;
    assert_eq!(done["status"], "completed", "{done}");

    let id = create(&on_a, "work", json!({"ms": 20_000})).await;
    on_b.request("tasks/cancel", json!({"taskId": id}))
        .await
        .expect("cancel through b");
    let t = tokio::time::timeout(Duration::from_secs(5), until(&on_b, &id, "cancelled"))
        .await
        .expect("the runner on a stopped soon");
    assert_eq!(t["status"], "cancelled", "{t}");
}

#[tokio::test]
async fn a_replica_that_stops_hands_its_tasks_over_failed_or_run_again() {
    let (a, b) = replicas();
    let (on_a, on_b) = (client(&a, true), client(&b, true));
    // b watches once it has served a task request.
    let _ = get(&on_b, "none").await;
    let plain = create(&on_a, "work", json!({"ms": 20_000})).await;
    let rerun = create(&on_a, "again", json!({"ms": 400})).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    a.hand_over_tasks(Duration::ZERO).await;
    // A stopped replica takes no new task.
    let refused = on_a
        .request("tools/call", json!({"name": "work", "arguments": {}}))
        .await
        .expect_err("refused");
    assert!(format!("{refused}").contains("shutting down"), "{refused}");

    let failed = tokio::time::timeout(Duration::from_secs(5), until(&on_b, &plain, "failed"))
        .await
        .expect("b noticed the lapsed lease");
    assert_eq!(failed["status"], "failed", "{failed}");
    assert!(
        failed["error"]["message"]
            .as_str()
            .is_some_and(|m| m.contains("replica running this task stopped")),
        "{failed}"
    );
    let done = tokio::time::timeout(Duration::from_secs(5), until(&on_b, &rerun, "completed"))
        .await
        .expect("b ran it again");
    assert_eq!(done["status"], "completed", "{done}");
    assert_eq!(done["result"]["content"][0]["text"], "worked 400 ms");
}
