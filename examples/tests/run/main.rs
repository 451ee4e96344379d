//! Runs the example programs: the binaries a user starts, as they are
//! built, on loopback or over pipes, with the client example and a
//! `toolwire::Client` talking to them.

mod http;
mod readme;
mod stdio;
mod support;
mod testing;
