//! End-to-end tests of the `toolwire` binary.

mod bounds;
mod client;
mod era;
mod features;
mod demo_inputs;
mod listen;
mod mrtr;
#[cfg(feature = "otel")]
mod otel;
mod stdio;
mod support;
mod ux;
mod tls;
