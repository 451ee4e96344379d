//! The one-pass decoder of the usual request: the envelope and the common
//! parameters read in a single pass over the text, each member into its
//! place. An envelope spelled as nearly every client writes it
//! ([`PlainRequest`]: `jsonrpc`, `id`, `method`, `params`, compact) is
//! split by hand, and only its params are read by serde.
//!
//! Written by hand rather than derived: a derived struct is built in its
//! visitor and returned, and each level of serde's decoder (the struct,
//! the `Option` around it, the envelope, the result) moves it on, some
//! 200 to 300 bytes each time, on every request. Here [`Params`] is read
//! into a place its caller made, and the envelope's other members are
//! small.
//!
//! It declines (`Err`, whose text nobody sees) whatever it does not read
//! as the usual request: a member it does not know, at either level; a
//! member given twice; `params` that is not an object; a `method` or
//! `jsonrpc` that is not a string. The general path (`from_str_unique`)
//! then reads the message again and answers it, naming what was wrong.
//! What the members hold checks itself: `Value` members are read as
//! [`toolwire_proto::UniqueValue`], `_meta` refuses repeated names, and
//! the rarer typed members go through [`toolwire_proto::UniqueKeys`]: the
//! functions [`Params`]'s derived reader (the general path's) uses.

use super::{Params, checked, present, shared, unique_boxed, unique_value};
use serde::Deserialize;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, Visitor};
use serde_json::Value;
use std::fmt;
use std::sync::Arc;
use toolwire_proto::types::{Method, RequestMeta, SubscriptionFilter};
use toolwire_proto::{PlainRequest, RequestId};

/// Why the decoder declined (never shown: the general path answers).
const DECLINED: &str = "a request the one-pass decoder leaves to the general path";

fn declined<E: de::Error>() -> E {
    E::custom(DECLINED)
}

/// Reads the request in `text`, its `params` into `params` (which should
/// be empty, as [`Default`] makes it); `None` when the decoder declines.
/// `jsonrpc` is checked to be `"2.0"`.
pub(super) fn read(text: &str, params: &mut Params) -> Option<(RequestId, Method)> {
    if let Some(plain) = PlainRequest::split(text) {
        // The envelope spelled as nearly every client writes it: only the
        // params are left to read, and they must be all that remains.
        let mut de = serde_json::Deserializer::from_str(plain.params);
        if ParamsInto(&mut *params).deserialize(&mut de).is_ok() && de.end().is_ok() {
            return Some((plain.id, Method::parse(plain.method)));
        }
        // Read again from the start, in any order, into an empty place.
        *params = Params::default();
    }
    let mut de = serde_json::Deserializer::from_str(text);
    let read = de.deserialize_map(EnvelopeInto(params)).ok()?;
    de.end().ok()?;
    Some(read)
}

/// The envelope's visitor: `jsonrpc`, `id`, `method` and `params`, each
/// once, and nothing else.
struct EnvelopeInto<'a>(&'a mut Params);

impl<'de> Visitor<'de> for EnvelopeInto<'_> {
    type Value = (RequestId, Method);

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a JSON-RPC request")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
        let (mut version, mut id, mut method, mut params) = (false, None, None, false);
        while let Some(key) = map.next_key::<EnvelopeKey>()? {
            match key {
                EnvelopeKey::Jsonrpc if !version => {
                    map.next_value_seed(Version)?;
                    version = true;
                }
                EnvelopeKey::Id if id.is_none() => id = Some(map.next_value::<RequestId>()?),
                EnvelopeKey::Method if method.is_none() => {
                    method = Some(map.next_value_seed(MethodName)?);
                }
                EnvelopeKey::Params if !params => {
                    map.next_value_seed(ParamsInto(&mut *self.0))?;
                    params = true;
                }
                _ => return Err(declined()),
            }
        }
        match (version, id, method, params) {
            (true, Some(id), Some(method), true) => Ok((id, method)),
            _ => Err(declined()),
        }
    }
}

/// An enum of member names, with its reader: a name is matched without
/// allocating, and any name not listed is `Other`.
macro_rules! member_names {
    ($(#[$doc:meta])* $name:ident { $($variant:ident = $key:literal,)* }) => {
        $(#[$doc])*
        #[derive(Clone, Copy)]
        enum $name {
            $($variant,)*
            Other,
        }

        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                struct KeyVisitor;
                impl Visitor<'_> for KeyVisitor {
                    type Value = $name;
                    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
                        f.write_str("a member name")
                    }
                    fn visit_str<E: de::Error>(self, key: &str) -> Result<$name, E> {
                        Ok(match key {
                            $($key => $name::$variant,)*
                            _ => $name::Other,
                        })
                    }
                }
                d.deserialize_str(KeyVisitor)
            }
        }
    };
}

