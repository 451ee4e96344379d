//! End-to-end tests of the `toolwire` binary.

mod bounds;
mod client;
mod demo_inputs;
mod duplicates;
mod era;
mod features;
mod listen;
mod mrtr;
#[cfg(feature = "otel")]
mod otel;
mod stdio;
mod support;
mod tls;
mod ux;
