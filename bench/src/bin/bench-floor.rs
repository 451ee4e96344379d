//! The floor: no MCP logic. It parses the JSON-RPC body with serde_json
//! (typed, borrowing), dispatches on method and tool name, builds the same
//! response shape toolwire sends (echoed text block; `structuredContent
//! {sum}` mirrored as text; a `tools/list` result serialised once at start),
//! and serialises it. HTTP runs on the same bare hyper accept loop as rmcp;
//! stdio is a blocking loop over locked stdin/stdout that flushes whenever
//! no more input is buffered.
//!
//! It checks no header, no `_meta`, no schema: it is the cost of HTTP (or
//! line framing) plus JSON in and JSON out.

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use serde::{Deserialize, Serialize};
use serde_json::value::RawValue;
use std::borrow::Cow;
use std::convert::Infallible;
use std::io::{self, BufRead, BufReader, BufWriter, Write};
use std::sync::OnceLock;
use toolwire_bench::{AddInput, AddOutput, EchoInput, Mode, NoopInput, describe};

const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";

#[derive(Deserialize)]
struct Request<'a> {
    #[serde(borrow)]
    id: &'a RawValue,
    #[serde(borrow)]
    method: Cow<'a, str>,
    #[serde(default, borrow)]
    params: Option<Params<'a>>,
}

#[derive(Deserialize)]
struct Params<'a> {
    #[serde(default, borrow)]
    name: Option<Cow<'a, str>>,
    #[serde(default, borrow)]
    arguments: Option<&'a RawValue>,
}

#[derive(Serialize)]
struct Response<'a, R> {
    jsonrpc: &'static str,
    id: &'a RawValue,
    result: R,
}

#[derive(Serialize)]
struct Info {
    name: &'static str,
    version: &'static str,
}

#[derive(Serialize)]
struct Meta {
    #[serde(rename = "io.modelcontextprotocol/serverInfo")]
    server_info: Info,
}

const META: Meta = Meta {
    server_info: Info {
        name: "floor-bench",
        version: "0.0.0",
    },
};

#[derive(Serialize)]
struct Text<'a> {
    #[serde(rename = "type")]
    kind: &'static str,
    text: &'a str,
}

#[derive(Serialize)]
#[serde(rename_all = "camelCase")]
struct CallResult<'a, S> {
    result_type: &'static str,
    content: [Text<'a>; 1],
    #[serde(skip_serializing_if = "Option::is_none")]
    structured_content: Option<S>,
    #[serde(rename = "_meta")]
    meta: &'static Meta,
}

#[derive(Serialize)]
struct ErrorResponse<'a> {
    jsonrpc: &'static str,
    id: Option<&'a RawValue>,
    error: ErrorBody<'a>,
}

#[derive(Serialize)]
struct ErrorBody<'a> {
    code: i32,
    message: &'a str,
}

fn schema<T: schemars::JsonSchema>() -> serde_json::Value {
    let mut v = schemars::schema_for!(T).to_value();
    if let Some(o) = v.as_object_mut() {
        o.remove("title");
    }
    v
}

/// The `tools/list` result, serialised once.
fn list_result() -> &'static RawValue {
    static LIST: OnceLock<Box<RawValue>> = OnceLock::new();
    LIST.get_or_init(|| {
        let tools = serde_json::json!([
            {"name": "echo", "description": describe::ECHO, "inputSchema": schema::<EchoInput>()},
            {"name": "add", "description": describe::ADD, "inputSchema": schema::<AddInput>(),
             "outputSchema": schema::<AddOutput>()},
            {"name": "noop", "description": describe::NOOP, "inputSchema": schema::<NoopInput>()},
        ]);
        let result = serde_json::json!({
            "resultType": "complete",
            "tools": tools,
            "ttlMs": 60000,
            "cacheScope": "public",
            "_meta": { SERVER_INFO_KEY: META.server_info.name_json() },
        });
        RawValue::from_string(result.to_string()).expect("valid JSON")
    })
}

impl Info {
    fn name_json(&self) -> serde_json::Value {
        serde_json::json!({"name": self.name, "version": self.version})
    }
}

