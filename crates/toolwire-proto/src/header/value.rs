//! Header values: the `=?base64?…?=` encoding, building a parameter's header
//! value from the arguments, and the server-side comparison with the body.

use std::borrow::Cow;

use base64::Engine as _;
use base64::engine::general_purpose::STANDARD;
use serde_json::Value;

use super::{MAX_SAFE_INTEGER, PrimitiveKind, json_type_name};

// Spec: basic/transports/streamable-http.mdx#value-encoding
const SENTINEL_PREFIX: &str = "=?base64?";
const SENTINEL_SUFFIX: &str = "?=";

/// Why a header value could not be decoded, or does not match the body.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum HeaderValueError {
    /// The raw header value has a character that HTTP does not allow in a
    /// field value (only visible ASCII, space and horizontal tab are allowed).
    #[error(
        "header value contains {ch:?} at character {index}; only visible ASCII, space and horizontal tab are allowed"
    )]
    InvalidChar {
        /// The offending character.
        ch: char,
        /// Its position in the raw value, counted in characters from 0.
        index: usize,
    },
    /// The value uses the `=?base64?…?=` sentinel but the payload is not
    /// padded standard Base64.
    #[error(
        "header value uses the =?base64?...?= sentinel but its payload is not valid Base64: {detail}"
    )]
    InvalidBase64 {
        /// What the Base64 decoder reported.
        detail: String,
    },
    /// The Base64 payload does not decode to UTF-8.
    #[error("header value's Base64 payload is not valid UTF-8 (valid up to byte {valid_up_to})")]
    InvalidUtf8 {
        /// How many leading bytes are valid UTF-8.
        valid_up_to: usize,
    },
    /// The header is present but the body value is `null`, in which case a
    /// client must omit the header.
    #[error("header value {header:?} is present but the body value is null")]
    UnexpectedHeader {
        /// The decoded header value.
        header: String,
    },
    /// The header of an integer parameter is not an integer.
    #[error("header value {header:?} is not an integer")]
    NotAnInteger {
        /// The decoded header value.
        header: String,
    },
    /// The header of an integer parameter is outside ±(2^53 − 1).
    #[error("header value {header:?} is outside the safe integer range ±(2^53-1)")]
    IntegerOutOfRange {
        /// The decoded header value.
        header: String,
    },
    /// The header of a boolean parameter is not lowercase `true` or `false`.
    #[error(
        "header value {header:?} is not a boolean; only lowercase `true` and `false` are accepted"
    )]
    NotABoolean {
        /// The decoded header value.
        header: String,
    },
    /// The body value cannot be mirrored as the parameter's kind.
    #[error("body value: {0}")]
    Body(#[from] ParamValueError),
    /// Header and body hold different values.
    #[error("{kind} header value {header:?} does not match body value {body}")]
    Mismatch {
        /// The parameter kind compared.
        kind: PrimitiveKind,
        /// The decoded header value.
        header: String,
        /// The body value, as JSON.
        body: String,
    },
}

/// Why an argument value cannot become a header value.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum ParamValueError {
    /// The value's JSON type does not fit the parameter's kind.
    #[error("expected a {expected} value, found {found}")]
    WrongType {
        /// The kind from the schema.
        expected: PrimitiveKind,
        /// What was found instead.
        found: &'static str,
    },
    /// An integer outside ±(2^53 − 1).
    #[error("integer {value} is outside the safe integer range ±(2^53-1)")]
    IntegerOutOfRange {
        /// The value, as JSON.
        value: String,
    },
}

/// Encodes a string for an `Mcp-Param-*` or `Mcp-Name` header.
///
/// The value is returned unchanged when it is safe as a plain header value:
/// every character is visible ASCII or a space, it does not start or end with
/// a space, and it does not look like the sentinel. Otherwise it becomes
/// `=?base64?{standard Base64 of the UTF-8}?=`. The output is always a valid
/// HTTP field value with no leading or trailing whitespace.
///
/// Tabs are control characters and so are always encoded. A value that
/// starts with `=?base64?` and ends with `?=` is encoded too, so that it is
/// not mistaken for an encoded one; this check ignores ASCII case in the
/// prefix, which encodes a few more values than the spec requires and is
/// harmless because a decoder gets the same string back.
///
/// ```
/// use toolwire_proto::header::encode_header_value;
///
/// assert_eq!(encode_header_value("us-west1"), "us-west1");
/// assert_eq!(encode_header_value(" padded "), "=?base64?IHBhZGRlZCA=?=");
/// ```
// Spec: basic/transports/streamable-http.mdx#value-encoding
pub fn encode_header_value(v: &str) -> Cow<'_, str> {
    if is_plain_safe(v) {
        Cow::Borrowed(v)
    } else {
        Cow::Owned(format!(
            "{SENTINEL_PREFIX}{}{SENTINEL_SUFFIX}",
            STANDARD.encode(v)
        ))
    }
}

