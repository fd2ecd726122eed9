//! Sizes and limits as people write them on a command line, and back.

/// A growth limit: absolute, or relative to the base value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// Bytes, or a plain count, in the metric's unit.
    Absolute(u64),
    /// Percent of the base value.
    Percent(f64),
    /// A number of objects, where a metric takes a count or a size
    /// ([`parse_count_or_size_limit`]): its sizes are then [`Limit::Absolute`].
    Count(u64),
}

impl Limit {
    /// The absolute limit for a given base value.
    pub fn resolve(self, base: u64) -> f64 {
        match self {
            #[allow(clippy::cast_precision_loss)]
            Limit::Absolute(v) | Limit::Count(v) => v as f64,
            #[allow(clippy::cast_precision_loss)]
            Limit::Percent(p) => base as f64 * p / 100.0,
        }
    }
}

fn parse_percent(text: &str) -> Option<Result<Limit, String>> {
    let number = text.strip_suffix('%')?;
    Some(match number.trim().parse::<f64>() {
        Ok(p) if p.is_finite() && p >= 0.0 => Ok(Limit::Percent(p)),
        _ => Err(format!("'{text}' is not a percentage (e.g. 10%)")),
    })
}

/// Parses `1MiB`, `512KB`, `1.5GiB`, `300` (bytes) or `5%`.
pub fn parse_size_limit(text: &str) -> Result<Limit, String> {
    if let Some(p) = parse_percent(text) {
        return p;
    }
    // Here a percentage is a unit too.
    parse_size(text)
        .map(Limit::Absolute)
        .map_err(|e| e.replace("GB or GiB)", "GB, GiB or %)"))
}

/// Parses a number of objects (`1000`, a whole number alone) or a size with its unit
/// (`256KiB`, `64 B`), or a percentage (`10%`).
pub fn parse_count_or_size_limit(text: &str) -> Result<Limit, String> {
    if let Ok(n) = text.trim().parse::<u64>() {
        return Ok(Limit::Count(n));
    }
    parse_size_limit(text).map_err(|e| format!("{e}; or a number of objects (e.g. 1000)"))
}

/// Parses a count (`100`) or a percentage (`10%`).
pub fn parse_count_limit(text: &str) -> Result<Limit, String> {
    if let Some(p) = parse_percent(text) {
        return p;
    }
    text.trim()
        .parse::<u64>()
        .map(Limit::Absolute)
        .map_err(|_| format!("'{text}' is not a whole number or a percentage (e.g. 100, 10%)"))
}

/// Parses `1%`, `0.5%` or `2`: a share of a whole, in percent.
pub fn parse_share(text: &str) -> Result<f64, String> {
    let number = text.trim().trim_end_matches('%').trim();
    match number.parse::<f64>() {
        Ok(p) if p.is_finite() && (0.0..=100.0).contains(&p) => Ok(p),
        _ => Err(format!("'{text}' is not a percentage from 0% to 100%")),
    }
}

/// Parses a duration with its unit into microseconds: `500us`, `500µs`, `20ms`, `1.5s`.
pub fn parse_duration(text: &str) -> Result<u64, String> {
    let (number, unit) = number_and_unit(text);
    let factor = match unit.as_str() {
        "us" | "µs" => 1.0,
        "ms" => 1e3,
        "s" => 1e6,
        "" => return Err(format!("'{text}' needs a unit: us, ms or s (e.g. 20ms)")),
        other => {
            return Err(format!(
                "'{text}' has an unknown unit '{other}' (use us, ms or s)"
            ));
        }
    };
    scaled(text, number, factor, "a duration (e.g. 500us, 20ms, 1.5s)")
}

/// Splits `1.5 MiB` into the number and the lower-cased unit.
fn number_and_unit(text: &str) -> (&str, String) {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (number, unit) = t.split_at(split);
    (number, unit.trim().to_ascii_lowercase())
}

/// `number × factor`, rounded, if it is a non-negative number in range.
fn scaled(text: &str, number: &str, factor: f64, what: &str) -> Result<u64, String> {
    let value: f64 = number
        .parse()
        .map_err(|_| format!("'{text}' is not {what}"))?;
    let v = value * factor;
    if !v.is_finite() || !(0.0..=9.0e18).contains(&v) {
        return Err(format!("'{text}' is out of range"));
    }
    #[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
    Ok(v.round() as u64)
}

