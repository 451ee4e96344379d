//! A request's result as it comes back: raw JSON as the server sent it
//! (or a `Value` from the cache), what its `resultType` says, and how it
//! is read into its type.
//!
//! Spec: basic/index.mdx#resulttype

use super::error::ClientError;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use toolwire_proto::types::{InputRequiredResult, ResultType};

/// What `resultType` says a result is.
pub(crate) enum Kind {
    Complete,
    InputRequired,
    /// A task handle (the Tasks extension): valid only from `tools/call`
    /// of a client that declared the extension, which the caller checks.
    Task,
}

/// Reads `resultType`: absent means complete; an unknown value is an error.
// Spec: basic/index.mdx#resulttype
pub(crate) fn result_kind(v: &Value) -> Result<Kind, ClientError> {
    v.get("resultType").map_or(Ok(Kind::Complete), kind_of)
}

fn kind_of(t: &Value) -> Result<Kind, ClientError> {
    match serde_json::from_value::<ResultType>(t.clone()) {
        Ok(ResultType::Complete) => Ok(Kind::Complete),
        Ok(ResultType::InputRequired) => Ok(Kind::InputRequired),
        Ok(ResultType::Task) => Ok(Kind::Task),
        Err(_) => Err(ClientError::UnknownResultType(match t {
            Value::String(s) => s.clone(),
            other => other.to_string(),
        })),
    }
}

/// A `tools/call` result as an intermediary passes it on: see
/// [`Client::call_tool_relayed`](crate::client::Client::call_tool_relayed).
#[derive(Debug)]
#[non_exhaustive]
pub enum Relayed {
    /// A complete result, as the server sent it (with `resultType:
    /// "complete"` added if the server left it out).
    Complete(Box<RawValue>),
    /// A task handle (the Tasks extension): the `CreateTaskResult` as the
    /// server sent it, not followed.
    Task(Box<RawValue>),
    /// The server asks for input first.
    InputRequired(InputRequiredResult),
}

/// A result: as the server sent it, or as the cache keeps it.
#[derive(Debug)]
pub(crate) enum Answer {
    Raw(Box<RawValue>),
    Value(Value),
}

impl Answer {
    /// What `resultType` says the result is, with the members a result
    /// passed on encoded is checked for, read by the same scan of a raw
    /// result (`None` for a `Value`, or when the scan could not read them).
    /// A raw result is only scanned here; nothing else is read twice into
    /// memory.
    pub(crate) fn scan(&self) -> (Result<Kind, ClientError>, Option<Members>) {
        let raw = match self {
            Self::Value(v) => return (result_kind(v), None),
            Self::Raw(raw) => raw,
        };
        if let Ok(members) = serde_json::from_str::<Members>(raw.get()) {
            let kind = match &members.result_type {
                None => Ok(Kind::Complete),
                Some(t) => kind_of(t),
            };
            return (kind, Some(members));
        }
        /// The one member looked at when the wider scan fails (a repeated
        /// `content`, say): the kind stays what `resultType` says.
        #[derive(serde::Deserialize)]
        struct Peek {
            #[serde(rename = "resultType")]
            result_type: Option<Value>,
        }
        // A result that is not even an object is complete here and fails
        // where it is parsed, as a `Value` result would.
        let peeked = serde_json::from_str::<Peek>(raw.get()).ok();
        let kind = match peeked.and_then(|p| p.result_type) {
            None => Ok(Kind::Complete),
            Some(t) => kind_of(&t),
        };
        (kind, None)
    }

    /// The result read as `T`, with `method` named in the error.
    pub(crate) fn parse<T: DeserializeOwned>(self, method: &str) -> Result<T, ClientError> {
        self.parse_with(|e| ClientError::Protocol(format!("malformed {method} result: {e}")))
    }

    /// The result read as `T`, or `error`'s error.
    pub(crate) fn parse_with<T: DeserializeOwned>(
        self,
        error: impl FnOnce(serde_json::Error) -> ClientError,
    ) -> Result<T, ClientError> {
        match self {
            Self::Raw(raw) => serde_json::from_str(raw.get()).map_err(error),
            Self::Value(v) => serde_json::from_value(v).map_err(error),
        }
    }
}

/// A raw result as a `Value`.
pub(crate) fn to_value(raw: &RawValue) -> Result<Value, ClientError> {
    serde_json::from_str(raw.get())
        .map_err(|e| ClientError::Protocol(format!("unreadable result: {e}")))
}

