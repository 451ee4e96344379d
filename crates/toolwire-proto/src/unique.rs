//! Refusing JSON objects that repeat a member name, while they are
//! deserialised: [`UniqueKeys`] wraps any serde `Deserializer` and fails on
//! the second occurrence of a name within one object, at any depth, whatever
//! type is being read.
//!
//! JSON parsers disagree about `{"region":"us","region":"eu"}`: serde_json
//! keeps the last value, others the first. A gateway that routes on the
//! first value and a server that acts on the last would disagree about the
//! request, so a request's `params` must not repeat a name (RFC 8259 §4:
//! names SHOULD be unique; I-JSON, RFC 7493 §2.3: MUST).
//!
//! The check rides on the parse that happens anyway: each object remembers
//! the names it has seen (borrowed from the input, so nothing is allocated
//! for unescaped names in objects of up to [`INLINE`] members), and a
//! member that a type would skip unread is walked, so names inside it are
//! checked too.

use serde::de::{self, DeserializeSeed, Deserializer, EnumAccess, MapAccess, SeqAccess, Visitor};
use serde_json::map::Entry;
use serde_json::{Map, Number, Value};
use std::borrow::Cow;
use std::fmt;
use std::marker::PhantomData;

/// Names an object remembers without allocating.
const INLINE: usize = 8;

/// Deserialises `T` from JSON text, refusing any object (at any depth) that
/// repeats a member name, and trailing characters, like
/// `serde_json::from_str`.
///
/// # Errors
///
/// What `serde_json::from_str` refuses, and a repeated name:
/// `duplicate member "region" at line 1 column 24`.
pub fn from_str_unique<'a, T: de::Deserialize<'a>>(text: &'a str) -> serde_json::Result<T> {
    let mut de = serde_json::Deserializer::from_str(text);
    let value = T::deserialize(UniqueKeys::new(&mut de))?;
    de.end()?;
    Ok(value)
}

/// A JSON value read like `serde_json::Value`, refusing an object (at any
/// depth) that repeats a member name, for the cost of reading a `Value`:
/// each member goes into the map as `Value` puts it there, and the map
/// reports a name it already holds. For `Value` members of types that are
/// not read through [`UniqueKeys`] (a repeat inside any other type is the
/// type's own business).
///
/// The error names the member: `duplicate member "region"`.
#[derive(Debug, Clone, PartialEq)]
pub struct UniqueValue(pub Value);

impl<'de> de::Deserialize<'de> for UniqueValue {
    #[inline]
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        d.deserialize_any(ValueVisitor).map(UniqueValue)
    }
}

/// Builds a [`UniqueValue`].
struct ValueVisitor;

impl<'de> Visitor<'de> for ValueVisitor {
    type Value = Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("any valid JSON value")
    }

    #[inline]
    fn visit_bool<E: de::Error>(self, v: bool) -> Result<Value, E> {
        Ok(Value::Bool(v))
    }

    #[inline]
    fn visit_i64<E: de::Error>(self, v: i64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    #[inline]
    fn visit_u64<E: de::Error>(self, v: u64) -> Result<Value, E> {
        Ok(Value::Number(v.into()))
    }

    #[inline]
    fn visit_f64<E: de::Error>(self, v: f64) -> Result<Value, E> {
        Ok(Number::from_f64(v).map_or(Value::Null, Value::Number))
    }

    #[inline]
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Value, E> {
        Ok(Value::String(v.to_owned()))
    }

    #[inline]
    fn visit_string<E: de::Error>(self, v: String) -> Result<Value, E> {
        Ok(Value::String(v))
    }

    #[inline]
    fn visit_none<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    #[inline]
    fn visit_unit<E: de::Error>(self) -> Result<Value, E> {
        Ok(Value::Null)
    }

    #[inline]
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<Value, D::Error> {
        d.deserialize_any(self)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let mut items = Vec::new();
        while let Some(UniqueValue(item)) = seq.next_element()? {
            items.push(item);
        }
        Ok(Value::Array(items))
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut members = Map::new();
        while let Some(name) = map.next_key::<String>()? {
            let UniqueValue(value) = map.next_value()?;
            match members.entry(name) {
                Entry::Vacant(slot) => {
                    slot.insert(value);
                }
                Entry::Occupied(held) => return Err(repeated(held.key())),
            }
        }
        Ok(Value::Object(members))
    }
}

