//! JSON values compared the way JSON Schema (and jsonschema 0.61) compares
//! them: numbers by exact value across serde_json's `u64`, `i64` and `f64`
//! forms (so `1 == 1.0`, and `2^53 + 1 != 2^53` as a float), arrays item by
//! item, objects member by member whatever their order.
//!
//! The built-in runs only where serde_json is built without
//! `arbitrary_precision` (see `plain_serde_json`), so every number is one of
//! those three forms and every `f64` is finite. Recursion
//! here follows the nesting of the values compared: `const` and `enum` values
//! are bounded by the schema depth limit, instance values by serde_json's
//! parser (128 levels).

use serde_json::{Map, Number, Value};
use std::cmp::Ordering;
use std::fmt;

/// 2^53: every integer up to it is exact as an `f64`.
const EXACT_F64_INTS: f64 = 9_007_199_254_740_992.0;
/// 2^64 as an `f64`: no `u64` or `i64` reaches it in magnitude.
const TWO_POW_64: f64 = 18_446_744_073_709_551_616.0;

/// A JSON number in the form serde_json holds it.
#[derive(Clone, Copy)]
enum Num {
    U(u64),
    I(i64),
    F(f64),
}

fn num(n: &Number) -> Num {
    if let Some(u) = n.as_u64() {
        Num::U(u)
    } else if let Some(i) = n.as_i64() {
        Num::I(i)
    } else {
        // Always `Some` without `arbitrary_precision`.
        Num::F(n.as_f64().unwrap_or(0.0))
    }
}

/// Orders an integer against a finite float exactly: the integer is compared
/// with the float's integer part first, then with its fraction.
fn int_vs_float(i: i128, f: f64) -> Ordering {
    let t = f.trunc();
    if t >= TWO_POW_64 {
        return Ordering::Less;
    }
    if t <= -TWO_POW_64 {
        return Ordering::Greater;
    }
    // `t` is whole and below 2^64 in magnitude, so the cast is exact.
    #[allow(clippy::cast_possible_truncation)]
    match i.cmp(&(t as i128)) {
        Ordering::Equal => t.partial_cmp(&f).unwrap_or(Ordering::Equal),
        other => other,
    }
}

/// The exact order of two JSON numbers.
pub(super) fn cmp_numbers(a: &Number, b: &Number) -> Ordering {
    match (num(a), num(b)) {
        (Num::U(x), Num::U(y)) => x.cmp(&y),
        (Num::I(x), Num::I(y)) => x.cmp(&y),
        (Num::U(x), Num::I(y)) => i128::from(x).cmp(&i128::from(y)),
        (Num::I(x), Num::U(y)) => i128::from(x).cmp(&i128::from(y)),
        (Num::U(x), Num::F(y)) => int_vs_float(i128::from(x), y),
        (Num::I(x), Num::F(y)) => int_vs_float(i128::from(x), y),
        (Num::F(x), Num::U(y)) => int_vs_float(i128::from(y), x).reverse(),
        (Num::F(x), Num::I(y)) => int_vs_float(i128::from(y), x).reverse(),
        (Num::F(x), Num::F(y)) => x.partial_cmp(&y).unwrap_or(Ordering::Equal),
    }
}

/// `type: integer` from draft 6 on: a number with no fractional part, however
/// it is written (`1.0` and `1e2` are integers).
pub(super) fn is_integer(n: &Number) -> bool {
    match num(n) {
        Num::U(_) | Num::I(_) => true,
        Num::F(f) => is_whole(f),
    }
}

/// `f.fract() == 0.0` for a finite `f`, without `trunc`: x86-64 has no
/// instruction for it, and LLVM hoists the library call it becomes into the
/// hot path of every `type` check.
fn is_whole(f: f64) -> bool {
    if f.abs() < EXACT_F64_INTS {
        // Below 2^53 the cast truncates exactly.
        #[allow(clippy::cast_possible_truncation, clippy::cast_precision_loss)]
        let back = (f as i64) as f64;
        back == f
    } else {
        // From 2^53 on every `f64` is whole.
        true
    }
}

/// JSON Schema equality (`const`, `enum`, `uniqueItems`).
pub(super) fn equal(a: &Value, b: &Value) -> bool {
    match (a, b) {
        (Value::Null, Value::Null) => true,
        (Value::Bool(x), Value::Bool(y)) => x == y,
        (Value::Number(x), Value::Number(y)) => cmp_numbers(x, y) == Ordering::Equal,
        (Value::String(x), Value::String(y)) => x == y,
        (Value::Array(x), Value::Array(y)) => {
            x.len() == y.len() && x.iter().zip(y).all(|(x, y)| equal(x, y))
        }
        (Value::Object(x), Value::Object(y)) => {
            x.len() == y.len()
                && x.iter()
                    .all(|(key, value)| y.get(key).is_some_and(|other| equal(value, other)))
        }
        _ => false,
    }
}

fn rank(v: &Value) -> u8 {
    match v {
        Value::Null => 0,
        Value::Bool(_) => 1,
        Value::Number(_) => 2,
        Value::String(_) => 3,
        Value::Array(_) => 4,
        Value::Object(_) => 5,
    }
}

