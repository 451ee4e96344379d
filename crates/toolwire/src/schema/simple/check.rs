//! Running a built-in schema over an instance. One walk serves both answers:
//! with [`FirstFailure`] it stops at the first failure and allocates nothing
//! (but for `uniqueItems` on an array of more than 32 items);
//! with the report sink it visits every failure, in jsonschema's order, and
//! words each one as jsonschema 0.61 does.
//!
//! The walk recurses once per subschema it enters, so its depth is bounded by
//! the schema's, which `CompiledSchema::compile` caps at 64, whatever the
//! instance; instances themselves come from a parser that stops at 128 levels.

use super::compare::{all_unique, cmp_numbers, equal, is_multiple_of};
use super::{ArrayShape, Check, Items, Members, Node, Rest, Schema, Types};
use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::fmt;
use std::ops::ControlFlow;

/// `Break` stops the walk.
pub(in crate::schema) type Flow = ControlFlow<()>;

/// Where failures go.
pub(in crate::schema) trait Sink {
    /// Whether every failure, in jsonschema's order, is wanted; if not, only
    /// whether there is one, and the walk may check in a cheaper order.
    const REPORT: bool;

    /// Records that the instance at `at` fails; `Break` ends the walk.
    fn fail(&mut self, at: &At<'_>, failure: Failure<'_>) -> Flow;
}

/// The yes/no sink: the first failure settles it.
pub(in crate::schema) struct FirstFailure;

impl Sink for FirstFailure {
    const REPORT: bool = false;

    fn fail(&mut self, _: &At<'_>, _: Failure<'_>) -> Flow {
        ControlFlow::Break(())
    }
}

/// An instance location: a JSON Pointer kept on the stack, rendered only for
/// a report. The root renders as nothing.
pub(in crate::schema) enum At<'a> {
    Root,
    Key(&'a At<'a>, &'a str),
    Index(&'a At<'a>, usize),
}

impl fmt::Display for At<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            At::Root => Ok(()),
            At::Key(parent, key) => {
                parent.fmt(f)?;
                f.write_str("/")?;
                // RFC 6901 escaping.
                for c in key.chars() {
                    match c {
                        '~' => f.write_str("~0")?,
                        '/' => f.write_str("~1")?,
                        c => fmt::Write::write_char(f, c)?,
                    }
                }
                Ok(())
            }
            At::Index(parent, i) => write!(f, "{parent}/{i}"),
        }
    }
}

/// Walks `node` over `v` (found at `at`), telling `sink` each failure.
pub(in crate::schema) fn walk<S: Sink>(node: &Node, v: &Value, at: &At<'_>, sink: &mut S) -> Flow {
    let schema = match node {
        Node::True => return ControlFlow::Continue(()),
        Node::False => return sink.fail(at, Failure::FalseSchema(v)),
        Node::Schema(schema) => schema,
    };
    if let Some(types) = schema.types
        && !types.admits(v)
    {
        sink.fail(at, Failure::Type(v, types))?;
    }
    if schema.only_type {
        return ControlFlow::Continue(());
    }
    walk_rest(schema, v, at, sink)
}

/// [`walk`] past `type`.
#[inline(never)]
fn walk_rest<S: Sink>(schema: &Schema, v: &Value, at: &At<'_>, sink: &mut S) -> Flow {
    if !schema.values.is_empty() {
        run_values(&schema.values, v, at, sink)?;
    }
    match v {
        Value::Object(object) => {
            if let Some(required) = &schema.required
                && (S::REPORT || !required.in_members)
            {
                for name in &required.names {
                    expect(object.contains_key(name), sink, at, || {
                        Failure::Required(name)
                    })?;
                }
            }
            if let Some(members) = &schema.members {
                run_members(members, object, at, sink)?;
            }
        }
        Value::Array(array) => {
            if let Items::Each(items) = &schema.items {
                for (i, item) in array.iter().enumerate() {
                    walk(items, item, &At::Index(at, i), sink)?;
                }
            }
        }
        _ => {}
    }
    if let Items::Shape(shape) = &schema.items {
        run_array(shape, v, at, sink)?;
    }
    ControlFlow::Continue(())
}

