//! A request's result as it comes back: raw JSON as the server sent it
//! (or a `Value` from the cache), what its `resultType` says, and how it
//! is read into its type.
//!
//! Spec: basic/index.mdx#resulttype

use super::error::ClientError;
use serde::de::DeserializeOwned;
use serde_json::Value;
use serde_json::value::RawValue;
use toolwire_proto::types::ResultType;

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

/// A result: as the server sent it, or as the cache keeps it.
#[derive(Debug)]
pub(crate) enum Answer {
    Raw(Box<RawValue>),
    Value(Value),
}

impl Answer {
    /// What `resultType` says the result is. A raw result is only scanned
    /// for it here; nothing else is read twice into memory.
    pub(crate) fn kind(&self) -> Result<Kind, ClientError> {
        match self {
            Self::Value(v) => result_kind(v),
            Self::Raw(raw) => {
                /// The one member looked at before the result is parsed.
                #[derive(serde::Deserialize)]
                struct Peek {
                    #[serde(rename = "resultType")]
                    result_type: Option<Value>,
                }
                // A result that is not even an object is complete here and
                // fails where it is parsed, as a `Value` result would.
                let peeked = serde_json::from_str::<Peek>(raw.get()).ok();
                match peeked.and_then(|p| p.result_type) {
                    None => Ok(Kind::Complete),
                    Some(t) => kind_of(&t),
                }
            }
        }
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
