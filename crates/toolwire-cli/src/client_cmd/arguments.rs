//! Tool arguments from the command line: `--args JSON` and `key=value`
//! pairs, each value typed by the tool's `inputSchema`.

use anyhow::{Context as _, anyhow, bail};
use serde_json::{Map, Number, Value};

/// The call's arguments: `--args` first, then each `key=value` on top. A
/// key the schema does not declare is a warning naming the likely one, or,
/// `strict`, an error.
pub(crate) fn build(
    schema: Option<&Map<String, Value>>,
    json: Option<&str>,
    pairs: &[String],
    strict: bool,
) -> anyhow::Result<Map<String, Value>> {
    let mut args = match json {
        None => Map::new(),
        Some(text) => match serde_json::from_str(text).context("--args is not valid JSON")? {
            Value::Object(m) => m,
            other => bail!("--args must be a JSON object, not {other}"),
        },
    };
    for pair in pairs {
        let Some((key, raw)) = pair.split_once('=') else {
            bail!("argument {pair:?} is not KEY=VALUE");
        };
        if key.is_empty() {
            bail!("argument {pair:?} has an empty key");
        }
        let properties = schema
            .and_then(|s| s.get("properties"))
            .and_then(Value::as_object);
        let property = properties.and_then(|p| p.get(key));
        // A misspelt name would otherwise go as an extra argument that the
        // tool may well ignore.
        if let Some(properties) = properties
            && property.is_none()
            && !extra_allowed(schema)
        {
            let names: Vec<&str> = properties.keys().map(String::as_str).collect();
            let hint = match super::suggest::closest(key, names.iter().copied()) {
                Some(near) => format!("did you mean {near}? "),
                None => String::new(),
            };
            let known = if names.is_empty() {
                "none".to_owned()
            } else {
                names.join(", ")
            };
            if strict {
                bail!("the tool has no argument {key:?}: {hint}its arguments are {known}");
            }
            tracing::warn!(
                "the tool has no argument {key:?}: {hint}its arguments are {known}; sending it \
                 anyway (--strict refuses it)"
            );
        }
        let value =
            typed(raw, property).with_context(|| format!("argument {key}: cannot read {raw:?}"))?;
        args.insert(key.to_owned(), value);
    }
    Ok(args)
}

/// Whether the schema says arguments it does not declare are welcome
/// (`additionalProperties` `true` or a schema): only then does a `key=value`
/// with an undeclared key go as is.
fn extra_allowed(schema: Option<&Map<String, Value>>) -> bool {
    match schema.and_then(|s| s.get("additionalProperties")) {
        Some(Value::Bool(allowed)) => *allowed,
        Some(Value::Object(_)) => true,
        _ => false,
    }
}

