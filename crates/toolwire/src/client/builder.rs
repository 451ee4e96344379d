//! [`ClientBuilder`]: identity, input handlers, limits, and the transport a
//! client connects with.

use super::Client;
use super::era::ProtocolMode;
use super::error::ClientError;
use super::input::{InputHandler, InputHandlers};
use super::transport::Transport;
use super::transport::http::HttpTransport;
use super::transport::stdio::StdioTransport;
use crate::bounds::timeout_within_bounds;
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncRead, AsyncWrite};
use toolwire_proto::meta::PROTOCOL_VERSION;
use toolwire_proto::types::{
    ClientCapabilities, CreateMessageRequest, ElicitRequest, ElicitationCapability, Implementation,
    ListRootsRequest, SamplingCapability, TASKS_EXTENSION,
};

/// Builds a [`Client`]. Start with [`ClientBuilder::new`], add handlers and
/// settings with the `with_*` methods, then connect with
/// [`spawn`](Self::spawn), [`connect_io`](Self::connect_io) or
/// [`connect_http`](Self::connect_http).
///
/// Defaults: `clientInfo` `toolwire-client` and this crate's version, sent
/// on every request; protocol mode `auto`; protocol version 2026-07-28; at most 10 rounds of
/// input per call; a 5-minute request timeout (not applied to listen
/// streams); no input handlers, so no client capabilities.
///
/// ```no_run
/// use serde_json::json;
/// use toolwire::proto::types::{ElicitAction, ElicitRequestParams, ElicitResult};
/// use toolwire::{ClientBuilder, InputError};
///
/// # async fn run() -> Result<(), toolwire::ClientError> {
/// let client = ClientBuilder::new()
///     // Declares `elicitation` and answers the server's forms.
///     .with_elicitation(|_key: String, _form: ElicitRequestParams| async {
///         Ok::<_, InputError>(ElicitResult { action: ElicitAction::Decline, content: None })
///     })
///     .connect_http("http://127.0.0.1:8080/mcp")?;
/// for tool in client.list_tools().await? {
///     println!("{}", tool.name);
/// }
/// let result = client.call_tool("regional_echo", json!({"region": "eu", "text": "hi"})).await?;
/// # drop(result);
/// # Ok(())
/// # }
/// ```
#[derive(Debug, Clone)]
#[must_use]
pub struct ClientBuilder {
    pub(crate) info: Option<Implementation>,
    pub(crate) versions: Vec<String>,
    pub(crate) handlers: InputHandlers,
    pub(crate) max_input_rounds: usize,
    pub(crate) timeout: Option<Duration>,
    pub(crate) max_time: Option<Duration>,
    pub(crate) close_grace: Duration,
    pub(crate) http_headers: Vec<(String, String)>,
    pub(crate) bearer: Option<String>,
    pub(crate) mode: ProtocolMode,
    pub(crate) ca_pems: Vec<Vec<u8>>,
    pub(crate) tasks: bool,
    /// Extensions declared besides tasks ([`ClientBuilder::with_extension`]).
    pub(crate) extensions: toolwire_proto::types::CapabilityMap,
    #[cfg(feature = "oauth")]
    pub(crate) auth: super::auth::AuthSlot,
}

impl Default for ClientBuilder {
    fn default() -> Self {
        Self::new()
    }
}

impl ClientBuilder {
    /// The default settings.
    pub fn new() -> Self {
        Self {
            info: Some(Implementation::new(
                "toolwire-client",
                env!("CARGO_PKG_VERSION"),
            )),
            versions: vec![PROTOCOL_VERSION.to_owned()],
            handlers: InputHandlers::default(),
            max_input_rounds: 10,
            timeout: Some(Duration::from_secs(300)),
            max_time: None,
            close_grace: super::transport::stdio::CLOSE_GRACE,
            http_headers: Vec::new(),
            bearer: None,
            mode: ProtocolMode::Auto,
            ca_pems: Vec::new(),
            tasks: false,
            extensions: Default::default(),
            #[cfg(feature = "oauth")]
            auth: super::auth::AuthSlot::default(),
        }
    }

    /// Which era to speak: [`ProtocolMode::Auto`] (the default) probes with
    /// `server/discover` and falls back to the legacy handshake when the
    /// server is legacy; `Modern` and `Legacy` skip the probe.
    pub fn with_protocol_mode(mut self, mode: ProtocolMode) -> Self {
        self.mode = mode;
        self
    }

    /// Sets `io.modelcontextprotocol/clientInfo`.
    pub fn with_client_info(mut self, info: Implementation) -> Self {
        self.info = Some(info);
        self
    }

