//! Elicitation, the `elicitation/create` input request: form and URL mode
//! parameters, the restricted schemas a form may ask for, and the user's
//! answer (schema `ElicitRequestParams`, `PrimitiveSchemaDefinition` and its
//! members, `ElicitResult`).
//!
//! Spec: client/elicitation.mdx

use super::common::JsonObject;
use serde::de::{self, Deserializer};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// Parameters of `elicitation/create`: form or URL mode (schema
/// `ElicitRequestParams`). Told apart by `mode`; an absent `mode` means form.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum ElicitRequestParams {
    /// Form mode: structured data through a form the client renders.
    Form(ElicitRequestFormParams),
    /// URL mode: an out-of-band interaction at a URL.
    Url(ElicitRequestUrlParams),
}

impl<'de> Deserialize<'de> for ElicitRequestParams {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        match v.get("mode").and_then(Value::as_str) {
            Some("url") => ElicitRequestUrlParams::deserialize(v).map(Self::Url),
            _ => ElicitRequestFormParams::deserialize(v).map(Self::Form),
        }
        .map_err(de::Error::custom)
    }
}

impl From<ElicitRequestFormParams> for ElicitRequestParams {
    fn from(p: ElicitRequestFormParams) -> Self {
        Self::Form(p)
    }
}

impl From<ElicitRequestUrlParams> for ElicitRequestParams {
    fn from(p: ElicitRequestUrlParams) -> Self {
        Self::Url(p)
    }
}

/// The `"form"` mode marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum FormMode {
    /// `"form"`.
    #[default]
    #[serde(rename = "form")]
    Form,
}

/// The `"url"` mode marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum UrlMode {
    /// `"url"`.
    #[default]
    #[serde(rename = "url")]
    Url,
}

/// Form-mode elicitation parameters (schema `ElicitRequestFormParams`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ElicitRequestFormParams {
    /// `"form"`, or absent (form is the default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub mode: Option<FormMode>,
    /// What to ask the user.
    pub message: String,
    /// The flat object schema of the answer.
    pub requested_schema: ElicitRequestedSchema,
}

impl ElicitRequestFormParams {
    /// A form request with explicit `mode: "form"`.
    pub fn new(message: impl Into<String>, requested_schema: ElicitRequestedSchema) -> Self {
        Self {
            mode: Some(FormMode::Form),
            message: message.into(),
            requested_schema,
        }
    }
}

/// The `"object"` type marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ObjectType {
    /// `"object"`.
    #[default]
    #[serde(rename = "object")]
    Object,
}

/// The schema of a form: an object of primitive properties.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ElicitRequestedSchema {
    /// The JSON Schema dialect, if stated.
    #[serde(rename = "$schema", default, skip_serializing_if = "Option::is_none")]
    pub schema: Option<String>,
    /// Always `"object"`.
    #[serde(rename = "type")]
    pub kind: ObjectType,
    /// The fields.
    pub properties: BTreeMap<String, PrimitiveSchemaDefinition>,
    /// Names of the required fields.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub required: Option<Vec<String>>,
}

/// URL-mode elicitation parameters (schema `ElicitRequestURLParams`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct ElicitRequestUrlParams {
    /// Always `"url"`.
    pub mode: UrlMode,
    /// Why the user should visit the URL.
    pub message: String,
    /// The URL to visit.
    pub url: String,
}

impl ElicitRequestUrlParams {
    /// A URL-mode request.
    pub fn new(message: impl Into<String>, url: impl Into<String>) -> Self {
        Self {
            mode: UrlMode::Url,
            message: message.into(),
            url: url.into(),
        }
    }
}

/// What the user did with an elicitation.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ElicitAction {
    /// `"accept"`: the user submitted (form) or consented (URL).
    Accept,
    /// `"decline"`: the user explicitly declined.
    Decline,
    /// `"cancel"`: the user dismissed without choosing.
    Cancel,
}

/// The client's answer to `elicitation/create` (schema `ElicitResult`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ElicitResult {
    /// What the user did.
    pub action: ElicitAction,
    /// The submitted values (form mode, `accept` only): strings, integers,
    /// booleans or arrays of strings.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub content: Option<JsonObject>,
}

