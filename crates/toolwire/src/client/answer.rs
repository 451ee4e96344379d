//! A request's result as it comes back: raw JSON as the server sent it
//! (or a `Value` from the cache), what its `resultType` says, and how it
//! is read into its type.
//!
//! Spec: basic/index.mdx#resulttype

use super::error::ClientError;
use serde::Deserialize;
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
    // Read as a raw result's is: one reading of the names.
    Tag::deserialize(t)
        .unwrap_or_else(|_| Tag::NotString(t.to_string()))
        .kind()
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
                Some(t) => t.kind(),
            };
            return (kind, Some(members));
        }
        /// The one member looked at when the wider scan fails (a repeated
        /// `content`, say): the kind stays what `resultType` says.
        #[derive(serde::Deserialize)]
        struct Peek {
            #[serde(rename = "resultType", default, deserialize_with = "present")]
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
/// unparsed (a `content` array, a boolean `isError`). Read without an
/// allocation for a well-formed result: only their shapes are kept.
#[derive(Debug, serde::Deserialize)]
pub(crate) struct Members {
    /// `null` is a value here, not an absent member: unrecognised.
    #[serde(rename = "resultType", default, deserialize_with = "present")]
    result_type: Option<Tag>,
    content: Option<Shape>,
    #[serde(rename = "isError")]
    is_error: Option<Shape>,
}

impl Members {
    /// `resultType` when it is a string.
    pub(crate) fn result_type(&self) -> Option<&str> {
        self.result_type.as_ref().and_then(Tag::as_str)
    }

    /// Whether each member present has a call result's type: `content` an
    /// array, `isError` a boolean, `resultType` a string.
    pub(crate) fn well_typed(&self) -> bool {
        self.content.is_none_or(|c| c == Shape::Array)
            && self.is_error.is_none_or(|e| e == Shape::Boolean)
            && self
                .result_type
                .as_ref()
                .is_none_or(|t| t.as_str().is_some())
    }

    /// Whether `content` is present (and, when [`well_typed`], an array).
    ///
    /// [`well_typed`]: Self::well_typed
    pub(crate) fn has_content(&self) -> bool {
        self.content.is_some()
    }
}

/// A member that is present, `null` included (which `Option` alone reads
/// as absent).
fn present<'de, D, T>(d: D) -> Result<Option<T>, D::Error>
where
    D: serde::Deserializer<'de>,
    T: serde::Deserialize<'de>,
{
    T::deserialize(d).map(Some)
}

/// A `resultType` as read: one this client knows, or what else it was.
#[derive(Debug)]
enum Tag {
    Known(ResultType),
    /// A string naming no result type this client knows.
    Unknown(String),
    /// Not a string: the value's JSON text.
    NotString(String),
}

impl Tag {
    fn as_str(&self) -> Option<&str> {
        match self {
            Self::Known(ResultType::Complete) => Some("complete"),
            Self::Known(ResultType::InputRequired) => Some("input_required"),
            Self::Known(ResultType::Task) => Some("task"),
            Self::Unknown(s) => Some(s),
            Self::NotString(_) => None,
        }
    }

    /// What the result is, or the error for a `resultType` this client
    /// does not know.
    fn kind(&self) -> Result<Kind, ClientError> {
        match self {
            Self::Known(ResultType::Complete) => Ok(Kind::Complete),
            Self::Known(ResultType::InputRequired) => Ok(Kind::InputRequired),
            Self::Known(ResultType::Task) => Ok(Kind::Task),
            Self::Unknown(t) | Self::NotString(t) => Err(ClientError::UnknownResultType(t.clone())),
        }
    }
}

impl<'de> serde::Deserialize<'de> for Tag {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::value::{MapAccessDeserializer, SeqAccessDeserializer};
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Tag;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Tag, E> {
                use serde::de::IntoDeserializer;
                let name: serde::de::value::StrDeserializer<'_, E> = s.into_deserializer();
                Ok(match ResultType::deserialize(name) {
                    Ok(known) => Tag::Known(known),
                    Err(_) => Tag::Unknown(s.to_owned()),
                })
            }
            fn visit_bool<E>(self, v: bool) -> Result<Tag, E> {
                Ok(Tag::NotString(Value::from(v).to_string()))
            }
            fn visit_i64<E>(self, v: i64) -> Result<Tag, E> {
                Ok(Tag::NotString(Value::from(v).to_string()))
            }
            fn visit_u64<E>(self, v: u64) -> Result<Tag, E> {
                Ok(Tag::NotString(Value::from(v).to_string()))
            }
            fn visit_f64<E>(self, v: f64) -> Result<Tag, E> {
                Ok(Tag::NotString(Value::from(v).to_string()))
            }
            fn visit_unit<E>(self) -> Result<Tag, E> {
                Ok(Tag::NotString(Value::Null.to_string()))
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, a: A) -> Result<Tag, A::Error> {
                let v = Value::deserialize(SeqAccessDeserializer::new(a))?;
                Ok(Tag::NotString(v.to_string()))
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, a: A) -> Result<Tag, A::Error> {
                let v = Value::deserialize(MapAccessDeserializer::new(a))?;
                Ok(Tag::NotString(v.to_string()))
            }
        }
        d.deserialize_any(Visit)
    }
}

