//! What tasks (the `io.modelcontextprotocol/tasks` extension) cost, in
//! process, through the server's whole pipeline (`toolwire::testing`):
//!
//! - `bench-tasks http ADDR MODE N`: N sequential calls over one
//!   keep-alive HTTP connection to `bench-toolwire --tasks` (which
//!   `bench/tasks.sh` profiles with callgrind, twice, taking the
//!   difference). MODE is `plain` (`noop`, a tool that never runs as a
//!   task), `optional` (`quick`, which may, from a client that did not
//!   declare the extension: a plain call) or `task` (`quick` from a
//!   declaring client: the task is created, then read once with
//!   `tasks/get`).
//! - `bench-tasks memory N`: the resident memory of N live tasks, as
//!   records in a `MemoryTaskStore` and through a server (each with its
//!   runner and a handler waiting to be cancelled), and the CPU of one
//!   `tasks/get` with 1 and with N live tasks.
//! - `bench-tasks stores N`: against a real `redis-server` and
//!   `nats-server -js` it starts on free loopback ports, p50/p99 of
//!   create-to-visible (created through one connection, found by another's
//!   `get`) and of update-to-handler (two servers sharing the store and
//!   the bus: `tasks/update` through one reaches the handler waiting on
//!   the other).

use serde_json::{Value, json};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::sync::mpsc;
use toolwire::proto::types::{ClientCapabilities, InputResponses, TaskState};
use toolwire::task::{
    CreateLimits, MemoryTaskStore, TaskOptions, TaskRecord, TaskStore, TaskSupport, now_ms,
};
use toolwire::testing::TestClient;
use toolwire::{
    ElicitAnswer, InputRequired, RequestContext, Server, ServerConfig, Tool, ToolResult,
};
use toolwire_bench::client::{self, Http};

const TASKS: &str = "io.modelcontextprotocol/tasks";

fn capabilities(tasks: bool) -> ClientCapabilities {
    let mut caps = json!({"elicitation": {"form": {}}});
    if tasks {
        caps["extensions"] = json!({ TASKS: {} });
    }
    serde_json::from_value(caps).expect("capabilities")
}

fn no_args(name: &str) -> toolwire::ToolBuilder {
    Tool::builder(name).input_schema(json!({"type": "object"}))
}

/// `plain` (never a task), `quick` (optional, answers at once) and `held`
/// (optional, waits to be cancelled).
fn server(options: TaskOptions) -> Server {
    let server = Server::new(ServerConfig::new("bench-tasks", "0").with_tasks(options));
    let tools = [
        no_args("plain").handler(|_: Value, _| async { "ok" }),
        no_args("quick")
            .task(TaskSupport::Optional)
            .handler(|_: Value, _| async { "ok" }),
        no_args("held").task(TaskSupport::Optional).handler(
            |_: Value, cx: RequestContext| async move {
                cx.cancelled().await;
                "stopped"
            },
        ),
    ];
    for tool in tools {
        server.add_tool(tool.expect("tool")).expect("add");
    }
    server
}

async fn call(c: &TestClient, tool: &str) -> Value {
    c.request("tools/call", json!({"name": tool, "arguments": {}}))
        .await
        .expect("tools/call")
}

/// This process's CPU time, every thread's.
fn cpu() -> Duration {
    client::cpu(Some(std::process::id()))
}

/// This process's resident memory, in bytes.
fn rss() -> u64 {
    client::rss(None, false)
}

fn caps(tasks: bool) -> Value {
    serde_json::to_value(capabilities(tasks)).expect("capabilities")
}

async fn http(addr: &str, mode: &str, n: usize) {
    let mut c = Http::connect(addr).await;
    for _ in 0..n {
        match mode {
            "plain" => {
                c.post(
                    "tools/call",
                    "noop",
                    json!({"name": "noop", "arguments": {}}),
                    caps(false),
                )
                .await;
            }
            "optional" => {
                c.post(
                    "tools/call",
                    "quick",
                    json!({"name": "quick", "arguments": {}}),
                    caps(false),
                )
                .await;
            }
            "task" => {
                let created = c
                    .post(
                        "tools/call",
                        "quick",
                        json!({"name": "quick", "arguments": {}}),
                        caps(true),
                    )
                    .await;
                let id = created["taskId"].as_str().expect("a task").to_owned();
                c.post("tasks/get", &id, json!({"taskId": id}), caps(true))
                    .await;
            }
            other => panic!("mode {other:?}: plain | optional | task"),
        }
    }
    println!("{mode}: {n} calls");
}

fn record(id: String) -> TaskRecord {
    let now = now_ms();
    TaskRecord {
        id,
        owner: Some("https://issuer user".to_owned()),
        client: None,
        tool: "held".to_owned(),
        state: TaskState::Working,
        status_message: Some("working on it".to_owned()),
        created_ms: now,
        updated_ms: now,
        ttl_ms: 3_600_000,
        poll_interval_ms: 1000,
        answers: InputResponses::new(),
        cancel_requested: false,
        lease: None,
        rerun: None,
    }
}

