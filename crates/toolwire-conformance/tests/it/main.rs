//! End-to-end tests of `conformance-server`: the exact fixture texts, over
//! stdio and Streamable HTTP. The official suite only checks shapes; these
//! pin the contents.

mod fixtures;
mod http;
mod support;
