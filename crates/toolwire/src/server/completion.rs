//! `completion/complete`: finds the provider registered for a prompt
//! argument or a resource-template variable and runs it.
//!
//! Spec: server/utilities/completion.mdx

use super::Server;
use super::accept::Prepared;
use super::outcome::Outcome;
use super::shape::Shape;
use crate::completion::{Completer, CompletionRequest};
use crate::context::{Outbound, RequestContext};
use crate::handler::BoxFuture;
use serde::de::DeserializeOwned;
use serde_json::{Value, json};
use tokio_util::sync::CancellationToken;
use toolwire_proto::types::{
    CompleteResult, Completion, CompletionArgument, CompletionContext, CompletionReference,
    ResultType,
};
use toolwire_proto::{ErrorObject, RequestId};

/// Parses a required member of `completion/complete`'s params.
fn member<T: DeserializeOwned>(value: Option<Value>, name: &str) -> Result<T, ErrorObject> {
    let Some(value) = value else {
        return Err(ErrorObject::invalid_params(format!(
            "completion/complete needs params.{name}"
        )));
    };
    serde_json::from_value(value)
        .map_err(|e| ErrorObject::invalid_params(format!("invalid params.{name}: {e}")))
}

impl Server {
    pub(crate) async fn complete_argument(
        &self,
        p: Prepared,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Outcome {
        let id = p.id.clone();
        let shape = p.era.shape();
        let completion = match self.start_completion(p, cancel, outbound) {
            Err(e) => return Outcome::error(e),
            // Declared, but nothing to suggest.
            Ok(None) => Completion::default(),
            Ok(Some((running, cx))) => {
                let outcome = running.await;
                cx.finish();
                match outcome {
                    Ok(c) => crate::completion::cap(c),
                    Err(e) => return Outcome::error(e),
                }
            }
        };
        self.completed(shape, &id, completion)
    }

    /// The request read, and its provider started (with the context it was
    /// given): `None` when the argument has no provider. Apart from
    /// [`complete_argument`](Self::complete_argument) so that what it reads
    /// takes no place in that future, which every request's sizes.
    #[allow(clippy::type_complexity, reason = "taken apart at once")]
    fn start_completion(
        &self,
        mut p: Prepared,
        cancel: CancellationToken,
        outbound: Option<Outbound>,
    ) -> Result<Option<(BoxFuture<Result<Completion, ErrorObject>>, RequestContext)>, ErrorObject>
    {
        let r = member::<CompletionReference>(p.params.reference.take().map(|b| *b), "ref")?;
        let a = member::<CompletionArgument>(p.params.argument.take().map(|b| *b), "argument")?;
        let context = match p.params.context.take().map(|b| *b) {
            None | Some(Value::Null) => CompletionContext::default(),
            Some(v) => member(Some(v), "context")?,
        };
        let Some(completer) = self.completer(&r, &a.name)? else {
            return Ok(None);
        };
        let req = CompletionRequest {
            argument: a.name,
            value: a.value,
            context: context.arguments.unwrap_or_default(),
        };
        let cx = RequestContext::new(p.id.clone(), p.meta, cancel, outbound)
            .with_caller_token(p.who.caller_token())
            .with_principal(p.who.into_principal());
        Ok(Some((completer.start(req, cx.clone()), cx)))
    }

    /// The provider for `argument` of `reference`: `Ok(None)` when the
    /// argument exists but has none, `-32602` when the prompt, template or
    /// argument does not exist.
    fn completer(
        &self,
        reference: &CompletionReference,
        argument: &str,
    ) -> Result<Option<Completer>, ErrorObject> {
        match reference {
            CompletionReference::Prompt(r) => {
                // Spec: server/utilities/completion.mdx#error-handling —
                // an invalid prompt name is -32602.
                let Some(prompt) = self.prompt(&r.name) else {
                    return Err(
                        ErrorObject::invalid_params(format!("unknown prompt: {}", r.name))
                            .with_data(json!({ "name": r.name })),
                    );
                };
                if !prompt.arguments().iter().any(|a| a.name == argument) {
                    return Err(ErrorObject::invalid_params(format!(
                        "prompt {:?} has no argument {argument:?}",
                        r.name
                    )));
                }
                Ok(prompt.inner.completions.get(argument).cloned())
            }
            CompletionReference::ResourceTemplate(r) => {
                let templates = self.inner.resource_templates.snapshot();
                if let Some(t) = templates.get(&r.uri) {
                    if !t.inner.template.has_variable(argument) {
                        return Err(ErrorObject::invalid_params(format!(
                            "resource template {:?} has no variable {argument:?}",
                            r.uri
                        )));
                    }
                    return Ok(t.inner.completions.get(argument).cloned());
                }
                // A fixed resource's URI has no variables to complete.
                if self.inner.resources.snapshot().get(&r.uri).is_some() {
                    return Ok(None);
                }
                Err(
                    ErrorObject::invalid_params(format!("unknown resource template: {}", r.uri))
                        .with_data(json!({ "uri": r.uri })),
                )
            }
        }
    }

    fn completed(&self, shape: Shape, id: &RequestId, completion: Completion) -> Outcome {
        self.respond(
            shape,
            id,
            &CompleteResult {
                result_type: ResultType::Complete,
                completion,
                meta: Some(self.result_meta()),
            },
        )
    }
}

/// Drives the pipeline without a transport, for the tests of prompts,
/// resources and completion.
#[cfg(test)]
pub(crate) mod support {
    use crate::Server;
    use serde_json::{Value, json};
    use tokio_util::sync::CancellationToken;
    use toolwire_proto::Message;
    use toolwire_proto::meta::PROTOCOL_VERSION;

