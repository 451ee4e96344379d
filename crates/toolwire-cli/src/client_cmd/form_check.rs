//! Checks an `--input` answer against the form the server asked with: every
//! field of the right type and within its enum and bounds, every required
//! field present, and no field the form does not have.
//!
//! Spec: client/elicitation.mdx#requested-schema

use serde_json::{Map, Value};
use toolwire::proto::types::{ElicitRequestedSchema, NumberType, PrimitiveSchemaDefinition};

/// Why `content` does not fill in `schema`, naming the field.
pub(crate) fn check(
    schema: &ElicitRequestedSchema,
    content: &Map<String, Value>,
) -> Result<(), String> {
    for (name, value) in content {
        let Some(field) = schema.properties.get(name) else {
            let known = schema.properties.keys().cloned().collect::<Vec<_>>();
            return Err(format!(
                "field {name:?} is not in the form (its fields: {})",
                if known.is_empty() {
                    "none".to_owned()
                } else {
                    known.join(", ")
                }
            ));
        };
        check_field(field, value).map_err(|why| format!("field {name:?}: {why}, got {value}"))?;
    }
    for name in schema.required.iter().flatten() {
        if !content.contains_key(name) {
            return Err(format!("field {name:?} is required"));
        }
    }
    Ok(())
}

fn check_field(field: &PrimitiveSchemaDefinition, value: &Value) -> Result<(), String> {
    use PrimitiveSchemaDefinition as P;
    let one_of = |values: &mut dyn Iterator<Item = &str>, v: &Value| {
        let values: Vec<&str> = values.collect();
        match v.as_str() {
            Some(s) if values.contains(&s) => Ok(()),
            _ => Err(format!("expected one of {}", values.join(", "))),
        }
    };
    let many_of = |values: Vec<&str>, v: &Value, min: Option<u64>, max: Option<u64>| {
        let Some(items) = v.as_array() else {
            return Err(format!("expected an array of {}", values.join(", ")));
        };
        if items
            .iter()
            .any(|i| !i.as_str().is_some_and(|s| values.contains(&s)))
        {
            return Err(format!("expected only {}", values.join(", ")));
        }
        let n = items.len() as u64;
        if min.is_some_and(|m| n < m) || max.is_some_and(|m| n > m) {
            return Err(format!(
                "expected {} to {} items",
                min.unwrap_or(0),
                max.map_or_else(|| "any number of".to_owned(), |m| m.to_string())
            ));
        }
        Ok(())
    };
    match field {
        P::String(s) => {
            let Some(text) = value.as_str() else {
                return Err("expected a string".into());
            };
            let chars = text.chars().count() as u64;
            if s.min_length.is_some_and(|m| chars < m) || s.max_length.is_some_and(|m| chars > m) {
                return Err(format!(
                    "expected {} to {} characters",
                    s.min_length.unwrap_or(0),
                    s.max_length
                        .map_or_else(|| "any number of".to_owned(), |m| m.to_string())
                ));
            }
            Ok(())
        }
        P::Number(n) => {
            let Some(x) = value.as_f64() else {
                return Err(format!("expected {}", kind(n.kind)));
            };
            if n.kind == NumberType::Integer && !(value.is_i64() || value.is_u64()) {
                return Err("expected an integer".into());
            }
            if n.minimum.is_some_and(|m| x < m) || n.maximum.is_some_and(|m| x > m) {
                return Err(format!(
                    "expected {} from {} to {}",
                    kind(n.kind),
                    n.minimum.map_or_else(|| "-∞".to_owned(), |m| m.to_string()),
                    n.maximum.map_or_else(|| "∞".to_owned(), |m| m.to_string())
                ));
            }
            Ok(())
        }
        P::Boolean(_) => value
            .is_boolean()
            .then_some(())
            .ok_or_else(|| "expected true or false".to_owned()),
        P::UntitledSingleSelectEnum(e) => one_of(&mut e.values.iter().map(String::as_str), value),
        P::TitledSingleSelectEnum(e) => {
            one_of(&mut e.one_of.iter().map(|o| o.value.as_str()), value)
        }
        P::LegacyTitledEnum(e) => one_of(&mut e.values.iter().map(String::as_str), value),
        P::UntitledMultiSelectEnum(e) => many_of(
            e.items.values.iter().map(String::as_str).collect(),
            value,
            e.min_items,
            e.max_items,
        ),
        P::TitledMultiSelectEnum(e) => many_of(
            e.items.any_of.iter().map(|o| o.value.as_str()).collect(),
            value,
            e.min_items,
            e.max_items,
        ),
    }
}

fn kind(k: NumberType) -> &'static str {
    match k {
        NumberType::Number => "a number",
        NumberType::Integer => "an integer",
    }
}

#[cfg(test)]
mod tests {
    use super::check;
    use serde_json::{Value, json};
    use toolwire::proto::types::ElicitRequestedSchema;

    fn schema() -> ElicitRequestedSchema {
        serde_json::from_value(json!({
            "type": "object",
            "properties": {
                "confirm": {"type": "boolean"},
                "count": {"type": "integer", "minimum": 1, "maximum": 5},
                "colour": {"type": "string", "enum": ["red", "blue"]},
                "tags": {"type": "array", "items": {"type": "string", "enum": ["a", "b"]}},
                "note": {"type": "string", "maxLength": 3}
            },
            "required": ["confirm"]
        }))
        .expect("schema")
    }

    fn content(v: Value) -> serde_json::Map<String, Value> {
        v.as_object().cloned().expect("object")
    }

    #[test]
    fn a_fitting_answer_passes() {
        let ok = json!({"confirm": true, "count": 2, "colour": "red", "tags": ["a"], "note": "hi"});
        assert_eq!(check(&schema(), &content(ok)), Ok(()));
    }

    #[test]
    fn each_misfit_names_its_field() {
        for (answer, field) in [
            (json!({"confirm": "yes"}), "\"confirm\""),
            (json!({"confirm": true, "count": 1.5}), "\"count\""),
            (json!({"confirm": true, "count": 9}), "\"count\""),
            (json!({"confirm": true, "colour": "green"}), "\"colour\""),
            (json!({"confirm": true, "tags": ["c"]}), "\"tags\""),
            (json!({"confirm": true, "note": "long"}), "\"note\""),
            (json!({"count": 1}), "\"confirm\" is required"),
            (
                json!({"confirm": true, "extra": 1}),
                "\"extra\" is not in the form",
            ),
        ] {
            let err = check(&schema(), &content(answer.clone())).expect_err("misfit");
            assert!(err.contains(field), "{answer}: {err}");
        }
    }
}
