//! Fuzz target: the JSON-RPC decoder and the modern and legacy prepare paths (`toolwire::fuzzing::decode_and_prepare`).

fn main() {
    afl::fuzz!(|data: &[u8]| toolwire::fuzzing::decode_and_prepare(data));
}
