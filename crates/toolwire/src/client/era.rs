//! Which protocol era the client speaks with its server: the
//! [`ProtocolMode`] chosen on the builder, the `server/discover` probe that
//! decides it in `auto` mode, and the legacy `initialize` handshake.
//!
//! Spec: basic/versioning.mdx#backward-compatibility-with-initialization-based-versions,
//! basic/transports/stdio.mdx#backward-compatibility,
//! basic/transports/streamable-http.mdx#backward-compatibility

use super::Client;
use super::engine::Wire;
use super::error::ClientError;
use super::method::MethodInfo;
use super::options::RequestOptions;
use crate::legacy::LEGACY_PROTOCOL_VERSIONS;
use bytes::Bytes;
use serde_json::{Map, Value, json};
use std::fmt;
use std::str::FromStr;
use std::sync::Arc;
use std::time::Duration;
use tokio::time::Instant;
use toolwire_proto::ErrorCode;
use toolwire_proto::encode_notification;
use toolwire_proto::types::{DiscoverRequest, removed};

/// How long the stdio probe waits for an answer before taking the silence
/// for a legacy server.
// Spec: basic/transports/stdio.mdx#backward-compatibility — "does not
// respond within a reasonable timeout: the server is legacy".
const PROBE_TIMEOUT: Duration = Duration::from_secs(10);

/// Which protocol era a client may speak.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ProtocolMode {
    /// Probe with `server/discover` and fall back to the `initialize`
    /// handshake when the answer shows a legacy server. The default.
    #[default]
    Auto,
    /// 2026-07-28 only: stateless requests. On stdio the first request is
    /// still a `server/discover` probe, so that a legacy server fails
    /// deterministically ([`ClientError::LegacyServer`]) instead of serving
    /// an era-ambiguous method under legacy semantics.
    Modern,
    /// The initialize-based revisions only (2025-11-25, 2025-06-18,
    /// 2025-03-26).
    Legacy,
}

impl FromStr for ProtocolMode {
    type Err = String;

    fn from_str(s: &str) -> Result<Self, Self::Err> {
        match s {
            "auto" => Ok(Self::Auto),
            "modern" => Ok(Self::Modern),
            "legacy" => Ok(Self::Legacy),
            other => Err(format!(
                "unknown protocol mode {other:?}: expected auto, modern or legacy"
            )),
        }
    }
}

/// The era a client settled on with its server.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ProtocolEra {
    /// 2026-07-28: every request stands alone.
    Modern,
    /// An initialize-based revision, in a session.
    Legacy,
}

impl fmt::Display for ProtocolEra {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Self::Modern => "modern",
            Self::Legacy => "legacy",
        })
    }
}

/// A legacy session: the negotiated version and the `initialize` result.
#[derive(Debug)]
pub(crate) struct LegacySession {
    pub(crate) version: String,
    pub(crate) initialize: Value,
    /// The level last set with `logging/setLevel` (as JSON).
    pub(crate) log_level: std::sync::Mutex<Option<Value>>,
}

#[derive(Debug, Clone)]
pub(crate) enum EraState {
    Modern,
    Legacy(Arc<LegacySession>),
}

/// Whether an answer to the modern probe shows a legacy server: any error
/// that is not a recognised modern one.
// Spec: basic/transports/stdio.mdx#backward-compatibility — "MUST NOT be
// keyed to one specific error code"; streamable-http.mdx — inspect a 4xx
// body for a modern error before falling back.
fn is_legacy_answer(e: &ClientError, stdio: bool) -> bool {
    match e {
        ClientError::Rpc(e) => ![
            ErrorCode::HEADER_MISMATCH,
            ErrorCode::MISSING_REQUIRED_CLIENT_CAPABILITY,
            ErrorCode::UNSUPPORTED_PROTOCOL_VERSION,
        ]
        .contains(&e.code),
        // A -32022 naming only initialize-era versions.
        ClientError::UnsupportedVersion { supported, .. } => {
            !supported.is_empty()
                && supported
                    .iter()
                    .all(|v| v.starts_with("2024-") || v.starts_with("2025-"))
        }
        ClientError::Http { status, .. } => matches!(status, 400 | 404 | 405),
        ClientError::Timeout(_) | ClientError::MaxTime(_) => stdio,
        _ => false,
    }
}

