//! Cost as the work grows (issue 27). Every point runs its server in a
//! fresh process pinned to core 0 (`taskset -c 0`), so that one point's
//! memory does not carry into the next and only the server's own CPU is
//! counted (`/proc/PID/task/*/schedstat`, every thread's time on a CPU);
//! `bench/scale.sh` runs the driver itself on core 1.
//!
//! - `bench-scale tools [N ...]` (default 10 1000 100000): a server with N
//!   registered tools (`serve-tools`), over HTTP: the time and memory of
//!   registering them (bytes per tool), the first `tools/list` after a
//!   change (every page is built then), a cached page (the first and the
//!   middle one, alternately) and a `tools/call` of the middle tool.
//! - `bench-scale listen [N ...]` (default 1 1000 10000): N open
//!   `subscriptions/listen` streams over HTTP (`serve-listen`, with the
//!   per-address limits raised to fit them): the server's memory per
//!   stream, and the time from the change (a tool added) until every
//!   stream has its `notifications/tools/list_changed`, with the server's
//!   CPU per stream for that delivery.
//! - `bench-scale gateway [N ...]` (default 1 10 50): `toolwire-gateway`
//!   (`serve-gateway`) in front of N upstreams of 10 tools each (one
//!   `serve-upstreams` process): the time to start (every upstream listed
//!   and merged), the time until a change on one upstream is in the merged
//!   list, and the gateway's CPU per `tools/call`, spread over the
//!   upstreams.
//! - `bench-scale cold [RUNS] -- PROGRAM [ARGS ...]`: PROGRAM started on
//!   stdio RUNS times (default 50), a `tools/list` written at once: the time
//!   from the spawn to the answer's line (p50, p90, max).
//! - `bench-scale serve-tools N --stdio | --http ADDR`: the server of
//!   `tools` (and of `cold` with 1,000 tools).

use serde_json::{Value, json};
use std::io::{BufRead as _, BufReader, Write as _};
use std::process::{Child, Command, Stdio};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt as _, AsyncWriteExt as _};
use toolwire::{HttpConfig, RequestContext, Server, ServerConfig, Tool};
use toolwire_bench::PROTOCOL_VERSION;
use toolwire_bench::client::{self, Http};

/// Calls measured per figure, in each of the three rounds.
const CALLS: u32 = 2000;

fn main() {
    let args: Vec<String> = std::env::args().skip(1).collect();
    let Some((cmd, rest)) = args.split_first() else {
        usage()
    };
    let points = |default: &[usize]| -> Vec<usize> {
        match rest.is_empty() {
            true => default.to_vec(),
            false => rest
                .iter()
                .map(|a| a.parse().unwrap_or_else(|_| usage()))
                .collect(),
        }
    };
    let rt = || {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime")
    };
    match cmd.as_str() {
        "tools" => rt().block_on(tools(points(&[10, 1000, 100_000]))),
        "listen" => rt().block_on(listen(points(&[1, 1000, 10_000]))),
        "gateway" => rt().block_on(gateway(points(&[1, 10, 50]))),
        "cold" => cold(rest),
        "serve-tools" => serve_tools(rest),
        "serve-listen" => serve(listen_server, "127.0.0.1:0"),
        "serve-upstreams" => serve_upstreams(rest),
        "serve-gateway" => serve_gateway(rest),
        _ => usage(),
    }
}

fn usage() -> ! {
    eprintln!(
        "usage: bench-scale tools|listen|gateway [N ...] | cold [RUNS] -- PROGRAM [ARGS ...] \
         | serve-tools N --stdio|--http ADDR"
    );
    std::process::exit(2)
}

/// One tool of the many: the shape of a generated one (an OpenAPI
/// operation, a gateway's upstream tool), its input schema compiled like
/// any other.
fn echo_tool(name: &str) -> Tool {
    Tool::builder(name)
        .description("Echoes its text back: one of many tools of the same shape.")
        .input_schema(json!({
            "type": "object",
            "properties": {"text": {"type": "string", "description": "What to echo."}},
            "required": ["text"],
        }))
        .handler(|v: Value, _| async move { v["text"].as_str().unwrap_or_default().to_owned() })
        .expect("tool")
}

