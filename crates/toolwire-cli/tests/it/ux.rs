//! What a person at the command line sees: error reports, `--help` texts,
//! log messages and option checks, over the real `toolwire` binary.

use super::era::http_server;
use serde_json::json;
use std::process::Stdio;
use std::time::Duration;
use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::Command;

const BIN: &str = env!("CARGO_BIN_EXE_toolwire");

/// The outcome of one `toolwire` run.
struct Run {
    ok: bool,
    out: String,
    err: String,
}

/// Runs `toolwire ARGS…` with stdin closed and `envs` set, with
/// `RUST_BACKTRACE=1` as many developers have it.
async fn run_env(args: &[&str], envs: &[(&str, &str)]) -> Run {
    let out = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(BIN)
            .args(args)
            .env("RUST_BACKTRACE", "1")
            .env_remove("NO_COLOR")
            .env_remove("TOOLWIRE_LOG")
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .output(),
    )
    .await
    .expect("finishes in time")
    .expect("runs");
    Run {
        ok: out.status.success(),
        out: String::from_utf8_lossy(&out.stdout).into_owned(),
        err: String::from_utf8_lossy(&out.stderr).into_owned(),
    }
}

async fn run(args: &[&str]) -> Run {
    run_env(args, &[]).await
}

fn serve_cmd() -> String {
    format!("'{BIN}' serve")
}

fn assert_no_backtrace(err: &str) {
    assert!(!err.contains("backtrace"), "{err}");
    assert!(!err.contains("Caused by"), "{err}");
    assert!(!err.contains("Error: "), "{err}");
}

#[tokio::test]
async fn a_declined_tool_reports_one_line_without_a_backtrace() {
    let serve = serve_cmd();
    let r = run(&[
        "call",
        "--stdio",
        &serve,
        "confirm_action",
        "action=deploy",
        "--input",
        "confirm=decline",
    ])
    .await;
    assert!(!r.ok);
    assert!(r.out.is_empty(), "{}", r.out);
    assert_no_backtrace(&r.err);
    assert_eq!(
        r.err,
        "not confirmed: deploy\ntoolwire: error: tool \"confirm_action\" reported an error\n"
    );
}

#[tokio::test]
async fn a_cause_is_printed_once() {
    let r = run(&["list", "--stdio", "/nonexistent/toolwire-server"]).await;
    assert!(!r.ok);
    assert_no_backtrace(&r.err);
    let lines: Vec<&str> = r.err.lines().collect();
    assert!(
        lines[0].starts_with("toolwire: error: cannot start"),
        "{}",
        r.err
    );
    // The OS error text appears once, not once per layer.
    assert_eq!(r.err.matches("os error").count(), 1, "{}", r.err);
}

#[tokio::test]
async fn a_wrong_path_names_the_url_and_status_with_a_hint() {
    let (_server, url) = http_server().await;
    let wrong = url.replace("/mcp", "/wrong");
    assert_ne!(wrong, url);
    let r = run(&["list", &wrong]).await;
    assert!(!r.ok);
    assert_no_backtrace(&r.err);
    assert!(
        r.err
            .contains(&format!("{wrong} answered HTTP 404 Not Found\n")),
        "{}",
        r.err
    );
    assert!(
        r.err
            .contains("hint: is the path right? toolwire serves at /mcp"),
        "{}",
        r.err
    );
}

/// The data of the `[debug countdown] …` lines in `stderr`.
fn countdown_logs(stderr: &str) -> Vec<serde_json::Value> {
    stderr
        .lines()
        .filter_map(|l| l.strip_prefix("[debug countdown] "))
        .map(|data| serde_json::from_str(data).expect("JSON log data"))
        .collect()
}

#[tokio::test]
async fn an_unreachable_server_is_named() {
    // Nothing listens on the discard port of the loopback address.
    let url = "http://127.0.0.1:9/mcp";
    let r = run(&["list", url]).await;
    assert!(!r.ok);
    assert_no_backtrace(&r.err);
    assert!(r.err.contains(&format!("{url}: ")), "{}", r.err);
}

