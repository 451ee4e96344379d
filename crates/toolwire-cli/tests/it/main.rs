//! End-to-end tests of the `toolwire` binary.

mod client;
mod demo_inputs;
mod listen;
mod mrtr;
mod stdio;
mod support;