impl Client {
    /// The mode this client was built with.
    pub fn protocol_mode(&self) -> ProtocolMode {
        self.inner.mode
    }

    /// The era in use: `None` until the first request decided it (in `auto`
    /// mode, the `server/discover` probe). Remembered for the client's
    /// lifetime.
    pub fn era(&self) -> Option<ProtocolEra> {
        self.era_state().map(|e| match e {
            EraState::Modern => ProtocolEra::Modern,
            EraState::Legacy(_) => ProtocolEra::Legacy,
        })
    }

    /// The `Mcp-Session-Id` of a legacy HTTP session, if there is one.
    pub fn session_id(&self) -> Option<String> {
        self.inner.transport.session_id()
    }

    pub(crate) fn era_state(&self) -> Option<EraState> {
        self.inner.era.read().ok().and_then(|e| e.clone())
    }

    pub(crate) fn legacy_session(&self) -> Option<Arc<LegacySession>> {
        match self.era_state() {
            Some(EraState::Legacy(s)) => Some(s),
            _ => None,
        }
    }

    pub(crate) fn set_era(&self, era: EraState) {
        if let Ok(mut e) = self.inner.era.write() {
            *e = Some(era);
        }
    }

    /// Decides the era before the first request: nothing to do in `modern`
    /// mode, the handshake in `legacy` mode, the probe in `auto` mode.
    pub(crate) async fn ensure_era(&self) -> Result<(), ClientError> {
        if self.era_state().is_some() {
            return Ok(());
        }
        self.start_inbound();
        let _handshake = self.inner.handshake.lock().await;
        if self.era_state().is_some() {
            return Ok(());
        }
        let stdio = self.inner.kind == super::transport::TransportKind::Stdio;
        match self.inner.mode {
            // Spec: basic/transports/stdio.mdx#backward-compatibility — a
            // modern-only client need not probe, but probing is RECOMMENDED.
            ProtocolMode::Modern if stdio => self.probe(false).await?,
            ProtocolMode::Modern => self.set_era(EraState::Modern),
            ProtocolMode::Legacy => {
                let session = self.initialize(None).await?;
                self.set_era(EraState::Legacy(session));
            }
            ProtocolMode::Auto => self.probe(true).await?,
        }
        Ok(())
    }