#[tokio::test]
async fn log_prints_the_servers_log_messages_on_stderr() {
    let serve = serve_cmd();
    let (_server, url) = http_server().await;
    let call = ["countdown", "steps=3", "interval_ms=1"];
    for target in [vec!["--stdio", serve.as_str()], vec![url.as_str()]] {
        let args: Vec<&str> = ["call"]
            .into_iter()
            .chain(target.iter().copied())
            .chain(call)
            .collect();
        let with_log: Vec<&str> = args.iter().copied().chain(["--log", "debug"]).collect();
        let r = run(&with_log).await;
        assert!(r.ok, "{}", r.err);
        assert_eq!(r.out, "done after 3 steps\n");
        assert_eq!(
            countdown_logs(&r.err),
            [
                json!({"step": 1, "of": 3}),
                json!({"step": 2, "of": 3}),
                json!({"step": 3, "of": 3}),
            ],
            "{target:?}: {}",
            r.err
        );

        // The server filters by the level sent: debug is below info.
        let at_info: Vec<&str> = args.iter().copied().chain(["--log", "info"]).collect();
        let r = run(&at_info).await;
        assert!(r.ok, "{}", r.err);
        assert!(countdown_logs(&r.err).is_empty(), "{}", r.err);

        // Without --log nothing is asked for, so nothing is printed.
        let r = run(&args).await;
        assert!(r.ok, "{}", r.err);
        assert!(r.err.is_empty(), "{}", r.err);
    }
    let r = run(&["call", "--stdio", &serve, "echo", "text=x", "--log", "loud"]).await;
    assert!(!r.ok);
    assert!(r.err.contains("loud"), "{}", r.err);
}

#[tokio::test]
async fn serve_help_lists_every_tool_the_demo_serves() {
    let serve = serve_cmd();
    let listed = run(&["list", "--stdio", &serve, "--json"]).await;
    assert!(listed.ok, "{}", listed.err);
    let tools: serde_json::Value = serde_json::from_str(&listed.out).expect("JSON");
    let names: Vec<&str> = tools
        .as_array()
        .expect("array")
        .iter()
        .map(|t| t["name"].as_str().expect("name"))
        .collect();
    assert_eq!(names.len(), 8, "{names:?}");
    for flag in ["--help", "-h"] {
        let help = run(&["serve", flag]).await;
        assert!(help.ok, "{}", help.err);
        let section = help
            .out
            .split_once("Demo tools:\n")
            .map(|(_, s)| s)
            .unwrap_or_else(|| panic!("no tool list in {}", help.out));
        let mut in_help: Vec<&str> = section
            .lines()
            .filter_map(|l| l.split_whitespace().next())
            .collect();
        in_help.sort_unstable();
        let mut served = names.clone();
        served.sort_unstable();
        assert_eq!(in_help, served, "{}", help.out);
    }
}

/// The first line `toolwire serve` writes to stderr within `wait`, if any,
/// with stdin from `stdin`.
async fn serve_first_stderr_line(stdin: Stdio, wait: Duration) -> Option<String> {
    let mut child = Command::new(BIN)
        .arg("serve")
        .stdin(stdin)
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .kill_on_drop(true)
        .spawn()
        .expect("spawn toolwire serve");
    let mut lines = BufReader::new(child.stderr.take().expect("stderr")).lines();
    let line = tokio::time::timeout(wait, lines.next_line())
        .await
        .ok()
        .and_then(|l| l.expect("read stderr"));
    let _ = child.start_kill();
    line
}

/// A pseudo-terminal: the controlling side, and the terminal a child gets.
#[cfg(unix)]
fn pty() -> (std::fs::File, std::fs::File) {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).expect("openpt");
    grantpt(&master).expect("grantpt");
    unlockpt(&master).expect("unlockpt");
    let name = ptsname(&master, Vec::new()).expect("ptsname");
    let terminal = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().expect("UTF-8 pty name"))
        .expect("open the pty");
    (std::fs::File::from(master), terminal)
}

#[cfg(unix)]
#[tokio::test]
async fn serve_on_a_terminal_says_it_waits_for_json_rpc() {
    let (master, terminal) = pty();
    let line = serve_first_stderr_line(Stdio::from(terminal), Duration::from_secs(20))
        .await
        .expect("a line on stderr");
    assert!(line.contains("MCP on stdio"), "{line}");
    assert!(line.contains("JSON-RPC"), "{line}");
    drop(master);
}

