//! A tool with an HTML interface (MCP Apps): `chart` computes a series and
//! comes with a page that draws it; the page calls `stats`, a tool only the
//! interface may call, with a button. `series` is for the model only: the
//! page's second button tries it, and the host refuses.
//!
//! `cargo run -p toolwire-examples --bin app_server` serves it on stdio, for
//! a host. To see the interface, let `toolwire app` be the host:
//!
//! ```sh
//! cargo build -p toolwire-examples
//! toolwire app --stdio target/debug/app_server chart n=8
//! ```
//!
//! `toolwire app` prints a loopback URL; open it in a browser. A client
//! that does not render apps gets the same tools, and text it can show.

use toolwire::apps::Visibility;
use toolwire::{RequestContext, Resource, Server, ServerConfig, Tool, ToolResult, structured};

/// The page: an HTML5 document, with its script inline (the host's default
/// Content Security Policy allows inline scripts and nothing remote).
const PAGE: &str = include_str!("app/chart.html");
const PAGE_URI: &str = "ui://series/chart";

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Series {
    /// How many points (1 to 50).
    #[schemars(range(min = 1, max = 50))]
    n: u32,
}

#[derive(serde::Serialize, serde::Deserialize, schemars::JsonSchema)]
struct Points {
    /// The squares of 0, 1, 2, …
    points: Vec<u64>,
}

fn squares(n: u32) -> Vec<u64> {
    (0..u64::from(n)).map(|i| i * i).collect()
}

async fn chart(input: Series, _cx: RequestContext) -> Result<ToolResult, toolwire::HandlerError> {
    let points = Points {
        points: squares(input.n),
    };
    // Structured for the page, and meaningful text for a client without
    // one (MCP Apps requires it).
    let mut result = structured(&points)?;
    result.content = vec![toolwire::proto::types::ContentBlock::text(format!(
        "The squares of 0 to {}: {}",
        input.n.saturating_sub(1),
        points
            .points
            .iter()
            .map(u64::to_string)
            .collect::<Vec<_>>()
            .join(", ")
    ))];
    Ok(result.into())
}

async fn stats(input: Points, _cx: RequestContext) -> String {
    let n = input.points.len();
    let sum: u64 = input.points.iter().sum();
    #[allow(clippy::cast_precision_loss, reason = "a display figure")]
    let mean = if n == 0 { 0.0 } else { sum as f64 / n as f64 };
    format!("{n} points, sum {sum}, mean {mean:.2}")
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::new(ServerConfig::new("app-example", "1.0.0"));
    // The interface first: a tool may only name a registered one.
    server.add_resource(
        Resource::app(PAGE_URI, "Series chart")
            .description("Draws a series of numbers")
            .prefers_border(true)
            .html(PAGE)?,
    )?;
    server.add_tool(
        Tool::builder("chart")
            .description("Computes the squares of 0..n and draws them")
            .input::<Series>()
            .ui(PAGE_URI)
            .handler(chart)?,
    )?;
    server.add_tool(
        Tool::builder("stats")
            .description("Statistics of a series (called by the chart's page)")
            .input::<Points>()
            .ui(PAGE_URI)
            .visibility([Visibility::App])
            .handler(stats)?,
    )?;
    server.add_tool(
        Tool::builder("series")
            .description("The squares of 0..n, as text")
            .input::<Series>()
            .ui(PAGE_URI)
            .visibility([Visibility::Model])
            .handler(|input: Series, _cx| async move { format!("{:?}", squares(input.n)) })?,
    )?;
    toolwire::serve_stdio(server).await?;
    Ok(())
}