/// Fails `f` unless `ok`.
fn expect<'v, S: Sink>(
    ok: bool,
    sink: &mut S,
    at: &At<'_>,
    f: impl FnOnce() -> Failure<'v>,
) -> Flow {
    if ok {
        ControlFlow::Continue(())
    } else {
        sink.fail(at, f())
    }
}

/// A string's length in code points, as far as comparing with `min..=max` needs.
fn length_within(s: &str, min: u64, max: u64) -> bool {
    let bytes = s.len() as u64;
    // A code point is one to four bytes.
    let fewest = bytes.div_ceil(4);
    if bytes < min || fewest > max {
        return false;
    }
    if min <= fewest && bytes <= max {
        return true;
    }
    (min..=max).contains(&(s.chars().count() as u64))
}

fn bound<'v, S: Sink>(
    v: &'v Value,
    limit: &'v Number,
    ok: fn(Ordering) -> bool,
    failure: fn(&'v Value, &'v Number) -> Failure<'v>,
    at: &At<'_>,
    sink: &mut S,
) -> Flow {
    match v {
        Value::Number(n) => expect(ok(cmp_numbers(n, limit)), sink, at, || failure(v, limit)),
        _ => ControlFlow::Continue(()),
    }
}

/// The checks on the instance's own value, out of line so that the walk over
/// objects and arrays stays small.
#[inline(never)]
fn run_values<S: Sink>(checks: &[Check], v: &Value, at: &At<'_>, sink: &mut S) -> Flow {
    for check in checks {
        run_value(check, v, at, sink)?;
    }
    ControlFlow::Continue(())
}

fn run_value<S: Sink>(check: &Check, v: &Value, at: &At<'_>, sink: &mut S) -> Flow {
    match check {
        Check::Const(expected) => expect(equal(v, expected), sink, at, || Failure::Const(expected)),
        Check::Enum(options) => expect(options.iter().any(|o| equal(v, o)), sink, at, || {
            Failure::Enum(v, options)
        }),
        Check::Minimum(limit) => bound(v, limit, Ordering::is_ge, Failure::Minimum, at, sink),
        Check::Maximum(limit) => bound(v, limit, Ordering::is_le, Failure::Maximum, at, sink),
        Check::ExclusiveMinimum(limit) => bound(
            v,
            limit,
            Ordering::is_gt,
            Failure::ExclusiveMinimum,
            at,
            sink,
        ),
        Check::ExclusiveMaximum(limit) => bound(
            v,
            limit,
            Ordering::is_lt,
            Failure::ExclusiveMaximum,
            at,
            sink,
        ),
        Check::MultipleOf(m) => match v {
            Value::Number(n) => expect(is_multiple_of(n, *m), sink, at, || {
                Failure::MultipleOf(v, *m)
            }),
            _ => ControlFlow::Continue(()),
        },
        Check::MinLength(min) => match v {
            Value::String(s) => expect(length_within(s, *min, u64::MAX), sink, at, || {
                Failure::MinLength(v, *min)
            }),
            _ => ControlFlow::Continue(()),
        },
        Check::MaxLength(max) => match v {
            Value::String(s) => expect(length_within(s, 0, *max), sink, at, || {
                Failure::MaxLength(v, *max)
            }),
            _ => ControlFlow::Continue(()),
        },
        Check::MinItems(min) => match v {
            Value::Array(a) => expect(a.len() as u64 >= *min, sink, at, || {
                Failure::MinItems(v, *min)
            }),
            _ => ControlFlow::Continue(()),
        },
        Check::MaxItems(max) => match v {
            Value::Array(a) => expect(a.len() as u64 <= *max, sink, at, || {
                Failure::MaxItems(v, *max)
            }),
            _ => ControlFlow::Continue(()),
        },
        Check::MinProperties(min) => match v {
            Value::Object(o) => expect(o.len() as u64 >= *min, sink, at, || {
                Failure::MinProperties(v, *min)
            }),
            _ => ControlFlow::Continue(()),
        },
        Check::MaxProperties(max) => match v {
            Value::Object(o) => expect(o.len() as u64 <= *max, sink, at, || {
                Failure::MaxProperties(v, *max)
            }),
            _ => ControlFlow::Continue(()),
        },
        Check::UniqueItems => match v {
            Value::Array(a) => expect(all_unique(a), sink, at, || Failure::UniqueItems(v)),
            _ => ControlFlow::Continue(()),
        },
    }
}

