//! The demo resources and prompt served by `toolwire serve` beside the demo
//! tools, so that every client command (`resources`, `templates`, `read`,
//! `prompts`, `prompt`, `complete`) has something to show.

use toolwire::{
    Completer, HandlerError, Prompt, PromptArguments, RegistrationError, Resource,
    ResourceTemplate, Server, UriVariables,
};

/// Names the greeting template and the `greet` prompt complete.
const NAMES: [&str; 4] = ["alice", "albert", "bob", "carol"];

/// Adds the demo resource, resource template and prompt to `server`.
pub(crate) fn register(server: &Server) -> Result<(), RegistrationError> {
    server.add_resource(
        Resource::builder("demo://readme", "readme")
            .title("Read me")
            .description("What this demo server offers.")
            .mime_type("text/plain")
            .text(
                "toolwire demo server: tools echo, add, countdown, regional_echo, confirm_action, \
                 define_tool, undefine_tool; the template demo://greeting/{name}; the prompt greet.",
            )?,
    )?;
    server.add_resource_template(
        ResourceTemplate::builder("demo://greeting/{name}", "greeting")
            .description("A greeting for NAME.")
            .mime_type("text/plain")
            .complete("name", Completer::from_values(NAMES))
            .handler(|vars: UriVariables, _| async move {
                match vars.get("name") {
                    Some(name) => Ok(format!("Hello, {name}!")),
                    None => Err(HandlerError::NotFound),
                }
            })?,
    )?;
    server.add_prompt(
        Prompt::builder("greet")
            .description("Asks the model to greet someone.")
            .required_argument("name", "Who to greet")
            .complete("name", Completer::from_values(NAMES))
            .handler(|a: PromptArguments, _| async move {
                let name = a.get("name").map_or("", String::as_str);
                format!("Please greet {name} warmly.")
            })?,
    )?;
    Ok(())
}
