//! Prompts: the builder that turns a Rust function into a prompt template
//! with declared arguments, what a prompt handler may return, and the erased
//! form the registry stores.
//!
//! Spec: server/prompts.mdx

use crate::completion::Completer;
use crate::context::RequestContext;
use crate::handler::{
    BoxFuture, Handled, HandlerError, HandlerOutput, IntoHandlerOutput, PromptProblem,
    RegistrationError,
};
use schemars::JsonSchema;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};
use std::collections::BTreeMap;
use std::future::Future;
use std::marker::PhantomData;
use std::sync::Arc;
use toolwire_proto::types::{
    GetPromptResult, Icon, Meta, Prompt as PromptDefinition, PromptArgument, PromptMessage, Role,
};
use toolwire_proto::{ErrorObject, validate_tool_name};

/// The arguments of a `prompts/get`, by name. The default input of a prompt
/// handler; see [`PromptBuilder::arguments`] for a typed one.
pub type PromptArguments = BTreeMap<String, String>;

type Handler = Arc<
    dyn Fn(PromptArguments, RequestContext) -> BoxFuture<Handled<GetPromptResult>> + Send + Sync,
>;

/// What a prompt handler produced: the rendered prompt, or a request for
/// input. Spec: basic/patterns/mrtr.mdx
pub type PromptResult = HandlerOutput<GetPromptResult>;

impl From<GetPromptResult> for PromptResult {
    fn from(r: GetPromptResult) -> Self {
        Self::Complete(r)
    }
}

impl IntoHandlerOutput<GetPromptResult> for GetPromptResult {
    fn into_handler_output(self) -> Result<HandlerOutput<GetPromptResult>, HandlerError> {
        Ok(HandlerOutput::Complete(self))
    }
}

impl IntoHandlerOutput<GetPromptResult> for Vec<PromptMessage> {
    fn into_handler_output(self) -> Result<HandlerOutput<GetPromptResult>, HandlerError> {
        GetPromptResult::new(self).into_handler_output()
    }
}

impl IntoHandlerOutput<GetPromptResult> for PromptMessage {
    fn into_handler_output(self) -> Result<HandlerOutput<GetPromptResult>, HandlerError> {
        vec![self].into_handler_output()
    }
}

/// One user message with this text.
impl IntoHandlerOutput<GetPromptResult> for String {
    fn into_handler_output(self) -> Result<HandlerOutput<GetPromptResult>, HandlerError> {
        PromptMessage::text(Role::User, self).into_handler_output()
    }
}

/// One user message with this text.
impl IntoHandlerOutput<GetPromptResult> for &'static str {
    fn into_handler_output(self) -> Result<HandlerOutput<GetPromptResult>, HandlerError> {
        self.to_owned().into_handler_output()
    }
}

/// A prompt ready to be registered: its definition, argument rules,
/// completion providers and handler.
///
/// # Example
///
/// Arguments from a struct (`String` fields required, `Option<String>`
/// optional, doc comments as descriptions):
///
/// ```
/// use toolwire::{Prompt, Server, ServerConfig};
///
/// #[derive(serde::Deserialize, schemars::JsonSchema)]
/// struct Summarise {
///     /// The text to summarise.
///     text: String,
///     /// How long the summary may be.
///     length: Option<String>,
/// }
///
/// # fn main() -> Result<(), toolwire::RegistrationError> {
/// let prompt = Prompt::builder("summarise")
///     .description("Asks the model for a summary")
///     .arguments::<Summarise>()
///     .handler(|args: Summarise, _cx| async move {
///         let length = args.length.as_deref().unwrap_or("short");
///         format!("Write a {length} summary of:\n{}", args.text)
///     })?;
/// let names: Vec<&str> = prompt.arguments().iter().map(|a| a.name.as_str()).collect();
/// assert_eq!(names, ["text", "length"]);
/// let server = Server::new(ServerConfig::new("demo", "1.0.0")).with_prompt(prompt)?;
/// # drop(server);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Prompt {
    pub(crate) inner: Arc<PromptInner>,
}