/// A tool that adds a tool to `server` each call: the change whose
/// `list_changed` is measured.
fn grow_tool(server: &Server) -> Tool {
    let server = server.clone();
    let added = Arc::new(std::sync::atomic::AtomicUsize::new(0));
    Tool::builder("grow")
        .description("Adds a tool.")
        .input_schema(json!({"type": "object"}))
        .handler(move |_: Value, _: RequestContext| {
            let server = server.clone();
            let n = added.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
            async move {
                server
                    .add_tool(echo_tool(&format!("grown_{n}")))
                    .expect("add");
                "grown"
            }
        })
        .expect("tool")
}

/// Runs `make(server)`'s server on `addr` with the runtime of a server
/// (multi-threaded, as `toolwire serve` runs), limits raised for the
/// benchmark's own thousands of loopback streams.
fn serve(make: impl FnOnce() -> Server, addr: &str) {
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let server = make();
        let listener = toolwire_bench::bind(addr).await.expect("bind");
        let config = HttpConfig::new()
            .with_max_streams_per_client(100_000)
            .with_max_connections_per_client(100_000)
            .with_max_concurrent_requests(None);
        let stop = std::future::pending::<()>();
        toolwire::serve_http_on(server, listener, config, stop)
            .await
            .expect("serve");
    });
}

fn serve_tools(rest: &[String]) {
    let n: usize = rest
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| usage());
    let make = || {
        let before = client::rss(None, false);
        let start = Instant::now();
        let server = Server::new(ServerConfig::new("bench-scale", "0"));
        for i in 0..n {
            server
                .add_tool(echo_tool(&format!("tool_{i:06}")))
                .expect("add");
        }
        (server, start.elapsed(), client::rss(None, false) - before)
    };
    match rest.get(1).map(String::as_str) {
        Some("--stdio") => {
            let rt = tokio::runtime::Runtime::new().expect("runtime");
            rt.block_on(toolwire::serve_stdio(make().0)).expect("serve");
        }
        Some("--http") => {
            let addr = rest.get(2).cloned().unwrap_or_else(|| usage());
            serve(
                || {
                    let (server, took, bytes) = make();
                    println!("registered {} {bytes}", took.as_micros());
                    server
                },
                &addr,
            );
        }
        _ => usage(),
    }
}

fn listen_server() -> Server {
    let server = Server::new(ServerConfig::new("bench-scale", "0").with_max_listeners(100_000));
    server.add_tool(grow_tool(&server)).expect("add");
    server
}

fn serve_upstreams(rest: &[String]) {
    let n: usize = rest
        .first()
        .and_then(|a| a.parse().ok())
        .unwrap_or_else(|| usage());
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        for _ in 0..n {
            let server = Server::new(ServerConfig::new("upstream", "0"));
            for j in 0..10 {
                server
                    .add_tool(echo_tool(&format!("echo_{j}")))
                    .expect("add");
            }
            server.add_tool(grow_tool(&server)).expect("add");
            let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
                .await
                .expect("bind");
            println!("upstream {}", listener.local_addr().expect("addr"));
            let stop = std::future::pending::<()>();
            tokio::spawn(toolwire::serve_http_on(
                server,
                listener,
                HttpConfig::new(),
                stop,
            ));
        }
        println!("ready");
        std::future::pending::<()>().await;
    });
}

fn serve_gateway(upstreams: &[String]) {
    let mut toml = String::new();
    for (i, addr) in upstreams.iter().enumerate() {
        toml.push_str(&format!(
            "[upstreams.u{i}]\nurl = \"http://{addr}/mcp\"\nprotocol = \"modern\"\n"
        ));
    }
    let config = toolwire_gateway::GatewayConfig::parse(&toml).expect("gateway config");
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    rt.block_on(async {
        let start = Instant::now();
        // One page holds the whole merged list, so that one read shows a
        // change.
        let gateway = toolwire_gateway::Gateway::start(
            config,
            ServerConfig::new("bench-gateway", "0").with_page_size(100_000),
        )
        .await
        .expect("gateway");
        println!("started {}", start.elapsed().as_micros());
        let listener = toolwire_bench::bind("127.0.0.1:0").await.expect("bind");
        let stop = std::future::pending::<()>();
        toolwire::serve_http_on(gateway.server().clone(), listener, HttpConfig::new(), stop)
            .await
            .expect("serve");
    });
}

