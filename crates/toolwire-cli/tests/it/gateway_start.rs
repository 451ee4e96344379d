//! `toolwire gateway` start-up with an upstream that is slow to answer: a
//! real `toolwire serve --http` behind a TCP gate that holds every
//! connection until the test opens it. The gateway serves the other
//! upstreams at once, the late one joins with `list_changed`, a late
//! collision leaves the served name where it was, and `toolwire gateway
//! check` still waits for every upstream.

use super::era::http_server_with;
use super::features::run;
use super::gateway::{gateway, health, names, scratch, stdio_upstream, write_config};
use serde_json::{Value, json};
use std::time::{Duration, Instant};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::watch;
use tokio::task::JoinHandle;

/// A `toolwire serve --http` upstream reachable only through a gate.
struct Gated {
    /// The upstream's URL through the gate.
    url: String,
    gate: watch::Sender<bool>,
    _server: tokio::process::Child,
    accept: JoinHandle<()>,
}

impl Gated {
    async fn start() -> Self {
        Self::start_with(&["--allow-define"]).await
    }

    /// The gate in front of `toolwire serve --http ARGS…`.
    async fn start_with(args: &[&str]) -> Self {
        let (server, url) = http_server_with(args).await;
        let rest = url.strip_prefix("http://").expect("an http URL");
        let (addr, path) = rest.split_once('/').expect("a path");
        let target = addr.to_owned();
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let gated = format!(
            "http://{}/{path}",
            listener.local_addr().expect("local addr")
        );
        let (gate, open) = watch::channel(false);
        let accept = tokio::spawn(async move {
            while let Ok((mut inbound, _)) = listener.accept().await {
                let mut open = open.clone();
                let target = target.clone();
                tokio::spawn(async move {
                    // Held, not refused: the upstream is slow, not down.
                    if open.wait_for(|o| *o).await.is_err() {
                        return;
                    }
                    if let Ok(mut outbound) = TcpStream::connect(&target).await {
                        let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
                    }
                });
            }
        });
        Self {
            url: gated,
            gate,
            _server: server,
            accept,
        }
    }

    fn open(&self) {
        let _ = self.gate.send(true);
    }
}

impl Drop for Gated {
    fn drop(&mut self) {
        self.accept.abort();
    }
}

/// Reads until a `notifications/tools/list_changed`, for at most `wait`.
async fn list_changed(gw: &mut super::support::Proc, wait: Duration) -> Value {
    tokio::time::timeout(wait, async {
        loop {
            let m = gw.next_within(wait).await.expect("a message");
            if m["method"] == "notifications/tools/list_changed" {
                return m;
            }
        }
    })
    .await
    .expect("list_changed for the late upstream")
}

