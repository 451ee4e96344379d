//! Fuzz target: the header-value decoder and the x-mcp-header rules (`toolwire::fuzzing::header`).

fn main() {
    afl::fuzz!(|data: &[u8]| toolwire::fuzzing::header(data));
}
