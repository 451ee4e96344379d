//! Where credentials live between runs: the [`TokenStore`] trait, an
//! in-memory store, and the default file store (mode 0600 under the user's
//! configuration directory).
//!
//! Client registrations are keyed by the authorization server's issuer;
//! tokens by the MCP server they were issued for, and they record the
//! issuer and the resource, so a token never goes to another server and a
//! registration never to another authorization server.
//!
//! Spec: basic/authorization/client-registration.mdx#authorization-server-binding

use super::error::AuthError;
use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

/// A client identity obtained from an authorization server.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct ClientRegistration {
    /// The `client_id`.
    pub client_id: String,
    /// The `client_secret`, for confidential clients.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub client_secret: Option<String>,
    /// The token endpoint authentication method: `client_secret_basic`,
    /// `client_secret_post` or `none`.
    pub auth_method: String,
    /// The redirect URIs registered.
    #[serde(default)]
    pub redirect_uris: Vec<String>,
}

impl fmt::Debug for ClientRegistration {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("ClientRegistration")
            .field("client_id", &self.client_id)
            .field(
                "client_secret",
                &self.client_secret.as_ref().map(|_| "[redacted]"),
            )
            .field("auth_method", &self.auth_method)
            .field("redirect_uris", &self.redirect_uris)
            .finish()
    }
}

/// The tokens held for one MCP server.
#[derive(Clone, Serialize, Deserialize, PartialEq, Eq)]
pub struct StoredTokens {
    /// The issuer of the authorization server that issued them.
    pub issuer: String,
    /// The resource they were requested for (RFC 8707), as the protected
    /// resource metadata names it.
    pub resource: String,
    /// The access token.
    pub access_token: String,
    /// The refresh token, if one was issued.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub refresh_token: Option<String>,
    /// When the access token expires, in seconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<u64>,
    /// The scopes granted (or requested, when the server did not say).
    #[serde(default)]
    pub scopes: Vec<String>,
}

impl fmt::Debug for StoredTokens {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("StoredTokens")
            .field("issuer", &self.issuer)
            .field("resource", &self.resource)
            .field("access_token", &"[redacted]")
            .field(
                "refresh_token",
                &self.refresh_token.as_ref().map(|_| "[redacted]"),
            )
            .field("expires_at", &self.expires_at)
            .field("scopes", &self.scopes)
            .finish()
    }
}

/// Persistent storage of registrations and tokens. Implementations must
/// keep them confidential (OAuth 2.1 §4.3.1).
pub trait TokenStore: Send + Sync + 'static {
    /// The registration with the authorization server `issuer`.
    fn client(&self, issuer: &str) -> Result<Option<ClientRegistration>, AuthError>;
    /// Saves the registration with `issuer`.
    fn save_client(&self, issuer: &str, client: &ClientRegistration) -> Result<(), AuthError>;
    /// The tokens for the MCP server at `server`.
    fn tokens(&self, server: &str) -> Result<Option<StoredTokens>, AuthError>;
    /// Saves the tokens for `server`.
    fn save_tokens(&self, server: &str, tokens: &StoredTokens) -> Result<(), AuthError>;
    /// Forgets the tokens for `server`; whether there were any.
    fn remove_tokens(&self, server: &str) -> Result<bool, AuthError>;
    /// Every server with tokens.
    fn servers(&self) -> Result<Vec<(String, StoredTokens)>, AuthError>;
}

/// The store's contents.
#[derive(Default, Serialize, Deserialize)]
struct Contents {
    #[serde(default)]
    clients: BTreeMap<String, ClientRegistration>,
    #[serde(default)]
    tokens: BTreeMap<String, StoredTokens>,
}

/// Most entries of each kind a store keeps; saving past it is refused.
const MAX_ENTRIES: usize = 1000;

impl Contents {
    fn check_room<V>(map: &BTreeMap<String, V>, key: &str) -> Result<(), AuthError> {
        if map.len() >= MAX_ENTRIES && !map.contains_key(key) {
            return Err(AuthError::Store(format!("more than {MAX_ENTRIES} entries")));
        }
        Ok(())
    }
}

/// Credentials kept in memory for the life of the process.
#[derive(Default)]
pub struct MemoryTokenStore(Mutex<Contents>);

