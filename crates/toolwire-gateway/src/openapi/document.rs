//! An OpenAPI document read: fetched or read from a file, parsed from JSON
//! or YAML into a bounded JSON tree, its version checked, and the base URL
//! of its paths found.

use serde::de::{DeserializeSeed, Deserializer, Error as _, MapAccess, SeqAccess, Visitor};
use serde_json::{Map, Value};
use std::cell::Cell;
use std::fmt;

/// The largest document read, in bytes.
pub(crate) const MAX_DOCUMENT_BYTES: usize = 8 * 1024 * 1024;
/// The most nodes (values, keys included) a parsed document may hold,
/// YAML aliases expanded: a small document whose aliases repeat one
/// another cannot grow past it.
const MAX_NODES: usize = 2_000_000;

/// Parses a document's bytes: JSON when it starts with `{`, YAML
/// otherwise (YAML's non-string keys, such as an unquoted `200:`, become
/// strings).
pub(crate) fn parse(bytes: &[u8]) -> Result<Value, String> {
    if bytes.len() > MAX_DOCUMENT_BYTES {
        return Err(format!(
            "the document is larger than {MAX_DOCUMENT_BYTES} bytes"
        ));
    }
    let budget = Cell::new(MAX_NODES);
    let first = bytes.iter().find(|b| !b.is_ascii_whitespace());
    if first == Some(&b'{') {
        let mut de = serde_json::Deserializer::from_slice(bytes);
        let value = Bounded(&budget)
            .deserialize(&mut de)
            .map_err(|e| format!("not valid JSON: {e}"))?;
        de.end().map_err(|e| format!("not valid JSON: {e}"))?;
        Ok(value)
    } else {
        let de = yaml_serde::Deserializer::from_slice(bytes);
        Bounded(&budget)
            .deserialize(de)
            .map_err(|e| format!("not valid YAML (or JSON): {e}"))
    }
}

/// Checks the document is OpenAPI 3.x, not Swagger 2.0 or something else.
pub(crate) fn check_version(doc: &Value) -> Result<(), String> {
    if doc.get("swagger").is_some() {
        return Err(
            "this is a Swagger 2.0 document; the gateway reads OpenAPI 3.0 and 3.1 (convert it, \
             for example with swagger2openapi)"
                .into(),
        );
    }
    match doc.get("openapi").and_then(Value::as_str) {
        Some(v) if v.starts_with("3.") => {}
        Some(v) => return Err(format!("OpenAPI {v} is not 3.0 or 3.1")),
        None => return Err("not an OpenAPI document: it has no `openapi` version".into()),
    }
    if !doc.get("paths").is_some_and(Value::is_object) {
        return Err("the document has no `paths`".into());
    }
    Ok(())
}

/// The base URL of the document's paths, without a final `/`: `base_url`
/// when configured, otherwise the first `servers` entry (its variables at
/// their defaults), resolved against the document's own URL when relative.
/// A document with no `servers` is served from `/` of where it came from.
pub(crate) fn base_url(
    doc: &Value,
    configured: Option<&str>,
    document_url: Option<&str>,
) -> Result<String, String> {
    if let Some(base) = configured {
        return Ok(base.trim_end_matches('/').to_owned());
    }
    let server = doc
        .get("servers")
        .and_then(Value::as_array)
        .and_then(|s| s.first());
    let mut url = server
        .and_then(|s| s.get("url"))
        .and_then(Value::as_str)
        .unwrap_or("/")
        .to_owned();
    if let Some(vars) = server
        .and_then(|s| s.get("variables"))
        .and_then(Value::as_object)
    {
        for (name, var) in vars {
            if let Some(default) = var.get("default").and_then(Value::as_str) {
                url = url.replace(&format!("{{{name}}}"), default);
            }
        }
    }
    if url.starts_with("http://") || url.starts_with("https://") {
        return Ok(url.trim_end_matches('/').to_owned());
    }
    let Some(from) = document_url else {
        return Err(format!(
            "the document's server {url:?} is not an absolute URL and the document is a file: \
             set base_url"
        ));
    };
    let joined = join(from, &url)?;
    Ok(joined.trim_end_matches('/').to_owned())
}

/// `reference` resolved against `base` (both URLs; `reference` relative).
fn join(base: &str, reference: &str) -> Result<String, String> {
    let uri: http::Uri = base
        .parse()
        .map_err(|e| format!("document URL {base:?}: {e}"))?;
    let (Some(scheme), Some(authority)) = (uri.scheme_str(), uri.authority()) else {
        return Err(format!("document URL {base:?} is not absolute"));
    };
    if reference.starts_with('/') {
        return Ok(format!("{scheme}://{authority}{reference}"));
    }
    let path = uri.path();
    let dir = &path[..path.rfind('/').map_or(0, |i| i + 1)];
    Ok(format!("{scheme}://{authority}{dir}{reference}"))
}

