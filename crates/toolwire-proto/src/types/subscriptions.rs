//! `subscriptions/listen`: the long-lived stream of change notifications
//! (schema `SubscriptionFilter`, `SubscriptionsListenRequestParams`,
//! `SubscriptionsAcknowledgedNotificationParams`, `SubscriptionsListenResult`).
//!
//! Spec: basic/patterns/subscriptions.mdx

use super::common::{Implementation, Meta, RequestMeta, ResultType};
use crate::RequestId;
use serde::{Deserialize, Serialize};

/// Which change notifications a listener wants (schema `SubscriptionFilter`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionFilter {
    /// `notifications/tools/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tools_list_changed: Option<bool>,
    /// `notifications/prompts/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub prompts_list_changed: Option<bool>,
    /// `notifications/resources/list_changed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resources_list_changed: Option<bool>,
    /// `notifications/resources/updated` for these resource URIs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resource_subscriptions: Option<Vec<String>>,
    /// `notifications/tasks` for these task ids (the Tasks extension's
    /// `TaskSubscriptionNotifications`; in the acknowledgement, the ids the
    /// server agreed to report on).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub task_ids: Option<Vec<String>>,
}

/// Parameters of `subscriptions/listen` (schema `SubscriptionsListenRequestParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscriptionsListenRequestParams {
    /// The notifications to receive.
    pub notifications: SubscriptionFilter,
    /// The request `_meta` (required by the schema).
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<RequestMeta>,
}

/// Parameters of `notifications/subscriptions/acknowledged` (schema
/// `SubscriptionsAcknowledgedNotificationParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct SubscriptionsAcknowledgedNotificationParams {
    /// The notifications the server will send: the supported subset of the request.
    pub notifications: SubscriptionFilter,
    /// Notification `_meta`, with the subscription id.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// The result that closes a `subscriptions/listen` stream (schema
/// `SubscriptionsListenResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SubscriptionsListenResult {
    /// Always `complete`.
    #[serde(default)]
    pub result_type: ResultType,
    /// Result `_meta`; required here, as it names the subscription.
    #[serde(rename = "_meta")]
    pub meta: SubscriptionsListenResultMeta,
}

impl SubscriptionsListenResult {
    /// The closing result of subscription `subscription_id`.
    pub fn new(subscription_id: RequestId) -> Self {
        Self {
            result_type: ResultType::Complete,
            meta: SubscriptionsListenResultMeta {
                subscription_id,
                server_info: None,
                other: Meta::new(),
            },
        }
    }
}

/// The `_meta` of a [`SubscriptionsListenResult`] (schema
/// `SubscriptionsListenResultMetaObject`).
// Serde needs literal keys; a unit test checks them against `crate::meta`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SubscriptionsListenResultMeta {
    /// `io.modelcontextprotocol/subscriptionId`: the id of the listen request.
    #[serde(rename = "io.modelcontextprotocol/subscriptionId")]
    pub subscription_id: RequestId,
    /// `io.modelcontextprotocol/serverInfo`: who the server is.
    #[serde(
        rename = "io.modelcontextprotocol/serverInfo",
        default,
        skip_serializing_if = "Option::is_none"
    )]
    pub server_info: Option<Implementation>,
    /// Every other member, kept as is.
    #[serde(flatten)]
    pub other: Meta,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::meta;

    #[test]
    fn listen_result_meta_keys_equal_the_meta_constants() {
        let mut r = SubscriptionsListenResult::new(RequestId::from("listen-1"));
        r.meta.server_info = Some(Implementation::new("s", "1"));
        let v = serde_json::to_value(&r).expect("serialises");
        let m = v.get("_meta").and_then(|m| m.as_object()).expect("meta");
        assert_eq!(m.get(meta::SUBSCRIPTION_ID_KEY), Some(&"listen-1".into()));
        assert!(m.contains_key(meta::SERVER_INFO_KEY));
    }
}