#[tokio::test]
async fn a_slow_upstream_does_not_delay_serving_and_joins_with_list_changed() {
    let late = Gated::start_with(&[
        "--allow-define",
        "--ttl-ms",
        "1500",
        "--cache-scope",
        "private",
    ])
    .await;
    let dir = scratch("late");
    // The default start wait (2 s), and the default 60 s upstream timeout.
    let config = write_config(
        &dir,
        &format!(
            "start_wait_ms = 2000\n{}[upstreams.late]\nurl = {:?}\n",
            stdio_upstream("demo"),
            late.url
        ),
    );
    let started = Instant::now();
    let mut gw = gateway(&config);
    gw.request(
        1,
        "subscriptions/listen",
        json!({"notifications": {"toolsListChanged": true}}),
    )
    .await;
    let ack = gw.next().await;
    assert_eq!(ack["method"], "notifications/subscriptions/acknowledged");
    // demo's tools, at once (polled: demo itself may miss the start wait
    // on a busy machine), while the late upstream still holds back.
    let mut id = 100;
    let list = loop {
        id += 1;
        let list = gw.call(id, "tools/list", json!({})).await;
        if names(&list).len() == 8 {
            break list;
        }
        assert!(
            started.elapsed() < Duration::from_secs(8),
            "not served in time: {list}"
        );
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(
        names(&list).iter().all(|n| n.starts_with("demo__")),
        "demo's tools only: {list}"
    );
    assert_eq!(
        (&list["result"]["cacheScope"], &list["result"]["ttlMs"]),
        (&json!("public"), &json!(60_000)),
        "only the upstreams in the list decide its cache hints: {list}"
    );
    let h = health(&mut gw, 3).await;
    assert_eq!(h["upstreams"][1]["name"], "late");
    assert_eq!(h["upstreams"][1]["state"], "starting", "{h}");
    // The late upstream answers: its tools join, and the listener hears.
    late.open();
    let names = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            let note = list_changed(&mut gw, Duration::from_secs(20)).await;
            assert_eq!(
                note["params"]["_meta"]["io.modelcontextprotocol/subscriptionId"],
                1
            );
            id += 1;
            let names = names(&gw.call(id, "tools/list", json!({})).await);
            if names.len() == 16 {
                return names;
            }
        }
    })
    .await
    .expect("the late upstream's tools are listed after a list_changed");
    assert!(
        names[..8].iter().all(|n| n.starts_with("demo__")),
        "{names:?}"
    );
    assert_eq!(names[8], "late__echo", "upstream order: {names:?}");
    // The late upstream's hints now count: its lists are private, with a
    // shorter ttlMs.
    let list = gw.call(4, "tools/list", json!({})).await;
    assert_eq!(
        (&list["result"]["cacheScope"], &list["result"]["ttlMs"]),
        (&json!("private"), &json!(1_500)),
        "{list}"
    );
    let r = gw
        .call(
            5,
            "tools/call",
            json!({"name": "late__echo", "arguments": {"text": "at last"}}),
        )
        .await;
    assert_eq!(r["result"]["content"][0]["text"], "at last", "{r}");
    let h = health(&mut gw, 6).await;
    assert_eq!(h["upstreams"][1]["state"], "up", "{h}");
}

#[tokio::test]
async fn a_late_collision_leaves_the_served_name_with_its_upstream() {
    let late = Gated::start().await;
    let dir = scratch("late-collision");
    // `late` comes first in the file, so at start-up it would win "echo";
    // it answers only after `one` serves it.
    let config = write_config(
        &dir,
        &format!(
            "namespace = \"never\"\nstart_wait_ms = 300\n[upstreams.late]\nurl = {:?}\n{}[upstreams.one.tools.echo]\ndescription = \"one's echo\"\n",
            late.url,
            stdio_upstream("one"),
        ),
    );
    let mut gw = gateway(&config);
    // `one` may itself miss the short start wait on a busy machine: wait
    // for it to serve.
    let mut id = 100;
    let before = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            id += 1;
            let list = gw.call(id, "tools/list", json!({})).await;
            if names(&list).len() == 8 {
                return list;
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("`one` serves");
    assert_eq!(before["result"]["tools"][0]["description"], "one's echo");
    late.open();
    let problems = tokio::time::timeout(Duration::from_secs(20), async {
        loop {
            id += 1;
            let h = health(&mut gw, id).await;
            if h["problems"].as_array().is_some_and(|p| !p.is_empty()) {
                return h["problems"].clone();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    })
    .await
    .expect("the late upstream answers and its duplicates are reported");
    let first = problems[0].as_str().expect("a problem");
    assert!(
        first.contains("\"one\" and \"late\"") && first.contains("\"late\"'s is left out"),
        "{problems}"
    );
    let after = gw.call(2, "tools/list", json!({})).await;
    assert_eq!(
        after["result"]["tools"], before["result"]["tools"],
        "every name stays with `one`; the late upstream's duplicates are left out"
    );
}

#[tokio::test]
async fn check_waits_for_a_slow_upstream() {
    let late = Gated::start().await;
    let dir = scratch("late-check");
    let config = write_config(
        &dir,
        &format!(
            "start_wait_ms = 100\n{}[upstreams.late]\nurl = {:?}\n",
            stdio_upstream("demo"),
            late.url
        ),
    );
    let gate = late.gate.clone();
    let opener = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(1500)).await;
        let _ = gate.send(true);
    });
    let (ok, out, err) = run(&["gateway", "check", "--config", &config]).await;
    opener.await.expect("opener");
    assert!(ok, "{out}{err}");
    assert!(out.contains("\nlate__echo "), "{out}");
    assert!(out.contains("16 tools, about "), "{out}");
}

