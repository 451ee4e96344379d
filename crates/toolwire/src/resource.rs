//! Resources: the builders for fixed resources ([`Resource`]) and for
//! families of resources behind an RFC 6570 URI template
//! ([`ResourceTemplate`]), what a read handler may return, and the erased
//! forms the registries store.
//!
//! Spec: server/resources.mdx

use crate::completion::Completer;
use crate::context::RequestContext;
use crate::handler::{
    BoxFuture, Handled, HandlerError, HandlerOutput, IntoHandlerOutput, RegistrationError,
    ResourceProblem,
};
use crate::uri_template::UriTemplate;
use std::collections::BTreeMap;
use std::future::Future;
use std::sync::Arc;
use std::time::Duration;
use toolwire_proto::ErrorObject;
use toolwire_proto::types::{
    Annotations, BlobResourceContents, CacheScope, Icon, Meta, Resource as ResourceDefinition,
    ResourceContents, ResourceTemplate as ResourceTemplateDefinition, TextResourceContents,
};

type ReadHandler = Arc<
    dyn Fn(UriVariables, RequestContext) -> BoxFuture<Handled<Vec<ResourceContents>>> + Send + Sync,
>;

/// What a read handler produced: the contents, or a request for input.
/// A contents entry whose `uri` is empty gets the requested URI, and one
/// without a `mimeType` gets the resource's. Spec: basic/patterns/mrtr.mdx
pub type ResourceResult = HandlerOutput<Vec<ResourceContents>>;

impl From<Vec<ResourceContents>> for ResourceResult {
    fn from(r: Vec<ResourceContents>) -> Self {
        Self::Complete(r)
    }
}

/// `-32602 "Resource not found"` with `data.uri`.
/// Spec: server/resources.mdx#error-handling
pub(crate) fn not_found(uri: &str) -> ErrorObject {
    ErrorObject::invalid_params("Resource not found").with_data(serde_json::json!({ "uri": uri }))
}

/// Read handlers may return text (text contents) and bytes (base64 `blob`
/// contents), both at the requested URI with the resource's MIME type, or
/// contents of their own.
impl IntoHandlerOutput<Vec<ResourceContents>> for Vec<ResourceContents> {
    fn into_handler_output(self) -> Result<HandlerOutput<Vec<ResourceContents>>, HandlerError> {
        Ok(HandlerOutput::Complete(self))
    }
}

impl IntoHandlerOutput<Vec<ResourceContents>> for ResourceContents {
    fn into_handler_output(self) -> Result<HandlerOutput<Vec<ResourceContents>>, HandlerError> {
        vec![self].into_handler_output()
    }
}

impl IntoHandlerOutput<Vec<ResourceContents>> for TextResourceContents {
    fn into_handler_output(self) -> Result<HandlerOutput<Vec<ResourceContents>>, HandlerError> {
        ResourceContents::Text(self).into_handler_output()
    }
}

impl IntoHandlerOutput<Vec<ResourceContents>> for BlobResourceContents {
    fn into_handler_output(self) -> Result<HandlerOutput<Vec<ResourceContents>>, HandlerError> {
        ResourceContents::Blob(self).into_handler_output()
    }
}

impl IntoHandlerOutput<Vec<ResourceContents>> for String {
    fn into_handler_output(self) -> Result<HandlerOutput<Vec<ResourceContents>>, HandlerError> {
        TextResourceContents::new("", self).into_handler_output()
    }
}

impl IntoHandlerOutput<Vec<ResourceContents>> for &'static str {
    fn into_handler_output(self) -> Result<HandlerOutput<Vec<ResourceContents>>, HandlerError> {
        self.to_owned().into_handler_output()
    }
}

impl IntoHandlerOutput<Vec<ResourceContents>> for Vec<u8> {
    fn into_handler_output(self) -> Result<HandlerOutput<Vec<ResourceContents>>, HandlerError> {
        BlobResourceContents::from_bytes("", &self).into_handler_output()
    }
}

