//! Embedding the MCP endpoint in an axum application, mounted twice: with
//! `Router::route_service` and under a prefix with `Router::nest_service`.
//!
//! Run it with `cargo run -p toolwire-examples --bin axum_server` (another
//! address can be given as the argument; the first line on stdout is the
//! base URL). It serves:
//!
//! - `http://127.0.0.1:8080/mcp`: `route_service("/mcp", ..)`. axum hands the
//!   service the full path, `/mcp`, which is the default `HttpConfig` path.
//! - `http://127.0.0.1:8080/api/mcp`: `nest_service("/api/mcp", ..)`. axum
//!   strips the prefix before the service sees the request (it sees `/`), so
//!   with the default path `/mcp` every request would get an empty `404`.
//!   The nested service is configured with `HttpConfig::with_any_path()`:
//!   the router has already chosen it.
//! - `http://127.0.0.1:8080/health`: an ordinary axum route.
//!
//! ```sh
//! toolwire call http://127.0.0.1:8080/api/mcp echo text=hi
//! ```

use axum::Router;
use axum::routing::get;
use toolwire::{HttpConfig, HttpService, Server, ServerConfig, Tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());

    let server = Server::new(ServerConfig::new("axum-example", "1.0.0")).with_tool(
        Tool::builder("echo")
            .description("Sends the text back")
            .input::<Echo>()
            .handler(|input: Echo, _cx| async move { input.text })?,
    )?;

    // `HttpService` is a `tower::Service`; clones of `server` share its tools.
    let app = Router::new()
        .route("/health", get(|| async { "ok" }))
        .route_service("/mcp", HttpService::new(server.clone(), HttpConfig::new()))
        .nest_service(
            "/api/mcp",
            HttpService::new(server.clone(), HttpConfig::new().with_any_path()),
        );

    let listener = tokio::net::TcpListener::bind(&addr).await?;
    println!("listening on http://{}", listener.local_addr()?);
    axum::serve(listener, app)
        .with_graceful_shutdown(async move {
            toolwire::shutdown_signal().await;
            // Ends open `subscriptions/listen` streams with their closing
            // result; axum waits for every open response before it returns.
            server.shutdown();
        })
        .await?;
    Ok(())
}
