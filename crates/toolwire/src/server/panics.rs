//! A tool handler's panic, answered with an error the client can act on
//! without the panic message leaking to it by default.

use crate::handler::HandlerError;
use crate::log_limit::{LOG_EVERY, LogLimit};
use serde_json::json;
use std::any::Any;
use toolwire_proto::ErrorObject;

/// The `-32603` error for tool `tool`'s handler that panicked with
/// `payload`: it names the tool and a short panic id, logged here with the
/// panic message (at most one line every [`LOG_EVERY`]; the error says
/// when this one was held back), and carries the message itself only when
/// `expose` (the server's `with_exposed_panic_messages`). `data` is
/// `{"panicId"}`.
pub(crate) fn panicked(tool: &str, payload: &(dyn Any + Send), expose: bool) -> HandlerError {
    let message = payload
        .downcast_ref::<&str>()
        .copied()
        .or_else(|| payload.downcast_ref::<String>().map(String::as_str))
        .unwrap_or("(the panic's payload is not a string)");
    let id = panic_id();
    // A client can make a handler panic as often as it likes: the log has
    // at most one line every `LOG_EVERY` (the panic hook, by default,
    // prints every message on stderr all the same).
    static LIMIT: LogLimit = LogLimit::new();
    let logged = LIMIT.admit().map(|suppressed| {
        tracing::error!(suppressed, tool, panic_id = %id, message, "a tool handler panicked");
    });
    let text = match (expose, logged) {
        (true, _) => format!("tool {tool:?} panicked: {message} (panic id {id})"),
        (false, Some(())) => format!(
            "tool {tool:?} panicked; its message is in the server's log under panic id {id}"
        ),
        (false, None) => format!(
            "tool {tool:?} panicked; its message is on the server's stderr (panic id {id}, not \
             logged: the server logs at most one panic every {} s)",
            LOG_EVERY.as_secs()
        ),
    };
    HandlerError::Protocol(ErrorObject::internal(text).with_data(json!({ "panicId": id })))
}

/// Eight hex digits, random: enough to find one panic in a log.
fn panic_id() -> String {
    let mut bytes = [0u8; 4];
    if getrandom::fill(&mut bytes).is_err() {
        // No randomness: the clock's nanoseconds still tell panics apart.
        let nanos = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map_or(0, |d| d.subsec_nanos());
        bytes = nanos.to_be_bytes();
    }
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[cfg(test)]
mod tests {
    use super::panicked;

    #[test]
    fn the_message_is_sent_only_when_exposed() {
        let payload: Box<dyn std::any::Any + Send> = Box::new(String::from("token=hunter2"));
        let hidden = panicked("t", &*payload, false).into_error_object();
        assert!(!hidden.message.contains("hunter2"), "{}", hidden.message);
        // The first panic of this process's tests is logged, if no other
        // test logged one just before.
        assert!(
            hidden
                .message
                .contains("in the server's log under panic id")
                || hidden.message.contains("not logged"),
            "{}",
            hidden.message
        );
        // Within 10 s of it, another is not logged, and says so.
        let again = panicked("t", &*payload, false).into_error_object();
        assert!(!again.message.contains("hunter2"), "{}", again.message);
        assert!(
            again
                .message
                .contains("its message is on the server's stderr (panic id ")
                && again
                    .message
                    .contains("not logged: the server logs at most one panic every 10 s)"),
            "{}",
            again.message
        );
        let id = hidden
            .data
            .as_ref()
            .and_then(|d| d["panicId"].as_str())
            .unwrap_or_default();
        assert_eq!(id.len(), 8, "{hidden:?}");
        assert!(hidden.message.contains(id));
        let shown = panicked("t", &*payload, true).into_error_object();
        assert!(
            shown.message.contains("panicked: token=hunter2"),
            "{}",
            shown.message
        );
        let text: Box<dyn std::any::Any + Send> = Box::new("static text");
        let shown = panicked("t", &*text, true).into_error_object();
        assert!(shown.message.contains("static text"), "{}", shown.message);
    }
}
