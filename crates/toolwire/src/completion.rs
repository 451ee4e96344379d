//! Argument completion: [`Completer`], the provider a prompt argument or a
//! resource-template variable registers for `completion/complete`, and what a
//! provider may return.
//!
//! Spec: server/utilities/completion.mdx

use crate::context::RequestContext;
use crate::handler::BoxFuture;
use std::collections::BTreeMap;
use std::fmt;
use std::future::Future;
use std::sync::Arc;
use toolwire_proto::ErrorObject;
use toolwire_proto::types::Completion;

/// The most values one `completion/complete` result carries.
///
/// Spec: server/utilities/completion.mdx#completion-results
pub const MAX_COMPLETION_VALUES: usize = 100;

type CompleteFn = Arc<
    dyn Fn(CompletionRequest, RequestContext) -> BoxFuture<Result<Completion, ErrorObject>>
        + Send
        + Sync,
>;

/// What a [`Completer`] is asked to complete.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub struct CompletionRequest {
    /// The prompt argument or template variable being completed.
    pub argument: String,
    /// What the user has typed so far.
    pub value: String,
    /// Values the user already chose for other arguments or variables
    /// (the request's `context.arguments`).
    pub context: BTreeMap<String, String>,
}

/// Suggests values for one prompt argument or resource-template variable.
///
/// Register it with
/// [`PromptBuilder::complete`](crate::PromptBuilder::complete) or
/// [`ResourceTemplateBuilder::complete`](crate::ResourceTemplateBuilder::complete).
/// The server sends at most [`MAX_COMPLETION_VALUES`] values and sets
/// `hasMore` and `total` when it had to cut the list.
///
/// ```
/// use toolwire::{Completer, CompletionRequest};
///
/// // A fixed list, filtered by case-insensitive prefix.
/// let languages = Completer::from_values(["python", "rust", "ruby"]);
///
/// // Computed on demand.
/// let numbers = Completer::new(|req: CompletionRequest, _cx| async move {
///     (1..=3).map(|n| format!("{}{n}", req.value)).collect::<Vec<_>>()
/// });
/// # drop((languages, numbers));
/// ```
#[derive(Clone)]
pub struct Completer {
    f: CompleteFn,
}

impl fmt::Debug for Completer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Completer").finish_non_exhaustive()
    }
}

impl Completer {
    /// A provider computed by an async function.
    pub fn new<F, Fut, R>(f: F) -> Self
    where
        F: Fn(CompletionRequest, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoCompletion + 'static,
    {
        let f = Arc::new(f);
        Self {
            f: Arc::new(move |req, cx| {
                let f = Arc::clone(&f);
                Box::pin(async move { f(req, cx).await.into_completion() })
            }),
        }
    }

    /// A fixed list of values, offered in this order, keeping those that
    /// start with what the user typed (ignoring case).
    pub fn from_values<I, S>(values: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let values: Arc<[String]> = values.into_iter().map(Into::into).collect();
        Self::new(move |req: CompletionRequest, _cx| {
            let values = Arc::clone(&values);
            async move {
                let typed = req.value.to_lowercase();
                values
                    .iter()
                    .filter(|v| v.to_lowercase().starts_with(&typed))
                    .cloned()
                    .collect::<Vec<_>>()
            }
        })
    }

    /// Starts the provider; [`cap`] bounds what it answers.
    pub(crate) fn start(
        &self,
        req: CompletionRequest,
        cx: RequestContext,
    ) -> BoxFuture<Result<Completion, ErrorObject>> {
        (self.f)(req, cx)
    }

    /// Runs the provider and bounds its answer, as the server does.
    #[cfg(test)]
    async fn complete(
        &self,
        req: CompletionRequest,
        cx: RequestContext,
    ) -> Result<Completion, ErrorObject> {
        Ok(cap(self.start(req, cx).await?))
    }
}

/// Cuts `c` to [`MAX_COMPLETION_VALUES`] values, recording what was cut.
pub(crate) fn cap(mut c: Completion) -> Completion {
    let len = c.values.len();
    if len > MAX_COMPLETION_VALUES {
        c.values.truncate(MAX_COMPLETION_VALUES);
        c.has_more = Some(true);
        let total = u64::try_from(len).unwrap_or(u64::MAX);
        c.total = Some(c.total.map_or(total, |t| t.max(total)));
    }
    c
}

/// Values a [`Completer`] function may return.
pub trait IntoCompletion {
    /// Converts into the completion, or a JSON-RPC error.
    fn into_completion(self) -> Result<Completion, ErrorObject>;
}

impl IntoCompletion for Completion {
    fn into_completion(self) -> Result<Completion, ErrorObject> {
        Ok(self)
    }
}

impl IntoCompletion for Vec<String> {
    fn into_completion(self) -> Result<Completion, ErrorObject> {
        Ok(Completion {
            values: self,
            ..Completion::default()
        })
    }
}

impl IntoCompletion for Vec<&'static str> {
    fn into_completion(self) -> Result<Completion, ErrorObject> {
        self.into_iter()
            .map(str::to_owned)
            .collect::<Vec<_>>()
            .into_completion()
    }
}