fn is_plain_safe(v: &str) -> bool {
    v.bytes().all(|b| (0x20..=0x7e).contains(&b))
        && !v.starts_with(' ')
        && !v.ends_with(' ')
        && !looks_like_sentinel(v)
}

fn looks_like_sentinel(v: &str) -> bool {
    v.get(..SENTINEL_PREFIX.len())
        .is_some_and(|p| p.eq_ignore_ascii_case(SENTINEL_PREFIX))
        && v.ends_with(SENTINEL_SUFFIX)
}

/// Decodes a received `Mcp-Param-*` or `Mcp-Name` header value.
///
/// The raw value may only hold visible ASCII, spaces and horizontal tabs.
/// Leading and trailing spaces and tabs are dropped, as HTTP does not count
/// them as part of a field value. A value then wrapped in exactly
/// `=?base64?` and `?=` (case-sensitive) is decoded as padded standard
/// Base64 of UTF-8; any other value is returned as is.
///
/// ```
/// use toolwire_proto::header::decode_header_value;
///
/// assert_eq!(decode_header_value("=?base64?SGVsbG8sIOS4lueVjA==?=")?, "Hello, 世界");
/// assert_eq!(decode_header_value("us-west1")?, "us-west1");
/// # Ok::<(), toolwire_proto::header::HeaderValueError>(())
/// ```
// Spec: basic/transports/streamable-http.mdx#value-encoding
// Spec: basic/transports/streamable-http.mdx#server-validation
pub fn decode_header_value(raw: &str) -> Result<String, HeaderValueError> {
    if let Some((index, ch)) = raw
        .chars()
        .enumerate()
        .find(|&(_, c)| !(c == '\t' || (' '..='~').contains(&c)))
    {
        return Err(HeaderValueError::InvalidChar { ch, index });
    }
    // RFC 9110 §5.5: leading and trailing whitespace is not part of the value.
    let value = raw.trim_matches([' ', '\t']);
    if !value.starts_with(SENTINEL_PREFIX) || !value.ends_with(SENTINEL_SUFFIX) {
        return Ok(value.to_owned());
    }
    // Both markers present; if they overlap ("=?base64?=") there is no
    // payload slot, which no conforming client produces.
    let Some(payload) = value
        .strip_prefix(SENTINEL_PREFIX)
        .and_then(|rest| rest.strip_suffix(SENTINEL_SUFFIX))
    else {
        return Err(HeaderValueError::InvalidBase64 {
            detail: "the =?base64? prefix and ?= suffix overlap".to_owned(),
        });
    };
    let bytes = STANDARD
        .decode(payload)
        .map_err(|e| HeaderValueError::InvalidBase64 {
            detail: e.to_string(),
        })?;
    String::from_utf8(bytes).map_err(|e| HeaderValueError::InvalidUtf8 {
        valid_up_to: e.utf8_error().valid_up_to(),
    })
}

/// Finds the value at a property path in call arguments.
///
/// Each step must go through a JSON object; `None` means no value is present
/// there, in which case the client omits the header. An empty path returns
/// `args` itself.
// Spec: basic/transports/streamable-http.mdx#schema-extension
pub fn lookup_path<'a>(args: &'a Value, path: &[String]) -> Option<&'a Value> {
    path.iter()
        .try_fold(args, |value, key| value.as_object()?.get(key))
}