/// The error for a member name seen twice in one object.
pub(crate) fn repeated<E: de::Error>(name: &str) -> E {
    E::custom(format_args!("duplicate member {name:?}"))
}

/// Reads a `T` through [`UniqueKeys`]: for a member of a hand-written
/// visitor whose type does not refuse repeated names itself.
pub(crate) struct Checked<T>(PhantomData<T>);

impl<T> Checked<T> {
    pub(crate) fn new() -> Self {
        Self(PhantomData)
    }
}

impl<'de, T: de::Deserialize<'de>> DeserializeSeed<'de> for Checked<T> {
    type Value = T;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<T, D::Error> {
        T::deserialize(UniqueKeys::new(d))
    }
}

/// A `Deserializer` that refuses an object repeating a member name, at any
/// depth; otherwise it reads exactly what the wrapped one reads.
///
/// Use it inside a `deserialize_with` to check one member, or through
/// [`from_str_unique`] for a whole document. A member that the target type
/// ignores is walked rather than skipped, so that the names inside it are
/// checked as well. Names are compared after unescaping: `"a"` and
/// `"\u0061"` are the same name.
#[derive(Debug)]
pub struct UniqueKeys<D>(D);

impl<D> UniqueKeys<D> {
    /// Wraps `inner`.
    pub fn new(inner: D) -> Self {
        Self(inner)
    }
}

/// The names one object has shown so far.
struct Seen<'de> {
    inline: [&'de str; INLINE],
    len: usize,
    /// Names past the inline ones, and names that had to be unescaped
    /// (the parser lends those only for the duration of a call).
    more: Vec<Cow<'de, str>>,
}

impl<'de> Seen<'de> {
    fn new() -> Self {
        Self {
            inline: [""; INLINE],
            len: 0,
            more: Vec::new(),
        }
    }

    fn contains(&self, name: &str) -> bool {
        self.inline[..self.len].contains(&name) || self.more.iter().any(|m| **m == *name)
    }

    fn push(&mut self, name: Cow<'de, str>) {
        match name {
            Cow::Borrowed(b) if self.len < INLINE => {
                self.inline[self.len] = b;
                self.len += 1;
            }
            name => self.more.push(name),
        }
    }
}

