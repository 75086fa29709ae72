//! RFC 3339 timestamps without a calendar crate.

use std::time::{SystemTime, UNIX_EPOCH};

/// Nanoseconds since the Unix epoch (negative before it).
pub fn nanos_since_epoch(time: SystemTime) -> i128 {
    match time.duration_since(UNIX_EPOCH) {
        Ok(after) => after.as_nanos() as i128,
        Err(before) => -(before.duration().as_nanos() as i128),
    }
}

/// `2024-03-15T08:30:00.123456789Z`.
pub fn rfc3339_from_nanos(nanos: i128) -> String {
    let seconds = nanos.div_euclid(1_000_000_000) as i64;
    let fraction = nanos.rem_euclid(1_000_000_000);
    let days = seconds.div_euclid(86_400);
    let of_day = seconds.rem_euclid(86_400);
    let (year, month, day) = civil_from_days(days);
    format!(
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}.{fraction:09}Z",
        of_day / 3600,
        of_day % 3600 / 60,
        of_day % 60
    )
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (H. Hinnant's algorithm).
pub fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z.rem_euclid(146_097);
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = (day_of_year - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn days_become_dates() {
        assert_eq!(civil_from_days(0), (1970, 1, 1));
        assert_eq!(civil_from_days(19_782), (2024, 2, 29));
    }

    #[test]
    fn formats_known_instants() {
        assert_eq!(rfc3339_from_nanos(0), "1970-01-01T00:00:00.000000000Z");
        assert_eq!(
            rfc3339_from_nanos(951_782_400_000_000_001),
            "2000-02-29T00:00:00.000000001Z"
        );
        assert_eq!(
            rfc3339_from_nanos(1_710_491_400_500_000_000),
            "2024-03-15T08:30:00.500000000Z"
        );
        assert_eq!(
            rfc3339_from_nanos(-1_000_000_000),
            "1969-12-31T23:59:59.000000000Z"
        );
    }
}
