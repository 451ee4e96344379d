//! [`SharedTools`]: runtime-defined tools kept identical on every replica.

use crate::backend::{BoxFuture, BusError};
use crate::envelope::Body;
use crate::relay::{Apply, Relay, Shared};
use crate::warn::Warner;
use serde_json::Value;
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;
use toolwire::{ListChanged, Server, Tool};

/// The largest definition (serialised) [`SharedTools::define`] stores.
pub const MAX_DEFINITION_BYTES: usize = 64 * 1024;

/// How long one store operation may take.
const STORE_TIMEOUT: Duration = Duration::from_secs(5);

/// Turns a stored definition into a tool: called on every replica, with the
/// tool's name and its definition. The same definition must give the same
/// tool everywhere; an `Err` refuses it (at [`SharedTools::define`]) or
/// skips it (with a warning, when applying another replica's change).
pub type ToolFactory = Arc<dyn Fn(&str, &Value) -> Result<Tool, String> + Send + Sync>;

/// Why a shared-tool change was refused.
#[derive(Debug, Clone, thiserror::Error)]
#[non_exhaustive]
pub enum SharedError {
    /// The factory refused the definition.
    #[error("invalid definition: {0}")]
    Invalid(String),
    /// The definition is larger than [`MAX_DEFINITION_BYTES`].
    #[error("the definition is {0} bytes; at most {MAX_DEFINITION_BYTES} are allowed")]
    TooLarge(usize),
    /// A tool of that name exists (shared, or one of the server's own).
    #[error("a tool named {0:?} already exists")]
    Exists(String),
    /// No shared tool of that name exists.
    #[error("{0:?} is not a shared tool")]
    NotDefined(String),
    /// The limit on shared tools is reached.
    #[error("at most {0} tools may be defined; undefine one first")]
    Full(usize),
    /// The store is unreachable: nothing changed.
    #[error("the shared registry is unavailable: {0}")]
    Unavailable(BusError),
}

/// A set of runtime-defined tools that every replica serves.
///
/// A definition is a JSON value stored in the engine (a Redis hash, a NATS
/// key-value bucket) under the tool's name; a [`ToolFactory`] turns it into
/// a [`Tool`] on each replica. [`define`](Self::define) and
/// [`undefine`](Self::undefine) change the store first (atomically: two
/// replicas cannot define one name), then announce the change on the
/// [`Relay`] ahead of the tool list's `list_changed`, so a replica applies
/// the change before its listeners hear of it: the tool is listed and
/// callable everywhere within one bus round trip. A replica that reconnects
/// (or is told to resync) reloads the whole set from the store.
///
/// Plug your own dynamic tools in by choosing the definition format and
/// writing the factory; call `define`/`undefine` wherever your code adds or
/// removes such a tool instead of [`Server::add_tool`].
#[derive(Clone)]
pub struct SharedTools {
    inner: Arc<State>,
}

impl std::fmt::Debug for SharedTools {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SharedTools")
            .field("max", &self.inner.max)
            .finish_non_exhaustive()
    }
}

struct State {
    relay: Arc<Shared>,
    server: Server,
    factory: ToolFactory,
    max: usize,
    /// The shared tools this replica serves, with their definitions.
    defined: Mutex<BTreeMap<String, Value>>,
    /// Bumped by every local change, so a reload that raced one retries.
    generation: AtomicU64,
    warner: Warner,
}

impl SharedTools {
    /// Serves the shared tools of `relay`'s engine on `server`, at most
    /// `max` of them: loads every stored definition now (an unreachable
    /// store is an error) and applies other replicas' changes from then on.
    /// `server` should use `relay` as its bus.
    pub async fn attach(
        relay: &Relay,
        server: Server,
        factory: ToolFactory,
        max: usize,
    ) -> Result<Self, SharedError> {
        let inner = Arc::new(State {
            relay: Arc::clone(relay.shared()),
            server,
            factory,
            max,
            defined: Mutex::new(BTreeMap::new()),
            generation: AtomicU64::new(0),
            warner: Warner::default(),
        });
        inner.try_reload().await?;
        let applier: Arc<dyn Apply> = Arc::clone(&inner) as Arc<dyn Apply>;
        {
            let mut slot = match inner.relay.applier.lock() {
                Ok(g) => g,
                Err(poisoned) => poisoned.into_inner(),
            };
            *slot = Some(Arc::downgrade(&applier));
        }
        // The relay holds only a weak reference: this handle (and its
        // clones) keep the shared tools applied.
        Ok(Self { inner })
    }