/// The members of a raw result that one scan reads: `resultType`, and
/// what an intermediary checks before it passes a `tools/call` result on
/// unparsed (a `content` array, a boolean `isError`).
#[derive(Debug, serde::Deserialize)]
pub(crate) struct Members {
    #[serde(rename = "resultType")]
    result_type: Option<Value>,
    content: Option<Listed>,
    #[serde(rename = "isError")]
    is_error: Option<Value>,
}

impl Members {
    /// `resultType` when it is a string.
    pub(crate) fn result_type(&self) -> Option<&str> {
        self.result_type.as_ref().and_then(Value::as_str)
    }

    /// Whether each member present has a call result's type: `content` an
    /// array, `isError` a boolean, `resultType` a string.
    pub(crate) fn well_typed(&self) -> bool {
        !matches!(self.content, Some(Listed(false)))
            && self.is_error.as_ref().is_none_or(Value::is_boolean)
            && self.result_type.as_ref().is_none_or(Value::is_string)
    }

    /// Whether `content` is present (and, when [`well_typed`], an array).
    ///
    /// [`well_typed`]: Self::well_typed
    pub(crate) fn has_content(&self) -> bool {
        self.content.is_some()
    }
}

/// Whether a member is an array, its items skipped unread.
#[derive(Debug)]
struct Listed(bool);

impl<'de> serde::Deserialize<'de> for Listed {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Listed;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Listed, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Listed(true))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Listed, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Listed(false))
            }
            fn visit_bool<E>(self, _: bool) -> Result<Listed, E> {
                Ok(Listed(false))
            }
            fn visit_i64<E>(self, _: i64) -> Result<Listed, E> {
                Ok(Listed(false))
            }
            fn visit_u64<E>(self, _: u64) -> Result<Listed, E> {
                Ok(Listed(false))
            }
            fn visit_f64<E>(self, _: f64) -> Result<Listed, E> {
                Ok(Listed(false))
            }
            fn visit_str<E>(self, _: &str) -> Result<Listed, E> {
                Ok(Listed(false))
            }
            fn visit_unit<E>(self) -> Result<Listed, E> {
                Ok(Listed(false))
            }
        }
        d.deserialize_any(Visit)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scan(text: &str) -> (Result<Kind, ClientError>, Option<Members>) {
        let raw = RawValue::from_string(text.to_owned()).expect("json");
        Answer::Raw(raw).scan()
    }

    #[test]
    fn one_scan_reads_the_kind_and_the_members_checked_before_passing_on() {
        let (kind, members) =
            scan(r#"{"content":[1,{"a":[2]}],"isError":true,"resultType":"input_required"}"#);
        assert!(matches!(kind, Ok(Kind::InputRequired)));
        let members = members.expect("read");
        assert!(members.well_typed() && members.has_content());
        assert_eq!(members.result_type(), Some("input_required"));

        let (kind, members) = scan(r#"{"content":[]}"#);
        assert!(matches!(kind, Ok(Kind::Complete)));
        assert_eq!(members.expect("read").result_type(), None);

        for ill in [
            r#"{"content":"no"}"#,
            r#"{"content":{}}"#,
            r#"{"content":[],"isError":"yes"}"#,
        ] {
            let (kind, members) = scan(ill);
            assert!(matches!(kind, Ok(Kind::Complete)), "{ill}");
            assert!(!members.expect("read").well_typed(), "{ill}");
        }
        let (_, members) = scan(r#"{"content":null}"#);
        assert!(!members.expect("read").has_content());
    }

    #[test]
    fn a_result_the_wide_scan_cannot_read_keeps_the_kind_resulttype_gives() {
        // A repeated `content` fails the wide scan; `resultType` still counts.
        let (kind, members) = scan(r#"{"resultType":"task","content":[],"content":[]}"#);
        assert!(matches!(kind, Ok(Kind::Task)));
        assert!(members.is_none());
        let (kind, members) = scan(r#""text""#);
        assert!(matches!(kind, Ok(Kind::Complete)) && members.is_none());
        let (kind, _) = scan(r#"{"resultType":7,"content":[]}"#);
        assert!(matches!(kind, Err(ClientError::UnknownResultType(t)) if t == "7"));
        let (kind, _) = scan(r#"{"resultType":"later","content":[]}"#);
        assert!(matches!(kind, Err(ClientError::UnknownResultType(t)) if t == "later"));
    }
}
