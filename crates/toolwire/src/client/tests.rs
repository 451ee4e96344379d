//! Client tests. `fake` scripts a server over an in-process pipe (stdio
//! framing) or behind a recording HTTP-kind transport, so the wire can be
//! checked exactly; `server` runs the real [`Server`](crate::Server) in
//! process.

mod cache;
mod era;
#[cfg(feature = "http")]
mod era_http;
mod fake;
mod http;
#[cfg(feature = "http")]
mod http_socket;
#[cfg(feature = "http")]
mod http_sse;
mod mrtr;
mod server;
#[cfg(feature = "http")]
mod tls;
mod wire;
