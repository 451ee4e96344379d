//! A tool server over Streamable HTTP, stopped gracefully by Ctrl-C.
//!
//! Run it with `cargo run -p toolwire-examples --bin http_server`: it serves
//! `http://127.0.0.1:8080/mcp`. Another address can be given as the
//! argument (`-- 127.0.0.1:0` picks a free port); the first line on stdout
//! is the endpoint's URL. Then:
//!
//! ```sh
//! toolwire list http://127.0.0.1:8080/mcp
//! toolwire call http://127.0.0.1:8080/mcp add a=2 b=3
//! cargo run -p toolwire-examples --bin client -- http://127.0.0.1:8080/mcp
//! ```

use tokio::net::TcpListener;
use toolwire::{HttpConfig, Server, ServerConfig, Tool};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Echo {
    /// The text to send back.
    text: String,
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Add {
    a: f64,
    b: f64,
}

/// `add`'s output: sent as `structuredContent`, described by the
/// `outputSchema` generated from this type.
#[derive(serde::Serialize, schemars::JsonSchema)]
struct Sum {
    sum: f64,
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let addr = std::env::args()
        .nth(1)
        .unwrap_or_else(|| "127.0.0.1:8080".to_owned());

    let server = Server::new(ServerConfig::new("http-example", "1.0.0"))
        .with_tool(
            Tool::builder("echo")
                .description("Sends the text back")
                .input::<Echo>()
                .handler(|input: Echo, _cx| async move { input.text })?,
        )?
        .with_tool(
            Tool::builder("add")
                .description("Adds two numbers")
                .input::<Add>()
                .output::<Sum>()
                .handler(|input: Add, _cx| async move {
                    Sum {
                        sum: input.a + input.b,
                    }
                })?,
        )?;

    // `toolwire::serve_http(server, "127.0.0.1:8080", config, shutdown)`
    // binds by itself; binding first tells us the port the OS picked for
    // `127.0.0.1:0`.
    let listener = TcpListener::bind(&addr).await?;
    println!("listening on http://{}/mcp", listener.local_addr()?);

    // The defaults suit a local server: the endpoint is `/mcp`, and only
    // localhost, 127.0.0.1 and [::1] are accepted in `Host` and `Origin`
    // (the DNS-rebinding defence). A server on a public name lists it:
    // `.with_allowed_hosts(["mcp.example.com"])`.
    let config = HttpConfig::new();

    // On SIGINT or SIGTERM: stop accepting, let requests in flight finish
    // (for up to `HttpConfig::shutdown_grace`), then return.
    toolwire::serve_http_on(server, listener, config, toolwire::shutdown_signal()).await?;
    Ok(())
}
