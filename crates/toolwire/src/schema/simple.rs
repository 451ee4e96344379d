//! The built-in validator: an exact stand-in for `jsonschema` on the small
//! keyword subset that schemars emits for plain structs and unit enums, so a
//! server whose schemas all fit never touches jsonschema's code.
//!
//! [`Simple::compile`] accepts a schema only when every keyword in it, at every
//! level, is in the subset and well formed; otherwise it returns `None` and the
//! caller falls back to jsonschema, which also reports a malformed keyword.
//! For an accepted schema the verdict and every error (message, instance path,
//! order) are what jsonschema 0.61, configured as in `schema.rs`, reports:
//! checks run in jsonschema's keyword-priority order, including the places
//! where it fuses keywords and so moves their errors (see [`Schema`]).
//!
//! The subset: `type`, `const`, `enum`, `minimum`, `maximum`,
//! `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf` (whole, up to 2^53),
//! `minLength`, `maxLength`, `minItems`, `maxItems`, `minProperties`,
//! `maxProperties`, `required`, `uniqueItems`, `properties`,
//! `additionalProperties`, `items` (one schema), boolean subschemas; the
//! annotations `title`, `description`, `default`, `examples`, `$comment`,
//! `deprecated`, `readOnly`, `writeOnly`, `$schema` at the root, and `format`
//! where it is an annotation (2020-12; draft-07 asserts formats, so there it
//! declines).

mod check;
mod compare;

use serde_json::{Map, Number, Value};
use std::sync::OnceLock;

pub(super) use check::{At, Failure, FirstFailure, Flow, Sink, walk};

/// The dialect a schema is read in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Dialect {
    Draft202012,
    Draft7,
}

/// A schema compiled by the built-in validator.
#[derive(Debug)]
pub(super) struct Simple {
    root: Node,
}

impl Simple {
    /// The built-in form of `schema`, or `None` if anything in it is outside
    /// the subset or malformed.
    pub(super) fn compile(schema: &Value, dialect: Dialect) -> Option<Self> {
        if !plain_serde_json() {
            return None;
        }
        let Value::Object(map) = schema else {
            return None;
        };
        Some(Self {
            root: compile_object(map, dialect, true)?,
        })
    }

    pub(super) fn root(&self) -> &Node {
        &self.root
    }
}

/// Whether serde_json is built as the built-in validator assumes: maps sorted
/// by key (no `preserve_order`), so members are visited in the order jsonschema
/// visits them, and numbers held as `u64`, `i64` or finite `f64` (no
/// `arbitrary_precision`). Another crate in the build can turn either feature
/// on; then every schema goes to jsonschema.
pub(super) fn plain_serde_json() -> bool {
    static PLAIN: OnceLock<bool> = OnceLock::new();
    *PLAIN.get_or_init(|| {
        let mut m = Map::new();
        m.insert("b".to_owned(), Value::Null);
        m.insert("a".to_owned(), Value::Null);
        let sorted = m.keys().next().is_some_and(|k| k == "a");
        let f64_only = serde_json::from_str::<Value>("1e400").is_err();
        sorted && f64_only
    })
}

/// A (sub)schema.
#[derive(Debug)]
pub(super) enum Node {
    /// `true`, or an object schema without assertions.
    True,
    /// `false`: every instance fails.
    False,
    /// The assertions of an object schema.
    Schema(Box<Schema>),
}

/// The assertions of one object schema, laid out in jsonschema's keyword
/// priority: `type`; `const`, `enum`, `minimum`, `maximum`,
/// `exclusiveMinimum`, `exclusiveMaximum`, `multipleOf`, `minLength`,
/// `maxLength`, `minItems`, `maxItems`, `minProperties`, `maxProperties`;
/// `required`; `uniqueItems`; `properties`/`additionalProperties`; `items`.
/// (`uniqueItems` only looks at arrays and `required` only at objects, so
/// running `uniqueItems` with the value checks, before `required`, keeps the
/// order of every report.)
///
/// Two fusions in jsonschema move errors, and are copied: `type: "array"`
/// with a schema `items` (and no `uniqueItems`) checks the type, `minItems`,
/// `maxItems` and the items together in `items`' place ([`ArrayShape`]);
/// `additionalProperties: false` with `properties` and a one-name `required`
/// reports that name after the members ([`Members::fused_required`]).
#[derive(Debug)]
pub(super) struct Schema {
    /// Nothing but `type` (so the walk can stop after it).
    pub(super) only_type: bool,
    pub(super) types: Option<Types>,
    pub(super) values: Box<[Check]>,
    pub(super) required: Option<Required>,
    pub(super) members: Option<Members>,
    pub(super) items: Items,
}

