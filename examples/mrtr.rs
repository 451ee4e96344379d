//! A tool that asks the user before it acts (multi round-trip requests:
//! an elicitation through `InputRequired`), on stdio.
//!
//! Run it with `cargo run -p toolwire-examples --bin mrtr`, then:
//!
//! ```sh
//! cargo build -p toolwire-examples
//! toolwire call --stdio target/debug/mrtr deploy service=web                                   # asks at a terminal
//! toolwire call --stdio target/debug/mrtr deploy service=web --input 'confirm={"confirm": true}'
//! toolwire call --stdio target/debug/mrtr deploy service=web --input confirm=decline
//! ```
//!
//! The first call returns `resultType: "input_required"` with the form to
//! show and a sealed `requestState`; the client asks the user and calls
//! again with the answer and the state; the handler runs again and reads
//! both. A client that did not declare the `elicitation` capability gets
//! `-32021` instead of a form.

use toolwire::{
    ElicitAnswer, InputRequired, RequestContext, Server, ServerConfig, Tool, ToolError, ToolResult,
};

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Deploy {
    /// The service to deploy.
    service: String,
}

/// The form the user fills in: a flat struct of strings, numbers, booleans
/// or enums.
#[derive(serde::Deserialize, schemars::JsonSchema)]
struct Confirm {
    /// Go ahead?
    confirm: bool,
}

/// Work done in the first round, kept for the second in the sealed
/// `requestState` (encrypted and bound to this tool and these arguments).
#[derive(serde::Serialize, serde::Deserialize)]
struct Plan {
    steps: Vec<String>,
}

async fn deploy(input: Deploy, cx: RequestContext) -> Result<ToolResult, ToolError> {
    let answer = cx.input::<ElicitAnswer<Confirm>>("confirm")?;
    let plan = cx.state::<Plan>()?;
    Ok(match (answer, plan) {
        (Some(ElicitAnswer::Accept(Confirm { confirm: true })), Some(plan)) => ToolResult::text(
            format!("deployed {}: {}", input.service, plan.steps.join(", ")),
        ),
        // Declined, cancelled, or `confirm: false`.
        (Some(_), Some(_)) => ToolResult::error_text(format!("not deployed: {}", input.service)),
        // The first call (or an answer without our state): plan, then ask.
        _ => {
            let plan = Plan {
                steps: vec![
                    format!("build {}", input.service),
                    format!("roll out {}", input.service),
                ],
            };
            InputRequired::new()
                .elicit::<Confirm>(
                    "confirm",
                    format!("Deploy {} in {} steps?", input.service, plan.steps.len()),
                )
                .with_state(&plan)
                .into()
        }
    })
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let server = Server::new(ServerConfig::new("mrtr-example", "1.0.0")).with_tool(
        Tool::builder("deploy")
            .description("Deploys a service, after the user confirms")
            .input::<Deploy>()
            .handler(deploy)?,
    )?;
    toolwire::serve_stdio(server).await?;
    Ok(())
}
