//! The multi round-trip (MRTR) tool fixtures: each answers
//! `resultType: "input_required"` until the retry brings what it asked for.
//!
//! Spec: basic/patterns/mrtr.mdx

use crate::tools::tool;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use toolwire::proto::types::{
    CreateMessageRequestParams, CreateMessageResult, InputRequest, ListRootsResult,
    SamplingContent, SamplingMessage, SamplingMessageContentBlock,
};
use toolwire::{
    ElicitAnswer, InputRequired, RegistrationError, RequestContext, Server, ToolError, ToolResult,
};

/// The form of "What is your name?".
#[derive(Debug, Deserialize, JsonSchema)]
pub(crate) struct UserName {
    pub(crate) name: String,
}

/// The form of "Please confirm".
#[derive(Debug, Deserialize, JsonSchema)]
struct Confirm {
    ok: bool,
}

/// The form of "Step 2: What is your favorite color?".
#[derive(Debug, Deserialize, JsonSchema)]
struct Color {
    color: String,
}

fn ask_name(ir: InputRequired, key: &str, message: &str) -> InputRequired {
    ir.elicit::<UserName>(key, message)
}

fn sampling(question: &str, max_tokens: u64) -> CreateMessageRequestParams {
    CreateMessageRequestParams {
        messages: vec![SamplingMessage::user_text(question)],
        max_tokens,
        ..CreateMessageRequestParams::default()
    }
}

/// The text of a sampling answer, if it is one text block.
fn sampled_text(r: &CreateMessageResult) -> Option<&str> {
    match &r.content {
        SamplingContent::Single(SamplingMessageContentBlock::Text(t)) => Some(&t.text),
        _ => None,
    }
}

/// The state `test_input_required_result_multi_round` carries between rounds.
#[derive(Debug, Serialize, Deserialize)]
struct MultiRound {
    round: u32,
    name: Option<String>,
}

type Outcome = Result<ToolResult, ToolError>;

fn elicitation(cx: &RequestContext) -> Outcome {
    // Any valid answer completes, with or without a requestState, whatever
    // other keys came along (the suite's ignore-extra-params scenario sends
    // one without state: a greeting is harmless to forge, so this tool
    // accepts an unsolicited answer); a malformed one is -32602.
    let answer = match cx.input::<ElicitAnswer<UserName>>("user_name")? {
        Some(answer) => Some(answer),
        None => cx.unsolicited_input::<ElicitAnswer<UserName>>("user_name")?,
    };
    match answer {
        Some(ElicitAnswer::Accept(u)) => Ok(ToolResult::text(format!("Hello, {}!", u.name))),
        Some(_) => Ok(ToolResult::text("Hello, stranger!")),
        None => Ok(ask_name(InputRequired::new(), "user_name", "What is your name?").into()),
    }
}

fn sampling_tool(cx: &RequestContext) -> Outcome {
    match cx.input::<CreateMessageResult>("capital_question")? {
        Some(r) => Ok(ToolResult::text(format!(
            "Sampling response: {}",
            sampled_text(&r).unwrap_or("(no text)")
        ))),
        None => Ok(InputRequired::new()
            .sample(
                "capital_question",
                sampling("What is the capital of France?", 100),
            )
            .into()),
    }
}

fn list_roots(cx: &RequestContext) -> Outcome {
    match cx.input::<ListRootsResult>("client_roots")? {
        Some(r) => Ok(ToolResult::text(format!("Found {} root(s)", r.roots.len()))),
        None => Ok(InputRequired::new().list_roots("client_roots").into()),
    }
}

/// Round 1 asks for confirmation and keeps a state; the retry must bring the
/// state back (sealed, so it cannot be forged) and `ok: true`.
fn request_state(cx: &RequestContext) -> Outcome {
    let state = cx.state::<String>()?;
    let answer = cx.input::<ElicitAnswer<Confirm>>("confirm")?;
    match (state.as_deref(), answer) {
        (Some("awaiting-confirmation"), Some(ElicitAnswer::Accept(Confirm { ok: true }))) => {
            Ok(ToolResult::text("Confirmed: state-ok"))
        }
        (Some("awaiting-confirmation"), Some(_)) => Ok(ToolResult::text("Not confirmed: state-ok")),
        _ => Ok(InputRequired::new()
            .elicit::<Confirm>("confirm", "Please confirm")
            .with_state("awaiting-confirmation")
            .into()),
    }
}

fn multiple_inputs(cx: &RequestContext) -> Outcome {
    let name = cx.input::<ElicitAnswer<UserName>>("user_name")?;
    let greeting = cx.input::<CreateMessageResult>("greeting")?;
    let roots = cx.input::<ListRootsResult>("client_roots")?;
    if let (Some(name), Some(greeting), Some(roots)) = (name, greeting, roots) {
        let name = name
            .accepted()
            .map_or_else(|| "stranger".to_owned(), |u| u.name);
        return Ok(ToolResult::text(format!(
            "Received all inputs: name={name}, greeting={}, roots={}",
            sampled_text(&greeting).unwrap_or("(no text)"),
            roots.roots.len()
        )));
    }
    Ok(
        ask_name(InputRequired::new(), "user_name", "What is your name?")
            .sample("greeting", sampling("Generate a greeting", 50))
            .list_roots("client_roots")
            .with_state("multiple-inputs")
            .into(),
    )
}

