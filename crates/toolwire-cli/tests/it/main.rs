//! End-to-end tests of the `toolwire` binary.

mod client;
mod era;
mod features;
mod listen;
mod mrtr;
mod stdio;
mod support;
mod tls;
