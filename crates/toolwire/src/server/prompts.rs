//! `prompts/list` and `prompts/get`, and the prompt registry's side of
//! [`Server`].

use super::accept::Prepared;
use super::outcome::Outcome;
use super::{Server, paging};
use crate::bus::ListChanged;
use crate::context::{Outbound, RequestContext};
use crate::handler::{EntryKind, HandlerOutput, RegistrationError};
use crate::prompt::Prompt;
use crate::registry::Named;
use serde_json::{Map, Value, json};
use tokio_util::sync::CancellationToken;
use toolwire_proto::ErrorObject;
use toolwire_proto::meta::SERVER_INFO_KEY;
use toolwire_proto::types::{
    ContentBlock, GetPromptRequest, GetPromptResult, ListPromptsResult, ResultType,
};

impl Named for Prompt {
    fn name(&self) -> &str {
        self.name()
    }
}

impl Server {
    /// Registers a prompt, failing if the name is taken. Publishes
    /// [`ListChanged::Prompts`].
    pub fn add_prompt(&self, prompt: Prompt) -> Result<(), RegistrationError> {
        let name = prompt.name().to_owned();
        if !self.register(&self.inner.prompts, prompt, ListChanged::Prompts) {
            return Err(RegistrationError::Duplicate {
                kind: EntryKind::Prompt,
                name,
            });
        }
        Ok(())
    }

    /// Replaces every prompt with `prompts`, in their order, at once (see
    /// [`replace_tools`](Self::replace_tools)). Publishes
    /// [`ListChanged::Prompts`] once; on a duplicate name nothing changes.
    pub fn replace_prompts(&self, prompts: Vec<Prompt>) -> Result<(), RegistrationError> {
        self.replace(
            &self.inner.prompts,
            prompts,
            ListChanged::Prompts,
            EntryKind::Prompt,
        )
    }

    /// Builder-style [`add_prompt`](Self::add_prompt).
    pub fn with_prompt(self, prompt: Prompt) -> Result<Self, RegistrationError> {
        self.add_prompt(prompt)?;
        Ok(self)
    }

    /// Removes a prompt; `true` if it existed. Publishes
    /// [`ListChanged::Prompts`].
    pub fn remove_prompt(&self, name: &str) -> bool {
        self.unregister(&self.inner.prompts, name, ListChanged::Prompts)
    }

    /// Names of the registered prompts, in order.
    pub fn prompt_names(&self) -> Vec<String> {
        self.inner.prompts.names()
    }

    /// A registered prompt by name.
    pub fn prompt(&self, name: &str) -> Option<Prompt> {
        self.inner.prompts.snapshot().get(name).cloned()
    }

    pub(crate) fn list_prompts(&self, p: &Prepared) -> Outcome {
        let snapshot = self.inner.prompts.snapshot();
        let cursor = p.params.cursor.as_deref();
        let build = |items: &[Prompt], next_cursor, cache_scope, meta| ListPromptsResult {
            result_type: ResultType::Complete,
            prompts: items.iter().map(|p| p.definition().clone()).collect(),
            next_cursor,
            ttl_ms: self.ttl_ms(),
            cache_scope,
            meta: Some(meta),
        };
        paging::list_page(self, p, &snapshot, cursor, build)
    }

