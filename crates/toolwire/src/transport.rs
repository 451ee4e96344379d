//! Transports: how messages reach the server pipeline.

#[cfg(feature = "http")]
pub(crate) mod http;
pub(crate) mod stdio;