fn error(out: &mut Vec<u8>, id: Option<&RawValue>, code: i32, message: &str) {
    let e = ErrorResponse {
        jsonrpc: "2.0",
        id,
        error: ErrorBody { code, message },
    };
    let _ = serde_json::to_writer(out, &e);
}

fn result<R: Serialize>(out: &mut Vec<u8>, id: &RawValue, result: R) {
    let r = Response {
        jsonrpc: "2.0",
        id,
        result,
    };
    let _ = serde_json::to_writer(out, &r);
}

/// Answers one JSON-RPC message into `out`.
fn respond(body: &[u8], out: &mut Vec<u8>) {
    let req: Request<'_> = match serde_json::from_slice(body) {
        Ok(r) => r,
        Err(_) => return error(out, None, -32700, "parse error"),
    };
    let params = req.params.unwrap_or(Params {
        name: None,
        arguments: None,
    });
    match (&*req.method, params.name.as_deref()) {
        ("tools/list", _) => result(out, req.id, list_result()),
        ("tools/call", Some("echo")) => {
            let args = params.arguments.map_or("{}", RawValue::get);
            match serde_json::from_str::<EchoInput>(args) {
                Ok(i) => result(
                    out,
                    req.id,
                    CallResult::<()> {
                        result_type: "complete",
                        content: [Text {
                            kind: "text",
                            text: &i.text,
                        }],
                        structured_content: None,
                        meta: &META,
                    },
                ),
                Err(_) => error(out, Some(req.id), -32602, "bad arguments"),
            }
        }
        ("tools/call", Some("add")) => {
            let args = params.arguments.map_or("{}", RawValue::get);
            match serde_json::from_str::<AddInput>(args) {
                Ok(i) => {
                    let sum = AddOutput { sum: i.a + i.b };
                    let text = serde_json::to_string(&sum).unwrap_or_default();
                    result(
                        out,
                        req.id,
                        CallResult {
                            result_type: "complete",
                            content: [Text {
                                kind: "text",
                                text: &text,
                            }],
                            structured_content: Some(&sum),
                            meta: &META,
                        },
                    );
                }
                Err(_) => error(out, Some(req.id), -32602, "bad arguments"),
            }
        }
        ("tools/call", Some("noop")) => result(
            out,
            req.id,
            CallResult::<()> {
                result_type: "complete",
                content: [Text {
                    kind: "text",
                    text: "",
                }],
                structured_content: None,
                meta: &META,
            },
        ),
        _ => error(out, Some(req.id), -32601, "method not found"),
    }
}

fn serve_stdio() -> io::Result<()> {
    let mut r = BufReader::with_capacity(64 * 1024, io::stdin());
    let mut w = BufWriter::with_capacity(64 * 1024, io::stdout().lock());
    let mut line = Vec::with_capacity(4096);
    let mut out = Vec::with_capacity(4096);
    loop {
        if r.buffer().is_empty() {
            // About to block on input: send what is answered so far.
            w.flush()?;
        }
        line.clear();
        if r.read_until(b'\n', &mut line)? == 0 {
            break;
        }
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        out.clear();
        respond(&line, &mut out);
        out.push(b'\n');
        w.write_all(&out)?;
    }
    w.flush()
}

async fn handle(
    req: http::Request<hyper::body::Incoming>,
) -> Result<http::Response<Full<Bytes>>, Infallible> {
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes(),
        Err(_) => Bytes::new(),
    };
    let mut out = Vec::with_capacity(256);
    respond(&body, &mut out);
    let mut res = http::Response::new(Full::new(Bytes::from(out)));
    res.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    Ok(res)
}

fn main() -> io::Result<()> {
    let (mode, _rest) = toolwire_bench::parse_mode();
    let _ = list_result();
    match mode {
        Mode::Stdio => serve_stdio(),
        Mode::Http(addr) => tokio::runtime::Builder::new_multi_thread()
            .enable_all()
            .build()?
            .block_on(async move {
                let listener = toolwire_bench::bind(&addr).await?;
                let svc = hyper::service::service_fn(handle);
                toolwire_bench::serve_http1(listener, svc).await
            }),
    }
}