/// Parses a duration (`20ms`) or a percentage (`50%`).
pub fn parse_duration_limit(text: &str) -> Result<Limit, String> {
    if let Some(p) = parse_percent(text) {
        return p;
    }
    parse_duration(text)
        .map(Limit::Absolute)
        .map_err(|e| e.replace("ms or s)", "ms, s or %)"))
}

/// Parses a byte size with an optional unit: B, KB, KiB, MB, MiB, GB, GiB.
pub fn parse_size(text: &str) -> Result<u64, String> {
    let (number, unit) = number_and_unit(text);
    let factor: u32 = match unit.as_str() {
        "" | "b" => 1,
        "kb" => 1_000,
        "kib" | "k" => 1 << 10,
        "mb" => 1_000_000,
        "mib" | "m" => 1 << 20,
        "gb" => 1_000_000_000,
        "gib" | "g" => 1 << 30,
        other => {
            return Err(format!(
                "'{text}' has an unknown unit '{other}' (use B, KB, KiB, MB, MiB, GB or GiB)"
            ));
        }
    };
    scaled(
        text,
        number,
        f64::from(factor),
        "a size (e.g. 256KiB, 1MiB, 5%)",
    )
}

/// A byte size for people: `812 B`, `2.79 MiB`.
pub fn format_size(bytes: u64) -> String {
    const UNITS: [&str; 5] = ["B", "KiB", "MiB", "GiB", "TiB"];
    if bytes < 1024 {
        return format!("{bytes} B");
    }
    #[allow(clippy::cast_precision_loss)]
    let mut v = bytes as f64;
    let mut unit = 0;
    while v >= 1024.0 && unit < UNITS.len() - 1 {
        v /= 1024.0;
        unit += 1;
    }
    format!("{v:.2} {}", UNITS[unit])
}

/// A signed byte delta for people: `+288.00 KiB`, `-1.20 MiB`, `0 B`.
pub fn format_size_delta(delta: i64) -> String {
    match delta.signum() {
        0 => "0 B".to_owned(),
        1 => format!("+{}", format_size(delta.unsigned_abs())),
        _ => format!("-{}", format_size(delta.unsigned_abs())),
    }
}

