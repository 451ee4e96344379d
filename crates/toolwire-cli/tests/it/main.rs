//! End-to-end tests of the `toolwire` binary.

mod stdio;
mod support;
