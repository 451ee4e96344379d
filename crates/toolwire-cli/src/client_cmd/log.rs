//! `--log LEVEL`: ask the server for its log messages about a request and
//! print them on stderr as they arrive.
//!
//! Spec: server/utilities/logging.mdx — the level travels in the request's
//! `_meta` (`io.modelcontextprotocol/logLevel`); the server answers with
//! `notifications/message` at that level and above.

use clap::Args;
use serde_json::Value;
use std::io::Write as _;
use toolwire::RequestOptions;
use toolwire::proto::types::{LoggingLevel, LoggingMessageNotificationParams};

use super::interact::ProgressBar;

/// The levels, least severe first, as the protocol spells them.
const LEVELS: [&str; 8] = [
    "debug",
    "info",
    "notice",
    "warning",
    "error",
    "critical",
    "alert",
    "emergency",
];

/// The `--log` option, for commands whose requests a server may log about.
#[derive(Args, Debug, Default)]
pub(crate) struct LogArgs {
    /// Ask the server for its log messages at LEVEL and above and print them
    /// on stderr.
    #[arg(long = "log", value_name = "LEVEL", value_parser = LEVELS)]
    level: Option<String>,
}

impl LogArgs {
    /// `options` with the log level and a printer, when `--log` is given.
    pub(crate) fn apply(&self, options: RequestOptions, bar: &ProgressBar) -> RequestOptions {
        let Some(level) = self.level.as_deref().and_then(parse_level) else {
            return options;
        };
        let bar = bar.clone();
        options.with_log(level, move |m| {
            bar.clear();
            let mut stderr = std::io::stderr().lock();
            let _ = writeln!(stderr, "{}", line(m));
            let _ = stderr.flush();
        })
    }
}

fn parse_level(name: &str) -> Option<LoggingLevel> {
    serde_json::from_value(Value::String(name.to_owned())).ok()
}

/// One log message as one line: `[level logger] data`, a string printed
/// as is and anything else as compact JSON.
fn line(m: &LoggingMessageNotificationParams) -> String {
    let level = serde_json::to_value(m.level)
        .ok()
        .and_then(|v| v.as_str().map(str::to_owned))
        .unwrap_or_default();
    let source = match &m.logger {
        Some(logger) => format!("[{level} {logger}]"),
        None => format!("[{level}]"),
    };
    let data = match &m.data {
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    // One message, one line: a multi-line string is indented under it.
    format!("{source} {}", data.replace('\n', "\n    "))
}

#[cfg(test)]
mod tests {
    use super::{LEVELS, line, parse_level};
    use serde_json::json;
    use toolwire::proto::types::LoggingMessageNotificationParams;

    #[test]
    fn every_level_name_parses() {
        for name in LEVELS {
            assert!(parse_level(name).is_some(), "{name}");
        }
    }

    #[test]
    fn messages_print_as_one_line() {
        let m: LoggingMessageNotificationParams = serde_json::from_value(
            json!({"level": "debug", "logger": "countdown", "data": {"step": 1}}),
        )
        .expect("params");
        assert_eq!(line(&m), r#"[debug countdown] {"step":1}"#);
        let m: LoggingMessageNotificationParams =
            serde_json::from_value(json!({"level": "error", "data": "a\nb"})).expect("params");
        assert_eq!(line(&m), "[error] a\n    b");
    }
}