#[tokio::test]
async fn serve_from_a_pipe_says_nothing() {
    // stdin at end of input: the server stops at once, having printed nothing.
    let line = serve_first_stderr_line(Stdio::null(), Duration::from_secs(20)).await;
    assert_eq!(line, None);
    let line = serve_first_stderr_line(Stdio::piped(), Duration::from_secs(2)).await;
    assert_eq!(line, None);
}

/// The README and the book's chapters (`docs/src`), as paths from the
/// repository's root.
fn doc_files() -> Vec<String> {
    fn walk(dir: &std::path::Path, out: &mut Vec<String>) {
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
            .map(|e| e.expect("a directory entry").path())
            .collect();
        entries.sort();
        for path in entries {
            if path.is_dir() {
                walk(&path, out);
            } else if path.extension().is_some_and(|e| e == "md") {
                out.push(path.to_str().expect("UTF-8 path").to_owned());
            }
        }
    }
    let root = concat!(env!("CARGO_MANIFEST_DIR"), "/../..");
    let mut files = vec![format!("{root}/README.md")];
    walk(&std::path::Path::new(root).join("docs/src"), &mut files);
    assert!(files.len() > 20, "{files:?}");
    files
}

/// The command lines in a Markdown file's `sh` blocks, comments cut, a
/// line ending in `\` joined with the next.
fn sh_command_lines(file: &str) -> Vec<String> {
    let text = std::fs::read_to_string(file).unwrap_or_else(|e| panic!("{file}: {e}"));
    let mut lines = Vec::new();
    let mut in_sh = false;
    let mut pending = String::new();
    for line in text.lines() {
        if line.trim_start().starts_with("```") {
            in_sh = line.trim_start() == "```sh";
            continue;
        }
        if in_sh {
            let code = line.split(" # ").next().unwrap_or_default().trim();
            match code.strip_suffix('\\') {
                Some(head) => {
                    pending.push_str(head);
                    pending.push(' ');
                }
                None => {
                    pending.push_str(code);
                    lines.push(std::mem::take(&mut pending));
                }
            }
        }
    }
    lines
}

/// The line that installs the command, as the README and the book show it.
const INSTALL: &str = "cargo install --locked --profile dist --path crates/toolwire-cli";

/// `line` with every quoted part ('…' or "…") replaced by `Q`, so the
/// words left are the command's own.
fn without_quotes(line: &str) -> String {
    let mut out = String::new();
    let mut quote = None;
    for c in line.chars() {
        match quote {
            Some(q) if c == q => quote = None,
            Some(_) => {}
            None if c == '\'' || c == '"' => {
                quote = Some(c);
                out.push('Q');
            }
            None => out.push(c),
        }
    }
    out
}

#[tokio::test]
async fn the_docs_install_toolwire_first_and_use_only_real_options() {
    let mut uses = Vec::new();
    for file in doc_files() {
        let lines = sh_command_lines(&file);
        for line in lines.iter().filter(|l| l.starts_with("cargo install")) {
            assert!(
                line.starts_with(INSTALL),
                "{file}: `{line}` is not `{INSTALL}` (with --locked, from the clone)"
            );
        }
        let first_use = lines
            .iter()
            .position(|l| l.starts_with("toolwire ") || l.starts_with("| toolwire "));
        // The pages a reader starts from install the command before using it.
        if file.ends_with("/README.md") || file.ends_with("/getting-started.md") {
            let install = lines
                .iter()
                .position(|l| l == INSTALL || l.starts_with(&format!("{INSTALL} ")))
                .unwrap_or_else(|| panic!("{file} shows {INSTALL}"));
            assert!(
                first_use.is_some_and(|u| u > install),
                "{file}: toolwire is used before it is installed"
            );
        }
        uses.extend(
            lines
                .into_iter()
                .filter(|l| l.starts_with("toolwire ") || l.starts_with("| toolwire ")),
        );
    }
    assert!(uses.len() >= 30, "{uses:?}");
    for line in &uses {
        let unquoted = without_quotes(line.trim_start_matches("| "));
        let mut words = unquoted.split_whitespace().skip(1);
        let sub = words.next().expect("a subcommand");
        let mut help = run(&[sub, "--help"]).await;
        // A nested subcommand (`auth login`) lists its flags in its own help.
        if let Some(nested) = words.clone().next().filter(|w| !w.starts_with("--")) {
            let nested_help = run(&[sub, nested, "--help"]).await;
            if nested_help.ok {
                help = nested_help;
            }
        }
        assert!(help.ok, "{line}: {}", help.err);
        for flag in words.filter(|w| w.starts_with("--")) {
            let flag = flag.split('=').next().unwrap_or(flag);
            // A flag's help line ends it with a space and its value, or,
            // for a switch, with the line.
            assert!(
                help.out
                    .split(|c: char| c.is_whitespace() || c == ',')
                    .any(|word| word == flag),
                "{line}: `toolwire {sub} --help` has no {flag}"
            );
        }
    }
}

