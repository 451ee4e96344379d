//! Sealing `requestState`: the keyring ([`StateKeys`]) and the
//! XChaCha20-Poly1305 envelope that binds a handler's state to the request
//! that produced it.
//!
//! Spec: basic/patterns/mrtr.mdx#server-requirements-basic-workflow — the
//! state is attacker-controlled input; it is integrity-protected and bound to
//! the principal, a short expiry and the originating request, and state that
//! fails verification is rejected.
//!
//! An envelope is `base64url(version ‖ key id ‖ nonce ‖ ciphertext ‖ tag)`.
//! The version and key id are authenticated as associated data. The
//! plaintext is a small JSON object: the round, the expiry, a SHA-256 digest
//! of the method, target name and canonical arguments, a digest of the
//! principal, the keys of the input requests the round asked (only answers
//! under those keys are accepted on the retry), and the handler's state.
//! Nothing of the arguments or the state is readable without the key.

use base64::Engine as _;
use base64::engine::general_purpose::{STANDARD, STANDARD_NO_PAD, URL_SAFE, URL_SAFE_NO_PAD};
use chacha20poly1305::aead::{Aead, Payload};
use chacha20poly1305::{KeyInit, XChaCha20Poly1305, XNonce};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use sha2::{Digest, Sha256};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, OnceLock};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

/// Bytes in a state key.
pub const STATE_KEY_LEN: usize = 32;
const VERSION: u8 = 1;
const KEY_ID_LEN: usize = 4;
const NONCE_LEN: usize = 24;
const HEADER_LEN: usize = 1 + KEY_ID_LEN;
const TAG_LEN: usize = 16;
/// Longest `requestState` accepted, in characters; longer ones are refused
/// before decoding.
const MAX_SEALED_CHARS: usize = 1 << 20;

/// The keys that seal and open `requestState`.
///
/// The first key seals; every key opens. To rotate, put the new key first
/// and keep the old ones after it until every state they sealed has expired.
/// Replicas that share a keyring open each other's state, so a retry may
/// land on any replica.
///
/// Without a configured keyring a server uses a random key made once per
/// process: state then only opens in the process that sealed it.
///
/// `Debug` shows key fingerprints, never key material.
#[derive(Clone)]
pub struct StateKeys {
    keys: Arc<[StateKey]>,
}

#[derive(Clone)]
struct StateKey {
    id: [u8; KEY_ID_LEN],
    bytes: [u8; STATE_KEY_LEN],
}

impl StateKey {
    fn new(bytes: [u8; STATE_KEY_LEN]) -> Self {
        let mut h = Sha256::new();
        h.update(b"toolwire/requestState/key-id");
        h.update(bytes);
        let digest = h.finalize();
        let mut id = [0; KEY_ID_LEN];
        id.copy_from_slice(&digest[..KEY_ID_LEN]);
        Self { id, bytes }
    }

    fn cipher(&self) -> XChaCha20Poly1305 {
        XChaCha20Poly1305::new(&self.bytes.into())
    }
}

/// Why a keyring could not be built.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum StateKeyError {
    /// No key was given.
    #[error("the state keyring is empty: give at least one base64-encoded 32-byte key")]
    Empty,
    /// A key is not valid base64.
    #[error("state key #{index} is not valid base64")]
    Base64 {
        /// The key's position, from 1.
        index: usize,
    },
    /// A key does not decode to 32 bytes.
    #[error("state key #{index} decodes to {len} bytes; a key is exactly 32 bytes")]
    Length {
        /// The key's position, from 1.
        index: usize,
        /// Its decoded length.
        len: usize,
    },
    /// The key file could not be read.
    #[error("reading state keys from {path}: {source}")]
    Io {
        /// The file.
        path: PathBuf,
        /// Why.
        source: std::io::Error,
    },
    /// The environment variable is not valid Unicode.
    #[error("the environment variable {0} is not valid Unicode")]
    Env(String),
    /// The operating system's random number generator failed.
    #[error("the system random number generator failed: {0}")]
    Random(String),
}

impl StateKeys {
    /// A keyring of one fresh random key.
    pub fn random() -> Result<Self, StateKeyError> {
        let mut bytes = [0; STATE_KEY_LEN];
        getrandom::fill(&mut bytes).map_err(|e| StateKeyError::Random(e.to_string()))?;
        Self::from_keys([bytes])
    }

