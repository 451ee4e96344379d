//! Fuzz target: the built-in schema validator against jsonschema (`toolwire::fuzzing::schema`).

fn main() {
    afl::fuzz!(|data: &[u8]| toolwire::fuzzing::schema(data));
}