impl IntoHandlerOutput<Vec<ResourceContents>> for &'static [u8] {
    fn into_handler_output(self) -> Result<HandlerOutput<Vec<ResourceContents>>, HandlerError> {
        BlobResourceContents::from_bytes("", self).into_handler_output()
    }
}

/// The URI being read and, for a template, the values its variables took.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UriVariables {
    uri: String,
    values: BTreeMap<String, String>,
}

impl UriVariables {
    pub(crate) fn new(uri: impl Into<String>, values: BTreeMap<String, String>) -> Self {
        Self {
            uri: uri.into(),
            values,
        }
    }

    /// The URI being read.
    pub fn uri(&self) -> &str {
        &self.uri
    }

    /// The value of variable `name`; `None` if it took no part in the URI
    /// (such as an absent query parameter).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.values.get(name).map(String::as_str)
    }

    /// Every variable that took part in the URI, by name.
    pub fn values(&self) -> &BTreeMap<String, String> {
        &self.values
    }
}

/// Checks that `uri` is an absolute URI (RFC 3986 §3): a scheme, `:`, and
/// only URI characters and well-formed percent-escapes after it.
///
/// Spec: server/resources.mdx#custom-uri-schemes
pub(crate) fn check_uri(uri: &str) -> Result<(), ResourceProblem> {
    let Some((scheme, _)) = uri.split_once(':') else {
        return Err(ResourceProblem::InvalidUri("it has no scheme"));
    };
    let mut s = scheme.bytes();
    if !s.next().is_some_and(|b| b.is_ascii_alphabetic())
        || !s.all(|b| b.is_ascii_alphanumeric() || matches!(b, b'+' | b'-' | b'.'))
    {
        return Err(ResourceProblem::InvalidUri(
            "the scheme must be a letter followed by letters, digits, '+', '-' or '.'",
        ));
    }
    let b = uri.as_bytes();
    let mut i = scheme.len() + 1;
    while i < b.len() {
        let c = b[i];
        if c == b'%' {
            if !(b.len() > i + 2 && b[i + 1].is_ascii_hexdigit() && b[i + 2].is_ascii_hexdigit()) {
                return Err(ResourceProblem::InvalidUri(
                    "'%' must start a percent-escape such as %20",
                ));
            }
            i += 3;
            continue;
        }
        let allowed = c.is_ascii_alphanumeric() || b"-._~:/?#[]@!$&'()*+,;=".contains(&c);
        if !allowed {
            return Err(ResourceProblem::InvalidUri(
                "it contains a character that must be percent-encoded (a space, a non-ASCII or control character, or one of \"<>{}|\\^`)",
            ));
        }
        i += 1;
    }
    Ok(())
}

/// Settings shared by both builders.
#[derive(Debug, Default)]
struct Common {
    title: Option<String>,
    description: Option<String>,
    mime_type: Option<String>,
    icons: Vec<Icon>,
    annotations: Option<Annotations>,
    meta: Option<Meta>,
    ttl: Option<Duration>,
    cache_scope: Option<CacheScope>,
    scopes: Vec<String>,
}

