//! Tools with a typed output (`.output::<T>()`), on stdio.
//!
//! Run it with `cargo run -p toolwire-examples --bin typed_output`, then:
//!
//! ```sh
//! cargo build -p toolwire-examples
//! toolwire call --stdio target/debug/typed_output stats --args '{"numbers": [1, 2, 6]}'
//! toolwire call --stdio target/debug/typed_output file_size path=Cargo.toml --json
//! ```
//!
//! The handler of a typed tool returns `T` or `Result<T, ToolError>`: the
//! value is sent as `structuredContent`, checked against the `outputSchema`
//! generated from `T`, and mirrored as JSON text for clients that read only
//! `content`. An `Err` becomes an `isError: true` result with the error's
//! text.

use toolwire::{RequestContext, Server, ServerConfig, Tool, ToolError};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Numbers {
    /// The numbers to summarise.
    numbers: Vec<f64>,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct Stats {
    count: usize,
    mean: f64,
    min: f64,
    max: f64,
}

async fn stats(input: Numbers, _cx: RequestContext) -> Result<Stats, ToolError> {
    let Some(&first) = input.numbers.first() else {
        // The model reads this and can call again with numbers.
        return Err(ToolError::failed("give at least one number"));
    };
    let count = input.numbers.len();
    let (min, max) = input
        .numbers
        .iter()
        .fold((first, first), |(lo, hi), &n| (lo.min(n), hi.max(n)));
    Ok(Stats {
        count,
        mean: input.numbers.iter().sum::<f64>() / count as f64,
        min,
        max,
    })
}

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct FilePath {
    /// Path of a file.
    path: String,
}

#[derive(serde::Serialize, schemars::JsonSchema)]
struct FileSize {
    bytes: u64,
}

/// `?` on an `io::Error` works here too: a missing file is an `isError`
/// result such as "No such file or directory (os error 2)".
async fn file_size(input: FilePath, _cx: RequestContext) -> Result<FileSize, ToolError> {
    let metadata = tokio::fs::metadata(&input.path).await?;
    Ok(FileSize {
        bytes: metadata.len(),
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::new(ServerConfig::new("typed-output-example", "1.0.0"))
        .with_tool(
            Tool::builder("stats")
                .description("Count, mean, minimum and maximum of some numbers")
                .input::<Numbers>()
                .output::<Stats>()
                .handler(stats)?,
        )?
        .with_tool(
            Tool::builder("file_size")
                .description("The size of a file in bytes")
                .input::<FilePath>()
                .output::<FileSize>()
                .handler(file_size)?,
        )?;
    toolwire::serve_stdio(server).await?;
    Ok(())
}