impl fmt::Debug for MemoryTokenStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("MemoryTokenStore")
    }
}

impl MemoryTokenStore {
    /// An empty store.
    pub fn new() -> Self {
        Self::default()
    }

    fn with<T>(
        &self,
        f: impl FnOnce(&mut Contents) -> Result<T, AuthError>,
    ) -> Result<T, AuthError> {
        let mut c = self
            .0
            .lock()
            .map_err(|_| AuthError::Store("poisoned".into()))?;
        f(&mut c)
    }
}

impl TokenStore for MemoryTokenStore {
    fn client(&self, issuer: &str) -> Result<Option<ClientRegistration>, AuthError> {
        self.with(|c| Ok(c.clients.get(issuer).cloned()))
    }
    fn save_client(&self, issuer: &str, client: &ClientRegistration) -> Result<(), AuthError> {
        self.with(|c| {
            Contents::check_room(&c.clients, issuer)?;
            c.clients.insert(issuer.to_owned(), client.clone());
            Ok(())
        })
    }
    fn tokens(&self, server: &str) -> Result<Option<StoredTokens>, AuthError> {
        self.with(|c| Ok(c.tokens.get(server).cloned()))
    }
    fn save_tokens(&self, server: &str, tokens: &StoredTokens) -> Result<(), AuthError> {
        self.with(|c| {
            Contents::check_room(&c.tokens, server)?;
            c.tokens.insert(server.to_owned(), tokens.clone());
            Ok(())
        })
    }
    fn remove_tokens(&self, server: &str) -> Result<bool, AuthError> {
        self.with(|c| Ok(c.tokens.remove(server).is_some()))
    }
    fn servers(&self) -> Result<Vec<(String, StoredTokens)>, AuthError> {
        self.with(|c| {
            Ok(c.tokens
                .iter()
                .map(|(k, v)| (k.clone(), v.clone()))
                .collect())
        })
    }
}

/// One JSON file, readable and writable by its owner only (0600, in a
/// 0700 directory), replaced atomically on every save.
#[derive(Debug)]
pub struct FileTokenStore {
    path: PathBuf,
    /// Serialises this process's read-modify-write cycles.
    lock: Mutex<()>,
}

impl FileTokenStore {
    /// A store in `path`, created on the first save.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            lock: Mutex::new(()),
        }
    }

    /// The default location: `toolwire/oauth.json` under the user's
    /// configuration directory (`$XDG_CONFIG_HOME` or `~/.config` on
    /// Linux), or under `$TOOLWIRE_CONFIG_DIR` when that is set.
    pub fn default_path() -> Result<PathBuf, AuthError> {
        if let Some(dir) = std::env::var_os("TOOLWIRE_CONFIG_DIR").filter(|d| !d.is_empty()) {
            return Ok(PathBuf::from(dir).join("oauth.json"));
        }
        dirs::config_dir()
            .map(|d| d.join("toolwire").join("oauth.json"))
            .ok_or_else(|| AuthError::Store("no configuration directory for this user".into()))
    }

    /// The store at [`default_path`](Self::default_path).
    pub fn open_default() -> Result<Self, AuthError> {
        Self::default_path().map(Self::new)
    }

    /// The file.
    pub fn path(&self) -> &Path {
        &self.path
    }

    fn read(&self) -> Result<Contents, AuthError> {
        match std::fs::read(&self.path) {
            Ok(bytes) => serde_json::from_slice(&bytes).map_err(|e| {
                AuthError::Store(format!(
                    "{} is not a toolwire token file: {e}",
                    self.path.display()
                ))
            }),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Ok(Contents::default()),
            Err(e) => Err(AuthError::Store(format!("{}: {e}", self.path.display()))),
        }
    }

    fn write(&self, contents: &Contents) -> Result<(), AuthError> {
        let fail = |e: std::io::Error| AuthError::Store(format!("{}: {e}", self.path.display()));
        if let Some(dir) = self.path.parent() {
            create_private_dir(dir).map_err(fail)?;
        }
        let bytes =
            serde_json::to_vec_pretty(contents).map_err(|e| AuthError::Store(e.to_string()))?;
        let tmp = self
            .path
            .with_extension(format!("tmp{}", std::process::id()));
        write_private(&tmp, &bytes).map_err(fail)?;
        std::fs::rename(&tmp, &self.path).map_err(|e| {
            let _ = std::fs::remove_file(&tmp);
            fail(e)
        })
    }

    fn update<T>(
        &self,
        f: impl FnOnce(&mut Contents) -> Result<T, AuthError>,
    ) -> Result<T, AuthError> {
        let _guard = self
            .lock
            .lock()
            .map_err(|_| AuthError::Store("poisoned".into()))?;
        let mut contents = self.read()?;
        let out = f(&mut contents)?;
        self.write(&contents)?;
        Ok(out)
    }
}