/// Runs `toolwire ARGS…` with stderr on a pseudo-terminal and returns what
/// it wrote there.
#[cfg(unix)]
async fn stderr_on_a_terminal(args: &[&str], envs: &[(&str, &str)]) -> String {
    use std::io::Read as _;
    let (mut master, terminal) = pty();
    let status = tokio::time::timeout(
        Duration::from_secs(60),
        Command::new(BIN)
            .args(args)
            .env_remove("NO_COLOR")
            .env_remove("TOOLWIRE_LOG")
            .envs(envs.iter().copied())
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::from(terminal))
            .status(),
    )
    .await
    .expect("finishes in time")
    .expect("runs");
    assert!(!status.success());
    // The child has exited and the last terminal handle is closed: reading
    // drains what it wrote, then fails (EIO) instead of blocking.
    tokio::task::spawn_blocking(move || {
        let mut seen = Vec::new();
        let mut buf = [0u8; 4096];
        while let Ok(n @ 1..) = master.read(&mut buf) {
            seen.extend_from_slice(&buf[..n]);
        }
        String::from_utf8_lossy(&seen).into_owned()
    })
    .await
    .expect("read the terminal")
}

#[cfg(unix)]
#[tokio::test]
async fn warnings_are_coloured_only_on_a_terminal_without_no_color() {
    let serve = serve_cmd();
    // Arguments for a tool that is not listed: a warning, then an error.
    let args = ["call", "--stdio", serve.as_str(), "nosuch", "k=v"];
    let piped = run(&args).await;
    assert!(!piped.ok);
    assert!(piped.err.contains("is not listed"), "{}", piped.err);
    assert!(!piped.err.contains('\x1b'), "{:?}", piped.err);
    // A client command's warning reads like its errors: no time, no source.
    assert!(
        piped
            .err
            .lines()
            .any(|l| l.starts_with("toolwire: warning: tool \"nosuch\" is not listed")),
        "{}",
        piped.err
    );
    assert!(!piped.err.contains(" WARN "), "{}", piped.err);

    let coloured = stderr_on_a_terminal(&args, &[]).await;
    assert!(coloured.contains("is not listed"), "{coloured:?}");
    assert!(coloured.contains("\x1b["), "{coloured:?}");

    for no_color in ["1", "true"] {
        let plain = stderr_on_a_terminal(&args, &[("NO_COLOR", no_color)]).await;
        assert!(plain.contains("is not listed"), "{plain:?}");
        assert!(!plain.contains('\x1b'), "{plain:?}");
    }
}

#[tokio::test]
async fn timeout_takes_fractional_seconds_and_refuses_zero() {
    let serve = serve_cmd();
    for zero in ["0", "0.0", "-2", "soon"] {
        let flag = format!("--timeout={zero}");
        let r = run(&["list", "--stdio", &serve, &flag]).await;
        assert!(!r.ok, "--timeout {zero}");
        assert!(r.err.contains("--timeout"), "{}", r.err);
    }
    // A step that takes 5 s, a timeout of half a second.
    let started = std::time::Instant::now();
    let r = run(&[
        "call",
        "--stdio",
        &serve,
        "--timeout",
        "0.5",
        "countdown",
        "steps=1",
        "interval_ms=5000",
    ])
    .await;
    let took = started.elapsed();
    assert!(!r.ok, "{}", r.out);
    assert!(r.err.contains("no answer within 500ms"), "{}", r.err);
    assert!(took < Duration::from_secs(4), "{took:?}");
}

