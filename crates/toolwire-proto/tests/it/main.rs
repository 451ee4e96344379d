//! Integration tests of toolwire-proto.

mod golden;
mod props;
mod tasks;
