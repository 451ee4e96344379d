//! The request pipeline shared by every transport: `_meta` checks, the
//! version check, and the one `match` over the method.

use super::{Server, ServerInner, paging};
use crate::context::Outbound;
use bytes::Bytes;
use serde::Deserialize;
use serde_json::{Map, Value, json};
use std::sync::Arc;
use tokio_util::sync::CancellationToken;
use toolwire_proto::meta::{CLIENT_CAPABILITIES_KEY, PROTOCOL_VERSION_KEY, SERVER_INFO_KEY};
use toolwire_proto::types::{
    CallToolRequest, DiscoverRequest, DiscoverResult, ListToolsRequest, RequestMeta, RequestMethod,
    ResultType, ServerCapabilities, ToolsCapability,
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

    pub(crate) fn result_meta(&self) -> Map<String, Value> {
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
            paging::to_raw(&result)
        });
        Reply::result(id, &**raw)
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
