//! The stdio examples, each started as a child process by a
//! `toolwire::Client` (and by the `client` example), checked through
//! every tool, prompt and resource they define.

use crate::support::{STEP, run_to_end};
use serde_json::{Value, json};
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::{Arc, Mutex};
use toolwire::proto::ErrorCode;
use toolwire::proto::types::{
    CallToolResult, CompleteRequestParams, ElicitAction, ElicitRequestParams, ElicitResult,
    ResourceContents,
};
use toolwire::{Client, ClientBuilder, InputError};

fn command(program: &str) -> tokio::process::Command {
    let mut command = tokio::process::Command::new(program);
    command.kill_on_drop(true);
    command
}

fn spawn(program: &str) -> Client {
    Client::spawn(command(program)).expect("the example starts")
}

/// Bounds a step so a broken example fails the test instead of hanging it.
async fn step<T>(f: impl Future<Output = T>) -> T {
    tokio::time::timeout(STEP, f).await.expect("in time")
}

fn text(result: &CallToolResult) -> String {
    let texts: Vec<&str> = result.content.iter().filter_map(|b| b.as_text()).collect();
    texts.join("")
}

/// A file with `contents` in a directory of its own; removed on drop.
struct TempFile {
    dir: std::path::PathBuf,
    path: String,
}

impl TempFile {
    fn new(name: &str, contents: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("toolwire-examples-{}-{name}", std::process::id()));
        std::fs::create_dir_all(&dir).expect("temp dir");
        let path = dir.join(name);
        std::fs::write(&path, contents).expect("writes");
        Self {
            path: path.to_str().expect("a UTF-8 path").to_owned(),
            dir,
        }
    }

    /// A path beside the file that does not exist.
    fn missing(&self) -> String {
        self.dir
            .join("missing.txt")
            .to_str()
            .expect("UTF-8")
            .to_owned()
    }
}

impl Drop for TempFile {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.dir);
    }
}

/// The message `?` turns into the `isError` text: the io::Error's own.
fn io_message(path: &str) -> String {
    std::fs::metadata(path)
        .expect_err("the path is missing")
        .to_string()
}

#[tokio::test]
async fn stdio_server_echoes_and_reports_an_io_error_as_an_is_error_result() {
    let file = TempFile::new("three.txt", "one\ntwo\nthree\n");
    let client = spawn(env!("CARGO_BIN_EXE_stdio_server"));
    let echo = step(client.call_tool("echo", json!({"text": "hi"})))
        .await
        .expect("echo");
    assert_eq!((text(&echo), echo.is_error), ("hi".to_owned(), None));

    let lines = step(client.call_tool("line_count", json!({"path": file.path}))).await;
    assert_eq!(text(&lines.expect("line_count")), "3 lines");

    let missing = file.missing();
    let failed = step(client.call_tool("line_count", json!({"path": missing})))
        .await
        .expect("a failed tool is a result, not an error");
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(text(&failed), io_message(&missing));

    // The server survives its tool's failure.
    let again = step(client.call_tool("echo", json!({"text": "still here"}))).await;
    assert_eq!(text(&again.expect("echo")), "still here");
    step(client.close()).await.expect("closes");
}

#[tokio::test]
async fn typed_output_tools_answer_structured_and_fail_with_their_message() {
    let file = TempFile::new("five.bin", "12345");
    let client = spawn(env!("CARGO_BIN_EXE_typed_output"));
    let tools = step(client.list_tools()).await.expect("tools/list");
    for tool in &tools {
        assert!(
            tool.output_schema.is_some(),
            "{} has an outputSchema",
            tool.name
        );
    }

    let stats = step(client.call_tool("stats", json!({"numbers": [1, 2, 6]}))).await;
    let stats = stats.expect("stats");
    let expected = json!({"count": 3, "mean": 3.0, "min": 1.0, "max": 6.0});
    assert_eq!(stats.structured_content, Some(expected.clone()));
    // Mirrored as JSON text for clients that read only `content`.
    let mirrored: Value = serde_json::from_str(&text(&stats)).expect("JSON text");
    assert_eq!(mirrored, expected);

    let empty = step(client.call_tool("stats", json!({"numbers": []}))).await;
    let empty = empty.expect("a failed tool is a result");
    assert_eq!(empty.is_error, Some(true));
    assert_eq!(text(&empty), "give at least one number");
    assert_eq!(empty.structured_content, None);

    let size = step(client.call_tool("file_size", json!({"path": file.path}))).await;
    assert_eq!(
        size.expect("file_size").structured_content,
        Some(json!({"bytes": 5}))
    );
    let missing = file.missing();
    let failed = step(client.call_tool("file_size", json!({"path": missing}))).await;
    let failed = failed.expect("a failed tool is a result");
    assert_eq!(failed.is_error, Some(true));
    assert_eq!(text(&failed), io_message(&missing));
    step(client.close()).await.expect("closes");
}