#[cfg(unix)]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::DirBuilderExt;
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(dir)
}

#[cfg(not(unix))]
fn create_private_dir(dir: &Path) -> std::io::Result<()> {
    std::fs::create_dir_all(dir)
}

#[cfg(unix)]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    use std::io::Write as _;
    use std::os::unix::fs::OpenOptionsExt;
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(0o600)
        .open(path)?;
    file.write_all(bytes)?;
    file.sync_all()
}

#[cfg(not(unix))]
fn write_private(path: &Path, bytes: &[u8]) -> std::io::Result<()> {
    std::fs::write(path, bytes)
}

impl TokenStore for FileTokenStore {
    fn client(&self, issuer: &str) -> Result<Option<ClientRegistration>, AuthError> {
        Ok(self.read()?.clients.remove(issuer))
    }
    fn save_client(&self, issuer: &str, client: &ClientRegistration) -> Result<(), AuthError> {
        self.update(|c| {
            Contents::check_room(&c.clients, issuer)?;
            c.clients.insert(issuer.to_owned(), client.clone());
            Ok(())
        })
    }
    fn tokens(&self, server: &str) -> Result<Option<StoredTokens>, AuthError> {
        Ok(self.read()?.tokens.remove(server))
    }
    fn save_tokens(&self, server: &str, tokens: &StoredTokens) -> Result<(), AuthError> {
        self.update(|c| {
            Contents::check_room(&c.tokens, server)?;
            c.tokens.insert(server.to_owned(), tokens.clone());
            Ok(())
        })
    }
    fn remove_tokens(&self, server: &str) -> Result<bool, AuthError> {
        self.update(|c| Ok(c.tokens.remove(server).is_some()))
    }
    fn servers(&self) -> Result<Vec<(String, StoredTokens)>, AuthError> {
        Ok(self.read()?.tokens.into_iter().collect())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens() -> StoredTokens {
        StoredTokens {
            issuer: "https://as.example".into(),
            resource: "https://mcp.example/mcp".into(),
            access_token: "secret-access".into(),
            refresh_token: Some("secret-refresh".into()),
            expires_at: Some(1),
            scopes: vec!["a".into()],
        }
    }

    #[test]
    fn debug_output_hides_tokens_and_secrets() {
        let text = format!("{:?}", tokens());
        assert!(!text.contains("secret-"), "{text}");
        let client = ClientRegistration {
            client_id: "id".into(),
            client_secret: Some("secret-client".into()),
            auth_method: "client_secret_basic".into(),
            redirect_uris: vec![],
        };
        assert!(!format!("{client:?}").contains("secret-client"));
    }

    #[cfg(unix)]
    #[test]
    fn the_token_file_is_private_and_round_trips() {
        use std::os::unix::fs::PermissionsExt;
        let dir = std::env::temp_dir().join(format!("toolwire-store-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        let store = FileTokenStore::new(dir.join("nested").join("oauth.json"));
        store
            .save_tokens("https://mcp.example/mcp", &tokens())
            .expect("save");
        let mode = std::fs::metadata(store.path())
            .expect("file")
            .permissions()
            .mode();
        assert_eq!(mode & 0o777, 0o600);
        let dir_mode = std::fs::metadata(dir.join("nested"))
            .expect("dir")
            .permissions()
            .mode();
        assert_eq!(dir_mode & 0o777, 0o700);
        assert_eq!(
            store.tokens("https://mcp.example/mcp").expect("read"),
            Some(tokens())
        );
        assert!(
            store
                .remove_tokens("https://mcp.example/mcp")
                .expect("remove")
        );
        assert_eq!(store.tokens("https://mcp.example/mcp").expect("read"), None);
        let _ = std::fs::remove_dir_all(&dir);
    }
}