pub(crate) struct PromptInner {
    pub(crate) definition: PromptDefinition,
    pub(crate) completions: BTreeMap<String, Completer>,
    pub(crate) scopes: Vec<String>,
    pub(crate) handler: Handler,
}

impl std::fmt::Debug for Prompt {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompt")
            .field("name", &self.inner.definition.name)
            .finish_non_exhaustive()
    }
}

impl Prompt {
    /// Starts a prompt definition.
    ///
    /// ```
    /// use toolwire::{Completer, Prompt, PromptArguments};
    ///
    /// let review = Prompt::builder("code_review")
    ///     .description("Asks the model to review code")
    ///     .required_argument("code", "The code to review")
    ///     .optional_argument("language", "The language it is written in")
    ///     .complete("language", Completer::from_values(["python", "rust"]))
    ///     .handler(|args: PromptArguments, _cx| async move {
    ///         format!("Please review this code:\n{}", args["code"])
    ///     })
    ///     .unwrap();
    /// # drop(review);
    /// ```
    pub fn builder(name: impl Into<String>) -> PromptBuilder {
        PromptBuilder {
            name: name.into(),
            title: None,
            description: None,
            arguments: Vec::new(),
            icons: Vec::new(),
            meta: None,
            scopes: Vec::new(),
            completions: Vec::new(),
            problem: None,
            _marker: PhantomData,
        }
    }

    /// The name.
    pub fn name(&self) -> &str {
        &self.inner.definition.name
    }

    /// The definition as listed by `prompts/list`.
    pub fn definition(&self) -> &PromptDefinition {
        &self.inner.definition
    }

    /// The OAuth scopes needed to use it (see the builder's `scopes`).
    pub fn scopes(&self) -> &[String] {
        &self.inner.scopes
    }

    /// The declared arguments, in order.
    pub fn arguments(&self) -> &[PromptArgument] {
        self.inner
            .definition
            .arguments
            .as_deref()
            .unwrap_or_default()
    }

    /// Checks `prompts/get` arguments against the declaration: every value
    /// a string, no undeclared name, every required argument present.
    ///
    /// Spec: server/prompts.mdx#error-handling — missing required
    /// arguments are `-32602`.
    pub(crate) fn check_arguments(
        &self,
        given: Option<&Value>,
    ) -> Result<PromptArguments, ErrorObject> {
        let name = self.name();
        let mut args = PromptArguments::new();
        match given {
            None | Some(Value::Null) => {}
            Some(Value::Object(map)) => {
                for (k, v) in map {
                    let Value::String(s) = v else {
                        return Err(ErrorObject::invalid_params(format!(
                            "argument {k:?} of prompt {name:?} must be a string"
                        ))
                        .with_data(serde_json::json!({ "argument": k })));
                    };
                    args.insert(k.clone(), s.clone());
                }
            }
            Some(_) => {
                return Err(ErrorObject::invalid_params(
                    "prompts/get arguments must be an object of strings",
                ));
            }
        }
        let declared = self.arguments();
        let unknown: Vec<&String> = args
            .keys()
            .filter(|k| !declared.iter().any(|a| &a.name == *k))
            .collect();
        if !unknown.is_empty() {
            let list = unknown.iter().map(|s| s.as_str()).collect::<Vec<_>>();
            return Err(ErrorObject::invalid_params(format!(
                "prompt {name:?} has no argument {}",
                list.join(", ")
            ))
            .with_data(serde_json::json!({ "unknown": list })));
        }
        let missing: Vec<&str> = declared
            .iter()
            .filter(|a| a.required == Some(true) && !args.contains_key(&a.name))
            .map(|a| a.name.as_str())
            .collect();
        if !missing.is_empty() {
            return Err(ErrorObject::invalid_params(format!(
                "missing required argument{} for prompt {name:?}: {}",
                if missing.len() == 1 { "" } else { "s" },
                missing.join(", ")
            ))
            .with_data(serde_json::json!({ "missing": missing })));
        }
        Ok(args)
    }
}

