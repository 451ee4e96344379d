//! Notification parameters: progress, cancellation, log messages and the
//! generic `_meta`-only params of the `list_changed` notifications (schema
//! `ProgressNotificationParams`, `CancelledNotificationParams`,
//! `LoggingLevel`, `LoggingMessageNotificationParams`, `NotificationParams`).

use super::common::{Meta, ProgressToken};
use crate::RequestId;
use serde::{Deserialize, Serialize};
use serde_json::Value;

/// The severity of a log message, ordered from `Debug` (least) to
/// `Emergency` (most), as in RFC 5424 (schema `LoggingLevel`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum LoggingLevel {
    /// `"debug"`.
    Debug,
    /// `"info"`.
    Info,
    /// `"notice"`.
    Notice,
    /// `"warning"`.
    Warning,
    /// `"error"`.
    Error,
    /// `"critical"`.
    Critical,
    /// `"alert"`.
    Alert,
    /// `"emergency"`.
    Emergency,
}

/// Parameters of `notifications/progress` (schema `ProgressNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ProgressNotificationParams {
    /// The `progressToken` of the request this reports on.
    pub progress_token: ProgressToken,
    /// Progress so far; increases with each notification.
    #[serde(serialize_with = "super::number::f64")]
    pub progress: f64,
    /// The total, if known.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::number::opt_f64"
    )]
    pub total: Option<f64>,
    /// A human-readable description of the progress.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub message: Option<String>,
    /// Notification `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

impl ProgressNotificationParams {
    /// Progress `progress` of `total` for `token`.
    pub fn new(token: ProgressToken, progress: f64, total: Option<f64>) -> Self {
        Self {
            progress_token: token,
            progress,
            total,
            message: None,
            meta: None,
        }
    }
}

/// Parameters of `notifications/cancelled` (schema `CancelledNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CancelledNotificationParams {
    /// The id of the request to cancel.
    pub request_id: RequestId,
    /// Why, for logging or display.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    /// Notification `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Parameters of `notifications/message` (schema `LoggingMessageNotificationParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct LoggingMessageNotificationParams {
    /// The severity.
    pub level: LoggingLevel,
    /// The logger's name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub logger: Option<String>,
    /// The message: any JSON value.
    pub data: Value,
    /// Notification `_meta`.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

/// Parameters of a notification that carries only `_meta`, such as the
/// `list_changed` notifications (schema `NotificationParams`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NotificationParams {
    /// Notification `_meta`, e.g. the subscription id.
    #[serde(rename = "_meta", default, skip_serializing_if = "Option::is_none")]
    pub meta: Option<Meta>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn logging_levels_order_by_severity() {
        use LoggingLevel::*;
        let ordered = [
            Debug, Info, Notice, Warning, Error, Critical, Alert, Emergency,
        ];
        assert!(ordered.windows(2).all(|w| w[0] < w[1]));
        assert!(Warning >= Info);
        let names: Vec<Value> = ordered
            .iter()
            .map(|l| serde_json::to_value(l).expect("ok"))
            .collect();
        assert_eq!(
            names,
            [
                "debug",
                "info",
                "notice",
                "warning",
                "error",
                "critical",
                "alert",
                "emergency"
            ]
            .map(Value::from)
        );
    }

    #[test]
    fn progress_keeps_integers_as_integers() {
        let v = json!({"progressToken": 7, "progress": 50, "total": 100.5});
        let p: ProgressNotificationParams = serde_json::from_value(v.clone()).expect("parses");
        assert_eq!(p.progress_token, ProgressToken::Integer(7));
        assert_eq!(serde_json::to_value(&p).expect("serialises"), v);
    }
}