/// A field of an elicitation form (schema `PrimitiveSchemaDefinition`).
///
/// Told apart by `type` and by which of `oneOf`, `enumNames`, `enum` and
/// `items.anyOf` are present.
#[derive(Debug, Clone, PartialEq, Serialize)]
#[serde(untagged)]
pub enum PrimitiveSchemaDefinition {
    /// A free string.
    String(StringSchema),
    /// A number or integer.
    Number(NumberSchema),
    /// A boolean.
    Boolean(BooleanSchema),
    /// One of some strings.
    UntitledSingleSelectEnum(UntitledSingleSelectEnumSchema),
    /// One of some strings with display titles.
    TitledSingleSelectEnum(TitledSingleSelectEnumSchema),
    /// Several of some strings.
    UntitledMultiSelectEnum(UntitledMultiSelectEnumSchema),
    /// Several of some strings with display titles.
    TitledMultiSelectEnum(TitledMultiSelectEnumSchema),
    /// One of some strings with `enumNames` titles (deprecated).
    LegacyTitledEnum(LegacyTitledEnumSchema),
}

impl<'de> Deserialize<'de> for PrimitiveSchemaDefinition {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let v = Value::deserialize(d)?;
        let has = |k: &str| v.get(k).is_some();
        match v.get("type").and_then(Value::as_str) {
            Some("string") if has("oneOf") => {
                TitledSingleSelectEnumSchema::deserialize(v).map(Self::TitledSingleSelectEnum)
            }
            Some("string") if has("enumNames") => {
                LegacyTitledEnumSchema::deserialize(v).map(Self::LegacyTitledEnum)
            }
            Some("string") if has("enum") => {
                UntitledSingleSelectEnumSchema::deserialize(v).map(Self::UntitledSingleSelectEnum)
            }
            Some("string") => StringSchema::deserialize(v).map(Self::String),
            Some("number" | "integer") => NumberSchema::deserialize(v).map(Self::Number),
            Some("boolean") => BooleanSchema::deserialize(v).map(Self::Boolean),
            Some("array") if v.get("items").is_some_and(|i| i.get("anyOf").is_some()) => {
                TitledMultiSelectEnumSchema::deserialize(v).map(Self::TitledMultiSelectEnum)
            }
            Some("array") => {
                UntitledMultiSelectEnumSchema::deserialize(v).map(Self::UntitledMultiSelectEnum)
            }
            _ => {
                return Err(de::Error::custom(
                    "a form field needs type string, number, integer, boolean or array",
                ));
            }
        }
        .map_err(de::Error::custom)
    }
}

/// The `"string"` type marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum StringType {
    /// `"string"`.
    #[default]
    #[serde(rename = "string")]
    String,
}

/// The `"boolean"` type marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum BooleanType {
    /// `"boolean"`.
    #[default]
    #[serde(rename = "boolean")]
    Boolean,
}

/// The `"array"` type marker.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub enum ArrayType {
    /// `"array"`.
    #[default]
    #[serde(rename = "array")]
    Array,
}

/// The type of a [`NumberSchema`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum NumberType {
    /// `"number"`.
    #[default]
    Number,
    /// `"integer"`.
    Integer,
}

/// A string's format.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum StringFormat {
    /// `"email"`.
    Email,
    /// `"uri"`.
    Uri,
    /// `"date"`.
    Date,
    /// `"date-time"`.
    DateTime,
}

/// A free string field (schema `StringSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct StringSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_length: Option<u64>,
    /// Maximum length.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_length: Option<u64>,
    /// Format.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub format: Option<StringFormat>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// A number or integer field (schema `NumberSchema`).
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct NumberSchema {
    /// `"number"` or `"integer"`.
    #[serde(rename = "type")]
    pub kind: NumberType,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Minimum value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::number::opt_f64"
    )]
    pub minimum: Option<f64>,
    /// Maximum value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::number::opt_f64"
    )]
    pub maximum: Option<f64>,
    /// Default value.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        serialize_with = "super::number::opt_f64"
    )]
    pub default: Option<f64>,
}

/// A boolean field (schema `BooleanSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct BooleanSchema {
    /// Always `"boolean"`.
    #[serde(rename = "type")]
    pub kind: BooleanType,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Default value.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<bool>,
}

/// A single choice among strings (schema `UntitledSingleSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UntitledSingleSelectEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Default choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// A choice value with a display title.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct EnumOption {
    /// The value.
    #[serde(rename = "const")]
    pub value: String,
    /// The display title.
    pub title: String,
}