/// A server child, pinned to core 0, and what it printed before listening.
struct Proc {
    child: Child,
    lines: Vec<String>,
}

impl Proc {
    /// Starts this binary with `args` and reads its stdout up to and
    /// including the line starting with `until`.
    fn start(args: &[String], until: &str) -> Self {
        let exe = std::env::current_exe().expect("current exe");
        let mut child = Command::new("taskset")
            .args(["-c", "0"])
            .arg(exe)
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::inherit())
            .spawn()
            .expect("spawn (taskset is util-linux)");
        let mut out = BufReader::new(child.stdout.take().expect("stdout"));
        let mut lines = Vec::new();
        loop {
            let mut line = String::new();
            if out.read_line(&mut line).expect("read") == 0 {
                panic!("{args:?} ended before {until:?}: {lines:?}");
            }
            let line = line.trim_end().to_owned();
            let done = line.starts_with(until);
            lines.push(line);
            if done {
                break;
            }
        }
        Self { child, lines }
    }

    /// The first word after `key` on the line starting with it.
    fn value(&self, key: &str) -> &str {
        self.lines
            .iter()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .unwrap_or_else(|| panic!("no {key:?} in {:?}", self.lines))
    }

    fn pid(&self) -> Option<u32> {
        Some(self.child.id())
    }

    fn cpu(&self) -> Duration {
        client::cpu(self.pid())
    }
}