/// What a schema says about array items.
#[derive(Debug)]
pub(super) enum Items {
    None,
    Each(Node),
    Shape(Box<ArrayShape>),
}

/// A set of JSON types, in jsonschema's bit order (which is the order its
/// messages list them in).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Types {
    bits: u8,
    /// Written as one name (or a one-name array): the message says `type`, not `types`.
    single: bool,
}

impl Types {
    const NAMES: [&'static str; 7] = [
        "null", "boolean", "integer", "number", "string", "array", "object",
    ];
    const NULL: u8 = 1;
    const BOOLEAN: u8 = 1 << 1;
    const INTEGER: u8 = 1 << 2;
    const NUMBER: u8 = 1 << 3;
    const STRING: u8 = 1 << 4;
    const ARRAY: u8 = 1 << 5;
    const OBJECT: u8 = 1 << 6;

    /// `type: "array"`, as the fused array check reports it.
    pub(super) const JUST_ARRAY: Types = Types {
        bits: Self::ARRAY,
        single: true,
    };

    fn bit(name: &str) -> Option<u8> {
        let i = Self::NAMES.iter().position(|n| *n == name)?;
        Some(1 << i)
    }

    /// `type` as written: a name, or a non-empty array of distinct names.
    fn parse(v: &Value) -> Option<Self> {
        match v {
            Value::String(name) => Some(Self {
                bits: Self::bit(name)?,
                single: true,
            }),
            Value::Array(names) if !names.is_empty() => {
                let mut bits = 0;
                for name in names {
                    let bit = Self::bit(name.as_str()?)?;
                    if bits & bit != 0 {
                        // The meta-schema wants unique names.
                        return None;
                    }
                    bits |= bit;
                }
                Some(Self {
                    bits,
                    single: names.len() == 1,
                })
            }
            _ => None,
        }
    }

    pub(super) fn admits(self, v: &Value) -> bool {
        let bit = match v {
            Value::Null => Self::NULL,
            Value::Bool(_) => Self::BOOLEAN,
            Value::Number(n) => {
                return self.bits & Self::NUMBER != 0
                    || (self.bits & Self::INTEGER != 0 && compare::is_integer(n));
            }
            Value::String(_) => Self::STRING,
            Value::Array(_) => Self::ARRAY,
            Value::Object(_) => Self::OBJECT,
        };
        self.bits & bit != 0
    }

    pub(super) fn is_single(self) -> bool {
        self.single
    }

    pub(super) fn names(self) -> impl Iterator<Item = &'static str> {
        Self::NAMES
            .iter()
            .enumerate()
            .filter(move |(i, _)| self.bits & (1 << i) != 0)
            .map(|(_, name)| *name)
    }
}

/// One assertion on the instance's own value, in [`Schema::values`].
#[derive(Debug)]
pub(super) enum Check {
    Const(Value),
    Enum(Box<[Value]>),
    Minimum(Number),
    Maximum(Number),
    ExclusiveMinimum(Number),
    ExclusiveMaximum(Number),
    MultipleOf(u64),
    MinLength(u64),
    MaxLength(u64),
    MinItems(u64),
    MaxItems(u64),
    MinProperties(u64),
    MaxProperties(u64),
    UniqueItems,
}

/// `required`.
#[derive(Debug)]
pub(super) struct Required {
    pub(super) names: Box<[String]>,
    /// The sibling [`Members`] covers these names in a yes/no check
    /// (see [`Members::required_bits`]); a report still checks them here, in
    /// jsonschema's order.
    pub(super) in_members: bool,
}

