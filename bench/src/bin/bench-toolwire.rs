//! The toolwire server: `echo`, `add` and `noop` on toolwire's own Streamable
//! HTTP server (`toolwire::serve_http_on`, default `HttpConfig`: path `/mcp`,
//! local Host/Origin allow-lists, body and depth limits, concurrency limit)
//! or `toolwire::serve_stdio`. Every check of the full validation path stays
//! on: transport headers, `_meta`, JSON Schema validation of the arguments,
//! and the output schema check on `add`.
//!
//! `--plain-loop` serves `toolwire::HttpService` on the same bare hyper loop
//! as the floor and rmcp servers instead (no head-read timer, no connection
//! tracking), to separate the service's cost from the accept loop's.
//!
//! `--auth` (HTTP only) turns on the OAuth resource server
//! (`HttpConfig::with_auth`): every request needs a bearer JWT, checked
//! against a key set this process makes and serves on another loopback
//! port (`toolwire_bench::auth`). The token is printed after the address,
//! as `bearer <token>`; the load generator sends it on every request, so
//! after the first one each request takes the verified-token cache's path.
//!
//! `--noop-layer` adds one middleware layer that only passes each request
//! on (`Server::with_layer`): what the seam costs a server with one layer.
//!
//! `--tasks` adds `quick`, a tool that may run as a task (the Tasks
//! extension) and answers at once, for `bench/tasks.sh`; the three tools
//! of the comparison stay as they are.

use toolwire::middleware::McpRequest;
use toolwire::{HttpConfig, HttpService, Server, ServerConfig, Tool};
use toolwire_bench::auth::Issuer;
use toolwire_bench::{AddInput, AddOutput, EchoInput, Mode, NoopInput, describe};

fn server(tasks: bool) -> Server {
    let mut config = ServerConfig::new("toolwire-bench", "0.0.0");
    if tasks {
        // Every profiled task is kept (for its time to live), by one
        // anonymous caller: past the default bounds.
        config = config.with_tasks(toolwire::task::TaskOptions::new().max_tasks(1 << 20, 1 << 20));
    }
    let server = Server::new(config);
    let tools = [
        Tool::builder("echo")
            .description(describe::ECHO)
            .input::<EchoInput>()
            .handler(|i: EchoInput, _| async move { i.text }),
        Tool::builder("add")
            .description(describe::ADD)
            .input::<AddInput>()
            .output::<AddOutput>()
            .handler(|i: AddInput, _| async move { Ok(AddOutput { sum: i.a + i.b }) }),
        Tool::builder("noop")
            .description(describe::NOOP)
            .input::<NoopInput>()
            .handler(|_: NoopInput, _| async move { String::new() }),
    ];
    for tool in tools {
        server
            .add_tool(tool.expect("valid tool"))
            .expect("unique tool");
    }
    server
}

/// A layer that passes every request on, untouched.
#[derive(Clone)]
struct PassOn;

impl<S> tower::Layer<S> for PassOn {
    type Service = Passing<S>;
    fn layer(&self, inner: S) -> Passing<S> {
        Passing(inner)
    }
}

#[derive(Clone)]
struct Passing<S>(S);

impl<S: tower::Service<McpRequest>> tower::Service<McpRequest> for Passing<S> {
    type Response = S::Response;
    type Error = S::Error;
    type Future = S::Future;
    fn poll_ready(
        &mut self,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<Result<(), S::Error>> {
        self.0.poll_ready(cx)
    }
    fn call(&mut self, req: McpRequest) -> S::Future {
        self.0.call(req)
    }
}

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let (mode, rest) = toolwire_bench::parse_mode();
    let auth = rest.iter().any(|a| a == "--auth");
    let layered = rest.iter().any(|a| a == "--noop-layer");
    let tasks = rest.iter().any(|a| a == "--tasks");
    let server = || {
        let server = match layered {
            true => server(tasks).with_layer(PassOn),
            false => server(tasks),
        };
        if tasks {
            let quick = Tool::builder("quick")
                .description("Answers at once; runs as a task for a client that declares them.")
                .input::<NoopInput>()
                .task(toolwire::task::TaskSupport::Optional)
                .handler(|_: NoopInput, _| async move { "ok" });
            server
                .add_tool(quick.expect("valid tool"))
                .expect("unique tool");
        }
        server
    };
    match mode {
        Mode::Stdio if auth => Err(std::io::Error::other("--auth is for --http")),
        Mode::Stdio => toolwire::serve_stdio(server()).await,
        Mode::Http(addr) => {
            let listener = toolwire_bench::bind(&addr).await?;
            let mut config = HttpConfig::new();
            if auth {
                let issuer = Issuer::start().await?;
                let resource = format!("http://{}/mcp", listener.local_addr()?);
                config = config.with_auth(issuer.auth_config(&resource));
                println!("bearer {}", issuer.token(&resource));
            }
            if rest.iter().any(|a| a == "--plain-loop") {
                let svc = HttpService::new(server(), config);
                toolwire_bench::serve_http1(listener, svc).await
            } else {
                let stop = async {
                    let _ = tokio::signal::ctrl_c().await;
                };
                toolwire::serve_http_on(server(), listener, config, stop).await
            }
        }
    }
}