/// Inside `impl<'de, D: Deserializer<'de>> Deserializer<'de> for X<D>`
/// (`X` a one-field tuple struct): every `deserialize_*` method but
/// `deserialize_ignored_any`, each calling the same method of the wrapped
/// deserializer with the visitor passed through `$wrap` (a function or a
/// tuple-struct constructor). Shared by [`UniqueKeys`] and the server's
/// one-pass request decoder; not a stable API.
///
/// `@methods [MACRO] [PREFIX]` invokes `MACRO! { PREFIX LIST }` with that
/// list of methods (`name(arg: Type, ...)` each), for a forwarder of
/// another shape.
#[doc(hidden)]
#[macro_export]
macro_rules! forward_deserializer_methods {
    ($wrap:expr) => {
        $crate::forward_deserializer_methods! {
            @methods [$crate::forward_deserializer_methods] [@each $wrap;]
        }
    };
    (@methods [$($callback:tt)*] [$($prefix:tt)*]) => {
        $($callback)*! {
            $($prefix)*
            deserialize_any() deserialize_bool() deserialize_i8() deserialize_i16()
            deserialize_i32() deserialize_i64() deserialize_i128() deserialize_u8()
            deserialize_u16() deserialize_u32() deserialize_u64() deserialize_u128()
            deserialize_f32() deserialize_f64() deserialize_char() deserialize_str()
            deserialize_string() deserialize_bytes() deserialize_byte_buf()
            deserialize_option() deserialize_unit() deserialize_seq() deserialize_map()
            deserialize_identifier()
            deserialize_unit_struct(name: &'static str)
            deserialize_newtype_struct(name: &'static str)
            deserialize_tuple(len: usize)
            deserialize_tuple_struct(name: &'static str, len: usize)
            deserialize_struct(name: &'static str, fields: &'static [&'static str])
            deserialize_enum(name: &'static str, variants: &'static [&'static str])
        }
    };
    (@each $wrap:expr; $($method:ident($($arg:ident: $ty:ty),*))*) => {$(
        #[inline]
        fn $method<V: ::serde::de::Visitor<'de>>(
            self,
            $($arg: $ty,)*
            visitor: V,
        ) -> ::core::result::Result<V::Value, D::Error> {
            self.0.$method($($arg,)* ($wrap)(visitor))
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for UniqueKeys<D> {
    type Error = D::Error;

    crate::forward_deserializer_methods!(Wrap);

    /// Walked, not skipped: the names inside an ignored member are checked
    /// too.
    fn deserialize_ignored_any<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_any(Wrap(visitor))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}

/// A visitor, seed or access whose nested values are read through
/// [`UniqueKeys`].
struct Wrap<X>(X);

/// Forwards `visit_*` methods that carry no nested value.
macro_rules! forward_visit {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.0.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for Wrap<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    forward_visit! {
        visit_bool(bool) visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64)
        visit_i128(i128) visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64)
        visit_u128(u128) visit_f32(f32) visit_f64(f64) visit_char(char)
        visit_str(&str) visit_borrowed_str(&'de str) visit_string(String)
        visit_bytes(&[u8]) visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(UniqueKeys(d))
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_newtype_struct(UniqueKeys(d))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.0.visit_seq(Wrap(seq))
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Members {
            inner: map,
            seen: Seen::new(),
        })
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.0.visit_enum(Wrap(data))
    }
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Wrap<S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(UniqueKeys(d))
    }
}

impl<'de, A: SeqAccess<'de>> SeqAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn next_element_seed<T: DeserializeSeed<'de>>(
        &mut self,
        seed: T,
    ) -> Result<Option<T::Value>, A::Error> {
        self.0.next_element_seed(Wrap(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

impl<'de, A: EnumAccess<'de>> EnumAccess<'de> for Wrap<A> {
    type Error = A::Error;
    type Variant = Wrap<A::Variant>;

    fn variant_seed<T: DeserializeSeed<'de>>(
        self,
        seed: T,
    ) -> Result<(T::Value, Wrap<A::Variant>), A::Error> {
        self.0
            .variant_seed(seed)
            .map(|(value, variant)| (value, Wrap(variant)))
    }
}

impl<'de, A: de::VariantAccess<'de>> de::VariantAccess<'de> for Wrap<A> {
    type Error = A::Error;

    fn unit_variant(self) -> Result<(), A::Error> {
        self.0.unit_variant()
    }

    fn newtype_variant_seed<T: DeserializeSeed<'de>>(self, seed: T) -> Result<T::Value, A::Error> {
        self.0.newtype_variant_seed(Wrap(seed))
    }

    fn tuple_variant<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, A::Error> {
        self.0.tuple_variant(len, Wrap(visitor))
    }

    fn struct_variant<V: Visitor<'de>>(
        self,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, A::Error> {
        self.0.struct_variant(fields, Wrap(visitor))
    }
}

/// The members of one object: each name is recorded as it is read, and a
/// name read twice fails.
struct Members<'de, A> {
    inner: A,
    seen: Seen<'de>,
}

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Members<'de, A> {
    type Error = A::Error;

    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        let mut name = None;
        let key = self.inner.next_key_seed(Name {
            seed,
            name: &mut name,
        })?;
        if let Some(name) = name {
            if self.seen.contains(&name) {
                return Err(repeated(&name));
            }
            self.seen.push(name);
        }
        Ok(key)
    }

    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.inner.next_value_seed(Wrap(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.inner.size_hint()
    }
}

/// A member name on its way to the key's own seed, noted as it passes.
struct Name<'n, 'de, S> {
    seed: S,
    name: &'n mut Option<Cow<'de, str>>,
}

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Name<'_, 'de, S> {
    type Value = S::Value;

    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.seed.deserialize(NameDeserializer {
            inner: d,
            name: self.name,
        })
    }
}

/// The key's deserializer: every request is forwarded, and the string it
/// yields is noted.
struct NameDeserializer<'n, 'de, D> {
    inner: D,
    name: &'n mut Option<Cow<'de, str>>,
}

/// Forwards a `deserialize_*` method of a member name.
macro_rules! forward_name {
    ($($method:ident($($arg:ident: $ty:ty),*))*) => {$(
        fn $method<V: Visitor<'de>>(self, $($arg: $ty,)* visitor: V) -> Result<V::Value, D::Error> {
            self.inner.$method($($arg,)* NameVisitor { inner: visitor, name: self.name })
        }
    )*};
}

impl<'de, D: Deserializer<'de>> Deserializer<'de> for NameDeserializer<'_, 'de, D> {
    type Error = D::Error;

    crate::forward_deserializer_methods!(@methods [forward_name] []);
    forward_name!(deserialize_ignored_any());

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// The key's visitor: notes the name, then hands it on.
struct NameVisitor<'n, 'de, V> {
    inner: V,
    name: &'n mut Option<Cow<'de, str>>,
}

/// Forwards `visit_*` methods that carry no name.
macro_rules! forward_visit_name {
    ($($method:ident($ty:ty))*) => {$(
        fn $method<E: de::Error>(self, v: $ty) -> Result<V::Value, E> {
            self.inner.$method(v)
        }
    )*};
}

impl<'de, V: Visitor<'de>> Visitor<'de> for NameVisitor<'_, 'de, V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.inner.expecting(f)
    }

    fn visit_borrowed_str<E: de::Error>(self, v: &'de str) -> Result<V::Value, E> {
        *self.name = Some(Cow::Borrowed(v));
        self.inner.visit_borrowed_str(v)
    }

    fn visit_str<E: de::Error>(self, v: &str) -> Result<V::Value, E> {
        *self.name = Some(Cow::Owned(v.to_owned()));
        self.inner.visit_str(v)
    }

    fn visit_string<E: de::Error>(self, v: String) -> Result<V::Value, E> {
        *self.name = Some(Cow::Owned(v.clone()));
        self.inner.visit_string(v)
    }

    forward_visit_name! {
        visit_bool(bool) visit_i8(i8) visit_i16(i16) visit_i32(i32) visit_i64(i64)
        visit_i128(i128) visit_u8(u8) visit_u16(u16) visit_u32(u32) visit_u64(u64)
        visit_u128(u128) visit_f32(f32) visit_f64(f64) visit_char(char)
        visit_bytes(&[u8]) visit_borrowed_bytes(&'de [u8]) visit_byte_buf(Vec<u8>)
    }

    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_none()
    }

    fn visit_unit<E: de::Error>(self) -> Result<V::Value, E> {
        self.inner.visit_unit()
    }

    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_some(d)
    }

    fn visit_newtype_struct<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.inner.visit_newtype_struct(d)
    }

    fn visit_seq<A: SeqAccess<'de>>(self, seq: A) -> Result<V::Value, A::Error> {
        self.inner.visit_seq(seq)
    }

    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.inner.visit_map(map)
    }

    fn visit_enum<A: EnumAccess<'de>>(self, data: A) -> Result<V::Value, A::Error> {
        self.inner.visit_enum(data)
    }
}

#[cfg(test)]
mod tests;