/// CPU per `tasks/get` of one task among those `server` holds.
async fn get_cost(client: &TestClient, id: &str, gets: u32) -> Duration {
    let start = cpu();
    for _ in 0..gets {
        client
            .request("tasks/get", json!({"taskId": id}))
            .await
            .expect("tasks/get");
    }
    (cpu() - start) / gets
}

async fn memory(n: usize) {
    let limits = CreateLimits {
        per_owner: n,
        total: n,
    };
    let before = rss();
    let store = MemoryTaskStore::new();
    for i in 0..n {
        store
            .create(record(format!("t{i:022}")), limits)
            .await
            .expect("create");
    }
    let records = rss().saturating_sub(before);
    println!(
        "store: {n} records: {:.1} MB resident ({} bytes each)",
        records as f64 / 1e6,
        records / n as u64
    );
    drop(store);

    // Through a server: every task with its runner and a handler waiting.
    let gets = 20_000;
    let one = server(TaskOptions::new());
    let c1 = TestClient::new(&one).with_capabilities(capabilities(true));
    let id1 = call(&c1, "held").await["taskId"]
        .as_str()
        .expect("task")
        .to_owned();
    let at_one = get_cost(&c1, &id1, gets).await;
    let before = rss();
    let many = server(TaskOptions::new().max_tasks(n, n));
    let c = TestClient::new(&many).with_capabilities(capabilities(true));
    let mut last = String::new();
    for _ in 0..n {
        last = call(&c, "held").await["taskId"]
            .as_str()
            .expect("task")
            .to_owned();
    }
    let live = rss().saturating_sub(before);
    println!(
        "server: {n} live tasks (runner + waiting handler each): {:.1} MB resident ({} bytes each)",
        live as f64 / 1e6,
        live / n as u64
    );
    let at_n = get_cost(&c, &last, gets).await;
    println!(
        "tasks/get CPU: {:.2} µs with 1 live task, {:.2} µs with {n} ({:.2}×)",
        at_one.as_secs_f64() * 1e6,
        at_n.as_secs_f64() * 1e6,
        at_n.as_secs_f64() / at_one.as_secs_f64()
    );
}

/// A loopback port nothing listens on now.
fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .and_then(|l| l.local_addr())
        .map(|a| a.port())
        .expect("a free port")
}

/// A server process, killed on drop.
struct Proc(Child, std::path::PathBuf);

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
        let _ = std::fs::remove_dir_all(&self.1);
    }
}

async fn start(program: &str, args: &[&str], port: u16, dir: std::path::PathBuf) -> Proc {
    // Owned by the guard at once, so that a panic below still kills it.
    let child = Command::new(program)
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap_or_else(|e| {
            panic!("cannot run {program}: {e} (scripts/scale-install installs it)")
        });
    let proc = Proc(child, dir);
    for _ in 0..200 {
        if tokio::net::TcpStream::connect(("127.0.0.1", port))
            .await
            .is_ok()
        {
            return proc;
        }
        tokio::time::sleep(Duration::from_millis(25)).await;
    }
    panic!("{program} did not listen on {port}");
}

fn percentiles(mut samples: Vec<Duration>) -> (f64, f64) {
    samples.sort_unstable();
    let at = |q: f64| {
        let i = ((samples.len() as f64 - 1.0) * q).round() as usize;
        samples[i].as_secs_f64() * 1e3
    };
    (at(0.5), at(0.99))
}

type Connect =
    fn(String) -> std::pin::Pin<Box<dyn std::future::Future<Output = Arc<dyn TaskStore>>>>;