/// A total order that agrees with [`equal`] (`Equal` exactly when `equal`),
/// so sorting finds duplicates. Objects compare by their members in key
/// order, which is iteration order for serde_json's sorted maps.
fn total_order(a: &Value, b: &Value) -> Ordering {
    match (a, b) {
        (Value::Bool(x), Value::Bool(y)) => x.cmp(y),
        (Value::Number(x), Value::Number(y)) => cmp_numbers(x, y),
        (Value::String(x), Value::String(y)) => x.cmp(y),
        (Value::Array(x), Value::Array(y)) => x
            .iter()
            .zip(y)
            .map(|(x, y)| total_order(x, y))
            .find(|o| o.is_ne())
            .unwrap_or_else(|| x.len().cmp(&y.len())),
        (Value::Object(x), Value::Object(y)) => object_order(x, y),
        _ => rank(a).cmp(&rank(b)),
    }
}

fn object_order(x: &Map<String, Value>, y: &Map<String, Value>) -> Ordering {
    x.iter()
        .zip(y)
        .map(|((xk, xv), (yk, yv))| xk.cmp(yk).then_with(|| total_order(xv, yv)))
        .find(|o| o.is_ne())
        .unwrap_or_else(|| x.len().cmp(&y.len()))
}

/// Up to this many items, `uniqueItems` compares every pair, allocating
/// nothing; longer arrays are sorted (one vector of references), so a long
/// hostile array costs `n log n`, not `n²`.
const PAIRWISE_UNIQUE_MAX: usize = 32;

/// `uniqueItems`: no two items are [`equal`].
pub(super) fn all_unique(items: &[Value]) -> bool {
    if items.len() <= PAIRWISE_UNIQUE_MAX {
        return items
            .iter()
            .enumerate()
            .all(|(i, a)| items[i + 1..].iter().all(|b| !equal(a, b)));
    }
    let mut sorted: Vec<&Value> = items.iter().collect();
    sorted.sort_unstable_by(|a, b| total_order(a, b));
    sorted.windows(2).all(|w| !equal(w[0], w[1]))
}

/// Whether `multipleOf: m` holds for `n`, for a whole `m` in `1..=2^53`
/// (the only `multipleOf` the built-in accepts). Integers divide exactly.
/// A float at or past 2^53 is judged on its decimal text, as jsonschema does;
/// any other float by `f64` remainder, exact for whole divisors.
pub(super) fn is_multiple_of(n: &Number, m: u64) -> bool {
    match num(n) {
        Num::U(v) => v % m == 0,
        // `m` is at most 2^53, so it fits an `i64`; the remainder of a
        // negative number is negative or zero.
        #[allow(clippy::cast_possible_wrap)]
        Num::I(v) => v % (m as i64) == 0,
        Num::F(f) => {
            if f.abs() >= EXACT_F64_INTS
                && let Some(answer) = decimal_multiple_of(n, m)
            {
                return answer;
            }
            // `m` is at most 2^53, exact as an `f64`.
            #[allow(clippy::cast_precision_loss)]
            let m = m as f64;
            f.fract() == 0.0 && f % m == 0.0
        }
    }
}

/// Divisibility read off the number's shortest decimal text (serde_json's
/// `Display`), digit by digit; `None` for text with an exponent.
fn decimal_multiple_of(n: &Number, m: u64) -> Option<bool> {
    let mut text = Digits::default();
    fmt::Write::write_fmt(&mut text, format_args!("{n}")).ok()?;
    let text = text.as_bytes();
    if text.iter().any(|b| matches!(b, b'e' | b'E')) {
        return None;
    }
    let text = text.strip_prefix(b"-").unwrap_or(text);
    let (whole, fraction) = match text.iter().position(|b| *b == b'.') {
        Some(dot) => (&text[..dot], &text[dot + 1..]),
        None => (text, &b""[..]),
    };
    if fraction.iter().any(|b| *b != b'0') {
        return Some(false);
    }
    // `rem < m <= 2^53`, so `rem * 10 + 9` cannot overflow.
    let rem = whole.iter().fold(0u64, |rem, d| {
        (rem * 10 + u64::from(d.wrapping_sub(b'0'))) % m
    });
    Some(rem == 0)
}

/// A number's text, on the stack: a finite `f64` prints in at most 24 bytes.
struct Digits {
    buf: [u8; 48],
    len: usize,
}

impl Default for Digits {
    fn default() -> Self {
        Self {
            buf: [0; 48],
            len: 0,
        }
    }
}

impl Digits {
    fn as_bytes(&self) -> &[u8] {
        &self.buf[..self.len]
    }
}

impl fmt::Write for Digits {
    fn write_str(&mut self, s: &str) -> fmt::Result {
        let end = self.len + s.len();
        let dst = self.buf.get_mut(self.len..end).ok_or(fmt::Error)?;
        dst.copy_from_slice(s.as_bytes());
        self.len = end;
        Ok(())
    }
}