/// A count with thousands separators: `107,575`.
pub fn format_count(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// A signed count delta: `+6,000`, `-12`, `0`.
pub fn format_count_delta(delta: i64) -> String {
    match delta.signum() {
        0 => "0".to_owned(),
        1 => format!("+{}", format_count(delta.unsigned_abs())),
        _ => format!("-{}", format_count(delta.unsigned_abs())),
    }
}

/// Microseconds for people: `850 µs`, `12.3 ms`, `1.25 s`.
pub fn format_us(us: u64) -> String {
    #[allow(clippy::cast_precision_loss)]
    let v = us as f64;
    if us < 1_000 {
        format!("{us} µs")
    } else if us < 1_000_000 {
        format!("{:.1} ms", v / 1e3)
    } else {
        format!("{:.2} s", v / 1e6)
    }
}

/// A signed duration delta: `+12.3 ms`, `-850 µs`, `0 µs`.
pub fn format_us_delta(delta: i64) -> String {
    match delta.signum() {
        0 => "0 µs".to_owned(),
        1 => format!("+{}", format_us(delta.unsigned_abs())),
        _ => format!("-{}", format_us(delta.unsigned_abs())),
    }
}

/// Whole-number timestamps below this many nanoseconds (early 1973) are refused: they are
/// seconds, milliseconds or microseconds written where nanoseconds were meant.
const MIN_NS_TIMESTAMP: u64 = 100_000_000_000_000_000;

/// Parses a point in time into nanoseconds since the Unix epoch: a whole number of
/// nanoseconds (`1795496400000000000`), or an RFC 3339 date and time
/// (`2026-11-24T05:00:00Z`, `2026-11-24T13:00:00.25+08:00`); from 1973 (see
/// [`MIN_NS_TIMESTAMP`]) to 2262, the last year a signed 64-bit count of nanoseconds
/// reaches.
pub fn parse_timestamp(text: &str) -> Result<u64, String> {
    let t = text.trim();
    if !t.is_empty() && t.bytes().all(|b| b.is_ascii_digit()) {
        let ns = t
            .parse::<u64>()
            .ok()
            .filter(|&ns| i64::try_from(ns).is_ok())
            .ok_or_else(|| format!("'{text}' is out of range (at most {} ns)", i64::MAX))?;
        if ns < MIN_NS_TIMESTAMP {
            return Err(format!(
                "'{text}' is not in nanoseconds (it would be before 1973); give nanoseconds since the Unix epoch, e.g. $(date +%s%N), or an RFC 3339 time"
            ));
        }
        return Ok(ns);
    }
    let ns = rfc3339_ns(t).ok_or_else(|| {
        format!(
            "'{text}' is neither nanoseconds since the Unix epoch nor an RFC 3339 time (e.g. 2026-11-24T05:00:00Z or 2026-11-24T13:00:00+08:00)"
        )
    })?;
    u64::try_from(ns)
        .ok()
        .filter(|&ns| ns >= MIN_NS_TIMESTAMP)
        .ok_or_else(|| format!("'{text}' is before 1973"))
}

/// `YYYY-MM-DDTHH:MM:SS[.fraction](Z|+HH:MM|-HH:MM)` (`T` or a space between date and
/// time; digits past nanoseconds dropped) as nanoseconds since the Unix epoch; None when
/// malformed, out of range or not a real date.
fn rfc3339_ns(t: &str) -> Option<i64> {
    let b = t.as_bytes();
    let field = |at: usize, len: usize| -> Option<i64> {
        let s = b.get(at..at + len)?;
        s.iter().try_fold(0i64, |n, &c| {
            c.is_ascii_digit().then(|| n * 10 + i64::from(c - b'0'))
        })
    };
    let separators = [(4, b'-'), (7, b'-'), (13, b':'), (16, b':')];
    if b.len() < 20
        || separators.iter().any(|&(at, c)| b[at] != c)
        || !matches!(b[10], b'T' | b't' | b' ')
    {
        return None;
    }
    let (year, month, day) = (field(0, 4)?, field(5, 2)?, field(8, 2)?);
    let (hour, minute, second) = (field(11, 2)?, field(14, 2)?, field(17, 2)?);
    let mut rest = &t[19..];
    let mut nanos = 0i64;
    if let Some(fraction) = rest.strip_prefix('.') {
        let digits = fraction.bytes().take_while(u8::is_ascii_digit).count();
        if digits == 0 {
            return None;
        }
        let kept = &fraction.as_bytes()[..digits.min(9)];
        nanos = kept.iter().fold(0i64, |n, &c| n * 10 + i64::from(c - b'0'))
            * 10i64.pow(9 - kept.len() as u32);
        rest = &fraction[digits..];
    }
    let offset_s = match rest.as_bytes() {
        [b'Z' | b'z'] => 0,
        [sign @ (b'+' | b'-'), _, _, b':', _, _] => {
            let (h, m) = (field(t.len() - 5, 2)?, field(t.len() - 2, 2)?);
            if h > 23 || m > 59 {
                return None;
            }
            let offset = h * 3600 + m * 60;
            if *sign == b'-' { -offset } else { offset }
        }
        _ => return None,
    };
    let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0);
    let month_days = [
        31,
        if leap { 29 } else { 28 },
        31,
        30,
        31,
        30,
        31,
        31,
        30,
        31,
        30,
        31,
    ];
    // A leap second (:60) is counted as the first second of the next minute, as POSIX time
    // has no leap seconds.
    let days_in_month = usize::try_from(month - 1)
        .ok()
        .and_then(|m| month_days.get(m))?;
    if day < 1 || day > *days_in_month || hour > 23 || minute > 59 || second > 60 {
        return None;
    }
    let seconds =
        days_since_epoch(year, month, day) * 86_400 + hour * 3600 + minute * 60 + second - offset_s;
    seconds.checked_mul(1_000_000_000)?.checked_add(nanos)
}

/// Days from 1970-01-01 to a date of the proleptic Gregorian calendar: whole 400-year
/// eras of 146,097 days, then the days of the era counted from March 1 (so that the leap
/// day ends a year).
fn days_since_epoch(year: i64, month: i64, day: i64) -> i64 {
    let year = if month <= 2 { year - 1 } else { year };
    let era = year.div_euclid(400);
    let year_of_era = year - era * 400;
    let day_of_year = (153 * ((month + 9) % 12) + 2) / 5 + day - 1;
    let day_of_era = year_of_era * 365 + year_of_era / 4 - year_of_era / 100 + day_of_year;
    era * 146_097 + day_of_era - 719_468
}

