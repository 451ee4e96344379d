//! Reserved `_meta` keys and protocol version constants.
//!
//! Spec: basic/index.mdx#meta

/// The protocol revision this crate implements.
pub const PROTOCOL_VERSION: &str = "2026-07-28";

/// `_meta` key: the protocol version of a request (required on every request).
pub const PROTOCOL_VERSION_KEY: &str = "io.modelcontextprotocol/protocolVersion";
/// `_meta` key: the client's capabilities for this request (required on every request).
pub const CLIENT_CAPABILITIES_KEY: &str = "io.modelcontextprotocol/clientCapabilities";
/// `_meta` key: the client's implementation info (optional).
pub const CLIENT_INFO_KEY: &str = "io.modelcontextprotocol/clientInfo";
/// `_meta` key: the log level the client opts into for this request (optional).
pub const LOG_LEVEL_KEY: &str = "io.modelcontextprotocol/logLevel";
/// `_meta` key: the server's implementation info, on results.
pub const SERVER_INFO_KEY: &str = "io.modelcontextprotocol/serverInfo";
/// `_meta` key (toolwire's own, not the specification's): on a list
/// result, a fingerprint of the whole list, when the server is configured
/// to send one (`ServerConfig::with_list_fingerprints`).
pub const LIST_FINGERPRINT_KEY: &str = "io.toolwire/fingerprint";
/// `_meta` key: the id of the `subscriptions/listen` stream a notification belongs to.
pub const SUBSCRIPTION_ID_KEY: &str = "io.modelcontextprotocol/subscriptionId";
/// `_meta` key: the progress token of a request.
pub const PROGRESS_TOKEN_KEY: &str = "progressToken";
/// `_meta` key: the W3C Trace Context `traceparent` of a request (optional;
/// reserved for OpenTelemetry without the `io.modelcontextprotocol/` prefix).
///
/// Spec: basic/index.mdx#opentelemetry-trace-context
pub const TRACEPARENT_KEY: &str = "traceparent";
/// `_meta` key: the W3C Trace Context `tracestate` of a request (optional).
pub const TRACESTATE_KEY: &str = "tracestate";
/// `_meta` key: the W3C Baggage of a request (optional).
pub const BAGGAGE_KEY: &str = "baggage";