    /// A keyring of raw 32-byte keys; the first seals.
    pub fn from_keys(
        keys: impl IntoIterator<Item = [u8; STATE_KEY_LEN]>,
    ) -> Result<Self, StateKeyError> {
        let keys: Vec<StateKey> = keys.into_iter().map(StateKey::new).collect();
        if keys.is_empty() {
            return Err(StateKeyError::Empty);
        }
        Ok(Self { keys: keys.into() })
    }

    /// Parses base64 keys (standard or URL-safe alphabet, padded or not),
    /// separated by commas, whitespace or newlines. A `#` starts a comment
    /// that runs to the end of the line. The first key seals.
    pub fn from_base64(text: &str) -> Result<Self, StateKeyError> {
        let mut keys = Vec::new();
        let words = text
            .lines()
            .map(|line| line.split('#').next().unwrap_or_default())
            .flat_map(|line| line.split(|c: char| c == ',' || c.is_whitespace()))
            .filter(|w| !w.is_empty());
        for (i, word) in words.enumerate() {
            let index = i + 1;
            let bytes = [&STANDARD, &STANDARD_NO_PAD, &URL_SAFE, &URL_SAFE_NO_PAD]
                .iter()
                .find_map(|engine| engine.decode(word).ok())
                .ok_or(StateKeyError::Base64 { index })?;
            let key: [u8; STATE_KEY_LEN] =
                bytes
                    .as_slice()
                    .try_into()
                    .map_err(|_| StateKeyError::Length {
                        index,
                        len: bytes.len(),
                    })?;
            keys.push(key);
        }
        Self::from_keys(keys)
    }

    /// Reads keys in the [`from_base64`](Self::from_base64) format from a file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, StateKeyError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path).map_err(|source| StateKeyError::Io {
            path: path.to_owned(),
            source,
        })?;
        Self::from_base64(&text)
    }

    /// Reads keys in the [`from_base64`](Self::from_base64) format from the
    /// environment variable `var` (conventionally [`STATE_KEYS_ENV`]);
    /// `None` when it is unset or blank.
    pub fn from_env(var: &str) -> Result<Option<Self>, StateKeyError> {
        match std::env::var(var) {
            Ok(text) if text.trim().is_empty() => Ok(None),
            Ok(text) => Self::from_base64(&text).map(Some),
            Err(std::env::VarError::NotPresent) => Ok(None),
            Err(std::env::VarError::NotUnicode(_)) => Err(StateKeyError::Env(var.to_owned())),
        }
    }

    /// How many keys the ring holds.
    pub fn len(&self) -> usize {
        self.keys.len()
    }

    /// Always `false`: a keyring holds at least one key.
    pub fn is_empty(&self) -> bool {
        self.keys.is_empty()
    }

    fn sealing_key(&self) -> &StateKey {
        // Invariant: `from_keys` refuses an empty ring.
        &self.keys[0]
    }

    fn key(&self, id: &[u8]) -> Option<&StateKey> {
        self.keys.iter().find(|k| k.id == id)
    }
}

/// The conventional environment variable for a keyring:
/// comma-separated base64 keys, the first for sealing.
pub const STATE_KEYS_ENV: &str = "TOOLWIRE_STATE_KEYS";

impl fmt::Debug for StateKeys {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let ids: Vec<String> = self
            .keys
            .iter()
            .map(|k| k.id.iter().map(|b| format!("{b:02x}")).collect())
            .collect();
        f.debug_struct("StateKeys").field("key_ids", &ids).finish()
    }
}

/// The random keyring used when none is configured: one per process, so
/// every server in the process opens the others' state.
pub(crate) fn process_keys() -> Option<&'static StateKeys> {
    static KEYS: OnceLock<Option<StateKeys>> = OnceLock::new();
    KEYS.get_or_init(|| match StateKeys::random() {
        Ok(k) => Some(k),
        Err(e) => {
            tracing::error!("cannot make a requestState key: {e}");
            None
        }
    })
    .as_ref()
}

/// What a sealed state is bound to: the method, the target (tool, prompt or
/// resource) and its arguments, and the principal. Only digests are kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Binding {
    request: [u8; 32],
    principal: Option<[u8; 32]>,
}