/// The date of a day counted from 1970-01-01 (the inverse of [`days_since_epoch`]):
/// year, month (1 to 12), day (1 to 31).
fn date_of_day(days: i64) -> (i64, i64, i64) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let day_of_era = z - era * 146_097;
    let year_of_era =
        (day_of_era - day_of_era / 1460 + day_of_era / 36_524 - day_of_era / 146_096) / 365;
    let day_of_year = day_of_era - (365 * year_of_era + year_of_era / 4 - year_of_era / 100);
    let mp = (5 * day_of_year + 2) / 153;
    let day = day_of_year - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = year_of_era + era * 400 + i64::from(month <= 2);
    (year, month, day)
}

/// A time in nanoseconds since the Unix epoch as a compact UTC stamp to the second,
/// `20261126T101530Z`, which sorts as the times do.
pub fn format_utc_stamp(ns: u64) -> String {
    let seconds = i64::try_from(ns / 1_000_000_000).unwrap_or(i64::MAX);
    let (days, rest) = (seconds.div_euclid(86_400), seconds.rem_euclid(86_400));
    let (year, month, day) = date_of_day(days);
    format!(
        "{year:04}{month:02}{day:02}T{:02}{:02}{:02}Z",
        rest / 3600,
        rest / 60 % 60,
        rest % 60
    )
}