/// `properties` and `additionalProperties` of one schema.
#[derive(Debug)]
pub(super) struct Members {
    /// The `properties` names, sorted, and their schemas.
    names: Box<[Name]>,
    nodes: Box<[Node]>,
    /// Whether `properties` is present (even empty): with
    /// `additionalProperties: false`, jsonschema words the error differently
    /// without it.
    pub(super) has_properties: bool,
    pub(super) rest: Rest,
    /// The one `required` name, checked after the members when
    /// `additionalProperties` is `false`, and its index in `names`: jsonschema
    /// counts it present only as a declared property.
    pub(super) fused_required: Option<(String, Option<usize>)>,
    /// The indexes (as bits) of the sibling `required` names, when they are
    /// all declared among the first 64: a yes/no check then sees them while
    /// walking the members instead of looking each one up.
    pub(super) required_bits: u64,
}

/// A declared property name and its [`head`], so most lookups settle on one
/// integer compare.
#[derive(Debug)]
struct Name {
    text: Box<str>,
    head: u64,
}

impl Name {
    /// Whether this is `name`, whose [`head`] is `head`.
    fn is(&self, name: &str, head: u64) -> bool {
        self.head == head
            && self.text.len() == name.len()
            && self.text.as_bytes().get(8..) == name.as_bytes().get(8..)
    }
}

/// A digest of `s` that, with its length, is the whole of `s` up to eight
/// bytes: the bytes themselves, read as (possibly overlapping) words.
fn head(s: &str) -> u64 {
    let b = s.as_bytes();
    let n = b.len();
    if let Some(first) = b.first_chunk::<8>() {
        return u64::from_le_bytes(*first);
    }
    match (b.first_chunk::<4>(), b.last_chunk::<4>()) {
        (Some(lo), Some(hi)) => {
            u64::from(u32::from_le_bytes(*lo)) | (u64::from(u32::from_le_bytes(*hi)) << 32)
        }
        _ => match (b.first(), b.get(n / 2), b.last()) {
            (Some(a), Some(m), Some(z)) => {
                u64::from(*a) | (u64::from(*m) << 8) | (u64::from(*z) << 16)
            }
            _ => 0,
        },
    }
}

/// Up to this many declared names are scanned; more are binary-searched.
const SCANNED_NAMES: usize = 16;

impl Members {
    /// The index of the declared property `name`.
    pub(super) fn find(&self, name: &str) -> Option<usize> {
        self.search(name)
    }

    /// The index of the declared property `name`, trying `hint` first: members
    /// come in name order, as declared names are kept, so for an instance with
    /// only declared members the hint (one past the last found) is right.
    #[inline]
    pub(super) fn find_from(&self, name: &str, hint: usize) -> Option<usize> {
        if let Some(n) = self.names.get(hint)
            && n.is(name, head(name))
        {
            return Some(hint);
        }
        self.search(name)
    }

    #[inline(never)]
    fn search(&self, name: &str) -> Option<usize> {
        if self.names.len() > SCANNED_NAMES {
            return self
                .names
                .binary_search_by(|n| n.text.as_ref().cmp(name))
                .ok();
        }
        let head = head(name);
        self.names.iter().position(|n| n.is(name, head))
    }

    pub(super) fn node(&self, index: usize) -> &Node {
        &self.nodes[index]
    }

    pub(super) fn name(&self, index: usize) -> &str {
        &self.names[index].text
    }

    pub(super) fn is_declared(&self, name: &str) -> bool {
        self.find(name).is_some()
    }
}

/// What `additionalProperties` says about undeclared members.
#[derive(Debug)]
pub(super) enum Rest {
    /// Absent or `true`.
    Allow,
    /// `false`.
    Deny,
    /// A schema for each undeclared member.
    Schema(Node),
}

/// `type: "array"`, `minItems`, `maxItems` and a schema `items`, checked as one.
#[derive(Debug)]
pub(super) struct ArrayShape {
    pub(super) min: Option<u64>,
    pub(super) max: Option<u64>,
    pub(super) items: Node,
}

fn compile_subschema(v: &Value, dialect: Dialect) -> Option<Node> {
    match v {
        Value::Bool(true) => Some(Node::True),
        Value::Bool(false) => Some(Node::False),
        Value::Object(map) => compile_object(map, dialect, false),
        _ => None,
    }
}

/// A non-negative integer bound. Integral floats (`2.0`) are valid too, but
/// decline: jsonschema prints them differently.
fn size(v: &Value) -> Option<u64> {
    v.as_u64()
}

