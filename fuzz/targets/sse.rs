//! Fuzz target: the client's SSE parser (`toolwire::fuzzing::sse`).

fn main() {
    afl::fuzz!(|data: &[u8]| toolwire::fuzzing::sse(data));
}