/// Builds a [`Prompt`]; see [`Prompt::builder`].
#[derive(Debug)]
#[must_use]
pub struct PromptBuilder<A = PromptArguments> {
    name: String,
    title: Option<String>,
    description: Option<String>,
    arguments: Vec<PromptArgument>,
    icons: Vec<Icon>,
    meta: Option<Meta>,
    scopes: Vec<String>,
    completions: Vec<(String, Completer)>,
    problem: Option<PromptProblem>,
    _marker: PhantomData<fn() -> A>,
}

impl<A> PromptBuilder<A> {
    /// A human-readable title.
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = Some(title.into());
        self
    }

    /// What the prompt does.
    pub fn description(mut self, description: impl Into<String>) -> Self {
        self.description = Some(description.into());
        self
    }

    /// Declares an argument.
    pub fn argument(mut self, argument: PromptArgument) -> Self {
        self.arguments.push(argument);
        self
    }

    /// Declares an argument that `prompts/get` must supply.
    pub fn required_argument(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.argument(PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required: Some(true),
            ..PromptArgument::default()
        })
    }

    /// Declares an argument that `prompts/get` may leave out.
    pub fn optional_argument(
        self,
        name: impl Into<String>,
        description: impl Into<String>,
    ) -> Self {
        self.argument(PromptArgument {
            name: name.into(),
            description: Some(description.into()),
            required: Some(false),
            ..PromptArgument::default()
        })
    }

    /// Registers the completion provider of a declared argument, for
    /// `completion/complete` with `ref/prompt`.
    pub fn complete(mut self, argument: impl Into<String>, completer: Completer) -> Self {
        self.completions.push((argument.into(), completer));
        self
    }

    /// Adds an icon.
    pub fn icon(mut self, icon: Icon) -> Self {
        self.icons.push(icon);
        self
    }

    /// OAuth scopes a caller needs to see and use this prompt when the
    /// HTTP transport's resource server is on (`HttpConfig::with_auth`,
    /// feature `auth`): others get `403 insufficient_scope` and do not see
    /// it listed. Without the resource server, scopes are ignored.
    pub fn scopes<I, S>(mut self, scopes: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        self.scopes.extend(scopes.into_iter().map(Into::into));
        self
    }

    /// Sets the definition's `_meta`.
    pub fn meta(mut self, meta: Map<String, Value>) -> Self {
        self.meta = Some(meta);
        self
    }

    /// Typed arguments: declares one argument per field of `T` (a struct of
    /// `String` fields, required, and `Option<String>` fields, optional; doc
    /// comments become descriptions), and hands the handler a `T`.
    pub fn arguments<T: JsonSchema + DeserializeOwned>(mut self) -> PromptBuilder<T> {
        match arguments_of::<T>() {
            Ok(args) => self.arguments.extend(args),
            Err(reason) => {
                self.problem.get_or_insert(PromptProblem::ArgumentsType {
                    type_name: std::any::type_name::<T>(),
                    reason,
                });
            }
        }
        PromptBuilder {
            name: self.name,
            title: self.title,
            description: self.description,
            arguments: self.arguments,
            icons: self.icons,
            meta: self.meta,
            scopes: self.scopes,
            completions: self.completions,
            problem: self.problem,
            _marker: PhantomData,
        }
    }

    fn finish(self, handler: Handler) -> Result<Prompt, RegistrationError> {
        let name = self.name;
        let refuse = |problem| RegistrationError::Prompt {
            name: name.clone(),
            problem,
        };
        validate_tool_name(&name).map_err(|e| refuse(PromptProblem::Name(e)))?;
        if let Some(problem) = self.problem {
            return Err(refuse(problem));
        }
        for (i, a) in self.arguments.iter().enumerate() {
            validate_tool_name(&a.name).map_err(|reason| {
                refuse(PromptProblem::ArgumentName {
                    argument: a.name.clone(),
                    reason,
                })
            })?;
            if self.arguments[..i].iter().any(|b| b.name == a.name) {
                return Err(refuse(PromptProblem::DuplicateArgument(a.name.clone())));
            }
        }
        let mut completions = BTreeMap::new();
        for (argument, completer) in self.completions {
            if !self.arguments.iter().any(|a| a.name == argument) {
                return Err(refuse(PromptProblem::UnknownCompletionArgument(argument)));
            }
            completions.insert(argument, completer);
        }
        let definition = PromptDefinition {
            name,
            title: self.title,
            description: self.description,
            arguments: (!self.arguments.is_empty()).then_some(self.arguments),
            icons: (!self.icons.is_empty()).then_some(self.icons),
            meta: self.meta,
        };
        Ok(Prompt {
            inner: Arc::new(PromptInner {
                definition,
                completions,
                scopes: self.scopes,
                handler,
            }),
        })
    }
}