/// A client whose elicitation handler answers `action` (with
/// `{"confirm": confirm}` when accepting) and records the questions.
fn mrtr_client(action: ElicitAction, confirm: bool, asked: Arc<Mutex<Vec<String>>>) -> Client {
    ClientBuilder::new()
        .with_elicitation(move |key: String, params: ElicitRequestParams| {
            let asked = Arc::clone(&asked);
            async move {
                let ElicitRequestParams::Form(form) = params else {
                    return Err(InputError::new("expected a form"));
                };
                asked
                    .lock()
                    .expect("not poisoned")
                    .push(format!("{key}: {}", form.message));
                let content = (action == ElicitAction::Accept)
                    .then(|| json!({"confirm": confirm}).as_object().cloned())
                    .flatten();
                Ok(ElicitResult { action, content })
            }
        })
        .spawn(command(env!("CARGO_BIN_EXE_mrtr")))
        .expect("the example starts")
}

#[tokio::test]
async fn mrtr_tool_asks_then_acts_on_the_answer() {
    let cases = [
        (
            ElicitAction::Accept,
            true,
            None,
            "deployed web: build web, roll out web",
        ),
        (ElicitAction::Accept, false, Some(true), "not deployed: web"),
        (
            ElicitAction::Decline,
            false,
            Some(true),
            "not deployed: web",
        ),
        (ElicitAction::Cancel, false, Some(true), "not deployed: web"),
    ];
    for (action, confirm, is_error, expected) in cases {
        let asked = Arc::new(Mutex::new(Vec::new()));
        let client = mrtr_client(action, confirm, Arc::clone(&asked));
        let result = step(client.call_tool("deploy", json!({"service": "web"}))).await;
        let result = result.unwrap_or_else(|e| panic!("{action:?}: {e}"));
        assert_eq!(
            (text(&result).as_str(), result.is_error),
            (expected, is_error),
            "{action:?}"
        );
        assert_eq!(
            *asked.lock().expect("not poisoned"),
            ["confirm: Deploy web in 2 steps?"],
            "asked once, with the plan from the first round"
        );
        step(client.close()).await.expect("closes");
    }

    // Without the `elicitation` capability there is no form to show.
    let client = spawn(env!("CARGO_BIN_EXE_mrtr"));
    let err = step(client.call_tool("deploy", json!({"service": "web"})))
        .await
        .expect_err("the client cannot answer a form");
    let code = err.rpc().map(|e| e.code);
    assert_eq!(
        code,
        Some(ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY),
        "{err}"
    );
    step(client.close()).await.expect("closes");
}

fn resource_text(contents: &[ResourceContents]) -> Vec<(String, String)> {
    contents
        .iter()
        .map(|c| match c {
            ResourceContents::Text(t) => (t.uri.clone(), t.text.clone()),
            ResourceContents::Blob(b) => panic!("unexpected blob at {}", b.uri),
        })
        .collect()
}

#[tokio::test]
async fn prompts_resources_example_serves_its_prompt_resources_and_template() {
    let client = spawn(env!("CARGO_BIN_EXE_prompts_resources"));
    let arguments = BTreeMap::from([("code".to_owned(), "x = 1".to_owned())]);
    let prompt = step(client.get_prompt("code_review", arguments))
        .await
        .expect("prompts/get");
    let texts: Vec<&str> = prompt
        .messages
        .iter()
        .filter_map(|m| m.content.as_text())
        .collect();
    assert_eq!(texts, ["Review this unknown code:\nx = 1"]);
    // A required argument is checked before the handler runs.
    let err = step(client.get_prompt("code_review", BTreeMap::new()))
        .await
        .expect_err("code is required");
    assert_eq!(
        err.rpc().map(|e| e.code),
        Some(ErrorCode::INVALID_PARAMS),
        "{err}"
    );

    let complete = |reference: Value, argument: &str, value: &str| {
        let params: CompleteRequestParams = serde_json::from_value(json!({
            "ref": reference,
            "argument": {"name": argument, "value": value},
        }))
        .expect("valid params");
        client.complete(params)
    };
    let languages = step(complete(
        json!({"type": "ref/prompt", "name": "code_review"}),
        "language",
        "R",
    ))
    .await;
    assert_eq!(
        languages.expect("completion/complete").completion.values,
        ["rust"]
    );
    let ids = step(complete(
        json!({"type": "ref/resource", "uri": "users://{id}/profile"}),
        "id",
        "",
    ))
    .await;
    assert_eq!(
        ids.expect("completion/complete").completion.values,
        ["alice", "bob"]
    );

    let settings = step(client.read_resource("config://app/settings"))
        .await
        .expect("read");
    assert_eq!(
        resource_text(&settings.contents),
        [(
            "config://app/settings".to_owned(),
            r#"{"theme":"dark"}"#.to_owned()
        )]
    );
    // `ttl(ZERO)`: every read reaches the handler, none is served from the
    // client's cache.
    for n in 1..=3 {
        let read = step(client.read_resource("counter://reads"))
            .await
            .expect("read");
        assert_eq!(read.ttl_ms, 0);
        assert_eq!(
            resource_text(&read.contents),
            [("counter://reads".to_owned(), n.to_string())]
        );
    }
    let alice = step(client.read_resource("users://alice/profile"))
        .await
        .expect("read");
    assert_eq!(
        resource_text(&alice.contents),
        [(
            "users://alice/profile".to_owned(),
            r#"{"id":"alice"}"#.to_owned()
        )]
    );
    let err = step(client.read_resource("users://carol/profile"))
        .await
        .expect_err("no carol");
    let rpc = err.rpc().expect("a JSON-RPC error");
    assert_eq!(rpc.code, ErrorCode::INVALID_PARAMS);
    assert_eq!(rpc.data, Some(json!({"uri": "users://carol/profile"})));
    step(client.close()).await.expect("closes");
}

