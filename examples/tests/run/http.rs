//! The HTTP examples: `http_server` with the `client` example against it,
//! and `axum_server` with both of its mounts; plus the nested-path pitfall
//! the axum example and the book describe.

use crate::support::{Running, STEP, TOOLS_LIST, request, run_to_end};
use serde_json::json;
use toolwire::{Client, HttpConfig, HttpService, Server, ServerConfig};

const CLIENT: &str = env!("CARGO_BIN_EXE_client");

#[tokio::test]
async fn http_server_answers_the_client_example_and_stops_on_sigterm() {
    let server = Running::start(env!("CARGO_BIN_EXE_http_server"), &["127.0.0.1:0"]).await;
    assert!(server.url.ends_with("/mcp"), "{}", server.url);

    let out = run_to_end(CLIENT, &[&server.url]).await;
    assert_eq!(
        out,
        "server: http-example 1.0.0\n\
         tool echo: Sends the text back\n\
         tool add: Adds two numbers\n\
         echo: hello\n\
         add: {\"sum\":5.0}\n"
    );

    // The typed tool advertises the schema its output is checked against.
    let client = Client::connect_http(&server.url).expect("a valid URL");
    let tools = client.list_tools().await.expect("tools/list");
    let add = tools
        .iter()
        .find(|t| t.name == "add")
        .expect("add is listed");
    let schema = add.output_schema.as_ref().expect("add has an outputSchema");
    assert_eq!(schema["properties"]["sum"]["type"], json!("number"));
    let result = client
        .call_tool("add", json!({"a": 0.5, "b": 0.25}))
        .await
        .expect("add");
    assert_eq!(result.structured_content, Some(json!({"sum": 0.75})));

    // The default allow-lists: a DNS-rebound name is refused.
    let authority = server.authority().to_owned();
    let (status, _) = request(&authority, "POST", "/mcp", "evil.example", TOOLS_LIST).await;
    assert_eq!(status, 403);
    let (status, body) = request(&authority, "POST", "/mcp", &authority, TOOLS_LIST).await;
    assert_eq!(status, 200, "{body}");
    // Only the configured path is served.
    let (status, body) = request(&authority, "POST", "/other", &authority, TOOLS_LIST).await;
    assert_eq!((status, body.as_str()), (404, ""));

    assert!(server.terminate().await, "a graceful shutdown exits 0");
}

#[tokio::test]
async fn axum_example_serves_mcp_at_both_mounts_beside_its_own_routes() {
    let server = Running::start(env!("CARGO_BIN_EXE_axum_server"), &["127.0.0.1:0"]).await;
    for path in ["/mcp", "/api/mcp"] {
        let url = format!("{}{path}", server.url);
        let out = run_to_end(CLIENT, &[&url]).await;
        assert_eq!(
            out,
            "server: axum-example 1.0.0\n\
             tool echo: Sends the text back\n\
             echo: hello\n",
            "at {path}"
        );
    }
    let authority = server.authority().to_owned();
    let (status, body) = request(&authority, "GET", "/health", &authority, "").await;
    assert_eq!((status, body.as_str()), (200, "ok"));
    // Paths axum does not route never reach the MCP service.
    let (status, _) = request(&authority, "POST", "/elsewhere", &authority, TOOLS_LIST).await;
    assert_eq!(status, 404);
    // The service's own checks still run behind axum.
    let (status, _) = request(&authority, "POST", "/api/mcp", "evil.example", TOOLS_LIST).await;
    assert_eq!(status, 403);

    assert!(server.terminate().await, "a graceful shutdown exits 0");
}

/// Serves `router` on a loopback port; the port.
async fn serve(router: axum::Router) -> String {
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("binds");
    let authority = listener.local_addr().expect("bound").to_string();
    tokio::spawn(async move { axum::serve(listener, router).await });
    authority
}

/// What the book and the axum example warn about: under
/// `nest_service`, axum strips the prefix, so the default path `/mcp`
/// never matches and every request gets an empty 404;
/// `HttpConfig::with_any_path()` serves.
#[tokio::test]
async fn under_nest_service_the_default_path_is_an_empty_404_and_any_path_serves() {
    let server = Server::new(ServerConfig::new("nested", "1.0.0"));
    let router = axum::Router::new()
        .nest_service(
            "/default/mcp",
            HttpService::new(server.clone(), HttpConfig::new()),
        )
        .nest_service(
            "/any/mcp",
            HttpService::new(server, HttpConfig::new().with_any_path()),
        );
    let authority = tokio::time::timeout(STEP, serve(router))
        .await
        .expect("serving starts");

    let (status, body) = request(&authority, "POST", "/default/mcp", &authority, TOOLS_LIST).await;
    assert_eq!((status, body.as_str()), (404, ""));
    let (status, body) = request(&authority, "POST", "/any/mcp", &authority, TOOLS_LIST).await;
    assert_eq!(status, 200, "{body}");
    assert!(body.contains(r#""tools":[]"#), "{body}");
}
