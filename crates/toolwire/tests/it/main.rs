//! Integration tests of toolwire.

mod apps;
mod duplex;
mod forwarding;
#[cfg(feature = "http")]
mod http;
mod legacy;
#[cfg(feature = "macros")]
mod limits;
#[cfg(all(feature = "macros", feature = "http"))]
mod macros;
mod middleware;
mod module_graph;
mod mrtr;
mod order;
#[cfg(feature = "http")]
mod tasks;
#[cfg(feature = "macros")]
mod ui;
