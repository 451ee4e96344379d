//! `toolwire gateway` end to end: real `toolwire serve` upstreams over stdio
//! and HTTP behind the real gateway binary, driven over stdio and HTTP by
//! raw JSON-RPC, by `toolwire call`, and by toolwire's client.

use super::era::http_server;
use super::features::run;
use super::support::Proc;
use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};
use toolwire::proto::types::{ClientCapabilities, ElicitationCapability, ResultOrInputRequired};
use toolwire::{Client, RequestOptions, ToolCall};

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

/// A scratch directory for one test's configuration and logs.
pub(super) fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("toolwire-gw-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// Writes `text` as `gateway.toml`. Unless it sets `start_wait_ms`, the
/// gateway waits up to 30 s for its upstreams before serving, so a test
/// that lists at once sees every upstream even on a busy machine (a Node
/// or Python upstream can take seconds to start); the tests of a late
/// upstream set a short wait themselves.
pub(super) fn write_config(dir: &Path, text: &str) -> String {
    let path = dir.join("gateway.toml");
    let text = if text.contains("start_wait_ms") {
        text.to_owned()
    } else {
        format!("start_wait_ms = 30000\n{text}")
    };
    std::fs::write(&path, text).expect("write config");
    path.display().to_string()
}

/// `[upstreams.NAME]` for a stdio `toolwire serve`.
pub(super) fn stdio_upstream(name: &str) -> String {
    format!("[upstreams.{name}]\ncommand = [{BIN:?}, \"serve\"]\n")
}

/// `toolwire gateway --config CONFIG` over stdio.
pub(super) fn gateway(config: &str) -> Proc {
    Proc::spawn_command(&["gateway", "--config", config], &[])
}

/// `toolwire gateway --config CONFIG --http 127.0.0.1:0` and its URL.
pub(super) async fn gateway_http(config: &str, envs: &[(&str, &str)]) -> (Child, String) {
    gateway_http_with(config, &["--http", "127.0.0.1:0"], envs).await
}

/// `toolwire gateway --config CONFIG ARGS…` (which serve HTTP) and its URL.
pub(super) async fn gateway_http_with(
    config: &str,
    args: &[&str],
    envs: &[(&str, &str)],
) -> (Child, String) {
    let mut child = Command::new(BIN)
        .args(["gateway", "--config", config])
        .args(args)
        .env_remove("TOOLWIRE_STATE_KEYS")
        .envs(envs.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn toolwire gateway --http");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let url = tokio::time::timeout(Duration::from_secs(30), async {
        while let Some(line) = lines.next_line().await.expect("stderr line") {
            if let Some(url) = line.split("serving MCP at ").nth(1) {
                return url.trim().to_owned();
            }
        }
        panic!("the gateway exited before printing its URL")
    })
    .await
    .expect("the gateway starts in time");
    tokio::spawn(async move { while let Ok(Some(_)) = lines.next_line().await {} });
    (child, url)
}

pub(super) fn names(list: &Value) -> Vec<String> {
    list["result"]["tools"]
        .as_array()
        .expect("tools")
        .iter()
        .map(|t| t["name"].as_str().expect("name").to_owned())
        .collect()
}

