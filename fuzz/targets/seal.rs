//! Fuzz target: opening arbitrary bytes as a sealed requestState (`toolwire::fuzzing::sealed_state`).

fn main() {
    afl::fuzz!(|data: &[u8]| toolwire::fuzzing::sealed_state(data));
}
