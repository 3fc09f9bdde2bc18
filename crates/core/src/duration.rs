//! Go-style durations (`30s`, `5m`, `1h30m`, `500ms`), as Flux's fields and flags take them.

use std::time::Duration;

/// Parses a Go duration string (`300ms`, `1.5s`, `2m30s`, `1h`); a bare `0` is zero.
pub fn parse(text: &str) -> Result<Duration, String> {
    let text = text.trim();
    if text == "0" {
        return Ok(Duration::ZERO);
    }
    let bad = || format!("invalid duration {text:?} (expected for example 30s, 5m, 1h30m)");
    let mut rest = text;
    let mut total = 0f64;
    if rest.is_empty() {
        return Err(bad());
    }
    while !rest.is_empty() {
        let digits = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .ok_or_else(bad)?;
        if digits == 0 {
            return Err(bad());
        }
        let number: f64 = rest[..digits].parse().map_err(|_| bad())?;
        rest = &rest[digits..];
        let unit_len = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let seconds = match &rest[..unit_len] {
            "ns" => 1e-9,
            "us" | "µs" => 1e-6,
            "ms" => 1e-3,
            "s" => 1.0,
            "m" => 60.0,
            "h" => 3600.0,
            _ => return Err(bad()),
        };
        total += number * seconds;
        rest = &rest[unit_len..];
    }
    // Go durations are int64 nanoseconds: about 292 years at most.
    if !total.is_finite() || total > MAX_SECONDS {
        return Err(format!("invalid duration {text:?}: overflow"));
    }
    Duration::try_from_secs_f64(total).map_err(|_| bad())
}

/// Formats `d` as Go's `time.Duration.String` does (`5m0s`, `1h0m0s`, `1.5s`, `250ms`,
/// `0s`), the form Flux's messages carry.
pub fn format(d: Duration) -> String {
    let nanos = d.as_nanos();
    if nanos == 0 {
        return "0s".into();
    }
    if nanos < 1_000_000_000 {
        let (unit, scale) = if nanos < 1_000 {
            ("ns", 1)
        } else if nanos < 1_000_000 {
            ("µs", 1_000)
        } else {
            ("ms", 1_000_000)
        };
        return format!("{}{unit}", fraction(nanos, scale));
    }
    let hours = nanos / 3_600_000_000_000;
    let minutes = (nanos / 60_000_000_000) % 60;
    let seconds = fraction(nanos % 60_000_000_000, 1_000_000_000);
    if hours > 0 {
        format!("{hours}h{minutes}m{seconds}s")
    } else if minutes > 0 {
        format!("{minutes}m{seconds}s")
    } else {
        format!("{seconds}s")
    }
}

/// `value / scale` with the fraction's trailing zeros dropped.
fn fraction(value: u128, scale: u128) -> String {
    let whole = value / scale;
    let rest = value % scale;
    if rest == 0 {
        return whole.to_string();
    }
    let digits = scale.to_string().len() - 1;
    let frac = format!("{rest:0digits$}");
    format!("{whole}.{}", frac.trim_end_matches('0'))
}

/// The longest Go duration, in seconds (`math.MaxInt64` nanoseconds).
const MAX_SECONDS: f64 = 9_223_372_036.854_775;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_go_durations() {
        assert_eq!(parse("30s"), Ok(Duration::from_secs(30)));
        assert_eq!(parse("1h30m"), Ok(Duration::from_secs(5400)));
        assert_eq!(parse("250ms"), Ok(Duration::from_millis(250)));
        assert_eq!(parse("0"), Ok(Duration::ZERO));
        assert!(parse("5").is_err());
        assert!(parse("5x").is_err());
        assert!(parse("").is_err());
        assert!(
            parse("99999999999999999h")
                .unwrap_err()
                .contains("overflow")
        );
        assert!(parse("1e400s").is_err());
    }

    #[test]
    fn formats_as_go_does() {
        // Outputs of Go's time.Duration.String for the same values.
        let cases = [
            (Duration::ZERO, "0s"),
            (Duration::from_secs(300), "5m0s"),
            (Duration::from_secs(30), "30s"),
            (Duration::from_secs(3600), "1h0m0s"),
            (Duration::from_secs(5430), "1h30m30s"),
            (Duration::from_millis(1500), "1.5s"),
            (Duration::from_millis(250), "250ms"),
            (Duration::from_nanos(1_234_567_891), "1.234567891s"),
            (Duration::from_nanos(61_000_000_001), "1m1.000000001s"),
            (Duration::from_micros(1500), "1.5ms"),
            (Duration::from_nanos(1500), "1.5µs"),
            (Duration::from_nanos(7), "7ns"),
        ];
        for (d, want) in cases {
            assert_eq!(format(d), want, "{d:?}");
        }
    }
}