fn number(v: &Value) -> Option<Number> {
    match v {
        Value::Number(n) => Some(n.clone()),
        _ => None,
    }
}

/// The keywords of one object schema, read but not yet ordered.
#[derive(Default)]
struct Keywords<'a> {
    types: Option<Types>,
    type_is_array_name: bool,
    constant: Option<&'a Value>,
    options: Option<&'a [Value]>,
    minimum: Option<Number>,
    maximum: Option<Number>,
    exclusive_minimum: Option<Number>,
    exclusive_maximum: Option<Number>,
    multiple_of: Option<u64>,
    min_length: Option<u64>,
    max_length: Option<u64>,
    min_items: Option<u64>,
    max_items: Option<u64>,
    min_properties: Option<u64>,
    max_properties: Option<u64>,
    required: Option<Vec<String>>,
    unique_items: Option<bool>,
    properties: Option<Vec<(String, Node)>>,
    additional: Option<Rest>,
    items: Option<Node>,
    /// `items` is an object or `false`, the forms jsonschema fuses with `type`.
    items_fusable: bool,
}

impl<'a> Keywords<'a> {
    /// Reads one keyword; `None` declines the whole schema.
    fn read(&mut self, key: &str, v: &'a Value, dialect: Dialect, root: bool) -> Option<()> {
        match key {
            // `dialect()` in schema.rs has already vetted the root's `$schema`.
            "$schema" if root => {}
            "title" | "description" | "$comment" => {
                v.as_str()?;
            }
            "default" => {}
            // MCP's header-mirroring annotation: checked when the tool is
            // registered, ignored by jsonschema like any unknown keyword.
            // Spec: basic/transports/streamable-http.mdx#custom-headers-from-tool-parameters
            "x-mcp-header" => {}
            "examples" => {
                v.as_array()?;
            }
            "deprecated" | "readOnly" | "writeOnly" => {
                v.as_bool()?;
            }
            // jsonschema asserts formats by default in draft-07 only.
            "format" if dialect == Dialect::Draft202012 => {
                v.as_str()?;
            }
            "type" => {
                self.types = Some(Types::parse(v)?);
                self.type_is_array_name = v.as_str() == Some("array");
            }
            "const" => self.constant = Some(v),
            "enum" => {
                let options = v.as_array()?;
                if options.is_empty() {
                    return None;
                }
                self.options = Some(options);
            }
            "minimum" => self.minimum = Some(number(v)?),
            "maximum" => self.maximum = Some(number(v)?),
            "exclusiveMinimum" => self.exclusive_minimum = Some(number(v)?),
            "exclusiveMaximum" => self.exclusive_maximum = Some(number(v)?),
            "multipleOf" => {
                // Whole divisors up to 2^53 are judged exactly alike; others decline.
                let m = v.as_u64().filter(|m| (1..=1 << 53).contains(m))?;
                self.multiple_of = Some(m);
            }
            "minLength" => self.min_length = Some(size(v)?),
            "maxLength" => self.max_length = Some(size(v)?),
            "minItems" => self.min_items = Some(size(v)?),
            "maxItems" => self.max_items = Some(size(v)?),
            "minProperties" => self.min_properties = Some(size(v)?),
            "maxProperties" => self.max_properties = Some(size(v)?),
            "required" => {
                let mut names: Vec<String> = Vec::new();
                for name in v.as_array()? {
                    let name = name.as_str()?;
                    if names.iter().any(|n| n == name) {
                        // The meta-schema wants unique names.
                        return None;
                    }
                    names.push(name.to_owned());
                }
                self.required = Some(names);
            }
            "uniqueItems" => self.unique_items = Some(v.as_bool()?),
            "properties" => {
                let mut declared = Vec::new();
                // Map iteration is sorted by name, which `Members::search` relies on.
                for (name, sub) in v.as_object()? {
                    declared.push((name.clone(), compile_subschema(sub, dialect)?));
                }
                self.properties = Some(declared);
            }
            "additionalProperties" => {
                self.additional = Some(match v {
                    Value::Bool(true) => Rest::Allow,
                    Value::Bool(false) => Rest::Deny,
                    _ => Rest::Schema(compile_subschema(v, dialect)?),
                });
            }
            // An array `items` is tuple validation in draft-07 and invalid in
            // 2020-12: either way, not the built-in's business.
            "items" => {
                self.items = Some(compile_subschema(v, dialect)?);
                self.items_fusable = matches!(v, Value::Object(_) | Value::Bool(false));
            }
            _ => return None,
        }
        Some(())
    }