/// `raw` as the type the property's schema declares. Without a single
/// declared type, JSON is tried and plain text is the fallback.
fn typed(raw: &str, property: Option<&Value>) -> anyhow::Result<Value> {
    let types: Vec<&str> = match property.and_then(|p| p.get("type")) {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    let non_null: Vec<&str> = types.iter().copied().filter(|t| *t != "null").collect();
    if types.contains(&"null") && raw == "null" {
        return Ok(Value::Null);
    }
    match non_null.as_slice() {
        ["string"] => Ok(Value::String(raw.to_owned())),
        ["integer"] => raw
            .trim()
            .parse::<i64>()
            .map(Value::from)
            .map_err(|_| anyhow!("expected an integer")),
        ["number"] => {
            let n: Number =
                serde_json::from_str(raw.trim()).map_err(|_| anyhow!("expected a number"))?;
            Ok(Value::Number(n))
        }
        ["boolean"] => match raw.trim() {
            "true" => Ok(Value::Bool(true)),
            "false" => Ok(Value::Bool(false)),
            _ => bail!("expected true or false"),
        },
        ["array" | "object"] => {
            let v: Value = serde_json::from_str(raw).map_err(|e| anyhow!("expected JSON: {e}"))?;
            let ok = matches!(
                (non_null[0], &v),
                ("array", Value::Array(_)) | ("object", Value::Object(_))
            );
            if !ok {
                bail!("expected a JSON {}", non_null[0]);
            }
            Ok(v)
        }
        _ if non_null.contains(&"string") && !non_null.is_empty() => {
            // A union with string: JSON only if it is one of the other types.
            match serde_json::from_str::<Value>(raw) {
                Ok(v) if !v.is_string() && fits(&v, &non_null) => Ok(v),
                _ => Ok(Value::String(raw.to_owned())),
            }
        }
        _ => Ok(serde_json::from_str(raw).unwrap_or_else(|_| Value::String(raw.to_owned()))),
    }
}

fn fits(v: &Value, types: &[&str]) -> bool {
    types.iter().any(|t| match *t {
        "integer" => v.is_i64() || v.is_u64(),
        "number" => v.is_number(),
        "boolean" => v.is_boolean(),
        "array" => v.is_array(),
        "object" => v.is_object(),
        _ => false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn schema() -> Map<String, Value> {
        json!({"properties": {
            "s": {"type": "string"}, "i": {"type": "integer"}, "n": {"type": "number"},
            "b": {"type": "boolean"}, "a": {"type": "array"}, "o": {"type": "object"},
            "opt": {"type": ["integer", "null"]}, "u": {"type": ["string", "integer"]}
        }})
        .as_object()
        .cloned()
        .expect("object")
    }

    #[test]
    fn values_are_typed_by_the_schema() {
        let pairs: Vec<String> = [
            "s=42",
            "i=-7",
            "n=2.5",
            "b=true",
            "a=[1,2]",
            "o={\"k\":1}",
            "opt=null",
            "u=5",
            "free=3",
            "text=a=b",
        ]
        .iter()
        .map(|s| (*s).to_owned())
        .collect();
        // Undeclared keys (`free`, `text`) go as they are where the schema
        // welcomes them.
        let mut open = schema();
        open.insert("additionalProperties".into(), json!(true));
        let args = build(Some(&open), Some(r#"{"s": "x", "keep": 1}"#), &pairs, true).expect("ok");
        assert_eq!(
            Value::Object(args),
            json!({"s": "42", "i": -7, "n": 2.5, "b": true, "a": [1, 2], "o": {"k": 1},
                   "opt": null, "u": 5, "free": 3, "text": "a=b", "keep": 1})
        );
    }

    #[test]
    fn an_undeclared_name_is_refused_with_the_likely_one() {
        let err = build(Some(&schema()), None, &["oopt=1".to_owned()], true)
            .expect_err("not declared")
            .to_string();
        assert!(err.contains("no argument \"oopt\""), "{err}");
        assert!(err.contains("did you mean opt?"), "{err}");
        assert!(
            err.contains("its arguments are") && err.contains("opt"),
            "{err}"
        );
        let err = build(Some(&schema()), None, &["zzzzzz=1".to_owned()], true)
            .expect_err("not declared")
            .to_string();
        assert!(!err.contains("did you mean"), "nothing close: {err}");
        // --args is not checked; a schema without properties takes any key.
        assert!(build(Some(&schema()), Some(r#"{"oopt": 1}"#), &[], true).is_ok());
        // Without --strict, it goes with a warning.
        let sent = build(Some(&schema()), None, &["oopt=1".to_owned()], false).expect("sent");
        assert_eq!(sent.get("oopt"), Some(&json!(1)));
        let bare = json!({"type": "object"})
            .as_object()
            .cloned()
            .expect("object");
        assert!(build(Some(&bare), None, &["any=1".to_owned()], true).is_ok());
    }

    #[test]
    fn wrong_values_are_clear_errors() {
        for bad in ["i=1.5", "b=yes", "a={}", "n=abc", "noequals", "=v"] {
            let err = build(Some(&schema()), None, &[bad.to_owned()], true).expect_err(bad);
            assert!(!err.to_string().is_empty());
        }
        assert!(build(None, Some("[1]"), &[], true).is_err());
        assert!(build(None, Some("{"), &[], true).is_err());
    }
}