impl Drop for Proc {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// The server's CPU per request of `each` over `CALLS` requests, three
/// times: (median, lowest, highest) in µs.
async fn per_request<F>(server: &Proc, mut each: F) -> (f64, f64, f64)
where
    F: AsyncFnMut(u32),
{
    let mut rounds = Vec::new();
    for _ in 0..3 {
        let start = server.cpu();
        for i in 0..CALLS {
            each(i).await;
        }
        rounds.push((server.cpu() - start).as_secs_f64() * 1e6 / f64::from(CALLS));
    }
    rounds.sort_by(f64::total_cmp);
    (rounds[1], rounds[0], rounds[2])
}

fn spread((median, low, high): (f64, f64, f64)) -> String {
    format!("{median:.1} ({low:.1}–{high:.1})")
}

fn none() -> Value {
    json!({})
}

async fn tools(points: Vec<usize>) {
    println!(
        "| tools | registering | bytes per tool | first tools/list (all pages built) | \
         a cached page, server CPU µs | tools/call, server CPU µs | RSS after |"
    );
    println!("|---:|---:|---:|---:|---:|---:|---:|");
    for n in points {
        let args = ["serve-tools", &n.to_string(), "--http", "127.0.0.1:0"].map(String::from);
        let server = Proc::start(&args, "listening");
        let took: f64 = server.value("registered ").parse().expect("µs");
        let bytes: u64 = server.lines[0]
            .split_whitespace()
            .nth(2)
            .and_then(|b| b.parse().ok())
            .expect("bytes");
        let mut c = Http::connect(server.value("listening ")).await;
        let (wall, cpu) = (Instant::now(), server.cpu());
        let first = c.post("tools/list", "", none(), none()).await;
        let first_cpu = server.cpu() - cpu;
        let first_wall = wall.elapsed();
        assert_eq!(first["tools"].as_array().map(Vec::len), Some(n.min(100)));
        // Every page's cursor, to read the middle one.
        let mut cursors = vec![None];
        let mut next = first["nextCursor"].as_str().map(str::to_owned);
        while let Some(cursor) = next {
            let page = c
                .post("tools/list", "", json!({"cursor": cursor}), none())
                .await;
            cursors.push(Some(cursor));
            next = page["nextCursor"].as_str().map(str::to_owned);
        }
        let middle = cursors[cursors.len() / 2].clone();
        let page = per_request(&server, async |i| {
            let params = match (i % 2, &middle) {
                (1, Some(cursor)) => json!({"cursor": cursor}),
                _ => none(),
            };
            c.post("tools/list", "", params, none()).await;
        })
        .await;
        let name = format!("tool_{:06}", n / 2);
        let call = per_request(&server, async |_| {
            let r = c
                .post(
                    "tools/call",
                    &name,
                    json!({"name": name, "arguments": {"text": "hi"}}),
                    none(),
                )
                .await;
            assert_eq!(r["content"][0]["text"], "hi");
        })
        .await;
        println!(
            "| {n} | {:.1} ms | {} | {:.1} ms ({:.1} ms CPU) | {} | {} | {:.1} MB |",
            took / 1e3,
            bytes / n as u64,
            first_wall.as_secs_f64() * 1e3,
            first_cpu.as_secs_f64() * 1e3,
            spread(page),
            spread(call),
            client::rss(server.pid(), false) as f64 / 1e6,
        );
    }
}

/// The listen request, whole, for the server at `host`.
fn listen_request(host: &str) -> Vec<u8> {
    let body = json!({
        "jsonrpc": "2.0", "id": 1, "method": "subscriptions/listen",
        "params": {
            "notifications": {"toolsListChanged": true},
            "_meta": {
                "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            },
        },
    })
    .to_string();
    format!(
        "POST /mcp HTTP/1.1\r\nHost: {host}\r\nContent-Type: application/json\r\n\
         Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: {PROTOCOL_VERSION}\r\n\
         Mcp-Method: subscriptions/listen\r\nContent-Length: {}\r\n\r\n{body}",
        body.len()
    )
    .into_bytes()
}

/// Reads `stream` until `needle` has arrived (after what `seen` holds).
async fn read_until(stream: &mut tokio::net::TcpStream, seen: &mut Vec<u8>, needle: &[u8]) {
    let mut buf = [0u8; 4096];
    while !seen.windows(needle.len()).any(|w| w == needle) {
        let n = stream.read(&mut buf).await.expect("read");
        assert!(n > 0, "stream closed: {}", String::from_utf8_lossy(seen));
        seen.extend_from_slice(&buf[..n]);
    }
}

async fn listen(points: Vec<usize>) {
    println!(
        "| streams | server memory per stream | change → last stream notified | \
         median stream | server CPU per stream notified |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for n in points {
        let server = Proc::start(&["serve-listen".to_owned()], "listening");
        let addr = server.value("listening ").to_owned();
        let request = listen_request(&addr);
        let mut ctl = Http::connect(&addr).await;
        // A first change with nobody listening: its code paths warmed.
        ctl.post(
            "tools/call",
            "grow",
            json!({"name": "grow", "arguments": {}}),
            none(),
        )
        .await;
        let before = client::rss(server.pid(), false);
        let (tx, mut rx) = tokio::sync::mpsc::unbounded_channel::<Instant>();
        let (acked, mut acks) = tokio::sync::mpsc::unbounded_channel::<()>();
        let go = Arc::new(tokio::sync::Semaphore::new(256));
        for _ in 0..n {
            let (tx, acked, go, request, addr) = (
                tx.clone(),
                acked.clone(),
                go.clone(),
                request.clone(),
                addr.clone(),
            );
            tokio::spawn(async move {
                let permit = go.acquire_owned().await.expect("open");
                let mut s = tokio::net::TcpStream::connect(&addr)
                    .await
                    .expect("connect");
                s.write_all(&request).await.expect("write");
                let mut seen = Vec::new();
                read_until(&mut s, &mut seen, b"subscriptions/acknowledged").await;
                drop(permit);
                let _ = acked.send(());
                seen.clear();
                read_until(&mut s, &mut seen, b"tools/list_changed").await;
                let _ = tx.send(Instant::now());
                // Held open until the server is stopped.
                let _ = s.read(&mut [0u8; 64]).await;
            });
        }
        for _ in 0..n {
            acks.recv().await.expect("acknowledged");
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
        let per_stream = client::rss(server.pid(), false).saturating_sub(before) / n as u64;
        let cpu = server.cpu();
        let start = Instant::now();
        ctl.post(
            "tools/call",
            "grow",
            json!({"name": "grow", "arguments": {}}),
            none(),
        )
        .await;
        let mut arrived = Vec::with_capacity(n);
        for _ in 0..n {
            arrived.push(rx.recv().await.expect("notified") - start);
        }
        let cpu = server.cpu() - cpu;
        arrived.sort();
        println!(
            "| {n} | {} bytes | {:.2} ms | {:.2} ms | {:.2} µs |",
            per_stream,
            arrived[n - 1].as_secs_f64() * 1e3,
            arrived[n / 2].as_secs_f64() * 1e3,
            cpu.as_secs_f64() * 1e6 / n as f64,
        );
    }
}

async fn gateway(points: Vec<usize>) {
    println!(
        "| upstreams | tools | start (all listed and merged) | a change on one upstream → in the merged list | \
         tools/call, gateway CPU µs |"
    );
    println!("|---:|---:|---:|---:|---:|");
    for n in points {
        let upstreams = Proc::start(&["serve-upstreams".to_owned(), n.to_string()], "ready");
        let addrs: Vec<String> = upstreams
            .lines
            .iter()
            .filter_map(|l| l.strip_prefix("upstream ").map(str::to_owned))
            .collect();
        let mut args = vec!["serve-gateway".to_owned()];
        args.extend(addrs.iter().cloned());
        let gw = Proc::start(&args, "listening");
        let started: f64 = gw.value("started ").parse().expect("µs");
        let mut c = Http::connect(gw.value("listening ")).await;
        let count = async |c: &mut Http| {
            let list = c.post("tools/list", "", none(), none()).await;
            let tools = list["tools"].as_array().expect("tools").clone();
            assert!(list.get("nextCursor").is_none(), "one page");
            tools
        };
        let tools = count(&mut c).await;
        assert_eq!(tools.len(), n * 11, "every upstream's tools");
        // A change on the first upstream, seen through the gateway.
        let mut up = Http::connect(&addrs[0]).await;
        up.post(
            "tools/call",
            "grow",
            json!({"name": "grow", "arguments": {}}),
            none(),
        )
        .await;
        let start = Instant::now();
        while count(&mut c).await.len() == n * 11 {
            assert!(start.elapsed() < Duration::from_secs(30), "never seen");
        }
        let change = start.elapsed();
        let names: Vec<String> = tools
            .iter()
            .filter_map(|t| t["name"].as_str())
            .filter(|name| name.ends_with("echo_0"))
            .map(str::to_owned)
            .collect();
        assert_eq!(names.len(), n);
        let call = per_request(&gw, async |i| {
            let name = &names[i as usize % n];
            let r = c
                .post(
                    "tools/call",
                    name,
                    json!({"name": name, "arguments": {"text": "hi"}}),
                    none(),
                )
                .await;
            assert_eq!(r["content"][0]["text"], "hi");
        })
        .await;
        println!(
            "| {n} | {} | {:.1} ms | {:.1} ms | {} |",
            n * 11,
            started / 1e3,
            change.as_secs_f64() * 1e3,
            spread(call),
        );
    }
}

fn cold(rest: &[String]) {
    let (runs, program) = match rest {
        [runs, dash, program @ ..] if dash == "--" && !program.is_empty() => {
            (runs.parse().unwrap_or_else(|_| usage()), program)
        }
        [dash, program @ ..] if dash == "--" && !program.is_empty() => (50, program),
        _ => usage(),
    };
    let request = format!(
        "{}\n",
        json!({
            "jsonrpc": "2.0", "id": 1, "method": "tools/list",
            "params": {"_meta": {
                "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
                "io.modelcontextprotocol/clientCapabilities": {},
            }},
        })
    );
    let mut times = Vec::with_capacity(runs);
    for _ in 0..runs {
        let start = Instant::now();
        let mut child = Command::new(&program[0])
            .args(&program[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .expect("spawn");
        let mut stdin = child.stdin.take().expect("stdin");
        stdin.write_all(request.as_bytes()).expect("write");
        let mut line = String::new();
        BufReader::new(child.stdout.take().expect("stdout"))
            .read_line(&mut line)
            .expect("read");
        times.push(start.elapsed());
        let answer: Value = serde_json::from_str(&line).expect("a JSON answer");
        assert!(answer["result"]["tools"].is_array(), "{line}");
        drop(stdin);
        let _ = child.kill();
        let _ = child.wait();
    }
    times.sort();
    let ms = |d: Duration| d.as_secs_f64() * 1e3;
    println!(
        "{}: exec to first answer over {runs} runs: p50 {:.2} ms, p90 {:.2} ms, max {:.2} ms (min {:.2} ms)",
        program.join(" "),
        ms(times[runs / 2]),
        ms(times[runs * 9 / 10]),
        ms(times[runs - 1]),
        ms(times[0]),
    );
}