impl Binding {
    pub(crate) fn new(
        method: &str,
        target: &str,
        arguments: &Value,
        principal: Option<&str>,
    ) -> Self {
        let mut h = Sha256::new();
        h.update(b"toolwire/requestState/request\0");
        for part in [method.as_bytes(), target.as_bytes()] {
            h.update((part.len() as u64).to_be_bytes());
            h.update(part);
        }
        let mut canonical = Vec::new();
        write_canonical(arguments, &mut canonical);
        h.update((canonical.len() as u64).to_be_bytes());
        h.update(&canonical);
        let principal = principal.map(|p| {
            let mut h = Sha256::new();
            h.update(b"toolwire/requestState/principal\0");
            h.update(p.as_bytes());
            h.finalize().into()
        });
        Self {
            request: h.finalize().into(),
            principal,
        }
    }
}

/// A canonical encoding of a JSON value: object members sorted by key, no
/// whitespace, integral numbers written as integers, so equal values from
/// different encoders digest alike.
fn write_canonical(v: &Value, out: &mut Vec<u8>) {
    match v {
        Value::Null => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Number(n) => {
            let text = match (n.as_i64(), n.as_u64(), n.as_f64()) {
                (Some(i), _, _) => i.to_string(),
                (_, Some(u), _) => u.to_string(),
                #[allow(clippy::cast_possible_truncation, reason = "integral and in range")]
                (_, _, Some(f)) if f.fract() == 0.0 && f.abs() < 9.0e15 => (f as i64).to_string(),
                _ => n.to_string(),
            };
            out.extend_from_slice(text.as_bytes());
        }
        Value::String(s) => out.extend_from_slice(Value::String(s.clone()).to_string().as_bytes()),
        Value::Array(items) => {
            out.push(b'[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_canonical(item, out);
            }
            out.push(b']');
        }
        Value::Object(map) => {
            let mut members: Vec<(&String, &Value)> = map.iter().collect();
            members.sort_by(|a, b| a.0.cmp(b.0));
            out.push(b'{');
            for (i, (k, item)) in members.into_iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                out.extend_from_slice(Value::String(k.clone()).to_string().as_bytes());
                out.push(b':');
                write_canonical(item, out);
            }
            out.push(b'}');
        }
    }
}

/// The sealed plaintext.
#[derive(Serialize, Deserialize)]
struct Plain {
    /// The round that produced the state, from 1.
    r: u32,
    /// Expiry, in milliseconds since the Unix epoch.
    exp: u64,
    /// Digest of method, target and arguments.
    req: String,
    /// Digest of the principal, when there is one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    who: Option<String>,
    /// The keys of the input requests the round sent, sorted: the handler's
    /// own keys, already sent to the client in `inputRequests`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    k: Vec<String>,
    /// The handler's state.
    #[serde(default)]
    s: Value,
}

/// What an opened state holds.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Opened {
    /// The round that sealed it.
    pub(crate) round: u32,
    /// The handler's state (`null` when it sealed none).
    pub(crate) state: Value,
    /// The keys of the input requests the round that sealed it sent, sorted.
    pub(crate) asked: Vec<String>,
}

/// Why a state failed verification. All of them reach the client as the same
/// `-32602`; the detail goes to the server's log.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub(crate) enum OpenError {
    #[error("not a requestState this server issued")]
    Malformed,
    #[error("sealed with a key this server does not hold")]
    UnknownKey,
    #[error("failed authentication (tampered, or sealed with another key)")]
    Forged,
    #[error("expired")]
    Expired,
    #[error("issued for another method, target or arguments")]
    WrongRequest,
    #[error("issued to another principal")]
    WrongPrincipal,
}

/// Why a state could not be sealed.
#[derive(Debug, thiserror::Error)]
pub(crate) enum SealError {
    #[error("the system random number generator failed: {0}")]
    Random(String),
    #[error("encryption failed")]
    Encrypt,
    #[error("unserialisable state: {0}")]
    Serialise(String),
}