#[tokio::test]
async fn client_example_drives_the_stdio_examples() {
    let client = env!("CARGO_BIN_EXE_client");
    let out = run_to_end(client, &["--stdio", env!("CARGO_BIN_EXE_mrtr")]).await;
    assert_eq!(
        out,
        "server: mrtr-example 1.0.0\n\
         tool deploy: Deploys a service, after the user confirms\n\
         deploy: deployed web: build web, roll out web\n"
    );
    let out = run_to_end(
        client,
        &["--stdio", env!("CARGO_BIN_EXE_prompts_resources")],
    )
    .await;
    assert_eq!(
        out,
        "server: prompts-resources-example 1.0.0\n\
         prompt code_review\n\
         prompt code_review: Review this rust code: | fn main() {}\n\
         resource config://app/settings: {\"theme\":\"dark\"}\n\
         resource counter://reads: 1\n"
    );
    let out = run_to_end(client, &["--stdio", env!("CARGO_BIN_EXE_stdio_server")]).await;
    assert_eq!(
        out,
        "server: stdio-example 1.0.0\n\
         tool echo: Sends the text back\n\
         tool line_count: Counts the lines of a text file\n\
         echo: hello\n"
    );
}

/// The MCP Apps example: its interface, listed and read with its MIME type,
/// the tools that name it with their audiences, the extension offered, and
/// text a client without apps can show beside the structured series.
#[tokio::test]
async fn the_app_example_offers_an_interface_and_tools_that_name_it() {
    use toolwire::apps::{APP_MIME_TYPE, ToolUi, UI_EXTENSION};
    let client = ClientBuilder::new()
        .with_apps()
        .spawn(command(env!("CARGO_BIN_EXE_app_server")))
        .expect("the example starts");
    let discovered = step(client.discover()).await.expect("discover");
    assert!(
        discovered
            .capabilities
            .extensions
            .is_some_and(|e| e.contains_key(UI_EXTENSION)),
        "the extension is offered"
    );
    let tools = step(client.list_tools()).await.expect("tools");
    let ui = |name: &str| {
        let tool = tools.iter().find(|t| t.name == name).expect("listed");
        ToolUi::of(tool.meta.as_ref()).expect("an interface")
    };
    assert_eq!(
        ui("chart").resource_uri.as_deref(),
        Some("ui://series/chart")
    );
    assert!(ui("chart").for_model() && ui("chart").for_app());
    assert!(!ui("stats").for_model() && ui("stats").for_app());
    assert!(ui("series").for_model() && !ui("series").for_app());

    let read = step(client.read_resource("ui://series/chart"))
        .await
        .expect("read");
    let ResourceContents::Text(page) = &read.contents[0] else {
        panic!("text contents");
    };
    assert_eq!(page.mime_type.as_deref(), Some(APP_MIME_TYPE));
    assert!(page.text.starts_with("<!DOCTYPE html>"));
    assert_eq!(
        page.meta.as_ref().expect("_meta")["ui"]["prefersBorder"],
        true
    );

    let chart = step(client.call_tool("chart", json!({"n": 4})))
        .await
        .expect("chart");
    assert_eq!(text(&chart), "The squares of 0 to 3: 0, 1, 4, 9");
    assert_eq!(
        chart.structured_content,
        Some(json!({"points": [0, 1, 4, 9]}))
    );
    let stats = step(client.call_tool("stats", json!({"points": [0, 1, 4, 9]})))
        .await
        .expect("stats");
    assert_eq!(text(&stats), "4 points, sum 14, mean 3.50");
    client.close().await.expect("closes");
}