/// Turns an argument value into the header value a client sends.
///
/// `null` gives `None` (the header is omitted). Strings go through
/// [`encode_header_value`], and the empty string stays empty. Integers are
/// written in decimal and must be within ±(2^53 − 1); an integral float such
/// as `42.0` counts as `42`. Booleans become `true` or `false`.
///
/// ```
/// use serde_json::json;
/// use toolwire_proto::header::{PrimitiveKind, param_header_value};
///
/// assert_eq!(param_header_value(&json!(42.0), PrimitiveKind::Integer)?.as_deref(), Some("42"));
/// assert_eq!(param_header_value(&json!(null), PrimitiveKind::String)?, None);
/// # Ok::<(), toolwire_proto::header::ParamValueError>(())
/// ```
// Spec: basic/transports/streamable-http.mdx#value-encoding
pub fn param_header_value(
    value: &Value,
    kind: PrimitiveKind,
) -> Result<Option<String>, ParamValueError> {
    if value.is_null() {
        return Ok(None);
    }
    let text = match kind {
        PrimitiveKind::String => encode_header_value(body_string(value)?).into_owned(),
        PrimitiveKind::Integer => body_integer(value)?.to_string(),
        PrimitiveKind::Boolean => bool_text(body_bool(value)?).to_owned(),
    };
    Ok(Some(text))
}

/// Checks, on the server, that a received `Mcp-Param-*` header matches the
/// argument value in the body.
///
/// The header is decoded first (see [`decode_header_value`]). Strings must be
/// equal exactly, case included. Integers are compared as numbers, so a
/// header `42` matches a body `42` or `42.0`, and a header that spells the
/// same number otherwise (`42.0`, `4.2e1`, `+42`, `042`, always decimal) is
/// accepted too; both sides must be within ±(2^53 − 1). Booleans match only as lowercase `true` or `false`. A header
/// for a `null` body value is an error, since the client must omit it.
///
/// Whether a header is missing is the caller's question: look the value up
/// with [`lookup_path`] and require the header when it is present and not
/// `null`.
// Spec: basic/transports/streamable-http.mdx#server-behavior-for-custom-headers
// Spec: basic/transports/streamable-http.mdx#server-validation
pub fn header_matches_value(
    header_raw: &str,
    value: &Value,
    kind: PrimitiveKind,
) -> Result<(), HeaderValueError> {
    let header = decode_header_value(header_raw)?;
    if value.is_null() {
        return Err(HeaderValueError::UnexpectedHeader { header });
    }
    let matches = match kind {
        PrimitiveKind::String => body_string(value)? == header,
        PrimitiveKind::Integer => {
            let body = body_integer(value)?;
            match parse_integer_text(&header) {
                IntegerText::Integer(n) => n == body,
                IntegerText::NotAnInteger => return Err(HeaderValueError::NotAnInteger { header }),
                IntegerText::OutOfRange => {
                    return Err(HeaderValueError::IntegerOutOfRange { header });
                }
            }
        }
        PrimitiveKind::Boolean => {
            let body = body_bool(value)?;
            match header.as_str() {
                "true" => body,
                "false" => !body,
                _ => return Err(HeaderValueError::NotABoolean { header }),
            }
        }
    };
    if matches {
        Ok(())
    } else {
        Err(HeaderValueError::Mismatch {
            kind,
            header,
            body: value.to_string(),
        })
    }
}

fn bool_text(b: bool) -> &'static str {
    if b { "true" } else { "false" }
}

fn body_string(value: &Value) -> Result<&str, ParamValueError> {
    value.as_str().ok_or(ParamValueError::WrongType {
        expected: PrimitiveKind::String,
        found: json_type_name(value),
    })
}

fn body_bool(value: &Value) -> Result<bool, ParamValueError> {
    value.as_bool().ok_or(ParamValueError::WrongType {
        expected: PrimitiveKind::Boolean,
        found: json_type_name(value),
    })
}

