//! Serialisation of JSON `number` fields held as `f64`: integral values are
//! written as integers, so `50` round-trips as `50` rather than `50.0`.

use serde::Serializer;

/// The largest integer an `f64` holds exactly (2^53).
const MAX_EXACT: f64 = 9_007_199_254_740_992.0;

/// Serialises an `f64`, as an integer when it is integral and exact.
pub(super) fn f64<S: Serializer>(v: &f64, s: S) -> Result<S::Ok, S::Error> {
    if v.fract() == 0.0 && v.abs() <= MAX_EXACT {
        // In range and integral, so the cast is exact.
        #[allow(clippy::cast_possible_truncation)]
        s.serialize_i64(*v as i64)
    } else {
        s.serialize_f64(*v)
    }
}

/// Serialises an `Option<f64>` like [`f64`]; used with `skip_serializing_if`.
#[allow(clippy::ref_option)]
pub(super) fn opt_f64<S: Serializer>(v: &Option<f64>, s: S) -> Result<S::Ok, S::Error> {
    match v {
        Some(v) => f64(v, s),
        None => s.serialize_none(),
    }
}

#[cfg(test)]
mod tests {
    use serde::Serialize;
    use serde_json::json;

    #[derive(Serialize)]
    struct N(#[serde(serialize_with = "super::f64")] f64);

    #[test]
    fn integral_floats_serialise_as_integers() {
        assert_eq!(serde_json::to_value(N(50.0)).expect("ok"), json!(50));
        assert_eq!(serde_json::to_value(N(-3.0)).expect("ok"), json!(-3));
        assert_eq!(serde_json::to_value(N(0.5)).expect("ok"), json!(0.5));
        assert_eq!(serde_json::to_value(N(1e300)).expect("ok"), json!(1e300));
    }
}