#[inline(never)]
fn run_members<S: Sink>(
    members: &Members,
    object: &Map<String, Value>,
    at: &At<'_>,
    sink: &mut S,
) -> Flow {
    if matches!(members.rest, Rest::Deny) && !members.has_properties {
        // Without `properties`, jsonschema reports only the first member, as
        // the `false` schema it fails, at the object's own location.
        return match object.values().next() {
            Some(first) => sink.fail(at, Failure::FalseSchema(first)),
            None => ControlFlow::Continue(()),
        };
    }
    let mut unexpected = 0;
    let mut seen = 0u64;
    let mut found_required = false;
    let mut hint = 0;
    let fused_index = members.fused_required.as_ref().and_then(|(_, i)| *i);
    for (name, value) in object {
        let here = At::Key(at, name);
        if let Some(i) = members.find_from(name, hint) {
            hint = i + 1;
            walk(members.node(i), value, &here, sink)?;
            if i < 64 {
                seen |= 1 << i;
            }
            found_required |= fused_index == Some(i);
        } else {
            match &members.rest {
                Rest::Allow => {}
                Rest::Deny => unexpected += 1,
                Rest::Schema(node) => walk(node, value, &here, sink)?,
            }
        }
    }
    if !S::REPORT && seen & members.required_bits != members.required_bits {
        // The sibling `required` left these to this walk (a yes/no check
        // only; a report checks them there, in jsonschema's order).
        let missing = (members.required_bits & !seen).trailing_zeros() as usize;
        sink.fail(at, Failure::Required(members.name(missing)))?;
    }
    if unexpected > 0 {
        sink.fail(at, Failure::Additional(object, members, unexpected))?;
    }
    if let Some((name, _)) = &members.fused_required
        && !found_required
    {
        sink.fail(at, Failure::Required(name))?;
    }
    ControlFlow::Continue(())
}

#[inline(never)]
fn run_array<S: Sink>(shape: &ArrayShape, v: &Value, at: &At<'_>, sink: &mut S) -> Flow {
    let Value::Array(items) = v else {
        return sink.fail(at, Failure::Type(v, Types::JUST_ARRAY));
    };
    let len = items.len() as u64;
    if let Some(min) = shape.min {
        expect(len >= min, sink, at, || Failure::MinItems(v, min))?;
    }
    if let Some(max) = shape.max {
        expect(len <= max, sink, at, || Failure::MaxItems(v, max))?;
    }
    for (i, item) in items.iter().enumerate() {
        walk(&shape.items, item, &At::Index(at, i), sink)?;
    }
    ControlFlow::Continue(())
}

