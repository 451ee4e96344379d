//! Transports: how messages reach the server pipeline.

pub(crate) mod stdio;