    /// `method` with `params` and empty client capabilities; the reply as JSON.
    pub(crate) async fn call(server: &Server, method: &str, params: Value) -> Value {
        call_with(server, method, params, json!({})).await
    }

    /// `method` with `params` and the given client capabilities.
    pub(crate) async fn call_with(
        server: &Server,
        method: &str,
        mut params: Value,
        caps: Value,
    ) -> Value {
        if let Some(obj) = params.as_object_mut() {
            obj.insert(
                "_meta".into(),
                json!({
                    "io.modelcontextprotocol/protocolVersion": PROTOCOL_VERSION,
                    "io.modelcontextprotocol/clientCapabilities": caps,
                }),
            );
        }
        let msg = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let bytes = serde_json::to_vec(&msg).expect("encode");
        let Ok(Message::Request(req)) = Message::from_slice(&bytes) else {
            panic!("not a request")
        };
        let reply = server.handle(req, CancellationToken::new(), None).await;
        serde_json::from_slice(reply.body()).expect("reply is JSON")
    }
}

#[cfg(test)]
mod tests {
    use super::support::call;
    use crate::resource::UriVariables;
    use crate::{
        Completer, CompletionRequest, Prompt, PromptArguments, Resource, ResourceTemplate, Server,
        ServerConfig,
    };
    use serde_json::json;
    use toolwire_proto::ErrorObject;

    fn server() -> Server {
        let s = Server::new(ServerConfig::new("t", "1"));
        s.add_prompt(
            Prompt::builder("review")
                .required_argument("language", "the language")
                .required_argument("framework", "the framework")
                .optional_argument("notes", "free text")
                .complete(
                    "language",
                    Completer::from_values(["python", "pytorch", "rust"]),
                )
                .complete(
                    "framework",
                    Completer::new(|req: CompletionRequest, _cx| async move {
                        let all: &[&str] = match req.context.get("language").map(String::as_str) {
                            Some("python") => &["flask", "django"],
                            Some("rust") => &["axum", "actix"],
                            _ => &[],
                        };
                        all.iter()
                            .filter(|f| f.starts_with(&req.value))
                            .map(|f| (*f).to_owned())
                            .collect::<Vec<_>>()
                    }),
                )
                .handler(|_: PromptArguments, _| async { "x" })
                .expect("valid"),
        )
        .expect("new");
        s.add_resource_template(
            ResourceTemplate::builder("file:///{dir}/{name}", "files")
                .complete("dir", Completer::from_values(["src", "docs"]))
                .complete(
                    "name",
                    Completer::new(|_req: CompletionRequest, _cx| async {
                        Err::<Vec<String>, _>(ErrorObject::internal("index unavailable"))
                    }),
                )
                .handler(|_: UriVariables, _| async { "x" })
                .expect("valid"),
        )
        .expect("new");
        s.add_resource(
            Resource::builder("test://fixed", "fixed")
                .text("x")
                .expect("valid"),
        )
        .expect("new");
        s
    }

