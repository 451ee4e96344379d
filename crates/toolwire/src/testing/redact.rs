//! Values that snapshot the same on every run: the sealed `requestState`
//! (a fresh nonce each time) replaced by a placeholder.

use serde::Serialize;
use serde_json::Value;

/// The placeholder [`redacted`] puts in place of a `requestState`.
const PLACEHOLDER: &str = "[requestState]";

/// `value` as JSON with every `requestState` string, at any depth, replaced
/// by `"[requestState]"`: the only part of a result that differs between
/// runs of the same test (it is sealed with a random nonce). Everything
/// else the server sends (`serverInfo`, `ttlMs`, subscription ids) follows
/// from the configuration and the requests, so it is kept.
pub fn redacted(value: &impl Serialize) -> Value {
    let mut value = serde_json::to_value(value).unwrap_or(Value::Null);
    redact(&mut value);
    value
}

fn redact(value: &mut Value) {
    match value {
        Value::Object(map) => {
            for (key, member) in map.iter_mut() {
                if key == "requestState" && member.is_string() {
                    *member = Value::String(PLACEHOLDER.to_owned());
                } else {
                    redact(member);
                }
            }
        }
        Value::Array(items) => items.iter_mut().for_each(redact),
        _ => {}
    }
}
