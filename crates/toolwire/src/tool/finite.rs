//! Serialising a tool's typed output into a JSON value while refusing
//! non-finite numbers: JSON has no NaN or infinity, and serde_json would
//! write them as `null` (which an output schema then refuses, turning the
//! tool's arithmetic overflow into a protocol error).
//!
//! [`to_value`] is `serde_json::to_value` plus that one check, made as the
//! value is written (no second pass).

use serde::ser::{self, Serialize, Serializer};
use serde_json::Value;
use std::cell::Cell;

/// Why a typed output could not become JSON.
#[derive(Debug)]
pub(crate) enum OutputError {
    /// It holds a NaN or an infinity.
    NotFinite,
    /// Its `Serialize` implementation failed.
    Serialise(serde_json::Error),
}

/// `value` as a JSON value, or why not.
pub(crate) fn to_value<T: Serialize + ?Sized>(value: &T) -> Result<Value, OutputError> {
    let hit = Cell::new(false);
    match (Checked { value, hit: &hit }).serialize(serde_json::value::Serializer) {
        Ok(v) => Ok(v),
        Err(_) if hit.get() => Err(OutputError::NotFinite),
        Err(e) => Err(OutputError::Serialise(e)),
    }
}

/// A value whose floats are checked as it serialises.
struct Checked<'a, T: ?Sized> {
    value: &'a T,
    hit: &'a Cell<bool>,
}

impl<T: Serialize + ?Sized> Serialize for Checked<'_, T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.value.serialize(Finite {
            inner: s,
            hit: self.hit,
        })
    }
}

struct Finite<'a, S> {
    inner: S,
    hit: &'a Cell<bool>,
}

impl<S> Finite<'_, S> {
    fn check<E: ser::Error>(&self, finite: bool) -> Result<(), E> {
        if finite {
            return Ok(());
        }
        self.hit.set(true);
        Err(E::custom("a number is not finite"))
    }
}

/// Forwards `serialize_*` methods of values that hold no float.
macro_rules! forward {
    ($($method:ident($($arg:ident: $ty:ty),*))*) => {$(
        fn $method(self, $($arg: $ty),*) -> Result<S::Ok, S::Error> {
            self.inner.$method($($arg),*)
        }
    )*};
}

impl<'a, S: Serializer> Serializer for Finite<'a, S> {
    type Ok = S::Ok;
    type Error = S::Error;
    type SerializeSeq = Compound<'a, S::SerializeSeq>;
    type SerializeTuple = Compound<'a, S::SerializeTuple>;
    type SerializeTupleStruct = Compound<'a, S::SerializeTupleStruct>;
    type SerializeTupleVariant = Compound<'a, S::SerializeTupleVariant>;
    type SerializeMap = Compound<'a, S::SerializeMap>;
    type SerializeStruct = Compound<'a, S::SerializeStruct>;
    type SerializeStructVariant = Compound<'a, S::SerializeStructVariant>;

    forward! {
        serialize_bool(v: bool) serialize_i8(v: i8) serialize_i16(v: i16)
        serialize_i32(v: i32) serialize_i64(v: i64) serialize_i128(v: i128)
        serialize_u8(v: u8) serialize_u16(v: u16) serialize_u32(v: u32)
        serialize_u64(v: u64) serialize_u128(v: u128) serialize_char(v: char)
        serialize_str(v: &str) serialize_bytes(v: &[u8]) serialize_none()
        serialize_unit() serialize_unit_struct(name: &'static str)
        serialize_unit_variant(name: &'static str, index: u32, variant: &'static str)
    }

    fn serialize_f32(self, v: f32) -> Result<S::Ok, S::Error> {
        self.check(v.is_finite())?;
        self.inner.serialize_f32(v)
    }

    fn serialize_f64(self, v: f64) -> Result<S::Ok, S::Error> {
        self.check(v.is_finite())?;
        self.inner.serialize_f64(v)
    }

    fn serialize_some<T: Serialize + ?Sized>(self, value: &T) -> Result<S::Ok, S::Error> {
        let hit = self.hit;
        self.inner.serialize_some(&Checked { value, hit })
    }

    fn serialize_newtype_struct<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        let hit = self.hit;
        self.inner
            .serialize_newtype_struct(name, &Checked { value, hit })
    }

    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        value: &T,
    ) -> Result<S::Ok, S::Error> {
        let hit = self.hit;
        self.inner
            .serialize_newtype_variant(name, index, variant, &Checked { value, hit })
    }

    fn serialize_seq(self, len: Option<usize>) -> Result<Self::SerializeSeq, S::Error> {
        let inner = self.inner.serialize_seq(len)?;
        Ok(Compound {
            inner,
            hit: self.hit,
        })
    }

    fn serialize_tuple(self, len: usize) -> Result<Self::SerializeTuple, S::Error> {
        let c = self.inner.serialize_tuple(len)?;
        Ok(Compound {
            inner: c,
            hit: self.hit,
        })
    }

    fn serialize_tuple_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleStruct, S::Error> {
        let c = self.inner.serialize_tuple_struct(name, len)?;
        Ok(Compound {
            inner: c,
            hit: self.hit,
        })
    }

    fn serialize_tuple_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeTupleVariant, S::Error> {
        let c = self
            .inner
            .serialize_tuple_variant(name, index, variant, len)?;
        Ok(Compound {
            inner: c,
            hit: self.hit,
        })
    }

    fn serialize_map(self, len: Option<usize>) -> Result<Self::SerializeMap, S::Error> {
        let c = self.inner.serialize_map(len)?;
        Ok(Compound {
            inner: c,
            hit: self.hit,
        })
    }

    fn serialize_struct(
        self,
        name: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStruct, S::Error> {
        let c = self.inner.serialize_struct(name, len)?;
        Ok(Compound {
            inner: c,
            hit: self.hit,
        })
    }

    fn serialize_struct_variant(
        self,
        name: &'static str,
        index: u32,
        variant: &'static str,
        len: usize,
    ) -> Result<Self::SerializeStructVariant, S::Error> {
        let c = self
            .inner
            .serialize_struct_variant(name, index, variant, len)?;
        Ok(Compound {
            inner: c,
            hit: self.hit,
        })
    }

    fn is_human_readable(&self) -> bool {
        self.inner.is_human_readable()
    }
}