    /// The checks in jsonschema's order, with its fusions.
    fn into_node(self) -> Node {
        let fuse_array =
            self.type_is_array_name && self.items_fusable && self.unique_items.is_none();
        let deny_with_properties =
            matches!(self.additional, Some(Rest::Deny)) && self.properties.is_some();
        let mut required = self.required;
        let fused_required = match &mut required {
            Some(names) if deny_with_properties && names.len() == 1 => names.pop(),
            _ => None,
        };
        let fused_required_is_none = fused_required.is_none();
        let types = if fuse_array { None } else { self.types };
        let mut values = Vec::new();
        if let Some(v) = self.constant {
            values.push(Check::Const(v.clone()));
        }
        if let Some(options) = self.options {
            values.push(Check::Enum(options.into()));
        }
        values.extend(self.minimum.map(Check::Minimum));
        values.extend(self.maximum.map(Check::Maximum));
        values.extend(self.exclusive_minimum.map(Check::ExclusiveMinimum));
        values.extend(self.exclusive_maximum.map(Check::ExclusiveMaximum));
        values.extend(self.multiple_of.map(Check::MultipleOf));
        values.extend(self.min_length.map(Check::MinLength));
        values.extend(self.max_length.map(Check::MaxLength));
        if !fuse_array {
            values.extend(self.min_items.map(Check::MinItems));
            values.extend(self.max_items.map(Check::MaxItems));
        }
        values.extend(self.min_properties.map(Check::MinProperties));
        values.extend(self.max_properties.map(Check::MaxProperties));
        if self.unique_items == Some(true) {
            values.push(Check::UniqueItems);
        }
        let has_properties = self.properties.is_some();
        let (names, nodes): (Vec<Name>, Vec<Node>) = self
            .properties
            .unwrap_or_default()
            .into_iter()
            .map(|(text, node)| {
                let head = head(&text);
                let name = Name {
                    text: text.into(),
                    head,
                };
                (name, node)
            })
            .unzip();
        let rest = self.additional.unwrap_or(Rest::Allow);
        let mut members = (!names.is_empty() || !matches!(rest, Rest::Allow)).then(|| Members {
            names: names.into(),
            nodes: nodes.into(),
            has_properties,
            rest,
            fused_required: None,
            required_bits: 0,
        });
        if let Some(m) = &mut members {
            m.fused_required = fused_required.map(|name| {
                let index = m.find(&name);
                (name, index)
            });
        }
        let required = match required {
            Some(names) if fused_required_is_none && !names.is_empty() => {
                let bits = members.as_mut().and_then(|m| {
                    let bits = names.iter().try_fold(0u64, |bits, name| {
                        let i = m.find(name).filter(|i| *i < 64)?;
                        Some(bits | 1 << i)
                    })?;
                    m.required_bits = bits;
                    Some(bits)
                });
                Some(Required {
                    names: names.into(),
                    in_members: bits.is_some(),
                })
            }
            _ => None,
        };
        let items = match self.items {
            Some(items) if fuse_array => Items::Shape(Box::new(ArrayShape {
                min: self.min_items,
                max: self.max_items,
                items,
            })),
            Some(Node::True) | None => Items::None,
            Some(items) => Items::Each(items),
        };
        let only_type = values.is_empty()
            && required.is_none()
            && members.is_none()
            && matches!(items, Items::None);
        if only_type && types.is_none() {
            return Node::True;
        }
        Node::Schema(Box::new(Schema {
            only_type,
            types,
            values: values.into(),
            required,
            members,
            items,
        }))
    }
}

fn compile_object(map: &Map<String, Value>, dialect: Dialect, root: bool) -> Option<Node> {
    let mut keywords = Keywords::default();
    for (key, v) in map {
        keywords.read(key, v, dialect, root)?;
    }
    Some(keywords.into_node())
}