#[tokio::test]
async fn names_are_prefixed_in_upstream_order_and_results_pass_through() {
    let (_web, url) = http_server().await;
    let dir = scratch("names");
    let config = write_config(
        &dir,
        &format!(
            "{}\n[upstreams.web]\nurl = {url:?}\nallow = [\"add\", \"echo\"]\n[upstreams.web.tools.echo]\nname = \"say\"\ndescription = \"Says it back\"\n",
            stdio_upstream("demo")
        ),
    );
    let mut gw = gateway(&config);
    let list = gw.call(1, "tools/list", json!({})).await;
    let names = names(&list);
    assert_eq!(
        names,
        [
            "demo__echo",
            "demo__add",
            "demo__countdown",
            "demo__regional_echo",
            "demo__confirm_action",
            "demo__define_tool",
            "demo__undefine_tool",
            "demo__report",
            "web__say",
            "web__add",
        ],
        "upstream order, then each upstream's order; filtered and renamed"
    );
    let say = &list["result"]["tools"][8];
    assert_eq!(say["description"], "Says it back");
    let r = gw
        .call(
            2,
            "tools/call",
            json!({"name": "web__add", "arguments": {"a": 1, "b": 2}}),
        )
        .await;
    assert_eq!(r["result"]["structuredContent"], json!({"sum": 3.0}), "{r}");
    assert_eq!(r["result"]["content"][0]["text"], "{\"sum\":3.0}");
    let r = gw
        .call(
            3,
            "tools/call",
            json!({"name": "web__say", "arguments": {"text": "hi"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "hi", "{r}");
    let r = gw
        .call(
            4,
            "tools/call",
            json!({"name": "web__countdown", "arguments": {"steps": 1, "interval_ms": 0}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "denied by allow: unknown: {r}");
}

#[tokio::test]
async fn progress_and_logs_are_relayed_under_the_downstream_token() {
    let dir = scratch("progress");
    let config = write_config(&dir, &stdio_upstream("demo"));
    let mut gw = gateway(&config);
    gw.request(
        1,
        "tools/call",
        json!({
            "name": "demo__countdown",
            "arguments": {"steps": 2, "interval_ms": 10},
            "_meta": {"progressToken": "down-1", "io.modelcontextprotocol/logLevel": "debug"}
        }),
    )
    .await;
    let (r, notes) = gw.response(1).await;
    assert_eq!(
        r["result"]["content"][0]["text"], "done after 2 steps",
        "{r}"
    );
    let progress: Vec<&Value> = notes
        .iter()
        .filter(|n| n["method"] == "notifications/progress")
        .collect();
    assert_eq!(progress.len(), 2, "{notes:?}");
    assert!(
        progress
            .iter()
            .all(|p| p["params"]["progressToken"] == "down-1")
    );
    assert_eq!(progress[1]["params"]["progress"], 2.0);
    let logs = notes
        .iter()
        .filter(|n| n["method"] == "notifications/message")
        .count();
    assert_eq!(logs, 2, "{notes:?}");
}

#[tokio::test]
async fn cancellation_reaches_the_upstream() {
    let dir = scratch("cancel");
    let log = dir.join("upstream-input.log");
    // The upstream's stdin is copied to a file on its way in, so the test
    // sees what the gateway sent it.
    let config = write_config(
        &dir,
        &format!(
            "[upstreams.demo]\ncommand = [\"sh\", \"-c\", {:?}]\n",
            format!("tee {:?} | '{BIN}' serve", log.display().to_string())
        ),
    );
    let mut gw = gateway(&config);
    gw.request(
        7,
        "tools/call",
        json!({"name": "demo__countdown", "arguments": {"steps": 100, "interval_ms": 100}}),
    )
    .await;
    tokio::time::sleep(Duration::from_millis(500)).await;
    gw.send(
        &json!({"jsonrpc": "2.0", "method": "notifications/cancelled", "params": {"requestId": 7}}),
    )
    .await;
    // A cancelled request gets no response.
    let seen = gw.drain(Duration::from_millis(800)).await;
    assert!(
        seen.iter().all(|m| m.get("id") != Some(&json!(7))),
        "{seen:?}"
    );
    let sent = std::fs::read_to_string(&log).expect("upstream input log");
    let call_id = sent
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .find(|m| m["method"] == "tools/call")
        .map(|m| m["id"].clone())
        .expect("the call reached the upstream");
    let cancelled = sent
        .lines()
        .filter_map(|l| serde_json::from_str::<Value>(l).ok())
        .any(|m| m["method"] == "notifications/cancelled" && m["params"]["requestId"] == call_id);
    assert!(cancelled, "no cancellation upstream:\n{sent}");
}

#[tokio::test]
async fn confirm_action_through_the_gateway_from_both_eras() {
    let dir = scratch("confirm");
    let config = write_config(&dir, &stdio_upstream("demo"));
    let gw = format!("'{BIN}' gateway --config '{config}'");
    for era in ["modern", "legacy"] {
        let (ok, out, err) = run(&[
            "call",
            "--protocol",
            era,
            "--stdio",
            &gw,
            "demo__confirm_action",
            "action=deploy",
            "--input",
            "*={\"confirm\": true}",
        ])
        .await;
        assert!(ok, "{era}: {err}");
        assert_eq!(out.trim(), "confirmed: deploy", "{era}");
        let (ok, _, err) = run(&[
            "call",
            "--protocol",
            era,
            "--stdio",
            &gw,
            "demo__confirm_action",
            "action=deploy",
            "--input",
            "*=decline",
        ])
        .await;
        // An isError result: its text on stderr, and a failure.
        assert!(!ok, "{era}: a declined confirmation is an isError result");
        // (after the gateway's start-up lines, on the stderr it shares)
        assert!(err.contains("\nnot confirmed: deploy\n"), "{era}: {err}");
    }
}

#[tokio::test]
async fn an_upstream_list_change_reaches_a_downstream_listener() {
    let dir = scratch("listen");
    let config = write_config(&dir, &stdio_upstream("demo"));
    let mut listener = gateway(&config);
    listener
        .request(
            1,
            "subscriptions/listen",
            json!({"notifications": {"toolsListChanged": true}}),
        )
        .await;
    let ack = listener.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    let r = listener
        .call(
            2,
            "tools/call",
            json!({"name": "demo__define_tool", "arguments": {"name": "fresh", "text": "new"}}),
        )
        .await;
    assert!(r["result"]["isError"] != true, "{r}");
    let note = tokio::time::timeout(Duration::from_secs(10), async {
        loop {
            let m = listener.next().await;
            if m["method"] == "notifications/tools/list_changed" {
                return m;
            }
        }
    })
    .await
    .expect("list_changed relayed");
    assert_eq!(
        note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
        1
    );
    let list = listener.call(3, "tools/list", json!({})).await;
    assert!(names(&list).contains(&"demo__fresh".to_owned()), "{list}");
    let r = listener
        .call(
            4,
            "tools/call",
            json!({"name": "demo__fresh", "arguments": {}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "new", "{r}");
}

/// The `gateway://health` report.
pub(super) async fn health(gw: &mut Proc, id: i64) -> Value {
    let r = gw
        .call(id, "resources/read", json!({"uri": "gateway://health"}))
        .await;
    let text = r["result"]["contents"][0]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("health: {r}"));
    serde_json::from_str(text).expect("health JSON")
}

#[tokio::test]
async fn a_killed_stdio_upstream_is_restarted_and_its_tools_come_back() {
    let dir = scratch("restart");
    let pid_file = dir.join("pid");
    let config = write_config(
        &dir,
        &format!(
            "[upstreams.demo]\ncommand = [\"sh\", \"-c\", {:?}]\n",
            format!(
                "echo $$ > {:?}; exec '{BIN}' serve",
                pid_file.display().to_string()
            )
        ),
    );
    let mut gw = gateway(&config);
    let h = health(&mut gw, 1).await;
    assert_eq!(h["upstreams"][0]["state"], "up", "{h}");
    let first = std::fs::read_to_string(&pid_file).expect("pid");
    let status = std::process::Command::new("kill")
        .args(["-KILL", first.trim()])
        .status()
        .expect("kill");
    assert!(status.success());
    let mut id = 10;
    let h = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            id += 1;
            let h = health(&mut gw, id).await;
            if h["upstreams"][0]["state"] == "up" && h["upstreams"][0]["restarts"] == 1 {
                return h;
            }
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
    })
    .await
    .expect("restarted in time");
    assert!(
        h["upstreams"][0]["last_error"]
            .as_str()
            .is_some_and(|e| e.contains("closed")),
        "{h}"
    );
    let second = std::fs::read_to_string(&pid_file).expect("pid");
    assert_ne!(first, second, "a new process");
    let list = gw.call(100, "tools/list", json!({})).await;
    assert!(names(&list).contains(&"demo__echo".to_owned()), "{list}");
    let r = gw
        .call(
            101,
            "tools/call",
            json!({"name": "demo__echo", "arguments": {"text": "back"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "back", "{r}");
}

#[tokio::test]
async fn a_hanging_http_upstream_times_out_naming_the_upstream() {
    let (_web, url) = http_server().await;
    // A second "upstream" that accepts connections and never answers.
    let silent = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let silent_url = format!("http://{}/mcp", silent.local_addr().expect("addr"));
    let hold = tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((s, _)) = silent.accept().await {
            held.push(s);
        }
    });
    let dir = scratch("hang");
    let config = write_config(
        &dir,
        &format!(
            "[upstreams.slow]\nurl = {url:?}\ntimeout_ms = 400\n[upstreams.mute]\nurl = {silent_url:?}\ntimeout_ms = 300\n"
        ),
    );
    let mut gw = gateway(&config);
    // A call that outlives the upstream's limit.
    let r = gw
        .call(
            1,
            "tools/call",
            json!({"name": "slow__countdown", "arguments": {"steps": 1, "interval_ms": 5000}}),
        )
        .await;
    assert_eq!(r["result"]["isError"], true, "{r}");
    let text = r["result"]["content"][0]["text"].as_str().expect("text");
    assert!(
        text.contains("\"slow\"") && text.contains("400 ms"),
        "{text}"
    );
    // The silent one never listed: it is down, named in the health, and
    // the other upstream's tools are served.
    let h = health(&mut gw, 2).await;
    assert_eq!(h["upstreams"][1]["name"], "mute");
    assert_eq!(h["upstreams"][1]["state"], "down", "{h}");
    let list = gw.call(3, "tools/list", json!({})).await;
    assert!(
        names(&list).iter().all(|n| n.starts_with("slow__")),
        "{list}"
    );
    hold.abort();
}

#[tokio::test]
async fn two_replicas_with_one_keyring_continue_each_others_rounds() {
    let dir = scratch("replicas");
    let config = write_config(&dir, &stdio_upstream("demo"));
    let keys = [(
        "TOOLWIRE_STATE_KEYS",
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
    )];
    let (_a, url_a) = gateway_http(&config, &keys).await;
    let (_b, url_b) = gateway_http(&config, &keys).await;
    let elicit = ClientCapabilities {
        elicitation: Some(ElicitationCapability::default()),
        ..ClientCapabilities::default()
    };
    let call = ToolCall::new("demo__confirm_action")
        .with_argument("action", json!("ship"))
        .with_options(RequestOptions::new().with_client_capabilities(&elicit));
    let a = Client::connect_http(&url_a).expect("client a");
    let b = Client::connect_http(&url_b).expect("client b");
    let ResultOrInputRequired::InputRequired(ir) =
        a.call_tool_once(call.clone()).await.expect("round 1")
    else {
        panic!("confirm_action asks first")
    };
    assert!(ir.request_state.is_some());
    let mut answers = serde_json::Map::new();
    let key = ir
        .input_requests
        .as_ref()
        .and_then(|r| r.keys().next().cloned())
        .expect("an input request");
    answers.insert(
        key,
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    let ResultOrInputRequired::Complete(done) = b
        .call_tool_once(call.retry(&ir, answers.clone()))
        .await
        .expect("round 2 on the other replica")
    else {
        panic!("complete after the answer")
    };
    let text = serde_json::to_value(&done.content).expect("content");
    assert_eq!(text[0]["text"], "confirmed: ship");
    // A replica with another keyring refuses the state.
    let (_c, url_c) = gateway_http(
        &config,
        &[(
            "TOOLWIRE_STATE_KEYS",
            "HxwdHh8AAQIDBAUGBwgJCgsMDQ4PEBESExQVFhcYGRo=",
        )],
    )
    .await;
    let c = Client::connect_http(&url_c).expect("client c");
    let e = c
        .call_tool_once(call.retry(&ir, answers))
        .await
        .expect_err("foreign state");
    assert_eq!(e.rpc().map(|e| e.code.0), Some(-32602), "{e}");
}

#[tokio::test]
async fn namespace_never_refuses_duplicates_naming_both_upstreams() {
    let dir = scratch("never");
    let config = write_config(
        &dir,
        &format!(
            "namespace = \"never\"\n{}{}",
            stdio_upstream("one"),
            stdio_upstream("two")
        ),
    );
    let (ok, _, err) = run(&["gateway", "--config", &config]).await;
    assert!(!ok);
    assert!(
        err.contains("\"echo\"") && err.contains("\"one\"") && err.contains("\"two\""),
        "{err}"
    );
}

#[tokio::test]
async fn unknown_config_keys_are_named_with_their_line() {
    let dir = scratch("unknown");
    let config = write_config(
        &dir,
        &format!(
            "start_wait_ms = 10\n{}timeout = 5\n",
            stdio_upstream("demo")
        ),
    );
    let (ok, _, err) = run(&["gateway", "--config", &config]).await;
    assert!(!ok);
    assert!(err.contains("timeout") && err.contains("line 4"), "{err}");
}

#[tokio::test]
async fn check_prints_the_table_and_what_dialects_reject() {
    let dir = scratch("check");
    let config = write_config(
        &dir,
        &format!(
            "{}[upstreams.demo.tools.echo]\nname = \"say.it\"\n",
            stdio_upstream("demo")
        ),
    );
    let (ok, out, err) = run(&["gateway", "check", "--config", &config]).await;
    assert!(!ok, "a dotted name is a problem: {out}{err}");
    let say = out
        .lines()
        .find(|l| l.starts_with("demo__say.it "))
        .unwrap_or_else(|| panic!("{out}"));
    assert!(say.contains("OpenAI: name contains '.'"), "{say}");
    assert!(say.contains("Anthropic"), "{say}");
    assert!(!say.contains("Gemini"), "{say}");
    let add = out
        .lines()
        .find(|l| l.starts_with("demo__add "))
        .expect("add row");
    assert!(add.trim_end().ends_with(" -"), "{add}");
    assert!(out.contains("fingerprint: "), "{out}");
    let clean = write_config(&dir, &stdio_upstream("demo"));
    let (ok, out, err) = run(&["gateway", "check", "--config", &clean]).await;
    assert!(ok, "{out}{err}");
    assert!(out.contains("8 tools, about "), "{out}");
}

#[tokio::test]
async fn a_down_upstream_is_left_out_or_fails_the_list_when_fail_closed() {
    // A port nothing listens on: connections are refused.
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    let down = format!("[upstreams.gone]\nurl = \"http://{closed}/mcp\"\n");
    let dir = scratch("failclosed");
    let open = write_config(&dir, &format!("{}{down}", stdio_upstream("demo")));
    let mut gw = gateway(&open);
    let list = gw.call(1, "tools/list", json!({})).await;
    assert_eq!(names(&list).len(), 8, "demo's tools only: {list}");
    assert_eq!(
        list["result"]["cacheScope"], "public",
        "only the upstreams in the list decide its cache hints"
    );
    // A call to the down upstream's tool says which upstream and why.
    let r = gw
        .call(
            9,
            "tools/call",
            json!({"name": "gone__echo", "arguments": {"text": "x"}}),
        )
        .await;
    assert_eq!(r["error"]["code"], -32602, "{r}");
    let message = r["error"]["message"].as_str().expect("message");
    assert!(
        message.contains("upstream \"gone\" is unavailable"),
        "{message}"
    );
    assert_eq!(r["error"]["data"]["name"], "gone__echo");
    let closed_config = dir.join("closed.toml");
    std::fs::write(
        &closed_config,
        format!("fail_closed = true\n{}{down}", stdio_upstream("demo")),
    )
    .expect("write");
    let mut gw = gateway(&closed_config.display().to_string());
    let list = gw.call(1, "tools/list", json!({})).await;
    assert_eq!(list["error"]["code"], -32603, "{list}");
    let message = list["error"]["message"].as_str().expect("message");
    assert!(message.contains("\"gone\""), "{message}");
    // Calls to the healthy upstream still work.
    let r = gw
        .call(
            2,
            "tools/call",
            json!({"name": "demo__echo", "arguments": {"text": "still"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "still", "{r}");
}

#[tokio::test]
async fn resources_templates_and_completion_are_namespaced_and_routed() {
    let dir = scratch("resources");
    let config = write_config(
        &dir,
        &format!("{}{}", stdio_upstream("demo"), stdio_upstream("two")),
    );
    let mut gw = gateway(&config);
    let list = gw.call(1, "resources/list", json!({})).await;
    let uris: Vec<&str> = list["result"]["resources"]
        .as_array()
        .expect("resources")
        .iter()
        .map(|r| r["uri"].as_str().expect("uri"))
        .collect();
    assert_eq!(
        uris,
        [
            "gateway://health",
            "gateway://demo/demo://readme",
            "gateway://two/demo://readme"
        ]
    );
    let templates = gw.call(2, "resources/templates/list", json!({})).await;
    assert_eq!(
        templates["result"]["resourceTemplates"][1]["uriTemplate"],
        "gateway://two/demo://greeting/{name}",
        "{templates}"
    );
    let r = gw
        .call(
            3,
            "resources/read",
            json!({"uri": "gateway://two/demo://greeting/ann"}),
        )
        .await;
    let contents = &r["result"]["contents"][0];
    assert_eq!(contents["text"], "Hello, ann!", "{r}");
    assert_eq!(
        contents["uri"], "gateway://two/demo://greeting/ann",
        "contents carry the exposed URI"
    );
    let r = gw
        .call(
            4,
            "completion/complete",
            json!({
                "ref": {"type": "ref/resource", "uri": "gateway://demo/demo://greeting/{name}"},
                "argument": {"name": "name", "value": "al"}
            }),
        )
        .await;
    assert_eq!(
        r["result"]["completion"]["values"],
        json!(["alice", "albert"]),
        "{r}"
    );
    let r = gw
        .call(
            5,
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": "two__greet"},
                "argument": {"name": "name", "value": "b"}
            }),
        )
        .await;
    assert_eq!(r["result"]["completion"]["values"], json!(["bob"]), "{r}");
    let r = gw
        .call(
            6,
            "prompts/get",
            json!({"name": "two__greet", "arguments": {"name": "ann"}}),
        )
        .await;
    let text = r["result"]["messages"][0]["content"]["text"]
        .as_str()
        .unwrap_or_else(|| panic!("{r}"));
    assert!(text.contains("ann"), "{text}");
}

#[tokio::test]
async fn a_legacy_upstreams_elicitation_becomes_input_required_held_in_its_replica() {
    let dir = scratch("held");
    let config = write_config(
        &dir,
        &format!("[upstreams.old]\ncommand = [{BIN:?}, \"serve\"]\nprotocol = \"legacy\"\n"),
    );
    let gw = format!("'{BIN}' gateway --config '{config}'");
    let (ok, out, err) = run(&[
        "call",
        "--stdio",
        &gw,
        "old__confirm_action",
        "action=deploy",
        "--input",
        "*={\"confirm\": true}",
    ])
    .await;
    assert!(ok, "{err}");
    assert_eq!(out.trim(), "confirmed: deploy");
    let (ok, _, err) = run(&[
        "call",
        "--stdio",
        &gw,
        "old__confirm_action",
        "action=deploy",
        "--input",
        "*=decline",
    ])
    .await;
    assert!(!ok);
    assert!(err.contains("\nnot confirmed: deploy\n"), "{err}");
    // The retry must come back to the replica that holds the upstream
    // call; another replica with the same keyring says so.
    let keys = [(
        "TOOLWIRE_STATE_KEYS",
        "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
    )];
    let (_a, url_a) = gateway_http(&config, &keys).await;
    let (_b, url_b) = gateway_http(&config, &keys).await;
    let elicit = ClientCapabilities {
        elicitation: Some(ElicitationCapability::default()),
        ..ClientCapabilities::default()
    };
    let call = ToolCall::new("old__confirm_action")
        .with_argument("action", json!("ship"))
        .with_options(RequestOptions::new().with_client_capabilities(&elicit));
    let a = Client::connect_http(&url_a).expect("client a");
    let b = Client::connect_http(&url_b).expect("client b");
    let ResultOrInputRequired::InputRequired(ir) =
        a.call_tool_once(call.clone()).await.expect("round 1")
    else {
        panic!("the upstream's elicitation comes down as input_required")
    };
    let mut answers = serde_json::Map::new();
    answers.insert(
        "elicitation".into(),
        json!({"action": "accept", "content": {"confirm": true}}),
    );
    let e = b
        .call_tool_once(call.retry(&ir, answers.clone()))
        .await
        .expect_err("another replica does not hold the call");
    let rpc = e.rpc().expect("a JSON-RPC error");
    assert_eq!(rpc.code.0, -32602);
    assert!(
        rpc.message.contains("not held by this gateway replica"),
        "{}",
        rpc.message
    );
    let ResultOrInputRequired::Complete(done) = a
        .call_tool_once(call.retry(&ir, answers))
        .await
        .expect("round 2 on the owning replica")
    else {
        panic!("complete")
    };
    let content = serde_json::to_value(&done.content).expect("content");
    assert_eq!(content[0]["text"], "confirmed: ship");
}

#[tokio::test]
async fn serve_options_that_do_not_apply_are_neither_shown_nor_taken() {
    let (ok, help, _) = super::features::run(&["gateway", "--help"]).await;
    assert!(ok);
    assert!(
        help.contains("--config") && help.contains("--bus"),
        "{help}"
    );
    for flag in [
        "--allow-define",
        "--define-scope",
        "--tasks ",
        "--task-grace-ms",
    ] {
        assert!(!help.contains(flag), "{flag} in gateway --help:\n{help}");
    }
    let (_, serve_help, _) = super::features::run(&["serve", "--help"]).await;
    assert!(serve_help.contains("--allow-define") && serve_help.contains("--task-grace-ms"));
    let dir = scratch("not-for-gateway");
    let config = write_config(&dir, &stdio_upstream("demo"));
    for (flag, args) in [
        (
            "--allow-define",
            &["--http", "127.0.0.1:0", "--allow-define"][..],
        ),
        (
            "--define-scope",
            &[
                "--http",
                "127.0.0.1:0",
                "--auth-issuer",
                "https://as.example",
                "--define-scope",
                "admin",
            ],
        ),
        ("--tasks", &["--tasks", "redis://127.0.0.1:1"]),
        ("--task-grace-ms", &["--task-grace-ms", "5"]),
    ] {
        let mut all = vec!["gateway", "--config", &config];
        all.extend_from_slice(args);
        let (ok, _, err) = super::features::run(&all).await;
        assert!(!ok, "{flag} is refused");
        assert!(
            err.contains(&format!("{flag} does not apply to `toolwire gateway`")),
            "{flag}: {err}"
        );
    }
}