macro_rules! common_setters {
    () => {
        /// OAuth scopes a caller needs to see and read these resources when
        /// the HTTP transport's resource server is on
        /// (`HttpConfig::with_auth`, feature `auth`): others get `403
        /// insufficient_scope` and do not see them listed. Without the
        /// resource server, scopes are ignored.
        pub fn scopes<I, S>(mut self, scopes: I) -> Self
        where
            I: IntoIterator<Item = S>,
            S: Into<String>,
        {
            self.common
                .scopes
                .extend(scopes.into_iter().map(Into::into));
            self
        }

        /// A human-readable title.
        pub fn title(mut self, title: impl Into<String>) -> Self {
            self.common.title = Some(title.into());
            self
        }

        /// What the resource is.
        pub fn description(mut self, description: impl Into<String>) -> Self {
            self.common.description = Some(description.into());
            self
        }

        /// The MIME type, also given to contents that have none.
        pub fn mime_type(mut self, mime_type: impl Into<String>) -> Self {
            self.common.mime_type = Some(mime_type.into());
            self
        }

        /// Adds an icon.
        pub fn icon(mut self, icon: Icon) -> Self {
            self.common.icons.push(icon);
            self
        }

        /// Display hints.
        pub fn annotations(mut self, annotations: Annotations) -> Self {
            self.common.annotations = Some(annotations);
            self
        }

        /// Sets the definition's `_meta`.
        pub fn meta(mut self, meta: Meta) -> Self {
            self.common.meta = Some(meta);
            self
        }

        /// How long a read's result may be cached (`ttlMs`, in whole
        /// milliseconds), instead of the server's
        /// [`ServerConfig::ttl`](crate::ServerConfig::ttl).
        /// Spec: server/utilities/caching.mdx
        pub fn ttl(mut self, ttl: Duration) -> Self {
            self.common.ttl = Some(ttl);
            self
        }

        /// `cacheScope` of a read's result, instead of the server's
        /// [`ServerConfig::cache_scope`](crate::ServerConfig::cache_scope);
        /// `Private` for contents that depend on who asks.
        /// Spec: server/utilities/caching.mdx#cache-scope-field
        pub fn cache_scope(mut self, scope: CacheScope) -> Self {
            self.common.cache_scope = Some(scope);
            self
        }
    };
}

/// How a registered resource or template answers a read.
#[derive(Clone)]
pub(crate) struct Reader {
    pub(crate) mime_type: Option<String>,
    /// The wire form of the builder's `ttl`, converted once here.
    pub(crate) ttl_ms: Option<u64>,
    pub(crate) cache_scope: Option<CacheScope>,
    pub(crate) handler: ReadHandler,
}

/// A resource at a fixed URI, ready to be registered.
///
/// # Example
///
/// Contents read from disk at each read; `?` on the `io::Error` makes a
/// failed read a JSON-RPC `-32603` error with its message:
///
/// ```
/// use std::time::Duration;
/// use toolwire::{HandlerError, Resource, Server, ServerConfig};
///
/// # fn main() -> Result<(), toolwire::RegistrationError> {
/// let log = Resource::builder("file:///var/log/app.log", "app.log")
///     .mime_type("text/plain")
///     .ttl(Duration::from_secs(5)) // clients may reuse a read for 5 s
///     .handler(|_cx| async {
///         let text = tokio::fs::read_to_string("/var/log/app.log").await?;
///         Ok::<_, HandlerError>(text)
///     })?;
/// assert_eq!(log.uri(), "file:///var/log/app.log");
/// let server = Server::new(ServerConfig::new("demo", "1.0.0")).with_resource(log)?;
/// # drop(server);
/// # Ok(())
/// # }
/// ```
#[derive(Clone)]
pub struct Resource {
    pub(crate) inner: Arc<ResourceInner>,
}

pub(crate) struct ResourceInner {
    pub(crate) definition: ResourceDefinition,
    pub(crate) scopes: Vec<String>,
    pub(crate) reader: Reader,
    /// In `resources/list` (an app's interface may be left out).
    pub(crate) listed: bool,
}

impl std::fmt::Debug for Resource {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Resource")
            .field("uri", &self.inner.definition.uri)
            .finish_non_exhaustive()
    }
}

