//! Sans-I/O wire layer of toolwire, a Model Context Protocol implementation for
//! the 2026-07-28 revision.
//!
//! This crate owns the JSON-RPC envelope ([`Message`]), error codes
//! ([`ErrorCode`]), the reserved `_meta` keys ([`meta`]), the protocol types
//! ([`types`]), the tool-name rule ([`validate_tool_name`]) and the
//! `x-mcp-header` rules and header-value encoding ([`header`]), and the
//! refusal of repeated JSON member names ([`from_str_unique`],
//! [`UniqueKeys`], [`UniqueValue`]). It performs no I/O and knows no async runtime.

mod error;
pub mod header;
mod jsonrpc;
pub mod meta;
mod names;
pub mod types;
mod unique;

pub use error::{ErrorCode, ErrorObject};
pub use jsonrpc::{
    DecodeError, JSONRPC_VERSION, MAX_DEPTH, Message, Notification, PlainRequest, Request,
    RequestId, Response, encode_error, encode_notification, encode_request, encode_result,
    exceeds_depth,
};
pub use names::{ToolNameError, validate_tool_name};
pub use unique::{UniqueKeys, UniqueValue, from_str_unique};
