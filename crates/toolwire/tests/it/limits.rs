//! A tool's own limits, declared with `#[tool(...)]` (or the builder) and
//! enforced on every call, tested in process with `toolwire::testing`:
//! the time limit, the concurrency limit and the result-size cap.

use serde_json::json;
use std::time::Duration;
use toolwire::proto::types::{CallToolResult, ContentBlock};
use toolwire::testing::{TestClient, TestError};
use toolwire::{Server, ServerConfig, tool, tools};

/// Sleeps `ms` milliseconds.
#[tool(timeout_ms = 50)]
async fn slow(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "slept".to_owned()
}

/// Sleeps `ms` milliseconds, one call at a time.
#[tool(max_concurrency = 1)]
async fn single(ms: u64) -> String {
    tokio::time::sleep(Duration::from_millis(ms)).await;
    "done".to_owned()
}

/// `n` bytes of text.
#[tool(max_result_bytes = 300)]
async fn big(n: usize) -> String {
    "z".repeat(n)
}

fn server() -> Server {
    let server = Server::new(ServerConfig::new("limits-it", "0.0.0"));
    for tool in tools![slow, single, big].expect("tools") {
        server.add_tool(tool).expect("registered");
    }
    server
}

fn text(r: &CallToolResult) -> &str {
    match r.content.first() {
        Some(ContentBlock::Text(t)) => &t.text,
        _ => "",
    }
}

#[tokio::test]
async fn a_declared_timeout_answers_is_error_and_a_quick_call_passes() {
    let client = TestClient::new(&server());
    let r = client
        .call_tool("slow", json!({"ms": 5000}))
        .await
        .expect("a result");
    assert_eq!(r.is_error, Some(true), "{r:?}");
    assert!(text(&r).contains("did not finish within 50 ms"), "{r:?}");
    let r = client
        .call_tool("slow", json!({"ms": 1}))
        .await
        .expect("a result");
    assert_eq!(text(&r), "slept");
}

#[tokio::test]
async fn a_declared_concurrency_limit_refuses_the_second_call_at_once() {
    let server = server();
    let (a, b) = (TestClient::new(&server), TestClient::new(&server));
    let first = a.call_tool("single", json!({"ms": 300}));
    let second = async {
        tokio::time::sleep(Duration::from_millis(50)).await;
        b.call_tool("single", json!({"ms": 1})).await
    };
    let (first, second) = tokio::join!(first, second);
    assert_eq!(text(&first.expect("the first runs")), "done");
    match second {
        Err(TestError::Rpc(e)) => {
            assert_eq!(e.code.0, -32603);
            assert!(e.message.contains("its limit"), "{}", e.message);
        }
        other => panic!("expected a busy refusal, got {other:?}"),
    }
    // The place is free again.
    let again = b.call_tool("single", json!({"ms": 1})).await.expect("runs");
    assert_eq!(text(&again), "done");
}

#[tokio::test]
async fn a_declared_size_cap_refuses_a_large_result() {
    let client = TestClient::new(&server());
    let small = client
        .call_tool("big", json!({"n": 10}))
        .await
        .expect("small");
    assert_eq!(text(&small), "z".repeat(10));
    let large = client
        .call_tool("big", json!({"n": 1000}))
        .await
        .expect("large");
    assert_eq!(large.is_error, Some(true), "{large:?}");
    assert!(
        text(&large).contains("over this server's limit of 300 bytes"),
        "{large:?}"
    );
}

/// Reads a file, for callers granted both scopes.
#[tool(scope = "files:read", scope = "files:list")]
async fn guarded() -> String {
    String::new()
}

#[test]
fn scopes_are_declared_with_the_attribute() {
    let tool = guarded_tool().expect("builds");
    assert_eq!(tool.scopes(), ["files:read", "files:list"]);
}

// A server that knows its lists are incomplete (a fail-closed gateway with
// an upstream down) fails them for every caller: also for one whose grant
// narrows the list, whose pages are built for it alone.
#[cfg(feature = "auth")]
#[tokio::test]
async fn a_list_failure_holds_for_a_caller_whose_grant_narrows_the_list() {
    let server = server();
    for tool in tools![guarded].expect("tools") {
        server.add_tool(tool).expect("registered");
    }
    server.set_list_failure(Some(toolwire::proto::ErrorObject::internal(
        "the list is incomplete",
    )));
    for client in [
        TestClient::new(&server),
        TestClient::new(&server).with_grant("alice", ["files:read", "files:list"]),
        TestClient::new(&server).with_grant("bob", Vec::<String>::new()),
    ] {
        match client.list_tools().await {
            Err(TestError::Rpc(e)) => assert_eq!(e.message, "the list is incomplete"),
            other => panic!("a list while it is known incomplete: {other:?}"),
        }
    }
    server.set_list_failure(None);
    let bob = TestClient::new(&server).with_grant("bob", Vec::<String>::new());
    let names: Vec<String> = bob
        .list_tools()
        .await
        .expect("lists again")
        .tools
        .into_iter()
        .map(|t| t.name)
        .collect();
    assert!(
        names.contains(&"slow".to_owned()) && !names.contains(&"guarded".to_owned()),
        "{names:?}"
    );
}
