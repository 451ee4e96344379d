//! The request pipeline shared by every transport: `_meta` checks, the
//! version check, and the one `match` over the method.

use super::{Server, ServerInner};
use crate::context::{Outbound, RequestContext};
use crate::tool::{ToolError, ToolResult, missing_capabilities_error};
use base64::Engine as _;
use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::value::RawValue;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use toolwire_proto::meta::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY};
use toolwire_proto::types::{
    CallToolRequest, CallToolResult, ContentBlock, DiscoverRequest, DiscoverResult,
    ListToolsRequest, ListToolsResult, RequestMeta, RequestMethod, ResultType, ServerCapabilities,
    ToolsCapability,
};
use toolwire_proto::{ErrorCode, ErrorObject, Request, RequestId, encode_error, encode_result};

/// The encoded response to one request, and its error code if it is an error.
#[derive(Debug, Clone)]
pub struct Reply {
    body: Bytes,
    error: Option<ErrorCode>,
}

impl Reply {
    pub(crate) fn result(id: &RequestId, result: &(impl serde::Serialize + ?Sized)) -> Self {
        Self {
            body: Bytes::from(encode_result(id, result)),
            error: None,
        }
    }

    pub(crate) fn error(id: Option<&RequestId>, error: &ErrorObject) -> Self {
        Self {
            body: Bytes::from(encode_error(id, error)),
            error: Some(error.code),
        }
    }

    /// The encoded JSON-RPC response.
    pub fn body(&self) -> &Bytes {
        &self.body
    }

    /// Consumes the reply, returning the encoded response.
    pub fn into_body(self) -> Bytes {
        self.body
    }

    /// The error code, when the response is an error.
    pub fn error_code(&self) -> Option<ErrorCode> {
        self.error
    }
}

/// The parameter members the pipeline reads, parsed once per request.
/// Method-specific members that are rarely used are read from the raw params.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub(crate) struct Params {
    #[serde(rename = "_meta", default)]
    pub(crate) meta: Option<RequestMeta>,
    #[serde(default)]
    pub(crate) name: Option<String>,
    #[serde(default)]
    #[allow(dead_code, reason = "read by the HTTP transport's Mcp-Name check")]
    pub(crate) uri: Option<String>,
    #[serde(default)]
    pub(crate) arguments: Option<Value>,
    #[serde(default)]
    pub(crate) cursor: Option<String>,
}

/// A request whose envelope and common parameters have been read and whose
/// `_meta` has the required members.
#[derive(Debug)]
pub(crate) struct Prepared {
    pub(crate) id: RequestId,
    pub(crate) method: String,
    pub(crate) params: Params,
    pub(crate) meta: Arc<RequestMeta>,
}

impl Prepared {
    /// `_meta`'s protocol version (present: checked by `prepare`).
    pub(crate) fn protocol_version(&self) -> &str {
        self.meta.protocol_version.as_deref().unwrap_or_default()
    }
}

impl Server {
    /// Reads a request's parameters and checks the `_meta` members every
    /// request must carry.
    ///
    /// Spec: basic/index.mdx#meta — `protocolVersion` and `clientCapabilities`
    /// are required; a missing one is `-32602`.
    pub(crate) fn prepare(&self, req: Request) -> Result<Prepared, Reply> {
        let id = req.id;
        let mut params: Params = match &req.params {
            None => Params::default(),
            Some(raw) => match serde_json::from_str(raw.get()) {
                Ok(p) => p,
                Err(e) => {
                    return Err(Reply::error(
                        Some(&id),
                        &ErrorObject::invalid_params(format!("invalid params: {e}")),
                    ));
                }
            },
        };
        let Some(meta) = params.meta.take() else {
            return Err(Reply::error(
                Some(&id),
                &ErrorObject::invalid_params(
                    "params._meta is required and must carry protocolVersion and clientCapabilities",
                ),
            ));
        };
        for (present, key) in [
            (meta.protocol_version.is_some(), PROTOCOL_VERSION_KEY),
            (meta.client_capabilities.is_some(), CLIENT_CAPABILITIES_KEY),
        ] {
            if !present {
                return Err(Reply::error(
                    Some(&id),
                    &ErrorObject::invalid_params(format!("params._meta is missing {key:?}")),
                ));
            }
        }
        Ok(Prepared {
            id,
            method: req.method,
            params,
            meta: Arc::new(meta),
        })
    }

