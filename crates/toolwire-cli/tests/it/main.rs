//! End-to-end tests of the `toolwire` binary.

mod bounds;
mod client;
mod listen;
mod mrtr;
mod stdio;
mod support;
mod ux;