/// Deserialises any self-describing format into a JSON tree, counting
/// nodes against a budget shared by the whole document.
#[derive(Clone, Copy)]
struct Bounded<'a>(&'a Cell<usize>);

impl Bounded<'_> {
    fn spend<E: serde::de::Error>(self) -> Result<(), E> {
        match self.0.get().checked_sub(1) {
            Some(left) => {
                self.0.set(left);
                Ok(())
            }
            None => Err(E::custom(format!(
                "the document holds more than {MAX_NODES} values (repeated aliases?)"
            ))),
        }
    }
}

impl<'de> DeserializeSeed<'de> for Bounded<'_> {
    type Value = Value;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.spend()?;
        d.deserialize_any(self)
    }
}

impl<'de> Visitor<'de> for Bounded<'_> {
    type Value = Value;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON or YAML value")
    }
    fn visit_unit<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_none<E>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        self.deserialize(d)
    }
    fn visit_bool<E>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }
    fn visit_i64<E>(self, v: i64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_u64<E>(self, v: u64) -> Result<Value, E> {
        Ok(Value::from(v))
    }
    fn visit_f64<E>(self, v: f64) -> Result<Value, E> {
        Ok(serde_json::Number::from_f64(v).map_or(Value::Null, Value::Number))
    }
    fn visit_str<E>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }
    fn visit_string<E>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }
    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut out = Vec::new();
        while let Some(v) = seq.next_element_seed(self)? {
            out.push(v);
        }
        Ok(Value::Array(out))
    }
    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = Map::new();
        while let Some(key) = map.next_key_seed(self)? {
            let key = match key {
                Value::String(s) => s,
                Value::Number(n) => n.to_string(),
                Value::Bool(b) => b.to_string(),
                Value::Null => "null".to_owned(),
                _ => return Err(A::Error::custom("a mapping key is not a scalar")),
            };
            let value = map.next_value_seed(self)?;
            out.insert(key, value);
        }
        Ok(Value::Object(out))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn yaml_and_json_read_alike_and_numeric_keys_become_strings() {
        let yaml = "openapi: 3.0.3\npaths:\n  /pets:\n    get:\n      responses:\n        200:\n          description: ok\n";
        let json = r#"{"openapi":"3.0.3","paths":{"/pets":{"get":{"responses":{"200":{"description":"ok"}}}}}}"#;
        let a = parse(yaml.as_bytes()).unwrap();
        let b = parse(json.as_bytes()).unwrap();
        assert_eq!(a, b);
        check_version(&a).unwrap();
    }

    #[test]
    fn repeated_aliases_are_refused_before_they_grow() {
        // Each level repeats the one before ten times: 10^9 values once
        // expanded, from a few hundred bytes.
        let mut yaml = String::from("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 1..10 {
            let p = i - 1;
            yaml.push_str(&format!(
                "a{i}: &a{i} [*a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}, *a{p}]\n"
            ));
        }
        let e = parse(yaml.as_bytes()).unwrap_err();
        assert!(e.contains("more than") || e.contains("repetition"), "{e}");
    }

    #[test]
    fn swagger_2_and_other_versions_are_refused_by_name() {
        let e = check_version(&json!({"swagger": "2.0", "paths": {}})).unwrap_err();
        assert!(e.contains("Swagger 2.0"), "{e}");
        let e = check_version(&json!({"openapi": "2.5", "paths": {}})).unwrap_err();
        assert!(e.contains("not 3.0 or 3.1"), "{e}");
        let e = check_version(&json!({"info": {}})).unwrap_err();
        assert!(e.contains("no `openapi`"), "{e}");
    }

    #[test]
    fn the_base_url_comes_from_config_servers_or_the_documents_origin() {
        let doc = json!({"servers": [{"url": "https://{region}.example.com/v1/", "variables": {"region": {"default": "eu"}}}]});
        assert_eq!(
            base_url(&doc, None, None).unwrap(),
            "https://eu.example.com/v1"
        );
        assert_eq!(
            base_url(&doc, Some("http://127.0.0.1:9/"), None).unwrap(),
            "http://127.0.0.1:9"
        );
        let none = json!({});
        assert_eq!(
            base_url(&none, None, Some("http://127.0.0.1:8000/openapi.json")).unwrap(),
            "http://127.0.0.1:8000"
        );
        let relative = json!({"servers": [{"url": "api/v2"}]});
        assert_eq!(
            base_url(&relative, None, Some("http://h:1/docs/openapi.yaml")).unwrap(),
            "http://h:1/docs/api/v2"
        );
        let e = base_url(&relative, None, None).unwrap_err();
        assert!(e.contains("set base_url"), "{e}");
    }
}