    pub(crate) async fn get_prompt(
        &self,
        mut p: Prepared,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Outcome {
        let id = p.id.clone();
        let shape = p.era.shape();
        let Some(name) = p.params.name.take() else {
            return Outcome::error(ErrorObject::invalid_params("prompts/get needs params.name"));
        };
        // Spec: server/prompts.mdx#error-handling — an invalid prompt name
        // is -32602.
        let Some(prompt) = self.prompt(&name) else {
            return Outcome::error(
                ErrorObject::invalid_params(format!("unknown prompt: {name}"))
                    .with_data(json!({ "name": name })),
            );
        };
        let given = p.params.arguments.take();
        // A retry's state is checked before anything runs, bound to the
        // arguments as sent.
        let empty = Value::Object(Map::new());
        let bound = given.as_ref().unwrap_or(&empty);
        let (round, input) = match self.begin_round::<GetPromptRequest>(&mut p, &name, bound) {
            Ok(r) => r,
            Err(outcome) => return outcome,
        };
        let args = match prompt.check_arguments(given.as_ref()) {
            Ok(args) => args,
            Err(e) => return Outcome::error(e),
        };
        let cx = RequestContext::new(id.clone(), p.meta, cancel, outbound)
            .with_caller_token(p.who.caller_token())
            .with_principal(p.who.into_principal())
            .with_round(input);
        let outcome = (prompt.inner.handler)(args, cx.clone()).await;
        cx.finish();
        match outcome {
            Ok(HandlerOutput::InputRequired(ir)) => {
                let bound = given.as_ref().unwrap_or(&empty);
                self.input_required(round, ir, &name, bound)
            }
            Ok(HandlerOutput::Complete(mut result)) => {
                if let Some(e) = invalid_embedded_uri(&name, &result) {
                    return Outcome::error(e);
                }
                result.result_type = ResultType::Complete;
                let Some(meta) = result.meta.as_mut() else {
                    return self.respond_with_meta(shape, &id, &result);
                };
                meta.entry(SERVER_INFO_KEY)
                    .or_insert_with(|| self.inner.server_info.clone());
                self.respond(shape, &id, &result)
            }
            Err(e) => Outcome::error(e.into_error_object()),
        }
    }
}

/// The `-32603` for a rendered prompt that embeds a resource whose URI is
/// not an absolute URI: the handler's mistake, reported to the client
/// without a log line (a client may have supplied the URI).
///
/// Spec: server/prompts.mdx#embedded-resources — an embedded resource
/// carries a valid resource URI.
fn invalid_embedded_uri(prompt: &str, result: &GetPromptResult) -> Option<ErrorObject> {
    result.messages.iter().find_map(|m| {
        let ContentBlock::Resource(embedded) = &m.content else {
            return None;
        };
        let uri = embedded.resource.uri();
        crate::resource::check_uri(uri).err().map(|why| {
            ErrorObject::internal(format!(
                "prompt {prompt:?} embedded a resource whose URI {uri:?} is {why}"
            ))
        })
    })
}

#[cfg(test)]
mod tests {
    use crate::prompt::{PromptArguments, PromptResult};
    use crate::server::completion::support::{call, call_with};
    use crate::{
        EntryKind, HandlerError, InputRequired, Prompt, RegistrationError, Server, ServerConfig,
    };
    use serde_json::{Value, json};
    use toolwire_proto::types::{GetPromptResult, PromptMessage, Role};

    fn server() -> Server {
        let s = Server::new(ServerConfig::new("t", "1").with_page_size(2));
        for name in ["a", "b", "c"] {
            s.add_prompt(
                Prompt::builder(name)
                    .description(format!("prompt {name}"))
                    .handler(|_: PromptArguments, _| async { "hi" })
                    .expect("valid"),
            )
            .expect("new");
        }
        s.add_prompt(
            Prompt::builder("args")
                .description("with arguments")
                .required_argument("arg1", "first")
                .optional_argument("arg2", "second")
                .handler(|a: PromptArguments, _| async move {
                    format!(
                        "arg1={} arg2={}",
                        a["arg1"],
                        a.get("arg2").map_or("-", String::as_str)
                    )
                })
                .expect("valid"),
        )
        .expect("new");
        s
    }