/// Reads a stamp of [`format_utc_stamp`] back, in nanoseconds since the Unix epoch.
pub fn parse_utc_stamp(stamp: &str) -> Option<u64> {
    let b = stamp.as_bytes();
    if b.len() != 16 || b[8] != b'T' || b[15] != b'Z' {
        return None;
    }
    let text = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &stamp[0..4],
        &stamp[4..6],
        &stamp[6..8],
        &stamp[9..11],
        &stamp[11..13],
        &stamp[13..15]
    );
    rfc3339_ns(&text).and_then(|ns| u64::try_from(ns).ok())
}

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

    #[test]
    fn utc_stamps_round_trip() {
        let ns = parse_timestamp("2026-11-26T10:15:30Z").unwrap();
        assert_eq!(format_utc_stamp(ns + 999_999_999), "20261126T101530Z");
        assert_eq!(parse_utc_stamp("20261126T101530Z"), Some(ns));
        // A leap day, and the end of a year.
        let ns = parse_timestamp("2024-02-29T23:59:59Z").unwrap();
        assert_eq!(format_utc_stamp(ns), "20240229T235959Z");
        let ns = parse_timestamp("1999-12-31T00:00:00Z").unwrap();
        assert_eq!(format_utc_stamp(ns), "19991231T000000Z");
        assert_eq!(parse_utc_stamp("20240230T000000Z"), None);
        assert_eq!(parse_utc_stamp("2024-02-29"), None);
    }

    #[test]
    fn sizes_parse_with_units() {
        assert_eq!(parse_size("300"), Ok(300));
        assert_eq!(parse_size("1KB"), Ok(1000));
        assert_eq!(parse_size("256KiB"), Ok(262_144));
        assert_eq!(parse_size("1.5 MiB"), Ok(1_572_864));
        assert_eq!(parse_size("2GB"), Ok(2_000_000_000));
        assert_eq!(parse_size("1gib"), Ok(1 << 30));
        assert!(
            parse_size("12 parsecs")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert!(parse_size("MiB").is_err());
        // A percentage is offered only where one is accepted.
        assert!(parse_size("10%").unwrap_err().ends_with("GB or GiB)"));
        assert!(parse_size_limit("10XB").unwrap_err().ends_with("GiB or %)"));
        assert!(
            parse_duration("10m")
                .unwrap_err()
                .ends_with("(use us, ms or s)")
        );
        assert!(
            parse_duration_limit("10m")
                .unwrap_err()
                .ends_with("(use us, ms, s or %)")
        );
        assert_eq!(parse_size_limit("5%"), Ok(Limit::Percent(5.0)));
        assert!(parse_size_limit("-5%").is_err());
        assert_eq!(parse_count_limit("100"), Ok(Limit::Absolute(100)));
        assert!(parse_count_limit("1.5").is_err());
    }

    #[test]
    fn durations_parse_with_units() {
        assert_eq!(parse_duration("500us"), Ok(500));
        assert_eq!(parse_duration("500 µs"), Ok(500));
        assert_eq!(parse_duration("20ms"), Ok(20_000));
        assert_eq!(parse_duration("1.5s"), Ok(1_500_000));
        assert!(parse_duration("20").unwrap_err().contains("needs a unit"));
        assert!(
            parse_duration("2 min")
                .unwrap_err()
                .contains("unknown unit")
        );
        assert_eq!(parse_duration_limit("50%"), Ok(Limit::Percent(50.0)));
        assert_eq!(format_us(850), "850 µs");
        assert_eq!(format_us(12_345), "12.3 ms");
        assert_eq!(format_us(1_250_000), "1.25 s");
        assert_eq!(format_us_delta(-850), "-850 µs");
        assert_eq!(format_us_delta(391_300), "+391.3 ms");
    }

    #[test]
    fn limits_resolve_against_the_base() {
        assert_eq!(Limit::Percent(10.0).resolve(2000), 200.0);
        assert_eq!(Limit::Absolute(7).resolve(2000), 7.0);
    }

    #[test]
    fn numbers_format_for_people() {
        assert_eq!(format_size(812), "812 B");
        assert_eq!(format_size(2_921_451), "2.79 MiB");
        assert_eq!(format_size_delta(294_912), "+288.00 KiB");
        assert_eq!(format_size_delta(-2048), "-2.00 KiB");
        assert_eq!(format_size_delta(0), "0 B");
        assert_eq!(format_count(107_575), "107,575");
        assert_eq!(format_count(999), "999");
        assert_eq!(format_count_delta(6000), "+6,000");
        assert_eq!(format_count_delta(-1_234_567), "-1,234,567");
    }

    #[test]
    fn timestamps_parse_as_nanoseconds_or_rfc_3339() {
        // `date -u -d 2026-11-24T05:00:00Z +%s` says 1795496400.
        let t = 1_795_496_400_000_000_000;
        assert_eq!(parse_timestamp("1795496400000000000"), Ok(t));
        assert_eq!(parse_timestamp("2026-11-24T05:00:00Z"), Ok(t));
        assert_eq!(parse_timestamp(" 2026-11-24t05:00:00z "), Ok(t));
        assert_eq!(parse_timestamp("2026-11-24 05:00:00Z"), Ok(t));
        // `git log --format=%cI` writes the committer's offset.
        assert_eq!(parse_timestamp("2026-11-24T13:00:00+08:00"), Ok(t));
        assert_eq!(parse_timestamp("2026-11-23T23:30:00-05:30"), Ok(t));
        assert_eq!(
            parse_timestamp("2026-11-24T05:00:00.5Z"),
            Ok(t + 500_000_000)
        );
        assert_eq!(
            parse_timestamp("2026-11-24T05:00:00.1234567891Z"),
            Ok(t + 123_456_789)
        );
        // Leap days, and the ends of the range.
        assert_eq!(
            parse_timestamp("2024-02-29T00:00:00Z"),
            Ok(1_709_164_800_000_000_000)
        );
        assert_eq!(
            parse_timestamp("2000-03-01T00:00:00Z"),
            Ok(951_868_800_000_000_000)
        );
        assert_eq!(
            parse_timestamp("2262-04-11T23:47:16.854775807Z"),
            Ok(i64::MAX as u64)
        );
        for bad in [
            "",
            "yesterday",
            "2026-11-24",
            "2026-11-24T05:00Z",
            "2026-11-24T05:00:00",
            "2026-11-24T05:00:00+0800",
            "2026-11-24T05:00:00.Z",
            "2026-13-01T00:00:00Z",
            "2023-02-29T00:00:00Z",
            "2100-02-29T00:00:00Z",
            "2026-11-31T00:00:00Z",
            "2026-11-24T24:00:00Z",
            "2026-11-24T05:00:00+24:00",
            "2026-1-24T05:00:00Z",
            "+026-11-24T05:00:00Z",
            "-1795496400000000000",
            "1.5e18",
        ] {
            let e = parse_timestamp(bad).unwrap_err();
            assert!(e.contains("RFC 3339"), "{bad}: {e}");
        }
        assert!(
            parse_timestamp("2262-04-11T23:47:16.854775808Z")
                .unwrap_err()
                .contains("RFC 3339")
        );
        assert!(
            parse_timestamp("9223372036854775808")
                .unwrap_err()
                .contains("out of range")
        );
        // Seconds where nanoseconds were meant, and times before 1973.
        assert!(
            parse_timestamp("1795496400")
                .unwrap_err()
                .contains("not in nanoseconds")
        );
        assert!(
            parse_timestamp("1970-01-01T00:00:00Z")
                .unwrap_err()
                .contains("before 1973")
        );
        assert!(
            parse_timestamp("1969-12-31T23:59:59Z")
                .unwrap_err()
                .contains("before 1973")
        );
    }
}