#[tokio::test]
async fn header_refuses_reserved_names_and_stdio() {
    let (_server, url) = http_server().await;
    for reserved in [
        "Mcp-Method: x",
        "mcp-name: y",
        "MCP-Protocol-Version: 2026-07-28",
        "Mcp-Session-Id: 1",
    ] {
        let r = run(&["list", &url, "--header", reserved]).await;
        assert!(!r.ok, "{reserved}");
        assert!(r.err.contains("reserved"), "{reserved}: {}", r.err);
    }
    let r = run(&["list", &url, "--header", "X-Request-Tag: 7"]).await;
    assert!(r.ok, "{}", r.err);
    assert!(r.out.contains("echo"), "{}", r.out);

    let serve = serve_cmd();
    let r = run(&["list", "--stdio", &serve, "--header", "X-Request-Tag: 7"]).await;
    assert!(!r.ok);
    assert!(
        r.err.contains("--header") && r.err.contains("--stdio"),
        "{}",
        r.err
    );
}

#[tokio::test]
async fn env_and_cwd_set_up_the_stdio_server() {
    const KEY: &str = "AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=";
    let dir = std::env::temp_dir().join(format!("toolwire-cwd-test-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    std::fs::write(dir.join("keys"), format!("{KEY}\n")).expect("keys file");
    let dir_arg = dir.to_str().expect("UTF-8 temp dir");
    let with_keys = format!("'{BIN}' serve --state-keys-file keys");

    // The relative path only resolves in DIR.
    let r = run(&[
        "call",
        "--cwd",
        dir_arg,
        "--stdio",
        &with_keys,
        "echo",
        "text=in dir",
    ])
    .await;
    assert!(r.ok, "{}", r.err);
    assert_eq!(r.out, "in dir\n");
    let r = run(&["call", "--stdio", &with_keys, "echo", "text=here"]).await;
    assert!(!r.ok, "{}", r.out);

    // The server reads TOOLWIRE_STATE_KEYS: a bad value stops it.
    let serve = serve_cmd();
    let bad = "TOOLWIRE_STATE_KEYS=not base64";
    let r = run(&["call", "--env", bad, "--stdio", &serve, "echo", "text=x"]).await;
    assert!(!r.ok, "{}", r.out);
    assert!(r.err.contains("not valid base64"), "{}", r.err);
    let leading = format!("TOOLWIRE_STATE_KEYS=garbage {serve}");
    let r = run(&["call", "--stdio", &leading, "echo", "text=x"]).await;
    assert!(!r.ok, "{}", r.out);
    assert!(r.err.contains("not valid base64"), "{}", r.err);
    let good = format!("TOOLWIRE_STATE_KEYS={KEY}");
    let r = run(&["call", "--env", &good, "--stdio", &serve, "echo", "text=ok"]).await;
    assert!(r.ok, "{}", r.err);
    assert_eq!(r.out, "ok\n");

    // Both only make sense for --stdio.
    let r = run(&["list", "http://127.0.0.1:9/mcp", "--env", "A=b"]).await;
    assert!(!r.ok && r.err.contains("--stdio"), "{}", r.err);
    let r = run(&["list", "http://127.0.0.1:9/mcp", "--cwd", dir_arg]).await;
    assert!(!r.ok && r.err.contains("--stdio"), "{}", r.err);
    let r = run(&["list", "--stdio", &serve, "--env", "no-equals"]).await;
    assert!(!r.ok && r.err.contains("KEY=VALUE"), "{}", r.err);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn help_documents_the_environment() {
    let r = run(&["--help"]).await;
    assert!(r.ok, "{}", r.err);
    for name in ["TOOLWIRE_LOG", "TOOLWIRE_STATE_KEYS", "NO_COLOR"] {
        assert!(r.out.contains(name), "{name} in {}", r.out);
    }
}

#[cfg(not(feature = "otel"))]
#[tokio::test]
async fn otlp_in_a_build_without_otel_says_how_to_get_it() {
    let r = run(&["serve", "--otlp", "http://127.0.0.1:9"]).await;
    assert!(!r.ok, "{}", r.out);
    assert!(r.err.contains("--features otel"), "{}", r.err);
    assert_no_backtrace(&r.err);
}

/// Every command's `-h` fits on a screen (40 lines of at most 100
/// columns), and its `--help` has the rest: the whole of each option's
/// text, and the options `-h` leaves out.
#[tokio::test]
async fn short_help_fits_on_a_screen_and_long_help_has_the_detail() {
    let top = run(&["--help"]).await;
    let commands: Vec<String> = top
        .out
        .split_once("Commands:\n")
        .map(|(_, rest)| rest)
        .expect("a command list")
        .lines()
        .take_while(|l| l.starts_with("  "))
        .filter_map(|l| l.split_whitespace().next())
        .filter(|c| *c != "help")
        .map(str::to_owned)
        .collect();
    assert!(commands.len() >= 16, "{commands:?}");
    let mut all: Vec<Vec<String>> = vec![vec![]];
    all.extend(commands.iter().map(|c| vec![c.clone()]));
    all.extend(
        [["gateway", "check"], ["auth", "login"], ["auth", "logout"]]
            .map(|p| p.map(String::from).to_vec()),
    );
    for words in all {
        let with = |flag: &'static str| -> Vec<&str> {
            words.iter().map(String::as_str).chain([flag]).collect()
        };
        let short = run(&with("-h")).await;
        let long = run(&with("--help")).await;
        assert!(short.ok && long.ok, "{words:?}: {} {}", short.err, long.err);
        let lines = short.out.lines().count();
        assert!(
            lines <= 40,
            "{words:?} -h has {lines} lines:\n{}",
            short.out
        );
        for line in short.out.lines().chain(long.out.lines()) {
            assert!(line.chars().count() <= 100, "{words:?}: {line:?}");
        }
        assert!(long.out.lines().count() >= lines, "{words:?}");
        // Where the two differ, -h says so.
        if short.out != long.out {
            assert!(
                short.out.contains("(see more with '--help')"),
                "{words:?}: {}",
                short.out
            );
        }
    }
    // The root: the environment in --help only.
    let short = run(&["-h"]).await;
    assert!(
        !short.out.contains("TOOLWIRE_LOG") && short.out.contains("see --help"),
        "{}",
        short.out
    );
    // An option's gist in -h, the whole text in --help.
    let (short, long) = (run(&["list", "-h"]).await, run(&["list", "--help"]).await);
    assert!(
        short
            .out
            .contains("Which protocol era to speak [default: auto]"),
        "{}",
        short.out
    );
    assert!(!short.out.contains("initialize handshake"), "{}", short.out);
    // (Wrapped: compared with its lines joined.)
    let flat = long.out.split_whitespace().collect::<Vec<_>>().join(" ");
    assert!(
        flat.contains("fall back to the 2025 initialize handshake"),
        "{}",
        long.out
    );
    // serve -h leaves the rarer options to --help, and says so.
    let (short, long) = (run(&["serve", "-h"]).await, run(&["serve", "--help"]).await);
    for flag in ["--http", "--tls-cert", "--auth-issuer", "--metrics"] {
        assert!(short.out.contains(flag), "{flag}: {}", short.out);
    }
    for flag in [
        "--state-ttl-ms",
        "--auth-jwks",
        "--scope-for",
        "--tool-timeout-ms",
    ] {
        assert!(!short.out.contains(flag), "{flag}: {}", short.out);
        assert!(long.out.contains(flag), "{flag}: {}", long.out);
    }
    assert!(short.out.contains("More options ("), "{}", short.out);
    // host-config --help names the hosts' documentation.
    let long = run(&["host-config", "--help"]).await;
    for url in [
        "https://modelcontextprotocol.io/docs/develop/connect-local-servers",
        "https://code.visualstudio.com/docs/copilot/reference/mcp-configuration",
        "https://cursor.com/docs/mcp",
    ] {
        assert!(long.out.contains(url), "{url}: {}", long.out);
    }
}
