//! Integration tests of toolwire.

#[cfg(feature = "http")]
mod http;
mod legacy;
mod mrtr;