/// Three rounds: name, then color, then done. Each round's sealed state is
/// different (it carries the round and what was learned so far).
fn multi_round(cx: &RequestContext) -> Outcome {
    let state = cx.state::<MultiRound>()?;
    match state {
        None => Ok(
            ask_name(InputRequired::new(), "step1", "Step 1: What is your name?")
                .with_state(&MultiRound {
                    round: 1,
                    name: None,
                })
                .into(),
        ),
        Some(MultiRound { round: 1, .. }) => match cx.input::<ElicitAnswer<UserName>>("step1")? {
            Some(answer) => {
                let name = answer.accepted().map(|u| u.name);
                Ok(InputRequired::new()
                    .elicit::<Color>("step2", "Step 2: What is your favorite color?")
                    .with_state(&MultiRound { round: 2, name })
                    .into())
            }
            None => Ok(
                ask_name(InputRequired::new(), "step1", "Step 1: What is your name?")
                    .with_state(&MultiRound {
                        round: 1,
                        name: None,
                    })
                    .into(),
            ),
        },
        Some(MultiRound { name, .. }) => match cx.input::<ElicitAnswer<Color>>("step2")? {
            Some(answer) => Ok(ToolResult::text(format!(
                "Multi-round complete for {} who likes {}",
                name.as_deref().unwrap_or("someone"),
                answer
                    .accepted()
                    .map_or_else(|| "no color".to_owned(), |c| c.color)
            ))),
            None => Ok(InputRequired::new()
                .elicit::<Color>("step2", "Step 2: What is your favorite color?")
                .with_state(&MultiRound { round: 2, name })
                .into()),
        },
    }
}

/// Like `request_state`; a retry whose state was tampered with never gets
/// here: the framework refuses it with -32602.
fn tampered_state(cx: &RequestContext) -> Outcome {
    match (
        cx.state::<String>()?,
        cx.input::<ElicitAnswer<Confirm>>("confirm")?,
    ) {
        (Some(_), Some(_)) => Ok(ToolResult::text("State verified")),
        _ => Ok(InputRequired::new()
            .elicit::<Confirm>("confirm", "Please confirm")
            .with_state("integrity-protected")
            .into()),
    }
}

/// Asks only for what the client declared it can answer.
fn capabilities(cx: &RequestContext) -> Outcome {
    if cx.input_responses().is_some_and(|r| !r.is_empty()) {
        return Ok(ToolResult::text("Received the inputs the client supports"));
    }
    let mut ir = InputRequired::new();
    let mut any = false;
    if cx.client_capabilities().supports_elicitation_form() {
        ir = ask_name(ir, "user_name", "What is your name?");
        any = true;
    }
    let sample = InputRequest::CreateMessage(sampling("Say hello", 20));
    if cx.supports_input(&sample) {
        ir = ir.request("greeting", sample);
        any = true;
    }
    if !any {
        return Ok(ToolResult::text(
            "The client declared no capability this tool could ask through",
        ));
    }
    Ok(ir.with_state("capabilities").into())
}

pub(crate) fn register(server: &Server) -> Result<(), RegistrationError> {
    type Fixture = (&'static str, &'static str, fn(&RequestContext) -> Outcome);
    let fixtures: [Fixture; 8] = [
        (
            "test_input_required_result_elicitation",
            "Asks for the user's name (elicitation), then greets them",
            elicitation,
        ),
        (
            "test_input_required_result_sampling",
            "Asks the client's model a question (sampling)",
            sampling_tool,
        ),
        (
            "test_input_required_result_list_roots",
            "Asks for the client's roots",
            list_roots,
        ),
        (
            "test_input_required_result_request_state",
            "Asks for confirmation and carries a sealed requestState",
            request_state,
        ),
        (
            "test_input_required_result_multiple_inputs",
            "Asks for elicitation, sampling and roots at once",
            multiple_inputs,
        ),
        (
            "test_input_required_result_multi_round",
            "Asks in two rounds (name, then color), then completes",
            multi_round,
        ),
        (
            "test_input_required_result_tampered_state",
            "Carries an integrity-protected requestState; a tampered one is refused",
            tampered_state,
        ),
        (
            "test_input_required_result_capabilities",
            "Asks only through the capabilities the client declared",
            capabilities,
        ),
    ];
    for (name, description, f) in fixtures {
        server.add_tool(
            tool(name, description)
                .handler(move |_: Value, cx: RequestContext| async move { f(&cx) })?,
        )?;
    }
    Ok(())
}
