//! Compiles every Rust snippet of the repository's README as a doctest,
//! against this crate's dependencies: the ones a user's own `Cargo.toml`
//! has (`toolwire` with `client`, `tokio`, `serde`, `schemars`,
//! `serde_json`, `axum`). A snippet that stops compiling fails
//! `cargo test`.
//!
//! The runnable examples are this crate's binaries, next to this file.

#[cfg(doctest)]
#[doc = include_str!("../README.md")]
pub struct ReadmeDoctests;