#[tokio::test]
async fn renames_to_one_name_with_namespace_never_refuse_to_start() {
    let dir = scratch("rename-collision");
    // Unreachable upstreams: the configuration alone is wrong.
    let config = write_config(
        &dir,
        "namespace = \"never\"\n[upstreams.a]\nurl = \"http://127.0.0.1:9/mcp\"\n[upstreams.a.tools.echo]\nname = \"say\"\n[upstreams.b]\nurl = \"http://127.0.0.1:9/mcp\"\n[upstreams.b.tools.shout]\nname = \"say\"\n",
    );
    let (ok, _, err) = run(&["gateway", "--config", &config]).await;
    assert!(!ok);
    assert!(
        err.contains("\"say\"") && err.contains("\"a\"") && err.contains("\"b\""),
        "{err}"
    );
}

#[tokio::test]
async fn start_up_says_of_each_upstream_serving_starting_or_down_and_an_early_call_how_to_wait() {
    let late = Gated::start().await;
    let closed = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
        l.local_addr().expect("addr")
    };
    let dir = scratch("start-lines");
    let config = write_config(
        &dir,
        &format!(
            "start_wait_ms = 1500\n{}[upstreams.late]\nurl = {:?}\n[upstreams.gone]\nurl = \"http://{closed}/mcp\"\n",
            stdio_upstream("demo"),
            late.url
        ),
    );
    let mut child = tokio::process::Command::new(env!("CARGO_BIN_EXE_toolwire"))
        .args(["gateway", "--config", &config])
        .env_remove("TOOLWIRE_LOG")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn the gateway");
    let stderr = child.stderr.take().expect("stderr");
    let mut lines = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stderr));
    let mut said: Vec<String> = Vec::new();
    let want = |said: &[String], upstream: &str, what: &str| {
        said.iter()
            .any(|l| l.contains(&format!("upstream=\"{upstream}\"")) && l.contains(what))
    };
    let all = |said: &[String]| {
        want(said, "demo", "serving: 8 tools")
            && want(
                said,
                "late",
                "starting: no answer within start_wait_ms = 1500",
            )
            && want(said, "gone", "upstream down")
    };
    tokio::time::timeout(Duration::from_secs(20), async {
        while !all(&said) {
            match lines.next_line().await.expect("stderr") {
                Some(line) => said.push(line),
                None => break,
            }
        }
    })
    .await
    .unwrap_or_else(|_| panic!("one line for each upstream at start-up: {said:#?}"));
    assert!(all(&said), "{said:#?}");
    // An early call to the late upstream says how to wait longer for it.
    let mut stdin = child.stdin.take().expect("stdin");
    let stdout = child.stdout.take().expect("stdout");
    let mut out = tokio::io::AsyncBufReadExt::lines(tokio::io::BufReader::new(stdout));
    let call = json!({"jsonrpc": "2.0", "id": 1, "method": "tools/call",
        "params": {"name": "late__echo", "arguments": {"text": "x"},
                   "_meta": crate::support::meta()}});
    tokio::io::AsyncWriteExt::write_all(&mut stdin, format!("{call}\n").as_bytes())
        .await
        .expect("write");
    let answer: Value = serde_json::from_str(
        &tokio::time::timeout(Duration::from_secs(10), out.next_line())
            .await
            .expect("in time")
            .expect("stdout")
            .expect("a line"),
    )
    .expect("JSON");
    let message = answer["error"]["message"].as_str().unwrap_or_default();
    assert!(
        message.contains("has not answered yet") && message.contains("raise start_wait_ms"),
        "{answer}"
    );
    drop(late);
}
