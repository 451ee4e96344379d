//! Runs the example programs: the binaries a user starts, as they are
//! built, on loopback or over pipes, with the client example and a
//! `toolwire::Client` talking to them.

mod docs;
mod http;
mod stdio;
mod support;
mod testing;