impl Resource {
    /// Starts the definition of the resource at `uri`, listed as `name`.
    ///
    /// ```
    /// use toolwire::Resource;
    ///
    /// let readme = Resource::builder("file:///project/README.md", "README.md")
    ///     .mime_type("text/markdown")
    ///     .text("# Project")
    ///     .unwrap();
    /// let clock = Resource::builder("clock://now", "now")
    ///     .handler(|_cx| async { format!("{:?}", std::time::SystemTime::now()) })
    ///     .unwrap();
    /// # drop((readme, clock));
    /// ```
    pub fn builder(uri: impl Into<String>, name: impl Into<String>) -> ResourceBuilder {
        ResourceBuilder {
            uri: uri.into(),
            name: name.into(),
            size: None,
            common: Common::default(),
            listed: true,
        }
    }

    /// Whether `resources/list` shows it.
    pub fn is_listed(&self) -> bool {
        self.inner.listed
    }

    /// The URI.
    pub fn uri(&self) -> &str {
        &self.inner.definition.uri
    }

    /// The definition as listed by `resources/list`.
    pub fn definition(&self) -> &ResourceDefinition {
        &self.inner.definition
    }

    /// The OAuth scopes needed to read it (see the builder's `scopes`).
    pub fn scopes(&self) -> &[String] {
        &self.inner.scopes
    }
}

/// Builds a [`Resource`]; see [`Resource::builder`].
#[derive(Debug)]
#[must_use]
pub struct ResourceBuilder {
    uri: String,
    name: String,
    size: Option<u64>,
    common: Common,
    listed: bool,
}

impl ResourceBuilder {
    common_setters!();

    /// The size in bytes, if known.
    pub fn size(mut self, size: u64) -> Self {
        self.size = Some(size);
        self
    }

    /// Leaves the resource out of `resources/list`; it is read all the
    /// same. For an app interface only tools name (the spec allows it), or
    /// a proxy's copy of one its upstream did not list.
    pub fn unlisted(mut self) -> Self {
        self.listed = false;
        self
    }

    /// Finishes the resource with a read handler. Validates the URI and
    /// name now, not at read time.
    pub fn handler<F, Fut, R>(self, f: F) -> Result<Resource, RegistrationError>
    where
        F: Fn(RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoHandlerOutput<Vec<ResourceContents>> + 'static,
    {
        let f = Arc::new(f);
        self.finish(Arc::new(move |_vars, cx| {
            let f = Arc::clone(&f);
            Box::pin(async move { f(cx).await.into_handler_output() })
        }))
    }

    /// Finishes the resource with fixed text contents.
    pub fn text(self, text: impl Into<String>) -> Result<Resource, RegistrationError> {
        let text: Arc<str> = text.into().into();
        self.handler(move |_cx| {
            let text = Arc::clone(&text);
            async move { text.to_string() }
        })
    }

    /// Finishes the resource with fixed binary contents, sent base64-encoded.
    pub fn blob(self, bytes: impl Into<Vec<u8>>) -> Result<Resource, RegistrationError> {
        let bytes: Arc<[u8]> = bytes.into().into();
        self.handler(move |_cx| {
            let bytes = Arc::clone(&bytes);
            async move { bytes.to_vec() }
        })
    }

    fn finish(self, handler: ReadHandler) -> Result<Resource, RegistrationError> {
        let refuse = |problem| RegistrationError::Resource {
            uri: self.uri.clone(),
            problem,
        };
        check_uri(&self.uri).map_err(refuse)?;
        if self.name.is_empty() {
            return Err(refuse(ResourceProblem::EmptyName));
        }
        let c = self.common;
        let definition = ResourceDefinition {
            uri: self.uri,
            name: self.name,
            title: c.title,
            description: c.description,
            mime_type: c.mime_type.clone(),
            size: self.size,
            icons: (!c.icons.is_empty()).then_some(c.icons),
            annotations: c.annotations,
            meta: c.meta,
        };
        Ok(Resource {
            inner: Arc::new(ResourceInner {
                definition,
                scopes: c.scopes,
                reader: Reader {
                    mime_type: c.mime_type,
                    ttl_ms: c.ttl.map(crate::handler::wire_millis),
                    cache_scope: c.cache_scope,
                    handler,
                },
                listed: self.listed,
            }),
        })
    }
}

/// A family of resources behind a URI template, ready to be registered.
/// `resources/read` of a URI that no fixed resource has is tried against
/// each template in registration order.
#[derive(Clone)]
pub struct ResourceTemplate {
    pub(crate) inner: Arc<TemplateInner>,
}

pub(crate) struct TemplateInner {
    pub(crate) definition: ResourceTemplateDefinition,
    pub(crate) scopes: Vec<String>,
    pub(crate) template: UriTemplate,
    pub(crate) completions: BTreeMap<String, Completer>,
    pub(crate) reader: Reader,
}

impl std::fmt::Debug for ResourceTemplate {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ResourceTemplate")
            .field("uri_template", &self.inner.definition.uri_template)
            .finish_non_exhaustive()
    }
}

