//! `#[tool]` on a method with a `self` receiver.

struct Counter;

impl Counter {
    /// Counts.
    #[toolwire::tool]
    async fn count(&self, by: u32) -> String {
        by.to_string()
    }
}

fn main() {
    let _ = Counter;
}