    /// `server/discover` with the modern `_meta`: a result or a modern
    /// error means modern; any other answer means legacy, which starts the
    /// legacy handshake when `fall_back`, and is an error otherwise.
    async fn probe(&self, fall_back: bool) -> Result<(), ClientError> {
        let stdio = self.inner.kind == super::transport::TransportKind::Stdio;
        let started = Instant::now();
        let mut options = RequestOptions::default();
        if stdio && fall_back {
            // Half the request timeout at most: a silent server then still
            // gets its `initialize` within one request timeout in all.
            // Without a fallback (modern mode) there is nothing to save
            // time for, and silence is only slowness (a cold start, say):
            // the probe gets the whole request timeout.
            let t = self
                .inner
                .timeout
                .map_or(PROBE_TIMEOUT, |t| (t / 2).min(PROBE_TIMEOUT));
            options = options.with_timeout(t);
        }
        let credentials = self.credentials().await;
        let answer = self
            .modern_raw(MethodInfo::of::<DiscoverRequest>(), &Map::new(), &options)
            .await
            .and_then(|raw| super::answer::to_value(&raw));
        match answer {
            Ok(v) => {
                self.set_era(EraState::Modern);
                // The probe's answer is the discover result: keep it.
                if self.still(credentials.as_ref()).await {
                    self.store_discover(v, credentials.as_ref());
                }
                Ok(())
            }
            Err(e @ (ClientError::Timeout(_) | ClientError::MaxTime(_))) if !fall_back => Err(e),
            Err(e) if is_legacy_answer(&e, stdio) && !fall_back => Err(ClientError::LegacyServer(
                format!("server/discover got {e}"),
            )),
            Err(e) if is_legacy_answer(&e, stdio) => {
                tracing::debug!("server/discover got {e}: a legacy server; initializing");
                // After a silent probe the handshake gets what is left of
                // the request timeout, so the two take no longer than one.
                let timed_out = matches!(e, ClientError::Timeout(_));
                let rest = match e {
                    ClientError::Timeout(_) => self
                        .inner
                        .timeout
                        .map(|t| t.saturating_sub(started.elapsed())),
                    _ => None,
                };
                let session = match self.initialize(rest).await {
                    Ok(session) => session,
                    // A modern server that was slow to answer the probe
                    // (still starting, say) refuses the handshake with the
                    // versions it speaks: it is modern after all.
                    Err(ClientError::Rpc(e))
                        if timed_out
                            && e.code == ErrorCode::UNSUPPORTED_PROTOCOL_VERSION
                            && self.adopt_version(&e).is_ok() =>
                    {
                        tracing::debug!(
                            "the handshake got -32022 ({}): a modern server",
                            e.message
                        );
                        self.set_era(EraState::Modern);
                        return Ok(());
                    }
                    Err(e) => return Err(e),
                };
                self.set_era(EraState::Legacy(session));
                Ok(())
            }
            Err(e @ ClientError::Rpc(_)) | Err(e @ ClientError::UnsupportedVersion { .. }) => {
                // A modern server that refused: stay modern, report it.
                self.set_era(EraState::Modern);
                Err(e)
            }
            Err(e) => Err(e),
        }
    }

    /// The legacy handshake: `initialize` asking for each legacy version in
    /// turn until the server accepts one, then `notifications/initialized`
    /// and, on HTTP, the session's GET stream. Over HTTP, an `initialize`
    /// POST refused with 400, 404 or 405 and no JSON-RPC error turns to the
    /// 2024-11-05 HTTP+SSE transport. `timeout` overrides the client's for
    /// each `initialize`.
    // Spec (2025-11-25): basic/lifecycle.mdx#initialization,
    // #version-negotiation
    pub(crate) async fn initialize(
        &self,
        timeout: Option<Duration>,
    ) -> Result<Arc<LegacySession>, ClientError> {
        let mut options = RequestOptions::default();
        if let Some(t) = timeout {
            options = options.with_timeout(t);
        }
        self.inner.transport.reset_session();
        let info = self
            .inner
            .info_raw
            .as_deref()
            .and_then(|raw| serde_json::from_str(raw.get()).ok())
            .unwrap_or_else(
                || json!({"name": "toolwire-client", "version": env!("CARGO_PKG_VERSION")}),
            );
        let capabilities: Value = serde_json::from_str(self.inner.capabilities_raw.get())
            .unwrap_or_else(|_| Value::Object(Map::new()));
        let ours: Vec<String> = LEGACY_PROTOCOL_VERSIONS.map(str::to_owned).to_vec();
        let mut refused = None;
        let mut tried_sse = false;
        let mut versions = LEGACY_PROTOCOL_VERSIONS.iter().peekable();
        while let Some(&&asked) = versions.peek() {
            let mut params = Map::new();
            params.insert("protocolVersion".into(), Value::from(asked));
            params.insert("capabilities".into(), capabilities.clone());
            params.insert("clientInfo".into(), info.clone());
            let result = self
                .round(
                    MethodInfo::legacy(removed::INITIALIZE),
                    &params,
                    Wire::Initialize,
                    &options,
                )
                .await;
            let result = match result {
                Ok(v) => v,
                // Some servers refuse a version they do not know instead of
                // answering with their own: try the next one.
                Err(ClientError::Rpc(e)) => {
                    tracing::debug!("initialize {asked} refused: {}", e.message);
                    refused = Some(e);
                    versions.next();
                    continue;
                }
                // Spec: basic/transports/streamable-http.mdx#http%2Bsse-transport-2024-11-05
                // — a 400, 404 or 405 without a JSON-RPC error: try the GET
                // of the old HTTP+SSE transport, once, and ask again there.
                Err(e @ ClientError::Http { status, .. })
                    if matches!(status, 400 | 404 | 405) && !tried_sse =>
                {
                    tried_sse = true;
                    if self.inner.transport.open_legacy_sse().await? {
                        tracing::debug!("initialize got {e}; the server speaks HTTP+SSE");
                        continue;
                    }
                    return Err(e);
                }
                Err(e) => return Err(e),
            };
            let version = result
                .get("protocolVersion")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            if !ours.contains(&version) {
                return Err(ClientError::UnsupportedVersion {
                    supported: vec![version],
                    ours,
                });
            }
            let note = encode_notification(removed::INITIALIZED_NOTIFICATION, None::<&Value>);
            self.inner.transport.post(Bytes::from(note)).await?;
            // MCP-Protocol-Version exists from 2025-06-18 on.
            let header = (version != "2025-03-26").then(|| version.clone());
            self.inner.transport.start_legacy_session(header).await;
            tracing::debug!("legacy session at {version}");
            return Ok(Arc::new(LegacySession {
                version,
                initialize: result,
                log_level: std::sync::Mutex::new(None),
            }));
        }
        Err(refused.map_or(ClientError::Disconnected, ClientError::Rpc))
    }

