//! Task times: milliseconds since the Unix epoch, shown as RFC 3339 (UTC,
//! millisecond precision), the ISO 8601 form the extension asks for.

use std::time::{SystemTime, UNIX_EPOCH};

/// Now, in milliseconds since the Unix epoch.
pub fn now_ms() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| u64::try_from(d.as_millis()).unwrap_or(u64::MAX))
}

/// `ms` since the epoch as `YYYY-MM-DDTHH:MM:SS.mmmZ`, written digit by
/// digit (every task read shows two of them; `format!` costs ten times
/// as much).
pub(crate) fn rfc3339(ms: u64) -> String {
    let secs = ms / 1000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (y, m, d) = civil(days);
    // Years past 9999 do not fit the form; they are clamped.
    let y = y.min(9999);
    let mut out = *b"0000-00-00T00:00:00.000Z";
    let mut put = |at: usize, width: usize, mut v: u64| {
        for i in (at..at + width).rev() {
            // A digit: 0..=9, so the cast is exact.
            #[allow(clippy::cast_possible_truncation)]
            let digit = (v % 10) as u8;
            out[i] = b'0' + digit;
            v /= 10;
        }
    };
    put(0, 4, y);
    put(5, 2, m);
    put(8, 2, d);
    put(11, 2, rem / 3600);
    put(14, 2, rem % 3600 / 60);
    put(17, 2, rem % 60);
    put(20, 3, ms % 1000);
    // Only ASCII digits and punctuation were written.
    String::from_utf8_lossy(&out).into_owned()
}

/// The proleptic Gregorian date `days` after 1970-01-01: shift the epoch
/// to 0000-03-01 so that leap days end each 400-year era's years, then
/// count eras, years of the era and days of the year.
fn civil(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + u64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::rfc3339;

    #[test]
    fn known_instants_format_as_rfc3339() {
        assert_eq!(rfc3339(0), "1970-01-01T00:00:00.000Z");
        // 2000-02-29, a leap day of a year divisible by 400.
        assert_eq!(rfc3339(951_782_400_000), "2000-02-29T00:00:00.000Z");
        assert_eq!(rfc3339(1_764_547_200_123), "2025-12-01T00:00:00.123Z");
        assert_eq!(rfc3339(4_102_444_799_999), "2099-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(253_402_300_799_999), "9999-12-31T23:59:59.999Z");
        assert_eq!(rfc3339(u64::MAX).len(), 24);
    }
}
