//! The prompt fixtures, with their argument completions.

use crate::PNG_BASE64;
use crate::tools::embedded_text;
use schemars::JsonSchema;
use serde::Deserialize;
use toolwire::proto::types::{ContentBlock, PromptMessage, Role};
use toolwire::{
    Completer, ElicitAnswer, HandlerError, InputRequired, Prompt, PromptArguments, PromptResult,
    RegistrationError, RequestContext, Server,
};

/// The arguments of `test_prompt_with_arguments`.
#[derive(Debug, Deserialize, JsonSchema)]
struct TwoArguments {
    /// First test argument
    arg1: String,
    /// Second test argument
    arg2: String,
}

/// The form of "What context should the prompt use?".
#[derive(Debug, Deserialize, JsonSchema)]
struct Context {
    context: String,
}

fn user(content: ContentBlock) -> PromptMessage {
    PromptMessage {
        role: Role::User,
        content,
    }
}

pub(crate) fn register(server: &Server) -> Result<(), RegistrationError> {
    server.add_prompt(
        Prompt::builder("test_simple_prompt")
            .description("A simple prompt without arguments")
            .handler(|_: PromptArguments, _| async { "This is a simple prompt for testing." })?,
    )?;
    let values = ["test", "testValue1", "testValue2", "paris", "park", "party"];
    server.add_prompt(
        Prompt::builder("test_prompt_with_arguments")
            .description("A prompt with two required arguments")
            .arguments::<TwoArguments>()
            .complete("arg1", Completer::from_values(values))
            .complete("arg2", Completer::from_values(values))
            .handler(|a: TwoArguments, _| async move {
                format!(
                    "Prompt with arguments: arg1='{}', arg2='{}'",
                    a.arg1, a.arg2
                )
            })?,
    )?;
    server.add_prompt(
        Prompt::builder("test_prompt_with_embedded_resource")
            .description("A prompt that embeds the resource it is given")
            .required_argument("resourceUri", "URI of the resource to embed")
            .handler(|a: PromptArguments, _| async move {
                let uri = a.get("resourceUri").map_or("", String::as_str);
                vec![
                    user(embedded_text(
                        uri,
                        "text/plain",
                        "Embedded resource content for testing.",
                    )),
                    PromptMessage::text(Role::User, "Please process the embedded resource above."),
                ]
            })?,
    )?;
    server.add_prompt(
        Prompt::builder("test_prompt_with_image")
            .description("A prompt with an image")
            .handler(|_: PromptArguments, _| async {
                vec![
                    user(ContentBlock::image(PNG_BASE64, "image/png")),
                    PromptMessage::text(Role::User, "Please analyze the image above."),
                ]
            })?,
    )?;
    server.add_prompt(
        Prompt::builder("test_input_required_result_prompt")
            .description("Asks the user for context (input_required), then renders")
            .handler(|_: PromptArguments, cx: RequestContext| async move {
                match cx.input::<ElicitAnswer<Context>>("user_context")? {
                    Some(answer) => {
                        let context = answer.accepted().map_or_else(String::new, |c| c.context);
                        Ok::<_, HandlerError>(PromptResult::Complete(
                            toolwire::proto::types::GetPromptResult::new(vec![
                                PromptMessage::text(
                                    Role::User,
                                    format!("Prompt with context: {context}"),
                                ),
                            ]),
                        ))
                    }
                    None => Ok(InputRequired::new()
                        .elicit::<Context>("user_context", "What context should the prompt use?")
                        .into()),
                }
            })?,
    )?;
    Ok(())
}
