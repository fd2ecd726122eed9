//! Sizes and limits as people write them on a command line, and back.

/// A growth limit: absolute, or relative to the base value.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Limit {
    /// Bytes, or a plain count.
    Absolute(u64),
    /// Percent of the base value.
    Percent(f64),
}

impl Limit {
    /// The absolute limit for a given base value.
    pub fn resolve(self, base: u64) -> f64 {
        match self {
            #[allow(clippy::cast_precision_loss)]
            Limit::Absolute(v) => v as f64,
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

#[cfg(test)]
#[allow(clippy::float_cmp)]
mod tests {
    use super::*;

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
}