/// A sequence, map or struct being written: each element is checked.
struct Compound<'a, C> {
    inner: C,
    hit: &'a Cell<bool>,
}

/// Implements a compound trait whose element methods take one value.
macro_rules! compound {
    ($($trait:ident::$method:ident($($arg:ident: $ty:ty),*))*) => {$(
        impl<C: ser::$trait> ser::$trait for Compound<'_, C> {
            type Ok = C::Ok;
            type Error = C::Error;

            fn $method<T: Serialize + ?Sized>(&mut self, $($arg: $ty,)* value: &T) -> Result<(), C::Error> {
                let hit = self.hit;
                self.inner.$method($($arg,)* &Checked { value, hit })
            }

            fn end(self) -> Result<C::Ok, C::Error> {
                self.inner.end()
            }
        }
    )*};
}

compound! {
    SerializeSeq::serialize_element()
    SerializeTuple::serialize_element()
    SerializeTupleStruct::serialize_field()
    SerializeTupleVariant::serialize_field()
    SerializeStruct::serialize_field(key: &'static str)
    SerializeStructVariant::serialize_field(key: &'static str)
}

impl<C: ser::SerializeMap> ser::SerializeMap for Compound<'_, C> {
    type Ok = C::Ok;
    type Error = C::Error;

    fn serialize_key<T: Serialize + ?Sized>(&mut self, key: &T) -> Result<(), C::Error> {
        let hit = self.hit;
        self.inner.serialize_key(&Checked { value: key, hit })
    }

    fn serialize_value<T: Serialize + ?Sized>(&mut self, value: &T) -> Result<(), C::Error> {
        let hit = self.hit;
        self.inner.serialize_value(&Checked { value, hit })
    }

    fn end(self) -> Result<C::Ok, C::Error> {
        self.inner.end()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::collections::BTreeMap;

    #[derive(serde::Serialize)]
    struct Out {
        sum: f64,
        parts: Vec<Option<f32>>,
        named: BTreeMap<String, (u8, f64)>,
    }

    fn out(sum: f64, part: f32, named: f64) -> Out {
        Out {
            sum,
            parts: vec![None, Some(part)],
            named: [("k".to_owned(), (1, named))].into_iter().collect(),
        }
    }

    #[test]
    fn finite_output_is_what_serde_json_writes() {
        let o = out(1.5, 2.0, -3.25);
        let v = to_value(&o).expect("finite");
        assert_eq!(v, serde_json::to_value(&o).expect("json"));
        assert_eq!(v["named"]["k"], json!([1, -3.25]));
    }

    #[test]
    fn a_non_finite_number_anywhere_is_refused() {
        for o in [
            out(f64::INFINITY, 0.0, 0.0),
            out(0.0, f32::NAN, 0.0),
            out(0.0, 0.0, f64::NEG_INFINITY),
        ] {
            assert!(matches!(to_value(&o), Err(OutputError::NotFinite)));
        }
        assert!(matches!(to_value(&f64::NAN), Err(OutputError::NotFinite)));
    }

    #[test]
    fn other_failures_stay_serialisation_errors() {
        struct Fails;
        impl Serialize for Fails {
            fn serialize<S: Serializer>(&self, _: S) -> Result<S::Ok, S::Error> {
                Err(ser::Error::custom("no"))
            }
        }
        assert!(matches!(to_value(&Fails), Err(OutputError::Serialise(_))));
    }
}