    /// Serves a prepared request: version check, then the method.
    pub(crate) async fn execute(
        &self,
        p: Prepared,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Reply {
        let inner = &*self.inner;
        let version = p.protocol_version();
        if !inner.config.supported_versions.iter().any(|v| v == version) {
            return Reply::error(Some(&p.id), &unsupported_version(inner, version));
        }
        match p.method.as_str() {
            DiscoverRequest::METHOD => self.discover(&p.id),
            ListToolsRequest::METHOD => self.list_tools(&p),
            CallToolRequest::METHOD => self.call_tool(p, cancel, outbound).await,
            other => Reply::error(Some(&p.id), &ErrorObject::method_not_found(other)),
        }
    }

    /// `prepare` then `execute`: the whole pipeline for transports that check
    /// nothing in between.
    pub(crate) async fn handle(
        &self,
        req: Request,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Reply {
        match self.prepare(req) {
            Ok(p) => self.execute(p, cancel, outbound).await,
            Err(reply) => reply,
        }
    }

    fn result_meta(&self) -> Map<String, Value> {
        let mut meta = Map::new();
        meta.insert(SERVER_INFO_KEY.to_owned(), self.inner.server_info.clone());
        meta
    }

    fn discover(&self, id: &RequestId) -> Reply {
        let raw = self.inner.discover.get_or_init(|| {
            let c = &self.inner.config;
            let capabilities = ServerCapabilities {
                tools: Some(ToolsCapability {
                    list_changed: Some(true),
                    ..ToolsCapability::default()
                }),
                ..ServerCapabilities::default()
            };
            let result = DiscoverResult {
                result_type: ResultType::Complete,
                supported_versions: c.supported_versions.clone(),
                capabilities,
                instructions: c.instructions.clone(),
                ttl_ms: c.ttl_ms,
                cache_scope: c.cache_scope,
                meta: Some(self.result_meta()),
            };
            to_raw(&result)
        });
        Reply::result(id, &**raw)
    }

    fn list_tools(&self, p: &Prepared) -> Reply {
        let snapshot = self.inner.tools.snapshot();
        let pages = snapshot.pages.get_or_init(|| {
            let c = &self.inner.config;
            let items = snapshot.items();
            let count = items.len().div_ceil(c.page_size).max(1);
            (0..count)
                .map(|page| {
                    let start = page * c.page_size;
                    let end = (start + c.page_size).min(items.len());
                    let result = ListToolsResult {
                        result_type: ResultType::Complete,
                        tools: items[start..end]
                            .iter()
                            .map(|t| t.definition().clone())
                            .collect(),
                        next_cursor: (end < items.len()).then(|| encode_cursor(end)),
                        ttl_ms: c.ttl_ms,
                        cache_scope: c.cache_scope,
                        meta: Some(self.result_meta()),
                    };
                    to_raw(&result)
                })
                .collect()
        });
        let page = match p.params.cursor.as_deref() {
            None => 0,
            Some(cursor) => match decode_cursor(cursor, self.inner.config.page_size) {
                Some(page) if page < pages.len() => page,
                _ => {
                    return Reply::error(
                        Some(&p.id),
                        &ErrorObject::invalid_params(format!("invalid cursor {cursor:?}")),
                    );
                }
            },
        };
        Reply::result(&p.id, &*pages[page])
    }

    async fn call_tool(
        &self,
        p: Prepared,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Reply {
        let id = p.id;
        let Some(name) = p.params.name else {
            return Reply::error(
                Some(&id),
                &ErrorObject::invalid_params("tools/call needs params.name"),
            );
        };
        let Some(tool) = self.inner.tools.snapshot().get(&name).cloned() else {
            return Reply::error(
                Some(&id),
                &ErrorObject::invalid_params(format!("unknown tool: {name}"))
                    .with_data(json!({ "name": name })),
            );
        };
        let tool = &tool.inner;
        if !tool.required_capabilities.is_empty() {
            let declared = p
                .meta
                .client_capabilities
                .as_ref()
                .and_then(|c| serde_json::to_value(c).ok())
                .unwrap_or(Value::Null);
            let missing: Vec<&String> = tool
                .required_capabilities
                .iter()
                .filter(|c| declared.get(c.as_str()).is_none())
                .collect();
            if !missing.is_empty() {
                return Reply::error(Some(&id), &missing_capabilities_error(&missing));
            }
        }
        // Spec: server/tools.mdx — a missing `arguments` means no arguments.
        let args = p
            .params
            .arguments
            .unwrap_or_else(|| Value::Object(Map::new()));
        if let Err(why) = tool.input.check(&args) {
            let text = format!(
                "Invalid arguments for tool {name:?}:{why}\nFix the arguments to match the tool's inputSchema and call again."
            );
            return self.complete(&id, CallToolResult::error_text(text));
        }
        let cx = RequestContext::new(id.clone(), p.meta, cancel, outbound);
        match (tool.handler)(args, cx).await {
            Ok(ToolResult::Complete(mut result)) => {
                if let Some(schema) = &tool.output
                    && result.is_error != Some(true)
                {
                    let checked = match &result.structured_content {
                        None => Err("the tool returned no structuredContent".to_owned()),
                        Some(v) => schema.check(v),
                    };
                    if let Err(why) = checked {
                        tracing::error!(tool = %name, "structuredContent does not match outputSchema:{why}");
                        return Reply::error(
                            Some(&id),
                            &ErrorObject::internal(format!(
                                "tool {name:?} produced output that does not match its outputSchema"
                            )),
                        );
                    }
                }
                if let Some(structured) = &result.structured_content {
                    // Spec: server/tools.mdx#structured-content — mirror as text.
                    let has_text = result
                        .content
                        .iter()
                        .any(|c| matches!(c, ContentBlock::Text(_)));
                    if !has_text {
                        result
                            .content
                            .push(ContentBlock::text(structured.to_string()));
                    }
                }
                self.complete(&id, result)
            }
            Err(ToolError::Failed(text)) => self.complete(&id, CallToolResult::error_text(text)),
            Err(ToolError::Protocol(e)) => Reply::error(Some(&id), &e),
        }
    }

    fn complete(&self, id: &RequestId, mut result: CallToolResult) -> Reply {
        result.result_type = ResultType::Complete;
        let meta = result.meta.get_or_insert_with(Map::new);
        meta.entry(SERVER_INFO_KEY)
            .or_insert_with(|| self.inner.server_info.clone());
        Reply::result(id, &result)
    }
}

fn unsupported_version(inner: &ServerInner, requested: &str) -> ErrorObject {
    ErrorObject::new(
        ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        format!("unsupported protocol version {requested:?}"),
    )
    .with_data(json!({
        "supported": inner.config.supported_versions,
        "requested": requested,
    }))
}

fn to_raw(value: &impl serde::Serialize) -> Box<RawValue> {
    serde_json::value::to_raw_value(value).unwrap_or_else(|_| {
        RawValue::from_string("{}".to_owned()).unwrap_or_else(|_| unreachable!("valid JSON"))
    })
}

const CURSOR_PREFIX: &str = "tw1:";

fn encode_cursor(offset: usize) -> String {
    URL_SAFE_NO_PAD.encode(format!("{CURSOR_PREFIX}{offset}"))
}

/// The page a cursor points at, if it is one of ours and lands on a page boundary.
fn decode_cursor(cursor: &str, page_size: usize) -> Option<usize> {
    let bytes = URL_SAFE_NO_PAD.decode(cursor).ok()?;
    let text = std::str::from_utf8(&bytes).ok()?;
    let offset: usize = text.strip_prefix(CURSOR_PREFIX)?.parse().ok()?;
    offset
        .is_multiple_of(page_size)
        .then_some(offset / page_size)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cursor_round_trips_and_rejects_garbage() {
        let c = encode_cursor(20);
        assert_eq!(decode_cursor(&c, 10), Some(2));
        assert_eq!(decode_cursor(&c, 7), None);
        assert_eq!(decode_cursor("nope", 10), None);
        assert_eq!(decode_cursor(&URL_SAFE_NO_PAD.encode("tw1:-1"), 10), None);
    }
}