    async fn complete(
        s: &Server,
        reference: serde_json::Value,
        arg: &str,
        value: &str,
    ) -> serde_json::Value {
        call(
            s,
            "completion/complete",
            json!({"ref": reference, "argument": {"name": arg, "value": value}}),
        )
        .await
    }

    #[tokio::test]
    async fn prompt_argument_completion_filters_and_uses_context() {
        let s = server();
        let r = complete(
            &s,
            json!({"type": "ref/prompt", "name": "review"}),
            "language",
            "py",
        )
        .await;
        assert_eq!(
            r["result"]["completion"],
            json!({"values": ["python", "pytorch"]})
        );
        assert_eq!(r["result"]["resultType"], "complete");
        assert_eq!(
            r["result"]["_meta"]["io.modelcontextprotocol/serverInfo"]["name"],
            "t"
        );
        assert!(r["result"].get("ttlMs").is_none());

        let r = call(
            &s,
            "completion/complete",
            json!({
                "ref": {"type": "ref/prompt", "name": "review"},
                "argument": {"name": "framework", "value": "fl"},
                "context": {"arguments": {"language": "python"}}
            }),
        )
        .await;
        assert_eq!(r["result"]["completion"]["values"], json!(["flask"]));

        // Declared without a provider: an empty list.
        let r = complete(
            &s,
            json!({"type": "ref/prompt", "name": "review"}),
            "notes",
            "a",
        )
        .await;
        assert_eq!(r["result"]["completion"], json!({"values": []}));
    }

    #[tokio::test]
    async fn template_variable_completion() {
        let s = server();
        let reference = json!({"type": "ref/resource", "uri": "file:///{dir}/{name}"});
        let r = complete(&s, reference.clone(), "dir", "d").await;
        assert_eq!(r["result"]["completion"]["values"], json!(["docs"]));
        let r = complete(&s, reference.clone(), "name", "").await;
        assert_eq!(r["error"]["code"], -32603, "{r}");
        let r = complete(&s, reference, "nope", "").await;
        assert_eq!(r["error"]["code"], -32602);
        let r = complete(
            &s,
            json!({"type": "ref/resource", "uri": "test://fixed"}),
            "x",
            "",
        )
        .await;
        assert_eq!(r["result"]["completion"]["values"], json!([]));
    }

    #[tokio::test]
    async fn unknown_references_and_bad_params_are_invalid_params() {
        let s = server();
        let cases = [
            json!({"ref": {"type": "ref/prompt", "name": "nope"}, "argument": {"name": "a", "value": ""}}),
            json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "nope", "value": ""}}),
            json!({"ref": {"type": "ref/resource", "uri": "x://{y}"}, "argument": {"name": "y", "value": ""}}),
            json!({"ref": {"type": "ref/other"}, "argument": {"name": "a", "value": ""}}),
            json!({"argument": {"name": "a", "value": ""}}),
            json!({"ref": {"type": "ref/prompt", "name": "review"}}),
            json!({"ref": {"type": "ref/prompt", "name": "review"}, "argument": {"name": "language"}}),
        ];
        for params in cases {
            let r = call(&s, "completion/complete", params.clone()).await;
            assert_eq!(r["error"]["code"], -32602, "{params}: {r}");
            assert_eq!(r["id"], 1);
        }
    }

    #[tokio::test]
    async fn discover_declares_prompts_resources_and_completions() {
        let r = call(
            &Server::new(ServerConfig::default()),
            "server/discover",
            json!({}),
        )
        .await;
        let caps = &r["result"]["capabilities"];
        assert_eq!(caps["prompts"], json!({"listChanged": true}));
        assert_eq!(caps["resources"]["listChanged"], true);
        assert_eq!(caps["completions"], json!({}));
        // Declared and served, even when empty.
        let empty = Server::new(ServerConfig::default());
        for method in ["prompts/list", "resources/list", "resources/templates/list"] {
            let r = call(&empty, method, json!({})).await;
            assert_eq!(r["result"]["resultType"], "complete", "{method}: {r}");
        }
    }
}
