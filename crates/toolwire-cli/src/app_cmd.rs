//! `toolwire app`: a local MCP Apps host for app developers. It calls a
//! tool that has an HTML interface (`_meta.ui.resourceUri`), then serves
//! one loopback page that renders the interface in a sandboxed iframe
//! through the official ext-apps host bridge (bundled in the binary,
//! `assets/`), hands it the tool's input and result, and forwards the
//! interface's own `tools/call` and `resources/read` to the server,
//! refusing tools whose visibility lacks `app`.
//!
//! The page is on 127.0.0.1 only, behind a token made for this launch and
//! checked on every request, with a `Host` check against DNS rebinding.
//! The interface is served with the Content Security Policy its resource
//! declares, or the spec's restrictive default.
//!
//! Spec: ext-apps specification/2026-01-26/apps.mdx (host behaviour)

use crate::client_cmd::{self, Connection};
use anyhow::{Context as _, bail};
use bytes::Bytes;
use clap::Args;
use http::{Method, Request, Response, StatusCode, header};
use http_body_util::{BodyExt as _, Full, Limited};
use hyper::body::Incoming;
use serde_json::{Map, Value, json};
use std::net::SocketAddr;
use std::sync::Arc;
use toolwire::apps::{APP_MIME_TYPE, ToolUi, UiResourceMeta};
use toolwire::proto::types::{ResourceContents, Tool};
use toolwire::{Client, ClientBuilder};

/// The host page.
const HOST_PAGE: &str = include_str!("app_cmd/host.html");
/// `@modelcontextprotocol/ext-apps` 2.0.4's host bridge, bundled
/// (`assets/README.md`).
const BRIDGE: &str = include_str!("../assets/ext-apps-app-bridge.js");
/// The largest request body the page may send (an interface's tool call).
const MAX_BODY: usize = 1024 * 1024;

/// `toolwire app`.
#[derive(Args, Debug)]
#[command(override_usage = "toolwire app [OPTIONS] <URL | --stdio COMMAND> <TOOL> [KEY=VALUE]...")]
pub(crate) struct AppArgs {
    /// [URL] TOOL [KEY=VALUE]...: the endpoint (unless --stdio is given), a
    /// tool with an app interface, and its arguments (typed by its input
    /// schema, as for `call`).
    #[arg(value_name = "ARGS", required = true)]
    positional: Vec<String>,
    /// All arguments as one JSON object; KEY=VALUE pairs override its members.
    #[arg(long = "args", value_name = "JSON")]
    args_json: Option<String>,
    /// The loopback address to serve the page on (a free port by default).
    #[arg(long, value_name = "ADDR", default_value = "127.0.0.1:0")]
    listen: SocketAddr,
    #[command(flatten)]
    connection: Connection,
}

/// What the page needs, fixed at start.
struct Session {
    client: Client,
    tool: Tool,
    /// Every tool of the server, by name: for the interface's calls.
    tools: std::collections::HashMap<String, Tool>,
    arguments: Map<String, Value>,
    result: Value,
    html: String,
    meta: UiResourceMeta,
    token: String,
    port: u16,
}