/// What kind of JSON value a member is, its contents skipped unread.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Shape {
    Array,
    Boolean,
    Other,
}

impl<'de> serde::Deserialize<'de> for Shape {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct Visit;
        impl<'de> serde::de::Visitor<'de> for Visit {
            type Value = Shape;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("any JSON value")
            }
            fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Shape, A::Error> {
                while a.next_element::<serde::de::IgnoredAny>()?.is_some() {}
                Ok(Shape::Array)
            }
            fn visit_map<A: serde::de::MapAccess<'de>>(self, mut a: A) -> Result<Shape, A::Error> {
                while a
                    .next_entry::<serde::de::IgnoredAny, serde::de::IgnoredAny>()?
                    .is_some()
                {}
                Ok(Shape::Other)
            }
            fn visit_bool<E>(self, _: bool) -> Result<Shape, E> {
                Ok(Shape::Boolean)
            }
            fn visit_i64<E>(self, _: i64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_u64<E>(self, _: u64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_f64<E>(self, _: f64) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_str<E>(self, _: &str) -> Result<Shape, E> {
                Ok(Shape::Other)
            }
            fn visit_unit<E>(self) -> Result<Shape, E> {
                Ok(Shape::Other)
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

    /// The scan's reading of `resultType` agrees with the `Value` path's
    /// (`result_kind`), errors included, whatever the member holds.
    #[test]
    fn the_scan_reads_every_result_type_as_a_value_result_is_read() {
        fn said(kind: Result<Kind, ClientError>) -> String {
            match kind {
                Ok(Kind::Complete) => "complete".into(),
                Ok(Kind::InputRequired) => "input_required".into(),
                Ok(Kind::Task) => "task".into(),
                Err(ClientError::UnknownResultType(t)) => format!("unknown {t}"),
                Err(e) => format!("error {e}"),
            }
        }
        for member in [
            r#""complete""#,
            r#""input_required""#,
            r#""task""#,
            r#""Complete""#,
            r#""t\u0061sk""#,
            r#""é""#,
            "null",
            "true",
            "-3",
            "18446744073709551615",
            "1.5e300",
            "[1,{\"a\":null}]",
            r#"{"b":[true],"a":"x"}"#,
        ] {
            let text = format!(r#"{{"content":[],"resultType":{member}}}"#);
            let value: Value = serde_json::from_str(&text).expect("json");
            let (kind, members) = scan(&text);
            assert_eq!(said(kind), said(result_kind(&value)), "{member}");
            let members = members.expect("read");
            assert_eq!(
                members.result_type(),
                value["resultType"].as_str(),
                "{member}"
            );
            assert_eq!(
                members.well_typed(),
                value["resultType"].is_string(),
                "{member}"
            );
        }
    }
}
