//! A notification the server sent, as the test sees it: its method and
//! params as JSON, readable as the method's typed params.

use serde::Serialize;
use serde_json::Value;
use toolwire_proto::types::NotificationMethod;

/// One notification from the server: from a handler during a request
/// (progress, logs), on a listen stream, or to a legacy session.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct TestNotification {
    /// The method, such as `notifications/progress`.
    pub method: String,
    /// The params (`null` when there are none).
    pub params: Value,
}

impl TestNotification {
    /// The notification as `N`'s params (`N` is a marker type of
    /// `toolwire_proto::types`, such as `ProgressNotification`); `None`
    /// when it is another method or its params do not decode.
    pub fn params_as<N: NotificationMethod>(&self) -> Option<N::Params> {
        if self.method != N::METHOD {
            return None;
        }
        serde_json::from_value(self.params.clone()).ok()
    }

    /// Whether this is a notification of `N`.
    pub fn is<N: NotificationMethod>(&self) -> bool {
        self.method == N::METHOD
    }

    /// An encoded JSON-RPC notification; `None` for anything else.
    pub(super) fn from_message(msg: &[u8]) -> Option<Self> {
        #[derive(serde::Deserialize)]
        struct Raw {
            method: String,
            #[serde(default)]
            params: Value,
            #[serde(default)]
            id: Option<Value>,
        }
        let raw: Raw = serde_json::from_slice(msg).ok()?;
        raw.id.is_none().then_some(Self {
            method: raw.method,
            params: raw.params,
        })
    }
}