    #[tokio::test]
    async fn list_pages_through_prompts_in_order() {
        let s = server();
        let first = call(&s, "prompts/list", json!({})).await;
        let r = &first["result"];
        assert_eq!(r["resultType"], "complete");
        assert!(r["ttlMs"].is_u64());
        assert_eq!(r["cacheScope"], "public");
        assert_eq!(
            r["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "t"
        );
        let names = |r: &Value| -> Vec<String> {
            r["prompts"]
                .as_array()
                .expect("prompts")
                .iter()
                .map(|p| p["name"].as_str().expect("name").to_owned())
                .collect()
        };
        assert_eq!(names(r), ["a", "b"]);
        let cursor = r["nextCursor"].as_str().expect("more pages");
        let second = call(&s, "prompts/list", json!({"cursor": cursor})).await;
        assert_eq!(names(&second["result"]), ["c", "args"]);
        assert!(second["result"].get("nextCursor").is_none());
        assert_eq!(
            second["result"]["prompts"][1]["arguments"],
            json!([
                {"name": "arg1", "description": "first", "required": true},
                {"name": "arg2", "description": "second", "required": false}
            ])
        );
        let bad = call(&s, "prompts/list", json!({"cursor": "garbage"})).await;
        assert_eq!(bad["error"]["code"], -32602);
    }

    #[tokio::test]
    async fn get_renders_with_arguments() {
        let s = server();
        let r = call(
            &s,
            "prompts/get",
            json!({"name": "args", "arguments": {"arg1": "x"}}),
        )
        .await;
        assert_eq!(
            r["result"]["messages"],
            json!([{"role": "user", "content": {"type": "text", "text": "arg1=x arg2=-"}}])
        );
        assert_eq!(r["result"]["resultType"], "complete");
        assert_eq!(
            r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "t"
        );
        assert!(
            r["result"].get("ttlMs").is_none(),
            "prompts/get is not cacheable"
        );
    }

    #[tokio::test]
    async fn get_missing_required_argument_is_invalid_params() {
        let s = server();
        let r = call(&s, "prompts/get", json!({"name": "args"})).await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
        assert_eq!(r["error"]["data"], json!({"missing": ["arg1"]}));
        assert_eq!(r["id"], 1);
        let r = call(
            &s,
            "prompts/get",
            json!({"name": "args", "arguments": {"arg1": "x", "nope": "y"}}),
        )
        .await;
        assert_eq!(r["error"]["code"], -32602, "{r}");
    }

    #[tokio::test]
    async fn get_unknown_prompt_is_invalid_params() {
        let r = call(&server(), "prompts/get", json!({"name": "zzz"})).await;
        assert_eq!(r["error"]["code"], -32602);
        assert_eq!(r["error"]["data"], json!({"name": "zzz"}));
        let r = call(&server(), "prompts/get", json!({})).await;
        assert_eq!(r["error"]["code"], -32602);
    }

    #[tokio::test]
    async fn duplicate_and_removed_prompts() {
        let s = server();
        let dup = s.add_prompt(
            Prompt::builder("a")
                .handler(|_: PromptArguments, _| async { "x" })
                .expect("valid"),
        );
        assert!(matches!(
            dup,
            Err(RegistrationError::Duplicate {
                kind: EntryKind::Prompt,
                ..
            })
        ));
        assert!(s.remove_prompt("a"));
        assert!(!s.remove_prompt("a"));
        assert_eq!(s.prompt_names(), ["b", "c", "args"]);
        let r = call(&s, "prompts/get", json!({"name": "a"})).await;
        assert_eq!(r["error"]["code"], -32602);
    }

    #[tokio::test]
    async fn handler_errors_and_input_required() {
        let s = Server::new(ServerConfig::new("t", "1"));
        s.add_prompt(
            Prompt::builder("fails")
                .handler(|_: PromptArguments, _| async {
                    Err::<String, _>(HandlerError::internal("boom"))
                })
                .expect("valid"),
        )
        .expect("new");
        s.add_prompt(
            Prompt::builder("asks")
                .handler(|_: PromptArguments, cx: crate::RequestContext| async move {
                    match cx.input::<crate::ElicitAnswer<Ctx>>("ctx")? {
                        Some(crate::ElicitAnswer::Accept(c)) => {
                            Ok(PromptResult::Complete(GetPromptResult::new(vec![
                                PromptMessage::text(Role::User, c.context),
                            ])))
                        }
                        _ => Ok::<_, HandlerError>(PromptResult::InputRequired(
                            InputRequired::new().elicit::<Ctx>("ctx", "Context?"),
                        )),
                    }
                })
                .expect("valid"),
        )
        .expect("new");
        let r = call(&s, "prompts/get", json!({"name": "fails"})).await;
        assert_eq!(r["error"]["code"], -32603);

        let caps = json!({"elicitation": {}});
        let r1 = call_with(&s, "prompts/get", json!({"name": "asks"}), caps.clone()).await;
        assert_eq!(r1["result"]["resultType"], "input_required", "{r1}");
        assert_eq!(
            r1["result"]["inputRequests"]["ctx"]["method"],
            "elicitation/create"
        );
        assert!(r1["result"].get("ttlMs").is_none());
        let state = r1["result"]["requestState"].clone();
        // Answers without the state answer nothing that was asked.
        let again = call_with(
            &s,
            "prompts/get",
            json!({
                "name": "asks",
                "inputResponses": {"ctx": {"action": "accept", "content": {"context": "abc"}}},
            }),
            caps.clone(),
        )
        .await;
        assert_eq!(again["result"]["resultType"], "input_required", "{again}");
        let r2 = call_with(
            &s,
            "prompts/get",
            json!({
                "name": "asks",
                "inputResponses": {"ctx": {"action": "accept", "content": {"context": "abc"}}},
                "requestState": state,
            }),
            caps,
        )
        .await;
        assert_eq!(r2["result"]["resultType"], "complete", "{r2}");
        assert_eq!(r2["result"]["messages"][0]["content"]["text"], "abc");
    }

    #[derive(serde::Deserialize, schemars::JsonSchema)]
    struct Ctx {
        context: String,
    }
}
