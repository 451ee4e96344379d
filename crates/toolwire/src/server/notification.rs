//! What a client notification means to the pipeline, decided here once
//! ([`NotificationEffect`]): the transports carry out the effect and never
//! read a notification's method or params themselves.

use super::Server;
use toolwire_proto::meta::PROTOCOL_VERSION_KEY;
use toolwire_proto::types::{CancelledNotificationParams, ClientNotification};
use toolwire_proto::{Notification, RequestId};

/// What a client notification asks of the transport that read it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum NotificationEffect {
    /// `notifications/initialized`: a legacy client is ready for its
    /// session's notifications.
    ///
    /// Spec (2025-11-25): basic/lifecycle.mdx#initialization
    Initialized,
    /// `notifications/cancelled` from a modern client (its parsed `_meta`
    /// carries the version key): cancel the request it names.
    ///
    /// Spec: basic/utilities/cancellation.mdx
    CancelModern(RequestId),
    /// `notifications/cancelled` without the modern version key, as a
    /// legacy session sends it: cancel the request it names.
    ///
    /// Spec (2025-11-25): basic/utilities/cancellation.mdx
    CancelLegacy(RequestId),
    /// Nothing to do: any other notification, or a `notifications/cancelled`
    /// whose params do not name a request.
    Ignore,
}

impl Server {
    /// What the client notification `n` asks for.
    pub(crate) fn notification(&self, n: &Notification) -> NotificationEffect {
        match ClientNotification::parse(&n.method) {
            ClientNotification::Initialized => NotificationEffect::Initialized,
            ClientNotification::Cancelled => cancelled(n).unwrap_or(NotificationEffect::Ignore),
            ClientNotification::Other => NotificationEffect::Ignore,
        }
    }
}

/// A `notifications/cancelled`'s effect, when its params name a request.
fn cancelled(n: &Notification) -> Option<NotificationEffect> {
    let params: CancelledNotificationParams =
        serde_json::from_str(n.params.as_ref()?.get()).ok()?;
    let modern = params
        .meta
        .as_ref()
        .is_some_and(|m| m.contains_key(PROTOCOL_VERSION_KEY));
    Some(if modern {
        NotificationEffect::CancelModern(params.request_id)
    } else {
        NotificationEffect::CancelLegacy(params.request_id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ServerConfig;

    fn effect(message: &str) -> NotificationEffect {
        let server = Server::new(ServerConfig::new("t", "0"));
        match toolwire_proto::Message::from_slice(message.as_bytes()) {
            Ok(toolwire_proto::Message::Notification(n)) => server.notification(&n),
            _ => panic!("not a notification: {message}"),
        }
    }

    #[test]
    fn cancelled_names_its_request_and_era() {
        assert_eq!(
            effect(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":7}}"#
            ),
            NotificationEffect::CancelLegacy(RequestId::Number(7))
        );
        assert_eq!(
            effect(
                r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{"requestId":"a","_meta":{"io.modelcontextprotocol/protocolVersion":"2026-07-28"}}}"#
            ),
            NotificationEffect::CancelModern(RequestId::String("a".into()))
        );
    }

    #[test]
    fn unreadable_cancelled_and_other_notifications_are_ignored() {
        assert_eq!(
            effect(r#"{"jsonrpc":"2.0","method":"notifications/cancelled","params":{}}"#),
            NotificationEffect::Ignore
        );
        assert_eq!(
            effect(r#"{"jsonrpc":"2.0","method":"notifications/progress","params":{}}"#),
            NotificationEffect::Ignore
        );
        assert_eq!(
            effect(r#"{"jsonrpc":"2.0","method":"notifications/initialized"}"#),
            NotificationEffect::Initialized
        );
    }
}