pub(crate) async fn app(a: AppArgs) -> anyhow::Result<()> {
    if !a.listen.ip().is_loopback() {
        bail!(
            "--listen {}: toolwire app serves on a loopback address only (127.0.0.1 or ::1)",
            a.listen
        );
    }
    let (url, rest) = client_cmd::split_target(&a.connection, &a.positional);
    let Some((tool_name, pairs)) = rest.split_first() else {
        bail!("which tool? usage: toolwire app <URL | --stdio COMMAND> <TOOL> [KEY=VALUE]...");
    };
    let client = client_cmd::connect(url, &a.connection, ClientBuilder::new().with_apps())?;
    let prepared = client_cmd::bounded(&a.connection, async {
        let tools = client.list_tools().await.context("tools/list failed")?;
        let Some(tool) = tools.iter().find(|t| t.name == *tool_name).cloned() else {
            let names: Vec<&str> = tools.iter().map(|t| t.name.as_str()).collect();
            bail!(
                "the server has no tool {tool_name:?}; its tools: {}",
                names.join(", ")
            );
        };
        let Some(uri) = ToolUi::of(tool.meta.as_ref()).and_then(|ui| ui.resource_uri) else {
            bail!(
                "tool {tool_name:?} has no app interface (_meta.ui.resourceUri); `toolwire call` \
                 calls it"
            );
        };
        let arguments = client_cmd::build_arguments(
            Some(&tool.input_schema),
            a.args_json.as_deref(),
            pairs,
            false,
        )?;
        let read = client
            .read_resource(&uri)
            .await
            .with_context(|| format!("reading the interface {uri}"))?;
        let (html, meta) = interface(&uri, &read.contents)?;
        let result = client
            .call_tool(tool_name, Value::Object(arguments.clone()))
            .await
            .with_context(|| format!("calling {tool_name}"))?;
        Ok((
            tools,
            tool,
            arguments,
            serde_json::to_value(&result)?,
            html,
            meta,
        ))
    })
    .await;
    let (tools, tool, arguments, result, html, meta) = match prepared {
        Ok(p) => p,
        Err(e) => {
            client_cmd::close(&client, &a.connection).await;
            return Err(e);
        }
    };
    let listener = tokio::net::TcpListener::bind(a.listen)
        .await
        .with_context(|| format!("cannot listen on {}", a.listen))?;
    let port = listener.local_addr()?.port();
    let session = Arc::new(Session {
        client,
        tools: tools.into_iter().map(|t| (t.name.clone(), t)).collect(),
        tool,
        arguments,
        result,
        html,
        meta,
        token: token()?,
        port,
    });
    eprintln!(
        "toolwire: app at http://127.0.0.1:{port}/?token={} (Ctrl-C stops it)",
        session.token
    );
    let served = serve(listener, Arc::clone(&session));
    tokio::select! {
        r = served => r?,
        () = toolwire::shutdown_signal() => {}
    }
    client_cmd::close(&session.client, &a.connection).await;
    Ok(())
}

/// The interface's HTML and `_meta.ui` from a read's contents.
fn interface(uri: &str, contents: &[ResourceContents]) -> anyhow::Result<(String, UiResourceMeta)> {
    let Some(first) = contents.first() else {
        bail!("the interface {uri} has no contents");
    };
    let (mime, meta, html) = match first {
        ResourceContents::Text(t) => (&t.mime_type, &t.meta, t.text.clone()),
        ResourceContents::Blob(b) => {
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(&b.blob)
                .context("the interface's blob is not base64")?;
            (
                &b.mime_type,
                &b.meta,
                String::from_utf8(bytes).context("the interface is not UTF-8")?,
            )
        }
    };
    if mime.as_deref() != Some(APP_MIME_TYPE) {
        bail!(
            "the interface {uri} is {}, not {APP_MIME_TYPE}",
            mime.as_deref().unwrap_or("of no MIME type")
        );
    }
    let meta = meta
        .as_ref()
        .and_then(|m| m.get("ui"))
        .map(|ui| serde_json::from_value(ui.clone()))
        .transpose()
        .context("the interface's _meta.ui")?
        .unwrap_or_default();
    Ok((html, meta))
}

/// A token for this launch: 32 random bytes, hex.
fn token() -> anyhow::Result<String> {
    let mut bytes = [0u8; 32];
    getrandom::fill(&mut bytes).map_err(|e| anyhow::anyhow!("no randomness for the token: {e}"))?;
    Ok(bytes.iter().map(|b| format!("{b:02x}")).collect())
}