impl ResourceTemplate {
    /// Starts the definition of the resources matching `uri_template` (RFC
    /// 6570), listed as `name`.
    ///
    /// ```
    /// use toolwire::{Completer, HandlerError, ResourceTemplate, UriVariables};
    ///
    /// let users = ResourceTemplate::builder("users://{id}/profile", "user-profile")
    ///     .mime_type("application/json")
    ///     .complete("id", Completer::from_values(["alice", "bob"]))
    ///     .handler(|vars: UriVariables, _cx| async move {
    ///         match vars.get("id") {
    ///             Some(id @ ("alice" | "bob")) => Ok(format!(r#"{{"id":"{id}"}}"#)),
    ///             _ => Err(HandlerError::NotFound),
    ///         }
    ///     })
    ///     .unwrap();
    /// # drop(users);
    /// ```
    pub fn builder(
        uri_template: impl Into<String>,
        name: impl Into<String>,
    ) -> ResourceTemplateBuilder {
        ResourceTemplateBuilder {
            uri_template: uri_template.into(),
            name: name.into(),
            completions: Vec::new(),
            common: Common::default(),
        }
    }

    /// The URI template as written.
    pub fn uri_template(&self) -> &str {
        &self.inner.definition.uri_template
    }

    /// The parsed template.
    pub fn template(&self) -> &UriTemplate {
        &self.inner.template
    }

    /// The definition as listed by `resources/templates/list`.
    pub fn definition(&self) -> &ResourceTemplateDefinition {
        &self.inner.definition
    }

    /// The OAuth scopes needed to read its resources (see the builder's
    /// `scopes`).
    pub fn scopes(&self) -> &[String] {
        &self.inner.scopes
    }
}

/// Builds a [`ResourceTemplate`]; see [`ResourceTemplate::builder`].
#[derive(Debug)]
#[must_use]
pub struct ResourceTemplateBuilder {
    uri_template: String,
    name: String,
    completions: Vec<(String, Completer)>,
    common: Common,
}

impl ResourceTemplateBuilder {
    common_setters!();

    /// Registers the completion provider of a template variable, for
    /// `completion/complete` with `ref/resource`.
    pub fn complete(mut self, variable: impl Into<String>, completer: Completer) -> Self {
        self.completions.push((variable.into(), completer));
        self
    }

    /// Finishes the template with a read handler, which receives the URI and
    /// the values of its variables. Validates the template, the name and the
    /// completion providers now, not at read time.
    ///
    /// Return [`HandlerError::NotFound`](crate::HandlerError::NotFound) when
    /// the variables name nothing:
    /// the client then gets `-32602` with `data.uri`.
    pub fn handler<F, Fut, R>(self, f: F) -> Result<ResourceTemplate, RegistrationError>
    where
        F: Fn(UriVariables, RequestContext) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoHandlerOutput<Vec<ResourceContents>> + 'static,
    {
        let f = Arc::new(f);
        self.finish(Arc::new(move |vars, cx| {
            let f = Arc::clone(&f);
            Box::pin(async move { f(vars, cx).await.into_handler_output() })
        }))
    }