async fn engine_rows(engine: &str, url: &str, n: usize, store: Connect, bus: Connect2) {
    // Create-to-visible: created through A, found by B's first get.
    let a = store(url.to_owned()).await;
    let b = store(url.to_owned()).await;
    let limits = CreateLimits {
        per_owner: n * 2,
        total: n * 2,
    };
    let mut visible = Vec::with_capacity(n);
    for i in 0..n {
        let id = format!("v{engine}{i}");
        let t0 = Instant::now();
        a.create(record(id.clone()), limits).await.expect("create");
        while b.get(&id).await.expect("get").is_none() {}
        visible.push(t0.elapsed());
    }
    let (p50, p99) = percentiles(visible);
    println!(
        "{engine}: create-to-visible on another connection: p50 {p50:.2} ms, p99 {p99:.2} ms ({n} tasks)"
    );

    // Update-to-handler: two servers share the store and the bus; the
    // task runs on A, its answer goes in through B.
    let (tx, mut rx) = mpsc::unbounded_channel::<Instant>();
    let make = |store: Arc<dyn TaskStore>,
                relay: Arc<toolwire_replica::Relay>,
                tx: mpsc::UnboundedSender<Instant>| {
        let server = Server::new(
            ServerConfig::new("bench-tasks", "0")
                .with_bus(relay)
                .with_tasks(TaskOptions::new().store(store).max_tasks(n * 2, n * 4)),
        );
        let tool = no_args("ask")
            .task(TaskSupport::Required)
            .handler(move |_: Value, cx: RequestContext| {
                let tx = tx.clone();
                async move {
                    #[derive(serde::Deserialize, schemars::JsonSchema)]
                    struct Go {
                        go: bool,
                    }
                    match cx
                        .input::<ElicitAnswer<Go>>("go")?
                        .and_then(ElicitAnswer::accepted)
                    {
                        Some(Go { go: true }) => {
                            let _ = tx.send(Instant::now());
                            Ok::<_, toolwire::ToolError>(ToolResult::text("done"))
                        }
                        _ => Ok(InputRequired::new().elicit::<Go>("go", "Go?").into()),
                    }
                }
            })
            .expect("ask");
        server.add_tool(tool).expect("add");
        server
    };
    let server_a = make(
        store(url.to_owned()).await,
        bus(url.to_owned()).await,
        tx.clone(),
    );
    let server_b = make(store(url.to_owned()).await, bus(url.to_owned()).await, tx);
    let on_a = TestClient::new(&server_a).with_capabilities(capabilities(true));
    let on_b = TestClient::new(&server_b).with_capabilities(capabilities(true));
    let rounds = n.min(200);
    let mut reached = Vec::with_capacity(rounds);
    for _ in 0..rounds {
        let created = call(&on_a, "ask").await;
        let id = created["taskId"].as_str().expect("task").to_owned();
        let key = loop {
            let t = on_b
                .request("tasks/get", json!({"taskId": id}))
                .await
                .expect("get");
            if let Some(key) = t["inputRequests"]
                .as_object()
                .and_then(|m| m.keys().next().cloned())
            {
                break key;
            }
            tokio::time::sleep(Duration::from_millis(2)).await;
        };
        let answer = json!({"action": "accept", "content": {"go": true}});
        let t0 = Instant::now();
        on_b.request(
            "tasks/update",
            json!({"taskId": id, "inputResponses": {key: answer}}),
        )
        .await
        .expect("update");
        let t1 = tokio::time::timeout(Duration::from_secs(10), rx.recv())
            .await
            .expect("the handler resumed in time")
            .expect("channel");
        reached.push(t1.duration_since(t0));
    }
    let (p50, p99) = percentiles(reached);
    println!(
        "{engine}: update-to-handler across replicas: p50 {p50:.2} ms, p99 {p99:.2} ms ({rounds} tasks)"
    );
}

type Connect2 =
    fn(
        String,
    ) -> std::pin::Pin<Box<dyn std::future::Future<Output = Arc<toolwire_replica::Relay>>>>;

async fn stores(n: usize) {
    let scratch = std::env::temp_dir().join(format!("bench-tasks-{}", std::process::id()));
    let (rport, nport) = (free_port(), free_port());
    let rdir = scratch.join("redis");
    let ndir = scratch.join("nats");
    std::fs::create_dir_all(&rdir).expect("dir");
    std::fs::create_dir_all(&ndir).expect("dir");
    let _redis = start(
        "redis-server",
        &[
            "--port",
            &rport.to_string(),
            "--bind",
            "127.0.0.1",
            "--save",
            "",
            "--dir",
            rdir.to_str().expect("utf-8"),
        ],
        rport,
        rdir.clone(),
    )
    .await;
    let _nats = start(
        "nats-server",
        &[
            "-a",
            "127.0.0.1",
            "-p",
            &nport.to_string(),
            "-js",
            "-sd",
            ndir.to_str().expect("utf-8"),
        ],
        nport,
        ndir.clone(),
    )
    .await;
    engine_rows(
        "redis",
        &format!("redis://127.0.0.1:{rport}"),
        n,
        |url| {
            Box::pin(async move {
                Arc::new(
                    toolwire_redis::RedisTaskStore::connect(&url, "bench")
                        .await
                        .expect("redis"),
                ) as Arc<dyn TaskStore>
            })
        },
        |url| {
            Box::pin(
                async move { Arc::new(toolwire_redis::connect(&url).await.expect("redis bus")) },
            )
        },
    )
    .await;
    engine_rows(
        "nats",
        &format!("nats://127.0.0.1:{nport}"),
        n,
        |url| {
            Box::pin(async move {
                Arc::new(
                    toolwire_nats::NatsTaskStore::connect(&url, "bench")
                        .await
                        .expect("nats"),
                ) as Arc<dyn TaskStore>
            })
        },
        |url| {
            Box::pin(async move { Arc::new(toolwire_nats::connect(&url).await.expect("nats bus")) })
        },
    )
    .await;
    let _ = std::fs::remove_dir_all(&scratch);
}

#[tokio::main(flavor = "current_thread")]
async fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let n = |i: usize, default: usize| args.get(i).and_then(|s| s.parse().ok()).unwrap_or(default);
    match args.first().map(String::as_str) {
        Some("http") => {
            let addr = args.get(1).map_or("127.0.0.1:0", String::as_str);
            http(
                addr,
                args.get(2).map_or("plain", String::as_str),
                n(3, 10_000),
            )
            .await;
        }
        Some("memory") => memory(n(1, 100_000)).await,
        Some("stores") => stores(n(1, 1000)).await,
        _ => {
            eprintln!("usage: bench-tasks http ADDR plain|optional|task N | memory N | stores N");
            std::process::exit(2);
        }
    }
}
