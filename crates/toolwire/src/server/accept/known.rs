//! The one-pass decoder's check of repeated member names, at no cost to
//! the usual request. `Params` is a derived struct: serde refuses a known
//! member read twice, and [`KnownMembers`] refuses any member it does not
//! know (serde would skip it unread, repeats and all), so that the general
//! path reads it. What the members hold checks itself: `Value` members are
//! read as [`toolwire_proto::UniqueValue`], `_meta` refuses repeats, and
//! the rarer typed members go through [`toolwire_proto::UniqueKeys`].
//!
//! Whatever this refuses, the general path (`from_str_unique`) reads
//! again and answers, naming a repeated member, so the error here says
//! nothing useful and costs nothing.

use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use std::fmt;

/// A deserializer of an optional struct that fails on a member the struct
/// does not know; everything else goes to the wrapped deserializer as is.
pub(super) struct KnownMembers<D>(pub(super) D);

/// Why the one-pass decoder declined (never shown: the general path
/// answers).
const UNKNOWN: &str = "a member the one-pass decoder leaves to the general path";

impl<'de, D: Deserializer<'de>> Deserializer<'de> for KnownMembers<D> {
    type Error = D::Error;

    #[inline]
    fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, D::Error> {
        self.0.deserialize_option(Struct(visitor))
    }

    #[inline]
    fn deserialize_struct<V: Visitor<'de>>(
        self,
        name: &'static str,
        fields: &'static [&'static str],
        visitor: V,
    ) -> Result<V::Value, D::Error> {
        self.0.deserialize_struct(name, fields, Struct(visitor))
    }

    /// Anything else is not the optional struct this reads.
    fn deserialize_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, D::Error> {
        Err(de::Error::custom(UNKNOWN))
    }

    serde::forward_to_deserialize_any! {
        bool i8 i16 i32 i64 i128 u8 u16 u32 u64 u128 f32 f64 char str string
        bytes byte_buf unit unit_struct newtype_struct seq tuple
        tuple_struct map enum identifier ignored_any
    }
}

/// The struct's visitor: its members are read through [`Members`].
struct Struct<V>(V);

impl<'de, V: Visitor<'de>> Visitor<'de> for Struct<V> {
    type Value = V::Value;

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.expecting(f)
    }

    #[inline]
    fn visit_none<E: de::Error>(self) -> Result<V::Value, E> {
        self.0.visit_none()
    }

    #[inline]
    fn visit_some<D: Deserializer<'de>>(self, d: D) -> Result<V::Value, D::Error> {
        self.0.visit_some(KnownMembers(d))
    }

    #[inline]
    fn visit_map<A: MapAccess<'de>>(self, map: A) -> Result<V::Value, A::Error> {
        self.0.visit_map(Members(map))
    }
}

/// The struct's members: names as they are; each value read through
/// [`Known`].
struct Members<A>(A);

impl<'de, A: MapAccess<'de>> MapAccess<'de> for Members<A> {
    type Error = A::Error;

    #[inline]
    fn next_key_seed<K: DeserializeSeed<'de>>(
        &mut self,
        seed: K,
    ) -> Result<Option<K::Value>, A::Error> {
        self.0.next_key_seed(seed)
    }

    #[inline]
    fn next_value_seed<T: DeserializeSeed<'de>>(&mut self, seed: T) -> Result<T::Value, A::Error> {
        self.0.next_value_seed(Known(seed))
    }

    fn size_hint(&self) -> Option<usize> {
        self.0.size_hint()
    }
}

/// One member's value: read by its type, unless the struct skips it.
struct Known<S>(S);

impl<'de, S: DeserializeSeed<'de>> DeserializeSeed<'de> for Known<S> {
    type Value = S::Value;

    #[inline]
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<S::Value, D::Error> {
        self.0.deserialize(Value(d))
    }
}

/// A member's deserializer: every request goes to the wrapped one, but
/// for `deserialize_ignored_any`, which is how a derived struct skips a
/// member it does not know.
struct Value<D>(D);

impl<'de, D: Deserializer<'de>> Deserializer<'de> for Value<D> {
    type Error = D::Error;

    toolwire_proto::forward_deserializer_methods!(std::convert::identity);

    fn deserialize_ignored_any<V: Visitor<'de>>(self, _: V) -> Result<V::Value, D::Error> {
        Err(de::Error::custom(UNKNOWN))
    }

    fn is_human_readable(&self) -> bool {
        self.0.is_human_readable()
    }
}
