//! The gateway row (issue 19): `toolwire-gateway` in front of one
//! upstream, the `bench-toolwire` HTTP server at `--upstream URL`, served
//! on toolwire's Streamable HTTP server like `bench-toolwire` (default
//! `HttpConfig`). The upstream's tools keep their names
//! (`namespace = "never"`), so the load generator's requests are the same
//! as against the upstream directly; the upstream is modern, so no era
//! probe. What the hop costs is this process's CPU per call, beside the
//! upstream's own.

use toolwire::{HttpConfig, ServerConfig};
use toolwire_bench::Mode;
use toolwire_gateway::{Gateway, GatewayConfig};

#[tokio::main]
async fn main() -> std::io::Result<()> {
    let (mode, rest) = toolwire_bench::parse_mode();
    let upstream = rest
        .iter()
        .position(|a| a == "--upstream")
        .and_then(|i| rest.get(i + 1))
        .ok_or_else(|| std::io::Error::other("bench-gateway needs --upstream URL"))?;
    let config = GatewayConfig::parse(&format!(
        "namespace = \"never\"\n[upstreams.up]\nurl = {upstream:?}\nprotocol = \"modern\"\n"
    ))
    .map_err(std::io::Error::other)?;
    let gateway = Gateway::start(config, ServerConfig::new("bench-gateway", "0.0.0"))
        .await
        .map_err(std::io::Error::other)?;
    let server = gateway.server().clone();
    match mode {
        Mode::Stdio => toolwire::serve_stdio(server).await,
        Mode::Http(addr) => {
            let listener = toolwire_bench::bind(&addr).await?;
            let stop = async {
                let _ = tokio::signal::ctrl_c().await;
            };
            toolwire::serve_http_on(server, listener, HttpConfig::new(), stop).await
        }
    }
}
