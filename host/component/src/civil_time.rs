//! Seconds since the Unix epoch as a UTC calendar date and time, for file names and for what
//! front-ends show (no time zones, no leap seconds).

/// A UTC date and time.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CivilTime {
    /// The year.
    pub year: i64,
    /// 1 to 12.
    pub month: i64,
    /// 1 to 31.
    pub day: i64,
    /// 0 to 23.
    pub hour: u64,
    /// 0 to 59.
    pub minute: u64,
    /// 0 to 59.
    pub second: u64,
}

impl CivilTime {
    /// The UTC date and time `secs` seconds after 1970-01-01T00:00:00Z (Howard Hinnant's
    /// days-to-civil algorithm).
    pub fn from_unix(secs: u64) -> Self {
        let days = i64::try_from(secs / 86_400).unwrap_or(0);
        let rem = secs % 86_400;
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = doy - (153 * mp + 2) / 5 + 1;
        let month = if mp < 10 { mp + 3 } else { mp - 9 };
        Self {
            year: yoe + era * 400 + i64::from(month <= 2),
            month,
            day,
            hour: rem / 3600,
            minute: rem % 3600 / 60,
            second: rem % 60,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn known_dates() {
        let t = CivilTime::from_unix(1_700_000_000);
        assert_eq!(
            (t.year, t.month, t.day, t.hour, t.minute, t.second),
            (2023, 11, 14, 22, 13, 20)
        );
        let leap = CivilTime::from_unix(951_782_400);
        assert_eq!((leap.year, leap.month, leap.day), (2000, 2, 29));
        assert_eq!(CivilTime::from_unix(0).year, 1970);
    }
}
