//! A newcomer's first ten minutes, over the real `toolwire` binary:
//! `toolwire new` and the crate it makes (built and tested), `host-config`
//! for each host, and what a client sees of a handler's panic.

use serde_json::{Value, json};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;
use tokio::net::TcpListener;
use tokio::process::Command;
use toolwire::{HttpConfig, Server, ServerConfig, tool, tools};

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

/// The outcome of one command.
struct Run {
    ok: bool,
    out: String,
    err: String,
}

/// Runs `program ARGS…` in `dir` with `envs`, for at most `limit`.
async fn run_in(
    program: &str,
    args: &[&str],
    dir: &Path,
    envs: &[(&str, &str)],
    limit: Duration,
) -> Run {
    let out = tokio::time::timeout(
        limit,
        Command::new(program)
            .args(args)
            .current_dir(dir)
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .kill_on_drop(true)
            .output(),
    )
    .await
    .unwrap_or_else(|_| panic!("{program} {args:?} finishes within {limit:?}"))
    .expect("runs");
    Run {
        ok: out.status.success(),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

async fn toolwire(args: &[&str]) -> Run {
    let here = std::env::current_dir().expect("cwd");
    run_in(BIN, args, &here, &[], Duration::from_secs(60)).await
}

/// An empty scratch directory of this test run.
fn scratch(name: &str) -> PathBuf {
    let dir =
        std::env::temp_dir().join(format!("toolwire-first-run-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch dir");
    dir
}

/// This checkout's root.
fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../..")
        .canonicalize()
        .expect("repo root")
}

/// `toolwire host-config ARGS…`: its stdout parsed as JSON, and its text.
async fn host_config(args: &[&str]) -> (Value, String) {
    let full: Vec<&str> = ["host-config"].iter().chain(args).copied().collect();
    let r = toolwire(&full).await;
    assert!(r.ok, "{args:?}: {}", r.err);
    assert!(r.err.contains("then restart the host"), "{}", r.err);
    let json = serde_json::from_str(&r.out).unwrap_or_else(|e| panic!("{e}: {}", r.out));
    (json, r.out)
}

#[tokio::test]
async fn host_config_prints_each_hosts_entry_for_a_command_or_a_url() {
    let cmd = ["--", "/opt/weather/bin/weather", "--units", "metric"];
    let env = ["--env", "API_KEY=k1", "--env", "REGION=eu"];
    let with_env =
        |args: &[&'static str]| -> Vec<&'static str> { env.iter().chain(args).copied().collect() };
    let stdio = json!({
        "command": "/opt/weather/bin/weather",
        "args": ["--units", "metric"],
        "env": {"API_KEY": "k1", "REGION": "eu"}
    });

    let (claude, text) = host_config(&[&["claude"][..], &with_env(&cmd)].concat()).await;
    assert_eq!(claude, json!({"mcpServers": {"weather": stdio}}));
    // Written as the hosts' documentation writes it: the command, its
    // arguments, then the environment.
    let at = |key: &str| text.find(&format!("\"{key}\"")).expect(key);
    assert!(
        at("command") < at("args") && at("args") < at("env"),
        "{text}"
    );

    let (cursor, _) = host_config(&[&["cursor"][..], &with_env(&cmd)].concat()).await;
    assert_eq!(cursor, json!({"mcpServers": {"weather": stdio}}));

    let (vscode, text) =
        host_config(&[&["vscode", "--name", "wx"][..], &with_env(&cmd)].concat()).await;
    let mut typed = stdio.clone();
    typed["type"] = json!("stdio");
    assert_eq!(vscode, json!({"servers": {"wx": typed}}));
    // Written as a person would: the type first, then the command.
    assert!(text.find("\"type\"") < text.find("\"command\""), "{text}");

    let url = "http://127.0.0.1:8080/mcp";
    let (vscode, _) = host_config(&["vscode", "--url", url, "--name", "demo"]).await;
    assert_eq!(
        vscode,
        json!({"servers": {"demo": {"type": "http", "url": url}}})
    );
    let (cursor, _) = host_config(&[
        "cursor",
        "--url",
        url,
        "--header",
        "Authorization: Bearer t",
    ])
    .await;
    assert_eq!(
        cursor,
        json!({"mcpServers": {"127.0.0.1": {"url": url, "headers": {"Authorization": "Bearer t"}}}})
    );

    // Claude Desktop's file has no remote servers: refused, saying where they go.
    let r = toolwire(&["host-config", "claude", "--url", url]).await;
    assert!(!r.ok && r.out.is_empty(), "{}", r.out);
    assert!(r.err.contains("Settings > Connectors"), "{}", r.err);
    // Neither a command nor a URL; both; a bad --env.
    let r = toolwire(&["host-config", "vscode"]).await;
    assert!(!r.ok && r.err.contains("which server?"), "{}", r.err);
    let r = toolwire(&["host-config", "vscode", "--url", url, "--", "x"]).await;
    assert!(!r.ok && r.err.contains("cannot be used with"), "{}", r.err);
    let r = toolwire(&["host-config", "claude", "--env", "NOPE", "--", "x"]).await;
    assert!(!r.ok && r.err.contains("is not KEY=VALUE"), "{}", r.err);
}

#[tokio::test]
async fn host_config_makes_a_relative_command_absolute() {
    let dir = scratch("relative");
    let r = run_in(
        BIN,
        &["host-config", "cursor", "--", "target/release/srv", "-v"],
        &dir,
        &[],
        Duration::from_secs(60),
    )
    .await;
    assert!(r.ok, "{}", r.err);
    let json: Value = serde_json::from_str(&r.out).expect("JSON");
    let absolute = std::path::absolute(dir.join("target/release/srv")).expect("absolute");
    assert_eq!(json["mcpServers"]["srv"]["command"], json!(absolute));
    assert_eq!(json["mcpServers"]["srv"]["args"], json!(["-v"]));
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn new_refuses_bad_names_and_a_non_empty_directory() {
    let dir = scratch("refusals");
    let new =
        async |name: &str| run_in(BIN, &["new", name], &dir, &[], Duration::from_secs(60)).await;
    for (name, why) in [
        ("1st", "cannot start with a digit"),
        ("my server", "is not allowed"),
        ("../up", "is not allowed"),
        ("struct", "is a Rust keyword"),
        ("toolwire", "is reserved"),
    ] {
        let r = new(name).await;
        assert!(!r.ok, "{name}");
        assert!(
            r.err
                .contains(&format!("cannot make a crate named {name:?}"))
                && r.err.contains(why),
            "{name}: {}",
            r.err
        );
    }
    std::fs::create_dir_all(dir.join("taken")).expect("mkdir");
    std::fs::write(dir.join("taken/notes.txt"), "mine").expect("write");
    let r = new("taken").await;
    assert!(
        !r.ok && r.err.contains("already exists and is not empty"),
        "{}",
        r.err
    );
    assert_eq!(
        std::fs::read_to_string(dir.join("taken/notes.txt")).expect("kept"),
        "mine"
    );
    // An empty directory is filled; --path must be a toolwire checkout.
    std::fs::create_dir_all(dir.join("empty")).expect("mkdir");
    let r = new("empty").await;
    assert!(r.ok, "{}", r.err);
    assert!(
        r.err.contains("from crates.io") && r.err.contains("--path DIR"),
        "{}",
        r.err
    );
    let manifest = std::fs::read_to_string(dir.join("empty/Cargo.toml")).expect("Cargo.toml");
    let version = env!("CARGO_PKG_VERSION").rsplit_once('.').expect("x.y.z").0;
    assert!(
        manifest.contains(&format!("toolwire = \"{version}\"\n")),
        "{manifest}"
    );
    let r = run_in(
        BIN,
        &["new", "elsewhere", "--path", "/"],
        &dir,
        &[],
        Duration::from_secs(60),
    )
    .await;
    assert!(
        !r.ok && r.err.contains("is the toolwire crate"),
        "{}",
        r.err
    );
    assert!(!dir.join("elsewhere").exists());
    let _ = std::fs::remove_dir_all(&dir);
}

/// `toolwire new`, then what its README says: `cargo test`, build, list
/// the tools, call one, and the Claude Desktop entry.
#[tokio::test]
async fn the_newcomers_path_new_test_list_and_host_config() {
    let dir = scratch("newcomer");
    let root = repo_root();
    let r = run_in(
        BIN,
        &["new", "hello-mcp", "--path", root.to_str().expect("UTF-8")],
        &dir,
        &[],
        Duration::from_secs(60),
    )
    .await;
    assert!(r.ok, "{}", r.err);
    assert!(r.out.contains("cd hello-mcp"), "{}", r.out);
    let krate = dir.join("hello-mcp");
    for file in [
        "Cargo.toml",
        "src/main.rs",
        "src/tests.rs",
        "README.md",
        ".gitignore",
    ] {
        assert!(krate.join(file).is_file(), "{file}");
    }
    let manifest = std::fs::read_to_string(krate.join("Cargo.toml")).expect("Cargo.toml");
    let path = root.join("crates/toolwire");
    assert!(
        manifest.contains(&format!("path = {:?}", path.to_str().expect("UTF-8"))),
        "{manifest}"
    );
    // The README's host snippet is valid JSON naming the release binary.
    let readme = std::fs::read_to_string(krate.join("README.md")).expect("README");
    let snippet = readme
        .split("```json\n")
        .nth(1)
        .and_then(|rest| rest.split("```").next())
        .expect("a JSON block");
    let snippet: Value = serde_json::from_str(snippet).expect("the README's snippet is JSON");
    let command = snippet["mcpServers"]["hello-mcp"]["command"]
        .as_str()
        .expect("command");
    assert!(
        command.ends_with("hello-mcp/target/release/hello-mcp"),
        "{command}"
    );

    // Offline, with the versions this workspace built (its Cargo.lock),
    // in a target directory kept between runs so that only the first
    // builds the dependencies.
    std::fs::copy(root.join("Cargo.lock"), krate.join("Cargo.lock")).expect("copy Cargo.lock");
    let target = Path::new(env!("CARGO_TARGET_TMPDIR")).join("newcomer-target");
    let target = target.to_str().expect("UTF-8");
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".into());
    let envs = [("CARGO_TARGET_DIR", target)];
    let limit = Duration::from_secs(1200);
    let tested = run_in(&cargo, &["test", "--offline"], &krate, &envs, limit).await;
    assert!(tested.ok, "cargo test:\n{}\n{}", tested.out, tested.err);
    assert!(
        tested.out.contains("test result: ok. 3 passed"),
        "{}",
        tested.out
    );
    let built = run_in(&cargo, &["build", "--offline"], &krate, &envs, limit).await;
    assert!(built.ok, "cargo build: {}", built.err);
    let binary = Path::new(target).join("debug/hello-mcp");
    let binary = binary.to_str().expect("UTF-8");

    let listed = toolwire(&["list", "--stdio", binary]).await;
    assert!(listed.ok, "{}", listed.err);
    assert!(
        listed.out.starts_with(
            "greet\n    Greets someone by name.\n    name: string (required) - Who to greet.\n"
        ),
        "{}",
        listed.out
    );
    assert!(listed.out.contains("\ncount_words\n"), "{}", listed.out);
    assert!(
        listed.out.contains("-> structured output"),
        "{}",
        listed.out
    );
    let called = toolwire(&[
        "call",
        "--stdio",
        binary,
        "count_words",
        "text=to be or not to be",
        "--json",
    ])
    .await;
    assert!(called.ok, "{}", called.err);
    let result: Value = serde_json::from_str(&called.out).expect("JSON");
    assert_eq!(
        result["structuredContent"],
        json!({"words": 6, "longest": "not"})
    );

    let (config, _) = host_config(&["claude", "--", binary]).await;
    assert_eq!(
        config,
        json!({"mcpServers": {"hello-mcp": {"command": binary, "args": []}}})
    );
    let _ = std::fs::remove_dir_all(&dir);
}

/// Adds two numbers.
#[tool]
async fn add(a: i64, b: i64) -> String {
    (a + b).to_string()
}

/// Panics with a message a client must not see by default.
#[tool]
async fn explode() -> String {
    let token = "s3cr3t-token";
    panic!("lost the connection with token {token}")
}

/// Serves `add` and `explode` over HTTP on loopback, in this process.
async fn library_server(config: ServerConfig) -> String {
    let server = Server::new(config);
    for tool in tools![add, explode].expect("tools") {
        server.add_tool(tool).expect("add");
    }
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}/mcp", listener.local_addr().expect("addr"));
    tokio::spawn(toolwire::serve_http_on(
        server,
        listener,
        HttpConfig::new(),
        std::future::pending(),
    ));
    url
}

#[tokio::test]
async fn a_panic_is_reported_with_an_id_and_its_message_only_when_exposed() {
    let url = library_server(ServerConfig::new("panics", "1")).await;
    let r = toolwire(&["call", &url, "explode", "--json"]).await;
    assert!(!r.ok);
    let error: Value = serde_json::from_str(&r.out).expect("JSON");
    let message = error["error"]["message"].as_str().expect("message");
    // Logged with its id, unless another panic of this process was logged
    // less than 10 s before (then the error says so).
    assert!(
        message.contains("server error -32603: tool \"explode\" panicked; its message is ")
            && (message.contains("in the server's log under panic id")
                || message.contains("not logged")),
        "{message}"
    );
    assert!(!message.contains("s3cr3t"), "{message}");
    assert_eq!(error["error"]["code"], -32603);
    let id = error["error"]["data"]["panicId"].as_str().expect("panicId");
    assert!(id.len() == 8 && message.contains(id), "{error}");
    // The server goes on serving.
    let r = toolwire(&["call", &url, "add", "a=2", "b=3"]).await;
    assert!(r.ok && r.out == "5\n", "{} {}", r.out, r.err);

    let exposed = ServerConfig::new("panics", "1").with_exposed_panic_messages(true);
    let url = library_server(exposed).await;
    let r = toolwire(&["call", &url, "explode"]).await;
    assert!(!r.ok);
    assert!(
        r.err.contains(
            "tool \"explode\" panicked: lost the connection with token s3cr3t-token (panic id "
        ),
        "{}",
        r.err
    );
}