/// Why an instance fails, displayed in jsonschema 0.61's words. Instances and
/// schema values print as compact JSON.
pub(in crate::schema) enum Failure<'a> {
    FalseSchema(&'a Value),
    Type(&'a Value, Types),
    Const(&'a Value),
    Enum(&'a Value, &'a [Value]),
    Minimum(&'a Value, &'a Number),
    Maximum(&'a Value, &'a Number),
    ExclusiveMinimum(&'a Value, &'a Number),
    ExclusiveMaximum(&'a Value, &'a Number),
    MultipleOf(&'a Value, u64),
    MinLength(&'a Value, u64),
    MaxLength(&'a Value, u64),
    MinItems(&'a Value, u64),
    MaxItems(&'a Value, u64),
    MinProperties(&'a Value, u64),
    MaxProperties(&'a Value, u64),
    Required(&'a str),
    UniqueItems(&'a Value),
    /// The object, its schema, and how many members it has undeclared.
    Additional(&'a Map<String, Value>, &'a Members, usize),
}

fn plural(n: u64, one: &'static str, many: &'static str) -> &'static str {
    if n == 1 { one } else { many }
}

/// At most this many `enum` options are spelled out.
const SHOWN_OPTIONS: usize = 3;

impl fmt::Display for Failure<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Failure::FalseSchema(v) => write!(f, "False schema does not allow {v}"),
            Failure::Type(v, types) => {
                if types.is_single() {
                    for name in types.names() {
                        write!(f, "{v} is not of type \"{name}\"")?;
                    }
                    Ok(())
                } else {
                    write!(f, "{v} is not of types ")?;
                    for (i, name) in types.names().enumerate() {
                        let sep = if i == 0 { "" } else { ", " };
                        write!(f, "{sep}\"{name}\"")?;
                    }
                    Ok(())
                }
            }
            Failure::Const(expected) => write!(f, "{expected} was expected"),
            Failure::Enum(v, options) => {
                write!(f, "{v} is not one of ")?;
                if options.len() <= SHOWN_OPTIONS {
                    for (i, option) in options.iter().enumerate() {
                        let sep = match i {
                            0 => "",
                            i if i + 1 == options.len() => " or ",
                            _ => ", ",
                        };
                        write!(f, "{sep}{option}")?;
                    }
                    Ok(())
                } else {
                    let shown = SHOWN_OPTIONS - 1;
                    for (i, option) in options.iter().take(shown).enumerate() {
                        let sep = if i == 0 { "" } else { ", " };
                        write!(f, "{sep}{option}")?;
                    }
                    write!(f, " or {} other candidates", options.len() - shown)
                }
            }
            Failure::Minimum(v, limit) => write!(f, "{v} is less than the minimum of {limit}"),
            Failure::Maximum(v, limit) => write!(f, "{v} is greater than the maximum of {limit}"),
            Failure::ExclusiveMinimum(v, limit) => {
                write!(f, "{v} is less than or equal to the minimum of {limit}")
            }
            Failure::ExclusiveMaximum(v, limit) => {
                write!(f, "{v} is greater than or equal to the maximum of {limit}")
            }
            Failure::MultipleOf(v, m) => {
                // jsonschema keeps the divisor as an `f64`; a whole one up to
                // 2^53 converts exactly and prints without a fraction.
                #[allow(clippy::cast_precision_loss)]
                let m = m as f64;
                write!(f, "{v} is not a multiple of {m}")
            }
            Failure::MinLength(v, n) => {
                write!(f, "{v} is shorter than {n} character{}", plural(n, "", "s"))
            }
            Failure::MaxLength(v, n) => {
                write!(f, "{v} is longer than {n} character{}", plural(n, "", "s"))
            }
            Failure::MinItems(v, n) => {
                write!(f, "{v} has less than {n} item{}", plural(n, "", "s"))
            }
            Failure::MaxItems(v, n) => {
                write!(f, "{v} has more than {n} item{}", plural(n, "", "s"))
            }
            Failure::MinProperties(v, n) => {
                write!(f, "{v} has less than {n} propert{}", plural(n, "y", "ies"))
            }
            Failure::MaxProperties(v, n) => {
                write!(f, "{v} has more than {n} propert{}", plural(n, "y", "ies"))
            }
            Failure::Required(name) => {
                write!(f, "{} is a required property", Value::from(name))
            }
            Failure::UniqueItems(v) => write!(f, "{v} has non-unique elements"),
            Failure::Additional(object, members, count) => {
                f.write_str("Additional properties are not allowed (")?;
                let undeclared = object.keys().filter(|k| !members.is_declared(k));
                for (i, name) in undeclared.enumerate() {
                    let sep = if i == 0 { "" } else { ", " };
                    write!(f, "{sep}'{name}'")?;
                }
                f.write_str(if count == 1 {
                    " was unexpected)"
                } else {
                    " were unexpected)"
                })
            }
        }
    }
}