impl<A: DeserializeOwned + Send + 'static> PromptBuilder<A> {
    /// Finishes the prompt with its handler. Validates the name, the
    /// argument names and the completion providers now, not at call time.
    ///
    /// The handler runs only after the arguments passed the declaration
    /// (see [`Prompt::builder`]); it may return a string (one user message),
    /// messages, a [`GetPromptResult`], or an
    /// [`InputRequired`](crate::InputRequired).
    pub fn handler<F, Fut, R>(self, f: F) -> Result<Prompt, RegistrationError>
    where
        F: Fn(A, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoHandlerOutput<GetPromptResult> + 'static,
    {
        let f = Arc::new(f);
        self.finish(Arc::new(move |args, cx| {
            let f = Arc::clone(&f);
            Box::pin(async move {
                let map: Map<String, Value> = args
                    .into_iter()
                    .map(|(k, v)| (k, Value::String(v)))
                    .collect();
                let input = A::deserialize(Value::Object(map))
                    .map_err(|e| HandlerError::invalid_params(format!("invalid arguments: {e}")))?;
                f(input, cx).await.into_handler_output()
            })
        }))
    }
}

/// The argument declarations of a typed arguments struct.
fn arguments_of<T: JsonSchema + DeserializeOwned>() -> Result<Vec<PromptArgument>, String> {
    let schema = schemars::schema_for!(T).to_value();
    if schema.get("type").and_then(Value::as_str) != Some("object") {
        return Err("it is not a struct".to_owned());
    }
    let empty = Map::new();
    let properties = schema
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let required: Vec<&str> = schema
        .get("required")
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    // The schema's properties are sorted by name; serde knows the order the
    // fields were declared in.
    let mut names: Vec<&String> = properties.keys().collect();
    if let Some(order) = crate::tool::order::declared_fields::<T>() {
        names.sort_by_key(|n| order.iter().position(|f| f == n).unwrap_or(usize::MAX));
    }
    let mut out = Vec::with_capacity(names.len());
    for name in names {
        let p = &properties[name.as_str()];
        let is_string = match p.get("type") {
            Some(Value::String(t)) => t == "string",
            Some(Value::Array(ts)) => {
                ts.iter().any(|t| t == "string") && ts.iter().all(|t| t == "string" || t == "null")
            }
            _ => false,
        };
        if !is_string {
            return Err(format!("field {name:?} is not a string"));
        }
        let text = |key: &str| p.get(key).and_then(Value::as_str).map(str::to_owned);
        out.push(PromptArgument {
            name: name.clone(),
            title: text("title"),
            description: text("description"),
            required: Some(required.contains(&name.as_str())),
        });
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwire_proto::ToolNameError;

    fn simple(name: &str) -> PromptBuilder {
        Prompt::builder(name).description("d")
    }

    fn build(b: PromptBuilder) -> Result<Prompt, RegistrationError> {
        b.handler(|_: PromptArguments, _| async { "hi" })
    }

    fn problem(r: Result<Prompt, RegistrationError>) -> PromptProblem {
        match r {
            Err(RegistrationError::Prompt { problem, .. }) => problem,
            other => panic!("expected a prompt problem, got {other:?}"),
        }
    }

    #[test]
    fn registration_validates_names_arguments_and_completions() {
        assert!(matches!(
            problem(build(simple("has space"))),
            PromptProblem::Name(ToolNameError::InvalidChar { ch: ' ', .. })
        ));
        assert!(matches!(
            problem(build(simple(""))),
            PromptProblem::Name(ToolNameError::Empty)
        ));
        assert!(matches!(
            problem(build(simple("p").required_argument("a b", "x"))),
            PromptProblem::ArgumentName { argument, .. } if argument == "a b"
        ));
        assert_eq!(
            problem(build(
                simple("p")
                    .required_argument("a", "x")
                    .optional_argument("a", "y")
            )),
            PromptProblem::DuplicateArgument("a".into())
        );
        assert_eq!(
            problem(build(
                simple("p")
                    .required_argument("a", "x")
                    .complete("b", Completer::from_values(["1"]))
            )),
            PromptProblem::UnknownCompletionArgument("b".into())
        );
        let ok = build(
            simple("p")
                .required_argument("a", "x")
                .complete("a", Completer::from_values(["1"])),
        )
        .expect("valid");
        assert_eq!(ok.arguments().len(), 1);
        assert!(ok.inner.completions.contains_key("a"));
    }

    #[test]
    fn error_messages_name_the_prompt_and_the_rule() {
        let e = build(
            simple("p")
                .required_argument("a", "x")
                .required_argument("a", "y"),
        )
        .expect_err("duplicate");
        assert_eq!(
            e.to_string(),
            "prompt \"p\": argument \"a\" is declared twice"
        );
    }

    #[test]
    fn arguments_are_checked_against_the_declaration() {
        let p = build(
            simple("p")
                .required_argument("arg1", "x")
                .required_argument("arg2", "y")
                .optional_argument("opt", "z"),
        )
        .expect("valid");
        let ok = p
            .check_arguments(Some(&serde_json::json!({"arg1": "a", "arg2": ""})))
            .expect("valid");
        assert_eq!(ok.len(), 2);

        let missing = p
            .check_arguments(Some(&serde_json::json!({"arg1": "a"})))
            .expect_err("missing");
        assert_eq!(missing.code, toolwire_proto::ErrorCode::INVALID_PARAMS);
        assert_eq!(missing.data, Some(serde_json::json!({"missing": ["arg2"]})));
        let none = p.check_arguments(None).expect_err("missing both");
        assert_eq!(
            none.data,
            Some(serde_json::json!({"missing": ["arg1", "arg2"]}))
        );

        let unknown = p
            .check_arguments(Some(
                &serde_json::json!({"arg1": "a", "arg2": "b", "x": "c"}),
            ))
            .expect_err("unknown");
        assert_eq!(unknown.data, Some(serde_json::json!({"unknown": ["x"]})));

        let typed = p
            .check_arguments(Some(&serde_json::json!({"arg1": 1, "arg2": "b"})))
            .expect_err("not a string");
        assert_eq!(typed.code, toolwire_proto::ErrorCode::INVALID_PARAMS);
        assert!(p.check_arguments(Some(&serde_json::json!(["a"]))).is_err());
    }

    /// Review arguments.
    #[derive(serde::Deserialize, schemars::JsonSchema)]
    #[allow(dead_code)]
    struct Review {
        /// The code to review.
        code: String,
        /// Its language.
        language: Option<String>,
        #[serde(rename = "aFocus")]
        focus: Option<String>,
    }

    #[test]
    fn typed_arguments_are_declared_in_field_order_with_docs() {
        let p = simple("review")
            .arguments::<Review>()
            .handler(|r: Review, _| async move { r.code })
            .expect("valid");
        let args: Vec<(&str, Option<bool>, Option<&str>)> = p
            .arguments()
            .iter()
            .map(|a| (a.name.as_str(), a.required, a.description.as_deref()))
            .collect();
        assert_eq!(
            args,
            [
                ("code", Some(true), Some("The code to review.")),
                ("language", Some(false), Some("Its language.")),
                ("aFocus", Some(false), None),
            ]
        );
    }

    #[test]
    fn typed_arguments_must_be_strings() {
        #[derive(serde::Deserialize, schemars::JsonSchema)]
        #[allow(dead_code)]
        struct Bad {
            count: u32,
        }
        let e = problem(
            simple("p")
                .arguments::<Bad>()
                .handler(|_: Bad, _| async { "x" }),
        );
        assert!(
            matches!(&e, PromptProblem::ArgumentsType { reason, .. } if reason.contains("count")),
            "{e}"
        );
    }
}