async fn serve(listener: tokio::net::TcpListener, session: Arc<Session>) -> anyhow::Result<()> {
    loop {
        let (stream, _) = listener.accept().await?;
        let session = Arc::clone(&session);
        tokio::spawn(async move {
            let service = hyper::service::service_fn(move |req| {
                let session = Arc::clone(&session);
                async move { Ok::<_, std::convert::Infallible>(handle(&session, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .serve_connection(hyper_util::rt::TokioIo::new(stream), service)
                .await;
        });
    }
}

type Reply = Response<Full<Bytes>>;

fn reply(status: StatusCode, content_type: &str, body: impl Into<Bytes>) -> Reply {
    let mut r = Response::new(Full::new(body.into()));
    *r.status_mut() = status;
    if let Ok(v) = header::HeaderValue::from_str(content_type) {
        r.headers_mut().insert(header::CONTENT_TYPE, v);
    }
    r.headers_mut().insert(
        header::CACHE_CONTROL,
        header::HeaderValue::from_static("no-store"),
    );
    r.headers_mut().insert(
        header::HeaderName::from_static("x-content-type-options"),
        header::HeaderValue::from_static("nosniff"),
    );
    r
}

fn json_reply(status: StatusCode, body: &Value) -> Reply {
    reply(status, "application/json", body.to_string())
}

fn with_csp(mut r: Reply, csp: &str) -> Reply {
    if let Ok(v) = header::HeaderValue::from_str(csp) {
        r.headers_mut().insert(
            header::HeaderName::from_static("content-security-policy"),
            v,
        );
    }
    r
}

async fn handle(session: &Session, req: Request<Incoming>) -> Reply {
    // Against DNS rebinding: the page is only ever asked for by this
    // address.
    let host = req
        .headers()
        .get(header::HOST)
        .and_then(|h| h.to_str().ok())
        .unwrap_or_default();
    let port = session.port;
    if host != format!("127.0.0.1:{port}") && host != format!("localhost:{port}") {
        return reply(StatusCode::FORBIDDEN, "text/plain", "wrong Host\n");
    }
    let token = req
        .uri()
        .query()
        .into_iter()
        .flat_map(|q| q.split('&'))
        .find_map(|kv| kv.strip_prefix("token="));
    if !token.is_some_and(|t| same(t.as_bytes(), session.token.as_bytes())) {
        return reply(
            StatusCode::FORBIDDEN,
            "text/plain",
            "open the URL toolwire app printed, with its token\n",
        );
    }
    match (req.method(), req.uri().path()) {
        (&Method::GET, "/") => with_csp(
            reply(StatusCode::OK, "text/html; charset=utf-8", HOST_PAGE),
            "default-src 'none'; script-src 'self' 'unsafe-inline'; style-src 'unsafe-inline'; \
             connect-src 'self'; frame-src 'self'; img-src 'self' data:; base-uri 'none'; \
             form-action 'none'",
        ),
        (&Method::GET, "/bridge.js") => {
            reply(StatusCode::OK, "text/javascript; charset=utf-8", BRIDGE)
        }
        (&Method::GET, "/view") => with_csp(
            reply(
                StatusCode::OK,
                "text/html; charset=utf-8",
                session.html.clone(),
            ),
            &view_csp(&session.meta),
        ),
        (&Method::GET, "/session") => json_reply(
            StatusCode::OK,
            &json!({
                "tool": session.tool.name,
                "version": env!("CARGO_PKG_VERSION"),
                "arguments": session.arguments,
                "result": session.result,
                "prefersBorder": session.meta.prefers_border,
                "allow": allow_attribute(&session.meta),
            }),
        ),
        (&Method::POST, "/rpc") => rpc(session, req).await,
        _ => reply(StatusCode::NOT_FOUND, "text/plain", "not found\n"),
    }
}

/// Compares in time independent of where the bytes differ.
fn same(a: &[u8], b: &[u8]) -> bool {
    a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

/// A call from the interface: `tools/call` of a tool whose visibility
/// includes `app`, or `resources/read`.
async fn rpc(session: &Session, req: Request<Incoming>) -> Reply {
    let refuse =
        |status, message: String| json_reply(status, &json!({"error": {"message": message}}));
    let body = match Limited::new(req.into_body(), MAX_BODY).collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => {
            return refuse(
                StatusCode::PAYLOAD_TOO_LARGE,
                "the request is too large".into(),
            );
        }
    };
    let Ok(call) = serde_json::from_slice::<Value>(&body) else {
        return refuse(StatusCode::BAD_REQUEST, "the request is not JSON".into());
    };
    let params = call.get("params").cloned().unwrap_or(Value::Null);
    let outcome = match call.get("method").and_then(Value::as_str) {
        Some("tools/call") => {
            let name = params
                .get("name")
                .and_then(Value::as_str)
                .unwrap_or_default();
            let Some(tool) = session.tools.get(name) else {
                return refuse(
                    StatusCode::NOT_FOUND,
                    format!("the server has no tool {name:?}"),
                );
            };
            // Spec (ext-apps): apps.mdx#visibility — a host rejects an
            // interface's call of a tool whose visibility lacks "app".
            if !ToolUi::of(tool.meta.as_ref()).is_none_or(|ui| ui.for_app()) {
                tracing::warn!(
                    "the interface called {name:?}, which is for the model only; refused"
                );
                return refuse(
                    StatusCode::FORBIDDEN,
                    format!("tool {name:?} is not callable by apps: its visibility lacks \"app\""),
                );
            }
            let args = params.get("arguments").cloned().unwrap_or(Value::Null);
            session
                .client
                .call_tool(name, args)
                .await
                .map(|r| serde_json::to_value(r).unwrap_or_default())
        }
        Some("resources/read") => {
            let uri = params
                .get("uri")
                .and_then(Value::as_str)
                .unwrap_or_default();
            session
                .client
                .read_resource(uri)
                .await
                .map(|r| serde_json::to_value(r).unwrap_or_default())
        }
        other => {
            return refuse(
                StatusCode::BAD_REQUEST,
                format!("{other:?} is not a method an interface may call through this host"),
            );
        }
    };
    match outcome {
        Ok(result) => json_reply(StatusCode::OK, &json!({ "result": result })),
        Err(e) => refuse(StatusCode::BAD_GATEWAY, e.to_string()),
    }
}

/// The interface's Content Security Policy: the spec's restrictive default,
/// opened only to the origins its `_meta.ui.csp` declares. An origin that
/// could break out of its directive (white space, `;`, quotes, commas) is
/// left out.
fn view_csp(meta: &UiResourceMeta) -> String {
    let csp = meta.csp.clone().unwrap_or_default();
    let clean = |list: &[String]| -> String {
        list.iter()
            .filter(|o| {
                !o.is_empty()
                    && !o
                        .chars()
                        .any(|c| c.is_whitespace() || matches!(c, ';' | ',' | '\'' | '"'))
            })
            .map(|o| format!(" {o}"))
            .collect()
    };
    let resources = clean(&csp.resource_domains);
    let connect = clean(&csp.connect_domains);
    let frames = clean(&csp.frame_domains);
    let bases = clean(&csp.base_uri_domains);
    let connect = if connect.is_empty() {
        " 'none'".to_owned()
    } else {
        format!(" 'self'{connect}")
    };
    let frames = if frames.is_empty() {
        " 'none'".to_owned()
    } else {
        frames
    };
    format!(
        "default-src 'none'; script-src 'self' 'unsafe-inline'{resources}; style-src 'self' \
         'unsafe-inline'{resources}; img-src 'self' data:{resources}; font-src 'self'{resources}; \
         media-src 'self' data:{resources}; connect-src{connect}; frame-src{frames}; base-uri \
         'self'{bases}"
    )
}

/// The iframe's `allow` attribute for the permissions the interface asks.
fn allow_attribute(meta: &UiResourceMeta) -> String {
    let Some(p) = meta.permissions else {
        return String::new();
    };
    [
        ("camera", p.camera),
        ("microphone", p.microphone),
        ("geolocation", p.geolocation),
        ("clipboard-write", p.clipboard_write),
    ]
    .iter()
    .filter(|(_, on)| *on)
    .map(|(name, _)| *name)
    .collect::<Vec<_>>()
    .join("; ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwire::apps::{Csp, Permissions};

    #[test]
    fn the_default_csp_is_the_specs_and_declared_origins_open_it() {
        let default = view_csp(&UiResourceMeta::default());
        for part in [
            "default-src 'none'",
            "script-src 'self' 'unsafe-inline';",
            "connect-src 'none'",
            "frame-src 'none'",
            "img-src 'self' data:;",
        ] {
            assert!(default.contains(part), "{part} in {default}");
        }
        let meta: UiResourceMeta = serde_json::from_value(json!({
            "csp": Csp::new()
                .connect("https://api.example")
                .resource("https://cdn.example")
                .connect("https://x; script-src *")
        }))
        .expect("meta");
        let opened = view_csp(&meta);
        assert!(
            opened.contains("connect-src 'self' https://api.example;"),
            "{opened}"
        );
        assert!(
            opened.contains("script-src 'self' 'unsafe-inline' https://cdn.example;"),
            "{opened}"
        );
        assert!(
            !opened.contains("script-src *"),
            "an origin with `;` is left out: {opened}"
        );
    }

    #[test]
    fn permissions_become_the_allow_attribute() {
        let meta: UiResourceMeta = serde_json::from_value(json!({
            "permissions": Permissions::new().camera().clipboard_write()
        }))
        .expect("meta");
        assert_eq!(allow_attribute(&meta), "camera; clipboard-write");
        assert_eq!(allow_attribute(&UiResourceMeta::default()), "");
    }
}