    fn finish(self, handler: ReadHandler) -> Result<ResourceTemplate, RegistrationError> {
        let refuse = |problem| RegistrationError::Resource {
            uri: self.uri_template.clone(),
            problem,
        };
        let template = UriTemplate::parse(&self.uri_template)
            .map_err(|e| refuse(ResourceProblem::Template(e)))?;
        if self.name.is_empty() {
            return Err(refuse(ResourceProblem::EmptyName));
        }
        let mut completions = BTreeMap::new();
        for (variable, completer) in self.completions {
            if !template.has_variable(&variable) {
                return Err(refuse(ResourceProblem::UnknownCompletionVariable(variable)));
            }
            completions.insert(variable, completer);
        }
        let c = self.common;
        let definition = ResourceTemplateDefinition {
            uri_template: self.uri_template,
            name: self.name,
            title: c.title,
            description: c.description,
            mime_type: c.mime_type.clone(),
            icons: (!c.icons.is_empty()).then_some(c.icons),
            annotations: c.annotations,
            meta: c.meta,
        };
        Ok(ResourceTemplate {
            inner: Arc::new(TemplateInner {
                definition,
                scopes: c.scopes,
                template,
                completions,
                reader: Reader {
                    mime_type: c.mime_type,
                    ttl_ms: c.ttl.map(crate::handler::wire_millis),
                    cache_scope: c.cache_scope,
                    handler,
                },
            }),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::uri_template::UriTemplateError;

    fn problem<T: std::fmt::Debug>(r: Result<T, RegistrationError>) -> ResourceProblem {
        match r {
            Err(RegistrationError::Resource { problem, .. }) => problem,
            other => panic!("expected a resource problem, got {other:?}"),
        }
    }

    #[test]
    fn resource_uris_must_be_absolute_uris() {
        for ok in [
            "test://static-text",
            "file:///project/src/main.rs",
            "urn:isbn:0451450523",
            "https://example.com/a%20b?q=1#frag",
            "git+ssh://host/repo.git",
        ] {
            assert!(check_uri(ok).is_ok(), "{ok}");
        }
        for bad in [
            "no-scheme",
            "",
            "://x",
            "1x://y",
            "x y://z",
            "file:///a b",
            "file:///ü",
            "file:///%zz",
            "x:{id}",
            "x:a\nb",
        ] {
            assert!(
                matches!(check_uri(bad), Err(ResourceProblem::InvalidUri(_))),
                "{bad:?}"
            );
        }
    }

    #[test]
    fn registration_validates_uri_name_template_and_completions() {
        assert!(matches!(
            problem(Resource::builder("not a uri", "n").text("x")),
            ResourceProblem::InvalidUri(_)
        ));
        assert_eq!(
            problem(Resource::builder("test://x", "").text("x")),
            ResourceProblem::EmptyName
        );
        let handler = |_: UriVariables, _| async { "x" };
        assert!(matches!(
            problem(ResourceTemplate::builder("test://{id", "t").handler(handler)),
            ResourceProblem::Template(UriTemplateError::Unclosed { .. })
        ));
        assert_eq!(
            problem(
                ResourceTemplate::builder("test://{id}", "t")
                    .complete("name", Completer::from_values(["a"]))
                    .handler(handler)
            ),
            ResourceProblem::UnknownCompletionVariable("name".into())
        );
        let t = ResourceTemplate::builder("test://{id}", "t")
            .complete("id", Completer::from_values(["a"]))
            .handler(handler)
            .expect("valid");
        assert_eq!(t.template().variables().collect::<Vec<_>>(), ["id"]);
        let e = Resource::builder("x y", "n")
            .text("x")
            .expect_err("invalid");
        assert!(
            e.to_string()
                .starts_with("resource \"x y\": not a valid URI"),
            "{e}"
        );
    }
}
