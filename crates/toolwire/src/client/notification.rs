//! The notifications a server sends the client, known by kind: the one
//! place on the client that reads a notification's method name.

use toolwire_proto::types::{
    CancelledNotification, LoggingMessageNotification, NotificationMethod, ProgressNotification,
    PromptListChangedNotification, ResourceListChangedNotification, ResourceUpdatedNotification,
    SubscriptionsAcknowledgedNotification, ToolListChangedNotification,
};

/// What kind of notification a server sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum ServerNotification {
    Progress,
    Log,
    Cancelled,
    ToolsListChanged,
    PromptsListChanged,
    ResourcesListChanged,
    ResourceUpdated,
    SubscriptionsAcknowledged,
    /// Any other (from an extension, say).
    Other,
}

impl ServerNotification {
    /// The kind of a notification by its method name.
    pub(crate) fn of(method: &str) -> Self {
        match method {
            ProgressNotification::METHOD => Self::Progress,
            LoggingMessageNotification::METHOD => Self::Log,
            CancelledNotification::METHOD => Self::Cancelled,
            ToolListChangedNotification::METHOD => Self::ToolsListChanged,
            PromptListChangedNotification::METHOD => Self::PromptsListChanged,
            ResourceListChangedNotification::METHOD => Self::ResourcesListChanged,
            ResourceUpdatedNotification::METHOD => Self::ResourceUpdated,
            SubscriptionsAcknowledgedNotification::METHOD => Self::SubscriptionsAcknowledged,
            _ => Self::Other,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_are_known_by_their_method_and_others_are_other() {
        assert_eq!(
            ServerNotification::of(ProgressNotification::METHOD),
            ServerNotification::Progress
        );
        assert_eq!(
            ServerNotification::of(ResourceUpdatedNotification::METHOD),
            ServerNotification::ResourceUpdated
        );
        assert_eq!(
            ServerNotification::of("notifications/x-extension"),
            ServerNotification::Other
        );
    }
}