impl<T: IntoCompletion, E: Into<ErrorObject>> IntoCompletion for Result<T, E> {
    fn into_completion(self) -> Result<Completion, ErrorObject> {
        self.map_err(Into::into)?.into_completion()
    }
}

#[cfg(test)]
pub(crate) fn request(argument: &str, value: &str) -> CompletionRequest {
    CompletionRequest {
        argument: argument.to_owned(),
        value: value.to_owned(),
        context: BTreeMap::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::Arc as StdArc;
    use tokio_util::sync::CancellationToken;
    use toolwire_proto::RequestId;
    use toolwire_proto::types::RequestMeta;

    fn cx() -> RequestContext {
        RequestContext::new(
            RequestId::Number(1),
            StdArc::new(RequestMeta::default()),
            CancellationToken::new(),
            None,
        )
    }

    #[tokio::test]
    async fn from_values_filters_by_prefix_ignoring_case_in_order() {
        let c = Completer::from_values(["Paris", "park", "Rome", "party"]);
        let got = c.complete(request("city", "PAR"), cx()).await.expect("ok");
        assert_eq!(got.values, ["Paris", "park", "party"]);
        assert_eq!(got.has_more, None);
        let all = c.complete(request("city", ""), cx()).await.expect("ok");
        assert_eq!(all.values.len(), 4);
        let none = c.complete(request("city", "x"), cx()).await.expect("ok");
        assert!(none.values.is_empty());
    }

    #[tokio::test]
    async fn long_answers_are_cut_to_100_with_has_more_and_total() {
        let c = Completer::new(|_req: CompletionRequest, _cx| async {
            (0..250).map(|i| i.to_string()).collect::<Vec<_>>()
        });
        let got = c.complete(request("n", ""), cx()).await.expect("ok");
        assert_eq!(got.values.len(), MAX_COMPLETION_VALUES);
        assert_eq!(got.values[99], "99");
        assert_eq!(got.has_more, Some(true));
        assert_eq!(got.total, Some(250));
    }

    #[tokio::test]
    async fn provider_errors_become_json_rpc_errors() {
        let c = Completer::new(|_req: CompletionRequest, _cx| async {
            Err::<Vec<String>, _>(ErrorObject::internal("backend down"))
        });
        let err = c.complete(request("n", ""), cx()).await.expect_err("fails");
        assert_eq!(err.code, toolwire_proto::ErrorCode::INTERNAL_ERROR);
    }

    #[tokio::test]
    async fn provider_sees_the_context_arguments() {
        let c = Completer::new(|req: CompletionRequest, _cx| async move {
            vec![format!(
                "{}:{}",
                req.context.get("language").map_or("?", String::as_str),
                req.value
            )]
        });
        let mut req = request("framework", "fl");
        req.context.insert("language".into(), "python".into());
        let got = c.complete(req, cx()).await.expect("ok");
        assert_eq!(got.values, ["python:fl"]);
    }
}
