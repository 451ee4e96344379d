//! Typed answers to input requests: [`ElicitAnswer`] for elicitation, and
//! the form schema a Rust type describes.
//!
//! Spec: client/elicitation.mdx#response-actions — accept, decline and
//! cancel are distinct; only an accepted form carries `content`.

use schemars::JsonSchema;
use serde::de::{self, DeserializeOwned, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};
use toolwire_proto::types::{ElicitAction, ElicitRequestedSchema};

/// The client's answer to an elicitation, with the accepted form content
/// deserialised into `T`.
///
/// Read it with [`RequestContext::input`](crate::RequestContext::input):
/// `cx.input::<ElicitAnswer<MyForm>>("key")?`. For URL mode, where an
/// accepted answer has no content, use `ElicitAnswer<()>`. The default `T`
/// keeps the content as a JSON object.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
#[serde(tag = "action", content = "content", rename_all = "snake_case")]
pub enum ElicitAnswer<T = Map<String, Value>> {
    /// The user submitted the form (or consented, in URL mode).
    Accept(T),
    /// The user explicitly declined.
    Decline,
    /// The user dismissed the request without choosing.
    Cancel,
}

impl<T> ElicitAnswer<T> {
    /// The accepted content, if the user accepted.
    pub fn accepted(self) -> Option<T> {
        match self {
            Self::Accept(t) => Some(t),
            Self::Decline | Self::Cancel => None,
        }
    }

    /// What the user did.
    pub fn action(&self) -> ElicitAction {
        match self {
            Self::Accept(_) => ElicitAction::Accept,
            Self::Decline => ElicitAction::Decline,
            Self::Cancel => ElicitAction::Cancel,
        }
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for ElicitAnswer<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        #[derive(Deserialize)]
        struct Raw {
            action: ElicitAction,
            #[serde(default)]
            content: Option<Value>,
        }
        let value = Value::deserialize(d)?;
        if !value.is_object() {
            return Err(de::Error::custom(format!(
                "expected an ElicitResult object with an \"action\", got {}",
                kind(&value)
            )));
        }
        let raw = Raw::deserialize(value).map_err(de::Error::custom)?;
        match raw.action {
            ElicitAction::Decline => Ok(Self::Decline),
            ElicitAction::Cancel => Ok(Self::Cancel),
            ElicitAction::Accept => {
                let content = match raw.content {
                    Some(v) => T::deserialize(v),
                    // URL mode has no content: `()` and `Option` read it
                    // from null, a map or a struct of optional fields from `{}`.
                    None => T::deserialize(Value::Null)
                        .or_else(|_| T::deserialize(Value::Object(Map::new()))),
                };
                content
                    .map(Self::Accept)
                    .map_err(|e| de::Error::custom(format!("accepted content: {e}")))
            }
        }
    }
}

fn kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}

/// The elicitation form schema `T` describes: a flat object of string,
/// number, integer, boolean and enum fields. `Option` fields become optional
/// fields. A type with nested objects or references is refused.
pub(crate) fn form_schema<T: JsonSchema>() -> Result<ElicitRequestedSchema, String> {
    let mut v = schemars::schema_for!(T).to_value();
    if let Some(obj) = v.as_object_mut() {
        // The dialect is implied and the Rust name means nothing to a user.
        obj.remove("$schema");
        obj.remove("title");
        if let Some(Value::Object(props)) = obj.get_mut("properties") {
            for prop in props.values_mut() {
                drop_null_type(prop);
            }
        }
    }
    serde_json::from_value(v).map_err(|e| {
        format!(
            "{} is not a flat elicitation form of primitive fields: {e}",
            std::any::type_name::<T>()
        )
    })
}

/// `"type": ["string", "null"]` (an `Option`) becomes `"type": "string"`;
/// optionality is carried by `required`.
fn drop_null_type(prop: &mut Value) {
    let Some(obj) = prop.as_object_mut() else {
        return;
    };
    if let Some(Value::Array(types)) = obj.get("type") {
        let rest: Vec<Value> = types
            .iter()
            .filter(|t| t.as_str() != Some("null"))
            .cloned()
            .collect();
        if let [only] = rest.as_slice() {
            obj.insert("type".into(), only.clone());
        }
    }
    if let Some(Value::Array(values)) = obj.get_mut("enum") {
        values.retain(|v| !v.is_null());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, PartialEq, Deserialize, JsonSchema)]
    struct Confirm {
        /// Go ahead?
        confirm: bool,
    }

    #[test]
    fn accept_decline_and_cancel_are_distinct() {
        let a: ElicitAnswer<Confirm> =
            serde_json::from_value(json!({"action": "accept", "content": {"confirm": true}}))
                .expect("accept");
        assert_eq!(a, ElicitAnswer::Accept(Confirm { confirm: true }));
        let d: ElicitAnswer<Confirm> =
            serde_json::from_value(json!({"action": "decline"})).expect("decline");
        assert_eq!(d, ElicitAnswer::Decline);
        let c: ElicitAnswer<Confirm> =
            serde_json::from_value(json!({"action": "cancel", "content": {"x": 1}}))
                .expect("cancel ignores content");
        assert_eq!(c.action(), ElicitAction::Cancel);
        assert_eq!(c.accepted(), None);
    }

    #[test]
    fn malformed_answers_are_errors() {
        for bad in [
            json!(12345),
            json!(null),
            json!({"content": {}}),
            json!({"action": "maybe"}),
            json!({"action": "accept", "content": {"confirm": "yes"}}),
            json!({"action": "accept"}),
        ] {
            assert!(
                serde_json::from_value::<ElicitAnswer<Confirm>>(bad.clone()).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn url_mode_accept_without_content_reads_as_unit_or_empty_map() {
        let a: ElicitAnswer<()> =
            serde_json::from_value(json!({"action": "accept"})).expect("unit");
        assert_eq!(a, ElicitAnswer::Accept(()));
        let m: ElicitAnswer = serde_json::from_value(json!({"action": "accept"})).expect("map");
        assert_eq!(m, ElicitAnswer::Accept(Map::new()));
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Profile {
        /// Your name.
        name: String,
        /// Your age.
        age: Option<u32>,
        /// Subscribe?
        subscribe: bool,
    }

    #[test]
    fn form_schema_comes_from_the_type() {
        let s = form_schema::<Profile>().expect("flat");
        let v = serde_json::to_value(&s).expect("serialises");
        assert_eq!(v["type"], "object");
        assert_eq!(v["properties"]["name"]["type"], "string");
        assert_eq!(v["properties"]["name"]["description"], "Your name.");
        assert_eq!(v["properties"]["age"]["type"], "integer");
        assert_eq!(v["properties"]["subscribe"]["type"], "boolean");
        let mut required: Vec<&str> = v["required"]
            .as_array()
            .expect("required")
            .iter()
            .map(|r| r.as_str().expect("str"))
            .collect();
        required.sort_unstable();
        assert_eq!(required, ["name", "subscribe"]);
        assert!(v.get("$schema").is_none() && v.get("title").is_none());
    }

    #[derive(Deserialize, JsonSchema)]
    #[allow(dead_code)]
    struct Nested {
        inner: Confirm,
    }

    #[test]
    fn nested_types_are_not_forms() {
        let e = form_schema::<Nested>().expect_err("nested");
        assert!(e.contains("Nested"), "{e}");
    }
}