/// A single choice among titled strings (schema `TitledSingleSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledSingleSelectEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    pub one_of: Vec<EnumOption>,
    /// Default choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

/// The `items` of an [`UntitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UntitledEnumItems {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
}

/// Several choices among strings (schema `UntitledMultiSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct UntitledMultiSelectEnumSchema {
    /// Always `"array"`.
    #[serde(rename = "type")]
    pub kind: ArrayType,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: UntitledEnumItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// The `items` of a [`TitledMultiSelectEnumSchema`].
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledEnumItems {
    /// The choices.
    pub any_of: Vec<EnumOption>,
}

/// Several choices among titled strings (schema `TitledMultiSelectEnumSchema`).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct TitledMultiSelectEnumSchema {
    /// Always `"array"`.
    #[serde(rename = "type")]
    pub kind: ArrayType,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// Fewest choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub min_items: Option<u64>,
    /// Most choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub max_items: Option<u64>,
    /// The choices.
    pub items: TitledEnumItems,
    /// Default choices.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<Vec<String>>,
}

/// A single choice with `enumNames` titles (schema `LegacyTitledEnumSchema`;
/// deprecated, use [`TitledSingleSelectEnumSchema`]).
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LegacyTitledEnumSchema {
    /// Always `"string"`.
    #[serde(rename = "type")]
    pub kind: StringType,
    /// Display name.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub title: Option<String>,
    /// Help text.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    /// The choices.
    #[serde(rename = "enum")]
    pub values: Vec<String>,
    /// Display titles, parallel to `enum`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub enum_names: Option<Vec<String>>,
    /// Default choice.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub default: Option<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn field(v: Value) -> PrimitiveSchemaDefinition {
        let f: PrimitiveSchemaDefinition = serde_json::from_value(v.clone()).expect("parses");
        assert_eq!(serde_json::to_value(&f).expect("serialises"), v);
        f
    }

    #[test]
    fn form_fields_are_told_apart_by_their_members() {
        use PrimitiveSchemaDefinition as P;
        assert!(matches!(field(json!({"type": "string"})), P::String(_)));
        assert!(matches!(
            field(json!({"type": "integer", "minimum": 1})),
            P::Number(_)
        ));
        assert!(matches!(field(json!({"type": "boolean"})), P::Boolean(_)));
        assert!(matches!(
            field(json!({"type": "string", "enum": ["a"]})),
            P::UntitledSingleSelectEnum(_)
        ));
        assert!(matches!(
            field(json!({"type": "string", "enum": ["a"], "enumNames": ["A"]})),
            P::LegacyTitledEnum(_)
        ));
        assert!(matches!(
            field(json!({"type": "string", "oneOf": [{"const": "a", "title": "A"}]})),
            P::TitledSingleSelectEnum(_)
        ));
        assert!(matches!(
            field(json!({"type": "array", "items": {"type": "string", "enum": ["a"]}})),
            P::UntitledMultiSelectEnum(_)
        ));
        assert!(matches!(
            field(json!({"type": "array", "items": {"anyOf": [{"const": "a", "title": "A"}]}})),
            P::TitledMultiSelectEnum(_)
        ));
        assert!(serde_json::from_value::<P>(json!({"type": "object"})).is_err());
    }

    #[test]
    fn elicit_params_default_to_form_mode() {
        let p: ElicitRequestParams = serde_json::from_value(json!({
            "message": "m", "requestedSchema": {"type": "object", "properties": {}}
        }))
        .expect("parses");
        assert!(matches!(
            p,
            ElicitRequestParams::Form(ElicitRequestFormParams { mode: None, .. })
        ));
        let p: ElicitRequestParams =
            serde_json::from_value(json!({"mode": "url", "message": "m", "url": "https://x"}))
                .expect("parses");
        assert_eq!(p, ElicitRequestUrlParams::new("m", "https://x").into());
        assert!(serde_json::from_value::<ElicitRequestParams>(json!({"mode": "url"})).is_err());
    }

    #[test]
    fn elicit_action_is_lowercase() {
        let r: ElicitResult = serde_json::from_value(json!({"action": "cancel"})).expect("ok");
        assert_eq!(r.action, ElicitAction::Cancel);
        assert!(serde_json::from_value::<ElicitResult>(json!({"action": "Accept"})).is_err());
    }
}