fn millis(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// Seals `state` for round `round` of the request `binding` describes,
/// which asked for input under the keys `asked` (sorted), valid for `ttl`
/// from `now`.
pub(crate) fn seal(
    keys: &StateKeys,
    binding: &Binding,
    round: u32,
    asked: Vec<String>,
    state: &Value,
    ttl: Duration,
    now: SystemTime,
) -> Result<String, SealError> {
    let exp = millis(now).saturating_add(u64::try_from(ttl.as_millis()).unwrap_or(u64::MAX));
    let plain = Plain {
        r: round,
        exp,
        req: URL_SAFE_NO_PAD.encode(binding.request),
        who: binding.principal.map(|p| URL_SAFE_NO_PAD.encode(p)),
        k: asked,
        s: state.clone(),
    };
    let msg = serde_json::to_vec(&plain).map_err(|e| SealError::Serialise(e.to_string()))?;
    let key = keys.sealing_key();
    let mut nonce = [0; NONCE_LEN];
    getrandom::fill(&mut nonce).map_err(|e| SealError::Random(e.to_string()))?;
    let mut out = Vec::with_capacity(HEADER_LEN + NONCE_LEN + msg.len() + TAG_LEN);
    out.push(VERSION);
    out.extend_from_slice(&key.id);
    let ciphertext = key
        .cipher()
        .encrypt(
            &XNonce::from(nonce),
            Payload {
                msg: &msg,
                aad: &out[..HEADER_LEN],
            },
        )
        .map_err(|_| SealError::Encrypt)?;
    out.extend_from_slice(&nonce);
    out.extend_from_slice(&ciphertext);
    Ok(URL_SAFE_NO_PAD.encode(out))
}

/// Opens a state sealed by [`seal`], checking key, integrity, expiry and
/// binding.
pub(crate) fn open(
    keys: &StateKeys,
    binding: &Binding,
    sealed: &str,
    now: SystemTime,
) -> Result<Opened, OpenError> {
    if sealed.len() > MAX_SEALED_CHARS {
        return Err(OpenError::Malformed);
    }
    let bytes = URL_SAFE_NO_PAD
        .decode(sealed)
        .map_err(|_| OpenError::Malformed)?;
    if bytes.len() < HEADER_LEN + NONCE_LEN + TAG_LEN || bytes[0] != VERSION {
        return Err(OpenError::Malformed);
    }
    let (header, rest) = bytes.split_at(HEADER_LEN);
    let (nonce, ciphertext) = rest.split_at(NONCE_LEN);
    let key = keys.key(&header[1..]).ok_or(OpenError::UnknownKey)?;
    let nonce: [u8; NONCE_LEN] = nonce.try_into().map_err(|_| OpenError::Malformed)?;
    let msg = key
        .cipher()
        .decrypt(
            &XNonce::from(nonce),
            Payload {
                msg: ciphertext,
                aad: header,
            },
        )
        .map_err(|_| OpenError::Forged)?;
    // Authentic from here on: only a key holder could have written it.
    let plain: Plain = serde_json::from_slice(&msg).map_err(|_| OpenError::Malformed)?;
    if millis(now) > plain.exp {
        return Err(OpenError::Expired);
    }
    if plain.req != URL_SAFE_NO_PAD.encode(binding.request) {
        return Err(OpenError::WrongRequest);
    }
    if plain.who != binding.principal.map(|p| URL_SAFE_NO_PAD.encode(p)) {
        return Err(OpenError::WrongPrincipal);
    }
    Ok(Opened {
        round: plain.r,
        state: plain.s,
        asked: plain.k,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    const TTL: Duration = Duration::from_secs(600);

    fn keys(seed: u8) -> StateKeys {
        StateKeys::from_keys([[seed; STATE_KEY_LEN]]).expect("one key")
    }

    fn binding() -> Binding {
        Binding::new(
            "tools/call",
            "confirm_action",
            &json!({"action": "deploy", "n": 1}),
            Some("alice"),
        )
    }

    fn now() -> SystemTime {
        SystemTime::now()
    }

    #[test]
    fn seal_then_open_round_trips_state_and_round() {
        let k = keys(1);
        let state = json!({"step": 2, "name": "Alice"});
        let asked = vec!["a".to_owned(), "b".to_owned()];
        let sealed = seal(&k, &binding(), 3, asked.clone(), &state, TTL, now()).expect("seals");
        let opened = open(&k, &binding(), &sealed, now()).expect("opens");
        assert_eq!(
            opened,
            Opened {
                round: 3,
                state,
                asked
            }
        );
    }

    #[test]
    fn any_flipped_byte_or_appended_text_fails_verification() {
        let k = keys(1);
        let sealed = seal(&k, &binding(), 1, Vec::new(), &json!(null), TTL, now()).expect("seals");
        let raw = URL_SAFE_NO_PAD.decode(&sealed).expect("base64");
        for i in 0..raw.len() {
            let mut bad = raw.clone();
            bad[i] ^= 0x01;
            let bad = URL_SAFE_NO_PAD.encode(bad);
            assert!(open(&k, &binding(), &bad, now()).is_err(), "byte {i}");
        }
        let appended = format!("{sealed}-TAMPERED");
        assert!(matches!(
            open(&k, &binding(), &appended, now()),
            Err(OpenError::Forged | OpenError::Malformed)
        ));
        assert_eq!(open(&k, &binding(), "", now()), Err(OpenError::Malformed));
        // A tampered ciphertext (past the header) is an authentication failure.
        let mut bad = raw;
        let last = bad.len() - 1;
        bad[last] ^= 0x80;
        assert_eq!(
            open(&k, &binding(), &URL_SAFE_NO_PAD.encode(bad), now()),
            Err(OpenError::Forged)
        );
    }

    #[test]
    fn another_key_cannot_open() {
        let sealed =
            seal(&keys(1), &binding(), 1, Vec::new(), &json!(1), TTL, now()).expect("seals");
        assert_eq!(
            open(&keys(2), &binding(), &sealed, now()),
            Err(OpenError::UnknownKey)
        );
    }

    #[test]
    fn a_key_that_claims_another_keys_id_is_caught_by_the_tag() {
        let sealed =
            seal(&keys(1), &binding(), 1, Vec::new(), &json!(1), TTL, now()).expect("seals");
        // Same id, different key material: forge the ring by hand.
        let impostor = StateKeys {
            keys: vec![StateKey {
                id: keys(1).keys[0].id,
                bytes: [2; STATE_KEY_LEN],
            }]
            .into(),
        };
        assert_eq!(
            open(&impostor, &binding(), &sealed, now()),
            Err(OpenError::Forged)
        );
    }

    #[test]
    fn rotation_keeps_old_keys_for_opening_and_seals_with_the_first() {
        let old = keys(1);
        let sealed_old =
            seal(&old, &binding(), 1, Vec::new(), &json!("a"), TTL, now()).expect("seals");
        let rotated = StateKeys::from_keys([[9; STATE_KEY_LEN], [1; STATE_KEY_LEN]]).expect("ring");
        assert_eq!(
            open(&rotated, &binding(), &sealed_old, now())
                .expect("old state opens")
                .state,
            json!("a")
        );
        let sealed_new =
            seal(&rotated, &binding(), 2, Vec::new(), &json!("b"), TTL, now()).expect("seals");
        assert_eq!(
            open(&keys(9), &binding(), &sealed_new, now())
                .expect("sealed with the first key")
                .round,
            2
        );
        assert_eq!(
            open(&old, &binding(), &sealed_new, now()),
            Err(OpenError::UnknownKey)
        );
    }

    #[test]
    fn expired_state_is_refused() {
        let k = keys(1);
        let t0 = now();
        let sealed = seal(
            &k,
            &binding(),
            1,
            Vec::new(),
            &json!(1),
            Duration::from_secs(60),
            t0,
        )
        .expect("seals");
        assert!(open(&k, &binding(), &sealed, t0 + Duration::from_secs(59)).is_ok());
        assert_eq!(
            open(&k, &binding(), &sealed, t0 + Duration::from_secs(61)),
            Err(OpenError::Expired)
        );
    }

    #[test]
    fn state_is_bound_to_method_target_arguments_and_principal() {
        let k = keys(1);
        let args = json!({"action": "deploy", "n": 1});
        let sealed = seal(&k, &binding(), 1, Vec::new(), &json!(1), TTL, now()).expect("seals");
        for (other, want) in [
            (
                Binding::new("prompts/get", "confirm_action", &args, Some("alice")),
                OpenError::WrongRequest,
            ),
            (
                Binding::new("tools/call", "other_tool", &args, Some("alice")),
                OpenError::WrongRequest,
            ),
            (
                Binding::new(
                    "tools/call",
                    "confirm_action",
                    &json!({"action": "delete", "n": 1}),
                    Some("alice"),
                ),
                OpenError::WrongRequest,
            ),
            (
                Binding::new("tools/call", "confirm_action", &args, Some("mallory")),
                OpenError::WrongPrincipal,
            ),
            (
                Binding::new("tools/call", "confirm_action", &args, None),
                OpenError::WrongPrincipal,
            ),
        ] {
            assert_eq!(open(&k, &other, &sealed, now()), Err(want), "{other:?}");
        }
        // Member order and integral floats do not change the binding.
        let same = Binding::new(
            "tools/call",
            "confirm_action",
            &serde_json::from_str(r#"{"n": 1.0, "action": "deploy"}"#).expect("json"),
            Some("alice"),
        );
        assert!(open(&k, &same, &sealed, now()).is_ok());
    }

    #[test]
    fn method_and_target_cannot_be_shifted_into_each_other() {
        let a = Binding::new("tools/call", "ab", &json!({}), None);
        let b = Binding::new("tools/callab", "", &json!({}), None);
        assert_ne!(a, b);
    }

    #[test]
    fn each_seal_differs_and_shows_no_plaintext() {
        let k = keys(1);
        let state = json!({"secret": "hunter2-plaintext"});
        let b = Binding::new(
            "tools/call",
            "t",
            &json!({"action": "launch-the-rockets"}),
            Some("alice"),
        );
        let s1 = seal(&k, &b, 1, Vec::new(), &state, TTL, now()).expect("seals");
        let s2 = seal(&k, &b, 1, Vec::new(), &state, TTL, now()).expect("seals");
        assert_ne!(s1, s2, "fresh nonce per seal");
        for s in [&s1, &s2] {
            let raw = URL_SAFE_NO_PAD.decode(s).expect("base64");
            let text = String::from_utf8_lossy(&raw);
            for needle in ["hunter2", "launch", "rockets", "alice", "secret"] {
                assert!(!text.contains(needle), "{needle} shows through");
                assert!(!s.contains(needle), "{needle} shows through");
            }
        }
    }

    #[test]
    fn keys_parse_from_base64_lists_and_files() {
        let a = STANDARD.encode([1u8; 32]);
        let b = URL_SAFE_NO_PAD.encode([2u8; 32]);
        let ring = StateKeys::from_base64(&format!("{a},{b}")).expect("two keys");
        assert_eq!(ring.len(), 2);
        let ring = StateKeys::from_base64(&format!("# current\n{b}\n\n# previous\n{a}  \n"))
            .expect("file format");
        assert_eq!(ring.len(), 2);
        assert_eq!(ring.sealing_key().bytes, [2; 32]);
        assert!(matches!(
            StateKeys::from_base64(""),
            Err(StateKeyError::Empty)
        ));
        assert!(matches!(
            StateKeys::from_base64("not base64!"),
            Err(StateKeyError::Base64 { index: 1 })
        ));
        assert!(matches!(
            StateKeys::from_base64(&format!("{a} {}", STANDARD.encode([0u8; 16]))),
            Err(StateKeyError::Length { index: 2, len: 16 })
        ));
        let dir = std::env::temp_dir().join(format!("toolwire-keys-{}", std::process::id()));
        std::fs::write(&dir, format!("{a}\n")).expect("write");
        assert_eq!(StateKeys::from_file(&dir).expect("reads").len(), 1);
        let _ = std::fs::remove_file(&dir);
        assert!(matches!(
            StateKeys::from_file(dir.join("missing")),
            Err(StateKeyError::Io { .. })
        ));
    }

    #[test]
    fn debug_shows_fingerprints_not_keys() {
        let ring = StateKeys::from_keys([[0xab; 32]]).expect("ring");
        let text = format!("{ring:?}");
        assert!(text.contains("key_ids"), "{text}");
        assert!(!text.contains("abab"), "{text}");
        assert!(!text.contains("171"), "{text}");
    }

    #[test]
    fn random_keys_differ() {
        let a = StateKeys::random().expect("rng");
        let b = StateKeys::random().expect("rng");
        assert_ne!(a.sealing_key().bytes, b.sealing_key().bytes);
    }
}