/// The body value as a safe integer; integral floats count.
// Spec: server/tools.mdx#x-mcp-header
fn body_integer(value: &Value) -> Result<i64, ParamValueError> {
    let out_of_range = || ParamValueError::IntegerOutOfRange {
        value: value.to_string(),
    };
    let Value::Number(number) = value else {
        return Err(ParamValueError::WrongType {
            expected: PrimitiveKind::Integer,
            found: json_type_name(value),
        });
    };
    if let Some(n) = number.as_i64() {
        return if n.unsigned_abs() <= MAX_SAFE_INTEGER.unsigned_abs() {
            Ok(n)
        } else {
            Err(out_of_range())
        };
    }
    if number.as_u64().is_some() {
        // Above i64::MAX, so far above 2^53.
        return Err(out_of_range());
    }
    match number.as_f64() {
        Some(f) if f.is_finite() && f.fract() == 0.0 => {
            // Every integer up to 2^53 is exact in an f64, so the bound check
            // and the cast are both exact.
            if f.abs() <= MAX_SAFE_INTEGER as f64 {
                Ok(f as i64)
            } else {
                Err(out_of_range())
            }
        }
        _ => Err(ParamValueError::WrongType {
            expected: PrimitiveKind::Integer,
            found: "a number with a fractional part",
        }),
    }
}

#[derive(Debug, PartialEq, Eq)]
enum IntegerText {
    Integer(i64),
    NotAnInteger,
    OutOfRange,
}

/// Reads a decimal number exactly (no float rounding) and says whether it
/// is a safe integer. Beyond JSON's number syntax it takes a leading `+` and
/// leading zeros, since the header is compared by value, not by spelling:
/// `42`, `-7`, `42.0`, `4.2e1`, `-0`, `+42`, `042` and `+0042.00` are all
/// integers (`042` is forty-two: decimal, never octal); `42.5`, `0x2a`,
/// `++1`, `1_000`, ` 1`, `.5e1`, `42.` and `1e` are not.
// Spec: basic/transports/streamable-http.mdx#server-validation — servers
// compare integer values numerically rather than as strings.
fn parse_integer_text(text: &str) -> IntegerText {
    let (negative, unsigned) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    let (mantissa, exponent) = match unsigned.split_once(['e', 'E']) {
        Some((m, e)) => (m, Some(e)),
        None => (unsigned, None),
    };
    let (int_part, frac_part) = match mantissa.split_once('.') {
        Some((i, f)) => (i, Some(f)),
        None => (mantissa, None),
    };
    let all_digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    if !all_digits(int_part) {
        return IntegerText::NotAnInteger;
    }
    let frac = frac_part.unwrap_or("");
    if frac_part.is_some() && !all_digits(frac) {
        return IntegerText::NotAnInteger;
    }
    // The exponent saturates: beyond ±1e6 the answer no longer changes.
    let exp: i64 = match exponent {
        None => 0,
        Some(e) => {
            let (sign, digits) = match e.strip_prefix('-') {
                Some(d) => (-1, d),
                None => (1, e.strip_prefix('+').unwrap_or(e)),
            };
            if !all_digits(digits) {
                return IntegerText::NotAnInteger;
            }
            let magnitude = digits.bytes().fold(0_i64, |acc, b| {
                acc.saturating_mul(10)
                    .saturating_add(i64::from(b - b'0'))
                    .min(1_000_000)
            });
            sign * magnitude
        }
    };
    // The value is digits × 10^scale.
    let digits = format!("{int_part}{frac}");
    let significant = digits.trim_start_matches('0');
    if significant.is_empty() {
        return IntegerText::Integer(0);
    }
    let trimmed = significant.trim_end_matches('0');
    let trailing_zeros = significant.len() - trimmed.len();
    let scale = exp
        .saturating_sub(i64::try_from(frac.len()).unwrap_or(i64::MAX))
        .saturating_add(i64::try_from(trailing_zeros).unwrap_or(i64::MAX));
    if scale < 0 {
        // The last significant digit is non-zero and after the point.
        return IntegerText::NotAnInteger;
    }
    // 2^53 − 1 has 16 digits.
    let total_digits = i64::try_from(trimmed.len())
        .unwrap_or(i64::MAX)
        .saturating_add(scale);
    if total_digits > 16 {
        return IntegerText::OutOfRange;
    }
    let magnitude = trimmed
        .parse::<i64>()
        .ok()
        .and_then(|m| (0..scale).try_fold(m, |acc, _| acc.checked_mul(10)));
    match magnitude {
        Some(m) if m <= MAX_SAFE_INTEGER => IntegerText::Integer(if negative { -m } else { m }),
        _ => IntegerText::OutOfRange,
    }
}

#[cfg(test)]
mod tests;
