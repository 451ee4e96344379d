//! The rmcp 3.11 server in its fastest configuration: the same `echo`, `add`
//! and `noop` tools through `#[tool_router]`, the router built once and
//! shared through an `Arc` (the per-request service factory clones only the
//! `Arc`), `StreamableHttpService` in stateless mode (`legacy_session_mode =
//! false`, `NeverSessionManager`) with JSON responses (`json_response =
//! true`, no SSE keep-alive), on the same bare hyper accept loop as the floor;
//! and `rmcp::transport::stdio()` for stdio.
//!
//! rmcp 3.11 accepts the 2026-07-28 stateless wire as sent by the load
//! generator: requests that carry `_meta.io.modelcontextprotocol/protocolVersion`
//! take its "negotiated per request" path (no `initialize`, no session), on
//! HTTP and on stdio alike.

use rmcp::handler::server::router::tool::ToolRouter;
use rmcp::handler::server::wrapper::{Json, Parameters};
use rmcp::transport::streamable_http_server::session::never::NeverSessionManager;
use rmcp::transport::streamable_http_server::{StreamableHttpServerConfig, StreamableHttpService};
use rmcp::{ServerHandler, ServiceExt, tool, tool_handler, tool_router};
use std::sync::Arc;
use toolwire_bench::{AddInput, AddOutput, EchoInput, Mode};

#[derive(Clone)]
struct Bench {
    tool_router: Arc<ToolRouter<Bench>>,
}

#[tool_router(router = build_router)]
impl Bench {
    fn new() -> Self {
        Self {
            tool_router: Arc::new(Self::build_router()),
        }
    }

    #[tool(description = "Echoes the given text back.")]
    async fn echo(&self, Parameters(input): Parameters<EchoInput>) -> String {
        input.text
    }

    #[tool(description = "Adds two numbers and returns their sum as structured content.")]
    async fn add(&self, Parameters(input): Parameters<AddInput>) -> Json<AddOutput> {
        Json(AddOutput {
            sum: input.a + input.b,
        })
    }

    #[tool(description = "Does nothing and returns an empty text block.")]
    async fn noop(&self) -> String {
        String::new()
    }
}

#[tool_handler(router = self.tool_router, name = "rmcp-bench", version = "0.0.0")]
impl ServerHandler for Bench {}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error + Send + Sync>> {
    let (mode, _rest) = toolwire_bench::parse_mode();
    let bench = Bench::new();
    match mode {
        Mode::Stdio => {
            let running = bench.serve(rmcp::transport::stdio()).await?;
            running.waiting().await?;
        }
        Mode::Http(addr) => {
            let listener = toolwire_bench::bind(&addr).await?;
            let config = StreamableHttpServerConfig::default()
                .with_legacy_session_mode(false)
                .with_json_response(true)
                .with_sse_keep_alive(None)
                .with_sse_retry(None);
            let svc = StreamableHttpService::new(
                move || Ok(bench.clone()),
                Arc::new(NeverSessionManager::default()),
                config,
            );
            toolwire_bench::serve_http1(
                listener,
                hyper_util::service::TowerToHyperService::new(svc),
            )
            .await?;
        }
    }
    Ok(())
}