    /// Starts a new legacy session after the server forgot the old one.
    pub(crate) async fn reinitialize(&self) -> Result<(), ClientError> {
        let _handshake = self.inner.handshake.lock().await;
        let session = self.initialize(None).await?;
        self.set_era(EraState::Legacy(session));
        Ok(())
    }

    fn store_discover(&self, mut v: Value, credentials: Option<&Arc<str>>) {
        super::engine::normalize_cache_hints(&mut v);
        self.inner.cache.put(
            MethodInfo::of::<DiscoverRequest>(),
            &Map::new(),
            credentials,
            &v,
        );
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use toolwire_proto::ErrorObject;

    #[test]
    fn modern_errors_keep_the_client_modern() {
        for code in [-32020, -32021, -32022] {
            let e = ClientError::Rpc(ErrorObject::new(ErrorCode(code), "x"));
            assert!(!is_legacy_answer(&e, true), "{code}");
        }
        for code in [-32601, -32602, -32600, -32000] {
            let e = ClientError::Rpc(ErrorObject::new(ErrorCode(code), "x"));
            assert!(is_legacy_answer(&e, false), "{code}");
        }
    }

    #[test]
    fn unsupported_version_is_legacy_only_when_it_lists_2025_versions() {
        let e = |s: &[&str]| ClientError::UnsupportedVersion {
            supported: s.iter().map(|v| (*v).to_owned()).collect(),
            ours: vec!["2026-07-28".into()],
        };
        assert!(is_legacy_answer(&e(&["2025-11-25", "2025-06-18"]), false));
        assert!(!is_legacy_answer(&e(&["2025-11-25", "2099-01-01"]), false));
        assert!(!is_legacy_answer(&e(&[]), false));
    }

    #[test]
    fn http_refusals_and_stdio_silence_are_legacy() {
        for status in [400, 404, 405] {
            let e = ClientError::Http {
                url: "http://127.0.0.1/mcp".to_owned(),
                status,
                body: String::new(),
            };
            assert!(is_legacy_answer(&e, false));
        }
        let e = ClientError::Http {
            url: "http://127.0.0.1/mcp".to_owned(),
            status: 500,
            body: String::new(),
        };
        assert!(!is_legacy_answer(&e, false));
        let t = ClientError::Timeout(Duration::from_secs(1));
        assert!(is_legacy_answer(&t, true));
        assert!(!is_legacy_answer(&t, false));
    }

    #[test]
    fn modes_parse() {
        assert_eq!("auto".parse(), Ok(ProtocolMode::Auto));
        assert_eq!("legacy".parse(), Ok(ProtocolMode::Legacy));
        assert!("old".parse::<ProtocolMode>().is_err());
    }
}