    /// Sends no `clientInfo` (it is optional; the default sends it).
    pub fn without_client_info(mut self) -> Self {
        self.info = None;
        self
    }

    /// The protocol versions to speak, most preferred first. The first is
    /// sent until a server's `-32022` names another one from this list.
    /// An empty list keeps the current one.
    pub fn with_protocol_versions<I, S>(mut self, versions: I) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        let versions: Vec<String> = versions.into_iter().map(Into::into).collect();
        if !versions.is_empty() {
            self.versions = versions;
        }
        self
    }

    /// Answers `elicitation/create` input requests; declares the
    /// `elicitation` capability (form mode, unless
    /// [`with_elicitation_capability`](Self::with_elicitation_capability)
    /// says otherwise).
    pub fn with_elicitation(mut self, handler: impl InputHandler<ElicitRequest>) -> Self {
        self.handlers.elicit = Some(Arc::new(handler));
        self
    }

    /// The `elicitation` capability to declare (for example with `url`
    /// mode). Only used with an elicitation handler.
    pub fn with_elicitation_capability(mut self, capability: ElicitationCapability) -> Self {
        self.handlers.elicitation_capability = Some(capability);
        self
    }

    /// Answers `sampling/createMessage` input requests; declares `sampling`.
    pub fn with_sampling(mut self, handler: impl InputHandler<CreateMessageRequest>) -> Self {
        self.handlers.sampling = Some(Arc::new(handler));
        self
    }

    /// The `sampling` capability to declare (for example with `tools`).
    /// Only used with a sampling handler.
    pub fn with_sampling_capability(mut self, capability: SamplingCapability) -> Self {
        self.handlers.sampling_capability = Some(capability);
        self
    }

    /// Answers `roots/list` input requests; declares `roots`.
    pub fn with_roots(mut self, handler: impl InputHandler<ListRootsRequest>) -> Self {
        self.handlers.roots = Some(Arc::new(handler));
        self
    }

    /// How many `input_required` results one call may answer before it
    /// fails with [`ClientError::TooManyRounds`] (at least 1).
    pub fn with_max_input_rounds(mut self, rounds: usize) -> Self {
        self.max_input_rounds = rounds.max(1);
        self
    }

    /// The idle timeout of each request round trip (default 5 minutes; at
    /// least 1 ms, at most a year); `None` waits forever. Every
    /// `notifications/progress` of the request starts it again, so a long
    /// call that reports progress is not cut off. When it elapses the
    /// request is cancelled with [`ClientError::Timeout`].
    // Spec: basic/patterns/cancellation.mdx#timeouts — MAY reset the clock
    // on progress, SHOULD enforce a maximum regardless.
    pub fn with_request_timeout(mut self, timeout: Option<Duration>) -> Self {
        self.timeout = timeout.map(timeout_within_bounds);
        self
    }

    /// The idle timeout of each request round trip; `None` waits forever.
    pub fn request_timeout(&self) -> Option<Duration> {
        self.timeout
    }

    /// The most time one request round trip may take, however much progress
    /// it reports (default none; at least 1 ms, at most a year). When it
    /// elapses the request is cancelled with [`ClientError::MaxTime`].
    pub fn with_max_request_time(mut self, max: Option<Duration>) -> Self {
        self.max_time = max.map(timeout_within_bounds);
        self
    }

    /// The most time one request round trip may take; `None` for no bound.
    pub fn max_request_time(&self) -> Option<Duration> {
        self.max_time
    }

    /// How long [`Client::close`] waits for a spawned server to exit after
    /// closing its stdin, and again after SIGTERM, before SIGKILL (default
    /// 2 s; at most a minute).
    // Spec: basic/transports/stdio.mdx#shutdown
    pub fn with_close_grace(mut self, grace: Duration) -> Self {
        self.close_grace = grace.min(Duration::from_secs(60));
        self
    }

    /// How many `input_required` results one call may answer.
    pub fn max_input_rounds(&self) -> usize {
        self.max_input_rounds
    }

    /// The protocol versions to speak, most preferred first.
    pub fn protocol_versions(&self) -> &[String] {
        &self.versions
    }

    /// The `clientInfo` sent, if any.
    pub fn client_info(&self) -> Option<&Implementation> {
        self.info.as_ref()
    }

    /// A header sent on every HTTP request (ignored on stdio).
    pub fn with_http_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Self {
        self.http_headers.push((name.into(), value.into()));
        self
    }

    /// Trusts the CA certificates in `pem` (PEM, one or more) for
    /// `https://`, beside the platform's roots (or the compiled-in ones with
    /// the `webpki-roots` feature). Checked when connecting.
    pub fn with_ca_pem(mut self, pem: impl Into<Vec<u8>>) -> Self {
        self.ca_pems.push(pem.into());
        self
    }

    /// `Authorization: Bearer {token}` on every HTTP request. The token also
    /// partitions `private` cache entries.
    pub fn with_bearer_token(mut self, token: impl Into<String>) -> Self {
        self.bearer = Some(token.into());
        self
    }

    /// Authorizes HTTP requests with `provider` (for example an
    /// [`OAuthProvider`](crate::oauth::OAuthProvider)): its `Authorization`
    /// value goes on every request, and a 401 or 403 is handed to it, which
    /// may authorize and have the request sent again. Replaces
    /// [`with_bearer_token`](Self::with_bearer_token).
    #[cfg(feature = "oauth")]
    pub fn with_auth(mut self, provider: impl super::auth::AuthProvider) -> Self {
        self.auth = super::auth::AuthSlot(Some(Arc::new(provider)));
        self.bearer = None;
        self
    }

    /// Declares the Tasks extension (`io.modelcontextprotocol/tasks`) on
    /// every request: a server may then answer a `tools/call` with a task,
    /// which [`Client::call_tool`] follows to its end (polling `tasks/get`
    /// at the interval the server suggests, answering its input requests
    /// with the input handlers, as for MRTR) and returns the final result
    /// of.
    ///
    /// Spec: extensions/tasks
    pub fn with_tasks(mut self) -> Self {
        self.tasks = true;
        self
    }

    /// Declares extension `id` with its `settings` in the client's
    /// capabilities (for an extension the client itself does not act on,
    /// such as a host's MCP Apps: see [`with_apps`](Self::with_apps)).
    pub fn with_extension(
        mut self,
        id: impl Into<String>,
        settings: toolwire_proto::types::JsonObject,
    ) -> Self {
        self.extensions.insert(id.into(), settings);
        self
    }

    /// Declares MCP Apps (`io.modelcontextprotocol/ui`) rendering HTML
    /// interfaces ([`APP_MIME_TYPE`](crate::apps::APP_MIME_TYPE)): for a
    /// host that shows tools' interfaces.
    pub fn with_apps(self) -> Self {
        let mut settings = toolwire_proto::types::JsonObject::new();
        settings.insert(
            "mimeTypes".into(),
            serde_json::json!([crate::apps::APP_MIME_TYPE]),
        );
        self.with_extension(crate::apps::UI_EXTENSION, settings)
    }

    /// The client capabilities the registered handlers imply, the Tasks
    /// extension with [`with_tasks`](Self::with_tasks), and those of
    /// [`with_extension`](Self::with_extension).
    pub fn capabilities(&self) -> ClientCapabilities {
        let mut caps = self.handlers.capabilities();
        if !self.extensions.is_empty() {
            caps.extensions
                .get_or_insert_with(Default::default)
                .extend(self.extensions.clone());
        }
        if self.tasks {
            caps.extensions
                .get_or_insert_with(Default::default)
                .insert(TASKS_EXTENSION.to_owned(), Default::default());
        }
        caps
    }

    /// Starts `command` as the server and speaks stdio to it. Its stderr is
    /// inherited unless the command says otherwise; it is killed when the
    /// client is dropped without [`Client::close`].
    pub fn spawn(self, command: tokio::process::Command) -> Result<Client, ClientError> {
        let transport = StdioTransport::spawn(command, self.close_grace)?;
        Ok(Client::new(self, Arc::new(transport)))
    }

    /// Speaks stdio framing over `reader` (the server's output) and `writer`
    /// (its input): pipes, sockets, or an in-process `tokio::io::duplex`.
    pub fn connect_io<R, W>(self, reader: R, writer: W) -> Client
    where
        R: AsyncRead + Unpin + Send + 'static,
        W: AsyncWrite + Unpin + Send + 'static,
    {
        Client::new(self, Arc::new(StdioTransport::from_io(reader, writer)))
    }

    /// Speaks Streamable HTTP to the MCP endpoint at `url`, `http://` or
    /// `https://`. No request is sent until the first call.
    pub fn connect_http(self, url: &str) -> Result<Client, ClientError> {
        let transport = HttpTransport::new(url, &self.http_headers, &self.ca_pems)?;
        #[cfg(feature = "oauth")]
        let transport = transport.with_auth(self.auth.0.clone());
        if let Some(token) = &self.bearer {
            transport.set_authorization(Some(format!("Bearer {token}")));
        }
        Ok(Client::new(self, Arc::new(transport)))
    }
}