    /// Defines a tool `name` from `definition` on every replica. Publishes
    /// the tool list's `list_changed`.
    pub async fn define(&self, name: &str, definition: Value) -> Result<(), SharedError> {
        let s = &self.inner;
        let bytes =
            serde_json::to_vec(&definition).map_err(|e| SharedError::Invalid(e.to_string()))?;
        if bytes.len() > MAX_DEFINITION_BYTES {
            return Err(SharedError::TooLarge(bytes.len()));
        }
        let tool = (s.factory)(name, &definition).map_err(SharedError::Invalid)?;
        if s.server.tool(name).is_some() {
            return Err(SharedError::Exists(name.to_owned()));
        }
        if s.lock().len() >= s.max {
            return Err(SharedError::Full(s.max));
        }
        let created = store(s.relay.backend.create(name, &bytes)).await?;
        if !created {
            return Err(SharedError::Exists(name.to_owned()));
        }
        let mut defined = s.lock();
        s.generation.fetch_add(1, Ordering::AcqRel);
        // The definition goes out before the `list_changed` that add_tool
        // publishes, on the same ordered queue.
        s.relay.enqueue(Body::Defined {
            name: name.to_owned(),
            definition: definition.clone(),
        });
        let was_there = defined.insert(name.to_owned(), definition).is_some();
        if was_there || s.server.add_tool(tool).is_err() {
            // A reload applied it first: announce it all the same.
            s.server.publish(ListChanged::Tools.into());
        }
        Ok(())
    }

    /// Removes the shared tool `name` from every replica. Publishes the tool
    /// list's `list_changed`.
    pub async fn undefine(&self, name: &str) -> Result<(), SharedError> {
        let s = &self.inner;
        if !s.lock().contains_key(name) {
            return Err(SharedError::NotDefined(name.to_owned()));
        }
        let existed = store(s.relay.backend.delete(name)).await?;
        let mut defined = s.lock();
        s.generation.fetch_add(1, Ordering::AcqRel);
        s.relay.enqueue(Body::Undefined {
            name: name.to_owned(),
        });
        let here = defined.remove(name).is_some();
        if here {
            s.server.remove_tool(name);
        }
        if !existed && !here {
            return Err(SharedError::NotDefined(name.to_owned()));
        }
        Ok(())
    }

    /// The names of the shared tools this replica serves.
    pub fn names(&self) -> Vec<String> {
        self.inner.lock().keys().cloned().collect()
    }
}

async fn store<T>(op: BoxFuture<'_, Result<T, BusError>>) -> Result<T, SharedError> {
    match tokio::time::timeout(STORE_TIMEOUT, op).await {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(SharedError::Unavailable(e)),
        Err(_) => Err(SharedError::Unavailable(BusError::new("timed out"))),
    }
}

impl State {
    fn lock(&self) -> MutexGuard<'_, BTreeMap<String, Value>> {
        match self.defined.lock() {
            Ok(g) => g,
            Err(poisoned) => poisoned.into_inner(),
        }
    }

    /// Installs `definition` as tool `name` without announcing it.
    fn install(&self, defined: &mut BTreeMap<String, Value>, name: &str, definition: &Value) {
        if defined.get(name) == Some(definition) {
            return;
        }
        if !defined.contains_key(name) && defined.len() >= self.max {
            self.warner.warn(
                "not serving a shared tool: the limit is reached",
                &format!("{name:?}, limit {}", self.max),
            );
            return;
        }
        let tool = match (self.factory)(name, definition) {
            Ok(tool) => tool,
            Err(e) => {
                self.warner
                    .warn("not serving a shared tool: invalid definition", &e);
                return;
            }
        };
        if defined.contains_key(name) {
            self.server.remove_tool_unannounced(name);
        }
        match self.server.add_tool_unannounced(tool) {
            Ok(()) => {
                defined.insert(name.to_owned(), definition.clone());
            }
            Err(e) => {
                defined.remove(name);
                self.warner.warn("not serving a shared tool", &e);
            }
        }
    }

    /// Loads the store and makes the served set equal to it.
    async fn try_reload(&self) -> Result<(), SharedError> {
        for _ in 0..3 {
            let generation = self.generation.load(Ordering::Acquire);
            let stored = store(self.relay.backend.load()).await?;
            let mut defined = self.lock();
            if self.generation.load(Ordering::Acquire) != generation {
                // A local define/undefine raced the load: load again.
                continue;
            }
            let mut wanted = BTreeMap::new();
            for (name, bytes) in stored {
                match serde_json::from_slice::<Value>(&bytes) {
                    Ok(v) => {
                        wanted.insert(name, v);
                    }
                    Err(e) => {
                        self.warner
                            .warn("skipped an undecodable stored definition", &e);
                    }
                }
            }
            let gone: Vec<String> = defined
                .keys()
                .filter(|n| !wanted.contains_key(*n))
                .cloned()
                .collect();
            for name in gone {
                defined.remove(&name);
                self.server.remove_tool_unannounced(&name);
            }
            for (name, definition) in &wanted {
                self.install(&mut defined, name, definition);
            }
            return Ok(());
        }
        Err(SharedError::Unavailable(BusError::new(
            "the shared tools kept changing during the reload",
        )))
    }
}

impl Apply for State {
    fn defined(&self, name: &str, definition: &Value) {
        let mut defined = self.lock();
        self.install(&mut defined, name, definition);
    }

    fn undefined(&self, name: &str) {
        let mut defined = self.lock();
        if defined.remove(name).is_some() {
            self.server.remove_tool_unannounced(name);
        }
    }

    fn reload(&self) -> BoxFuture<'_, ()> {
        Box::pin(async move {
            if let Err(e) = self.try_reload().await {
                self.warner.warn("could not reload the shared tools", &e);
            }
        })
    }
}