member_names! {
    /// The envelope's member names.
    EnvelopeKey {
        Jsonrpc = "jsonrpc",
        Id = "id",
        Method = "method",
        Params = "params",
    }
}

/// `jsonrpc`, which must be the string `"2.0"`, unescaped.
struct Version;

impl<'de> DeserializeSeed<'de> for Version {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for Version {
    type Value = ();
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("\"2.0\"")
    }
    /// The text as the message has it: the general path takes `"2.0"`
    /// only as written so, not spelled with escapes.
    fn visit_borrowed_str<E: de::Error>(self, v: &str) -> Result<(), E> {
        match v {
            "2.0" => Ok(()),
            _ => Err(declined()),
        }
    }
    fn visit_str<E: de::Error>(self, _: &str) -> Result<(), E> {
        Err(declined())
    }
}

/// `method`, read as the method it names (without keeping its text).
struct MethodName;

impl<'de> DeserializeSeed<'de> for MethodName {
    type Value = Method;
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<Method, D::Error> {
        d.deserialize_str(self)
    }
}

impl Visitor<'_> for MethodName {
    type Value = Method;
    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("a method name")
    }
    fn visit_str<E: de::Error>(self, v: &str) -> Result<Method, E> {
        Ok(Method::parse(v))
    }
}

/// `params`, read into its place: an object of the members [`Params`]
/// knows, each once.
struct ParamsInto<'a>(&'a mut Params);

impl<'de> DeserializeSeed<'de> for ParamsInto<'_> {
    type Value = ();
    fn deserialize<D: Deserializer<'de>>(self, d: D) -> Result<(), D::Error> {
        d.deserialize_map(self)
    }
}

/// A member read with one of the decoding functions [`Params`]'s derived
/// reader uses too (its `deserialize_with`s), so that both read a member
/// alike.
macro_rules! read_with {
    ($name:ident, $ty:ty, $read:expr) => {
        struct $name($ty);
        impl<'de> Deserialize<'de> for $name {
            fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
                $read(d).map($name)
            }
        }
    };
}

read_with!(Shared, Option<Arc<RequestMeta>>, shared);
read_with!(Arguments, Option<Value>, unique_value);
read_with!(Boxed, Option<Box<Value>>, unique_boxed);
read_with!(Present, Option<Box<Value>>, present);
read_with!(Filter, Option<Box<SubscriptionFilter>>, checked);

impl<'de> Visitor<'de> for ParamsInto<'_> {
    type Value = ();

    fn expecting(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("the request's params object")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        let p = self.0;
        // The members read so far, one bit each: a `null` member leaves its
        // slot empty, so the slots cannot tell a repeat.
        let mut seen = 0u16;
        while let Some(key) = map.next_key::<ParamKey>()? {
            let bit = 1u16 << (key as u16);
            if seen & bit != 0 {
                return Err(declined());
            }
            seen |= bit;
            match key {
                ParamKey::Meta => p.meta = map.next_value::<Shared>()?.0,
                ParamKey::Name => p.name = map.next_value()?,
                ParamKey::Uri => p.uri = map.next_value()?,
                ParamKey::Arguments => p.arguments = map.next_value::<Arguments>()?.0,
                ParamKey::Cursor => p.cursor = map.next_value()?,
                ParamKey::InputResponses => p.input_responses = map.next_value::<Present>()?.0,
                ParamKey::RequestState => p.request_state = map.next_value()?,
                ParamKey::TaskId => p.task_id = map.next_value()?,
                ParamKey::Notifications => p.notifications = map.next_value::<Filter>()?.0,
                ParamKey::Ref => p.reference = map.next_value::<Boxed>()?.0,
                ParamKey::Argument => p.argument = map.next_value::<Boxed>()?.0,
                ParamKey::Context => p.context = map.next_value::<Boxed>()?.0,
                ParamKey::Other => return Err(declined()),
            }
        }
        Ok(())
    }
}

member_names! {
    /// The member names of [`Params`].
    ParamKey {
        Meta = "_meta",
        Name = "name",
        Uri = "uri",
        Arguments = "arguments",
        Cursor = "cursor",
        InputResponses = "inputResponses",
        RequestState = "requestState",
        TaskId = "taskId",
        Notifications = "notifications",
        Ref = "ref",
        Argument = "argument",
        Context = "context",
    }
}
