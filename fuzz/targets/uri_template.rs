//! Fuzz target: the URI template parser and matcher (`toolwire::fuzzing::uri_template`).

fn main() {
    afl::fuzz!(|data: &[u8]| toolwire::fuzzing::uri_template(data));
}
