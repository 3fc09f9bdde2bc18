//! Sprig's dates: `now`, `date`, `dateInZone`, `htmlDate`, `toDate`, `dateModify`, `ago`,
//! `duration`, `durationRound`, `unixEpoch`, on a Go `time.Time` with Go's layout strings
//! (`2006-01-02T15:04:05Z07:00`). Zones other than UTC and the machine's own are read as UTC
//! (Tidegate carries no time zone database).

use std::any::Any;
use std::rc::Rc;

use chrono::{DateTime, Datelike, FixedOffset, Offset, TimeZone, Timelike, Utc};

use super::{i, s};
use crate::template::FuncMap;
use crate::template::func::{Func, Ty};
use crate::template::value::{IntKind, Object, Value};

/// Go's `time.Time`: an instant and the zone it is shown in.
#[derive(Debug, Clone)]
pub struct GoTime {
    pub at: DateTime<FixedOffset>,
    /// The zone's abbreviation (`UTC`, `MST`).
    pub zone: String,
}

impl GoTime {
    fn now() -> GoTime {
        let local = chrono::Local::now();
        let offset = local.offset().fix();
        GoTime {
            at: local.with_timezone(&offset),
            zone: zone_name(offset),
        }
    }

    fn utc(at: DateTime<FixedOffset>) -> GoTime {
        GoTime {
            at: at.with_timezone(&Utc.fix()),
            zone: "UTC".into(),
        }
    }

    /// The same instant shown in the machine's zone.
    fn local(&self) -> GoTime {
        let offset = chrono::Local
            .offset_from_utc_datetime(&self.at.naive_utc())
            .fix();
        GoTime {
            at: self.at.with_timezone(&offset),
            zone: zone_name(offset),
        }
    }
}

fn zone_name(offset: FixedOffset) -> String {
    if offset.local_minus_utc() == 0 {
        "UTC".into()
    } else {
        fmt_offset(offset.local_minus_utc(), false, false, false)
    }
}

impl Object for GoTime {
    fn type_name(&self) -> String {
        "time.Time".into()
    }
    fn field(&self, _: &str) -> Option<Value> {
        None
    }
    fn method(self: Rc<Self>, name: &str) -> Option<Rc<Func>> {
        let t = self.clone();
        Some(Rc::new(match name {
            "Unix" => Func::new(name, &[], None, move |_, _| {
                Ok(Value::Int(t.at.timestamp(), IntKind::Int64))
            }),
            "Year" => Func::new(name, &[], None, move |_, _| {
                Ok(Value::int(i64::from(t.at.year())))
            }),
            "Format" => Func::new(name, &[Ty::String], None, move |_, a| {
                Ok(Value::str(&format_layout(&t.at, s(&a[0]), &t.zone)))
            }),
            "UTC" => Func::new(name, &[], None, move |_, _| {
                Ok(Value::Object(Rc::new(GoTime::utc(t.at))))
            }),
            _ => return None,
        }))
    }
    fn is_pointer(&self) -> bool {
        false
    }
    fn string(&self) -> Option<String> {
        Some(format_layout(
            &self.at,
            "2006-01-02 15:04:05.999999999 -0700 MST",
            &self.zone,
        ))
    }
    fn json_text(&self) -> Option<String> {
        Some(format!(
            "\"{}\"",
            format_layout(&self.at, "2006-01-02T15:04:05.999999999Z07:00", &self.zone)
        ))
    }
    fn as_any(&self) -> &dyn Any {
        self
    }
}

fn time_of(v: &Value) -> Option<GoTime> {
    match v {
        Value::Object(o) => o.as_any().downcast_ref::<GoTime>().cloned(),
        Value::Int(n, IntKind::Int | IntKind::Int64 | IntKind::Int32) => Utc
            .timestamp_opt(*n, 0)
            .single()
            .map(|t| GoTime::utc(t.fixed_offset()).local()),
        _ => None,
    }
}

fn date_in_zone(layout: &str, date: &Value, zone: &str) -> String {
    let t = time_of(date).unwrap_or_else(GoTime::now);
    let shown = if zone == "Local" {
        t.local()
    } else {
        GoTime::utc(t.at)
    };
    format_layout(&shown.at, layout, &shown.zone)
}

pub(super) fn register(m: &mut FuncMap) {
    use Ty::{Any as A, String as Str};
    m.insert(Func::new("now", &[], None, |_, _| {
        Ok(Value::Object(Rc::new(GoTime::now())))
    }));
    m.insert(Func::new("date", &[Str, A], None, |_, a| {
        Ok(Value::str(&date_in_zone(s(&a[0]), &a[1], "Local")))
    }));
    m.insert(Func::new("dateInZone", &[Str, A, Str], None, |_, a| {
        Ok(Value::str(&date_in_zone(s(&a[0]), &a[1], s(&a[2]))))
    }));
    m.alias("date_in_zone", "dateInZone");
    m.insert(Func::new("htmlDate", &[A], None, |_, a| {
        Ok(Value::str(&date_in_zone("2006-01-02", &a[0], "Local")))
    }));
    m.insert(Func::new("htmlDateInZone", &[A, Str], None, |_, a| {
        Ok(Value::str(&date_in_zone("2006-01-02", &a[0], s(&a[1]))))
    }));
    m.insert(Func::new("toDate", &[Str, Str], None, |_, a| {
        Ok(Value::Object(Rc::new(
            parse_layout(s(&a[0]), s(&a[1])).unwrap_or_else(|_| zero_time()),
        )))
    }));
    m.insert(Func::new("mustToDate", &[Str, Str], None, |_, a| {
        Ok(Value::Object(Rc::new(parse_layout(s(&a[0]), s(&a[1]))?)))
    }));
    for (name, must) in [
        ("dateModify", false),
        ("mustDateModify", true),
        ("date_modify", false),
        ("must_date_modify", true),
    ] {
        m.insert(Func::new(
            name,
            &[Str, Ty::Named("time.Time")],
            None,
            move |_, a| {
                let t = time_of(&a[1]).unwrap_or_else(zero_time);
                match parse_duration(s(&a[0])) {
                    Ok(d) => Ok(Value::Object(Rc::new(GoTime {
                        at: t.at + chrono::Duration::nanoseconds(d as i64),
                        zone: t.zone,
                    }))),
                    Err(e) if must => Err(e),
                    Err(_) => Ok(a[1].clone()),
                }
            },
        ));
    }
    m.insert(Func::new("ago", &[A], None, |_, a| {
        let t = time_of(&a[0]).unwrap_or_else(GoTime::now);
        let since = Utc::now()
            .signed_duration_since(t.at)
            .num_nanoseconds()
            .unwrap_or(0);
        let rounded = (since as f64 / 1e9).round() as i128 * 1_000_000_000;
        Ok(Value::str(&format_duration(rounded)))
    }));
    m.insert(Func::new("duration", &[A], None, |_, a| {
        let n: i64 = match &a[0] {
            Value::String(v) => v.parse().unwrap_or(0),
            Value::Int(n, IntKind::Int64) => *n,
            _ => 0,
        };
        Ok(Value::str(&format_duration(i128::from(n) * 1_000_000_000)))
    }));
    m.insert(Func::new("durationRound", &[A], None, |_, a| {
        let d: i128 = match &a[0] {
            Value::String(v) => parse_duration(v).unwrap_or(0),
            Value::Int(n, IntKind::Int64) => i128::from(*n),
            v => match time_of(v) {
                Some(t) if matches!(v, Value::Object(_)) => i128::from(
                    Utc::now()
                        .signed_duration_since(t.at)
                        .num_nanoseconds()
                        .unwrap_or(0),
                ),
                _ => 0,
            },
        };
        Ok(Value::str(&duration_round(d)))
    }));
    m.insert(Func::new(
        "unixEpoch",
        &[Ty::Named("time.Time")],
        None,
        |_, a| {
            Ok(Value::str(
                &time_of(&a[0])
                    .map(|t| t.at.timestamp())
                    .unwrap_or(0)
                    .to_string(),
            ))
        },
    ));
    let _ = i;
}

/// Go's zero `time.Time`.
fn zero_time() -> GoTime {
    let at = Utc
        .with_ymd_and_hms(1, 1, 1, 0, 0, 0)
        .single()
        .map(|t| t.fixed_offset())
        .unwrap_or_else(|| Utc::now().fixed_offset());
    GoTime {
        at,
        zone: "UTC".into(),
    }
}

fn duration_round(d: i128) -> String {
    let u = d.unsigned_abs();
    const SECOND: u128 = 1_000_000_000;
    const MINUTE: u128 = 60 * SECOND;
    const HOUR: u128 = 60 * MINUTE;
    const DAY: u128 = 24 * HOUR;
    let (month, year) = (30 * DAY, 365 * DAY);
    if u > year {
        format!("{}y", u / year)
    } else if u > month {
        format!("{}mo", u / month)
    } else if u > DAY {
        format!("{}d", u / DAY)
    } else if u > HOUR {
        format!("{}h", u / HOUR)
    } else if u > MINUTE {
        format!("{}m", u / MINUTE)
    } else if u > SECOND {
        format!("{}s", u / SECOND)
    } else {
        "0s".into()
    }
}

/// Go's `time.ParseDuration`, in nanoseconds.
pub fn parse_duration(text: &str) -> Result<i128, String> {
    let orig = text;
    let err = || {
        format!(
            "time: invalid duration {}",
            crate::template::quote::quote(orig)
        )
    };
    let (neg, mut rest) = match text.as_bytes().first() {
        Some(b'-') => (true, &text[1..]),
        Some(b'+') => (false, &text[1..]),
        _ => (false, text),
    };
    if rest == "0" {
        return Ok(0);
    }
    if rest.is_empty() {
        return Err(err());
    }
    let mut total: f64 = 0.0;
    while !rest.is_empty() {
        let num_end = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let number = &rest[..num_end];
        if number.is_empty() || number == "." {
            return Err(err());
        }
        let value: f64 = number.parse().map_err(|_| err())?;
        rest = &rest[num_end..];
        let unit_end = rest
            .find(|c: char| c.is_ascii_digit() || c == '.')
            .unwrap_or(rest.len());
        let unit = &rest[..unit_end];
        rest = &rest[unit_end..];
        let scale = match unit {
            "ns" => 1.0,
            "us" | "µs" | "μs" => 1e3,
            "ms" => 1e6,
            "s" => 1e9,
            "m" => 60e9,
            "h" => 3600e9,
            "" => {
                return Err(format!(
                    "time: missing unit in duration {}",
                    crate::template::quote::quote(orig)
                ));
            }
            u => {
                return Err(format!(
                    "time: unknown unit {} in duration {}",
                    crate::template::quote::quote(u),
                    crate::template::quote::quote(orig)
                ));
            }
        };
        total += value * scale;
    }
    let n = total.round() as i128;
    Ok(if neg { -n } else { n })
}

/// Go's `time.Duration.String()`.
pub fn format_duration(d: i128) -> String {
    if d == 0 {
        return "0s".into();
    }
    let neg = d < 0;
    let u = d.unsigned_abs();
    let sign = if neg { "-" } else { "" };
    if u < 1_000_000_000 {
        let (value, unit) = if u < 1_000 {
            return format!("{sign}{u}ns");
        } else if u < 1_000_000 {
            (u as f64 / 1e3, "µs")
        } else {
            (u as f64 / 1e6, "ms")
        };
        return format!("{sign}{}{unit}", trim_float(value));
    }
    let secs_total = u / 1_000_000_000;
    let frac = u % 1_000_000_000;
    let hours = secs_total / 3600;
    let minutes = (secs_total % 3600) / 60;
    let secs = secs_total % 60;
    let mut sec_text = secs.to_string();
    if frac > 0 {
        let f = format!("{frac:09}");
        sec_text.push('.');
        sec_text.push_str(f.trim_end_matches('0'));
    }
    if hours > 0 {
        format!("{sign}{hours}h{minutes}m{sec_text}s")
    } else if minutes > 0 {
        format!("{sign}{minutes}m{sec_text}s")
    } else {
        format!("{sign}{sec_text}s")
    }
}

fn trim_float(v: f64) -> String {
    let s = format!("{v:.9}");
    s.trim_end_matches('0').trim_end_matches('.').to_string()
}

const MONTHS: [&str; 12] = [
    "January",
    "February",
    "March",
    "April",
    "May",
    "June",
    "July",
    "August",
    "September",
    "October",
    "November",
    "December",
];
const DAYS: [&str; 7] = [
    "Sunday",
    "Monday",
    "Tuesday",
    "Wednesday",
    "Thursday",
    "Friday",
    "Saturday",
];

/// The layout elements Go recognizes, longest first where they share a prefix.
const TOKENS: &[&str] = &[
    "January",
    "Jan",
    "Monday",
    "Mon",
    "MST",
    "2006",
    "-07:00:00",
    "-070000",
    "-07:00",
    "-0700",
    "-07",
    "Z07:00:00",
    "Z070000",
    "Z07:00",
    "Z0700",
    "Z07",
    "002",
    "01",
    "02",
    "03",
    "04",
    "05",
    "06",
    "__2",
    "_2",
    "15",
    "1",
    "2",
    "3",
    "4",
    "5",
    "PM",
    "pm",
];

fn fmt_offset(secs: i32, z: bool, colon: bool, seconds: bool) -> String {
    if z && secs == 0 {
        return "Z".into();
    }
    let sign = if secs < 0 { '-' } else { '+' };
    let a = secs.unsigned_abs();
    let (h, m, s) = (a / 3600, (a % 3600) / 60, a % 60);
    let mut out = format!("{sign}{h:02}");
    if colon {
        out.push_str(&format!(":{m:02}"));
        if seconds {
            out.push_str(&format!(":{s:02}"));
        }
    } else {
        out.push_str(&format!("{m:02}"));
        if seconds {
            out.push_str(&format!("{s:02}"));
        }
    }
    out
}

/// The next layout element at the start of `rest`: a token, or a fractional-second run
/// (`.000`, `.999`, `,000`).
fn next_token(rest: &str) -> Option<&str> {
    let b = rest.as_bytes();
    if matches!(b.first(), Some(b'.' | b',')) && matches!(b.get(1), Some(b'0' | b'9')) {
        let digit = b[1];
        let n = b[1..].iter().take_while(|c| **c == digit).count();
        if !b.get(1 + n).is_some_and(u8::is_ascii_digit) {
            return Some(&rest[..1 + n]);
        }
    }
    TOKENS
        .iter()
        .find(|t| rest.starts_with(*t))
        .map(|t| &rest[..t.len()])
}

/// Go's `time.Format`.
pub fn format_layout(t: &DateTime<FixedOffset>, layout: &str, zone: &str) -> String {
    let mut out = String::new();
    let mut rest = layout;
    while !rest.is_empty() {
        let Some(tok) = next_token(rest) else {
            let c = rest.chars().next().unwrap_or(' ');
            out.push(c);
            rest = &rest[c.len_utf8()..];
            continue;
        };
        rest = &rest[tok.len()..];
        let off = t.offset().local_minus_utc();
        let hour12 = match t.hour() % 12 {
            0 => 12,
            h => h,
        };
        match tok {
            "January" => out.push_str(MONTHS[t.month0() as usize]),
            "Jan" => out.push_str(&MONTHS[t.month0() as usize][..3]),
            "Monday" => out.push_str(DAYS[t.weekday().num_days_from_sunday() as usize]),
            "Mon" => out.push_str(&DAYS[t.weekday().num_days_from_sunday() as usize][..3]),
            "MST" => out.push_str(if zone.is_empty() { "UTC" } else { zone }),
            "2006" => out.push_str(&format!("{:04}", t.year())),
            "06" => out.push_str(&format!("{:02}", t.year() % 100)),
            "01" => out.push_str(&format!("{:02}", t.month())),
            "1" => out.push_str(&t.month().to_string()),
            "02" => out.push_str(&format!("{:02}", t.day())),
            "_2" => out.push_str(&format!("{:>2}", t.day())),
            "2" => out.push_str(&t.day().to_string()),
            "002" => out.push_str(&format!("{:03}", t.ordinal())),
            "__2" => out.push_str(&format!("{:>3}", t.ordinal())),
            "15" => out.push_str(&format!("{:02}", t.hour())),
            "03" => out.push_str(&format!("{hour12:02}")),
            "3" => out.push_str(&hour12.to_string()),
            "04" => out.push_str(&format!("{:02}", t.minute())),
            "4" => out.push_str(&t.minute().to_string()),
            "05" => out.push_str(&format!("{:02}", t.second())),
            "5" => out.push_str(&t.second().to_string()),
            "PM" => out.push_str(if t.hour() >= 12 { "PM" } else { "AM" }),
            "pm" => out.push_str(if t.hour() >= 12 { "pm" } else { "am" }),
            "-07:00:00" => out.push_str(&fmt_offset(off, false, true, true)),
            "-070000" => out.push_str(&fmt_offset(off, false, false, true)),
            "-07:00" => out.push_str(&fmt_offset(off, false, true, false)),
            "-0700" => out.push_str(&fmt_offset(off, false, false, false)),
            "-07" => out.push_str(&fmt_offset(off, false, false, false)[..3]),
            "Z07:00:00" => out.push_str(&fmt_offset(off, true, true, true)),
            "Z070000" => out.push_str(&fmt_offset(off, true, false, true)),
            "Z07:00" => out.push_str(&fmt_offset(off, true, true, false)),
            "Z0700" => out.push_str(&fmt_offset(off, true, false, false)),
            "Z07" => {
                let o = fmt_offset(off, true, false, false);
                out.push_str(if o == "Z" { "Z" } else { &o[..3] });
            }
            frac => {
                let sep = &frac[..1];
                let digits = frac.len() - 1;
                let nanos = format!("{:09}", t.nanosecond() % 1_000_000_000);
                let shown = &nanos[..digits.min(9)];
                if frac.as_bytes()[1] == b'9' {
                    let trimmed = shown.trim_end_matches('0');
                    if !trimmed.is_empty() {
                        out.push_str(sep);
                        out.push_str(trimmed);
                    }
                } else {
                    out.push_str(sep);
                    out.push_str(shown);
                }
            }
        }
    }
    out
}

/// Go's `time.ParseInLocation` with the machine's zone, for the elements charts use.
pub fn parse_layout(layout: &str, value: &str) -> Result<GoTime, String> {
    let err = || {
        format!(
            "parsing time {} as {}: cannot parse {} as {}",
            crate::template::quote::quote(value),
            crate::template::quote::quote(layout),
            crate::template::quote::quote(value),
            crate::template::quote::quote(layout)
        )
    };
    let (mut year, mut month, mut day, mut hour, mut min, mut sec, mut nanos) =
        (1i32, 1u32, 1u32, 0u32, 0u32, 0u32, 0u32);
    let mut pm: Option<bool> = None;
    let mut offset: Option<i32> = None;
    let mut rest = layout;
    let mut v = value;
    let num = |v: &mut &str, min_len: usize, max_len: usize| -> Option<u32> {
        let n = v
            .bytes()
            .take(max_len)
            .take_while(u8::is_ascii_digit)
            .count();
        if n < min_len {
            return None;
        }
        let out = v[..n].parse().ok();
        *v = &v[n..];
        out
    };
    while !rest.is_empty() {
        let Some(tok) = next_token(rest) else {
            let c = rest.chars().next().unwrap_or(' ');
            if !v.starts_with(c) {
                return Err(err());
            }
            rest = &rest[c.len_utf8()..];
            v = &v[c.len_utf8()..];
            continue;
        };
        rest = &rest[tok.len()..];
        match tok {
            "2006" => year = num(&mut v, 4, 4).ok_or_else(err)? as i32,
            "06" => year = 2000 + num(&mut v, 2, 2).ok_or_else(err)? as i32,
            "01" => month = num(&mut v, 2, 2).ok_or_else(err)?,
            "1" => month = num(&mut v, 1, 2).ok_or_else(err)?,
            "02" => day = num(&mut v, 2, 2).ok_or_else(err)?,
            "_2" => {
                v = v.strip_prefix(' ').unwrap_or(v);
                day = num(&mut v, 1, 2).ok_or_else(err)?;
            }
            "2" => day = num(&mut v, 1, 2).ok_or_else(err)?,
            "15" => hour = num(&mut v, 1, 2).ok_or_else(err)?,
            "03" => hour = num(&mut v, 2, 2).ok_or_else(err)?,
            "3" => hour = num(&mut v, 1, 2).ok_or_else(err)?,
            "04" => min = num(&mut v, 2, 2).ok_or_else(err)?,
            "4" => min = num(&mut v, 1, 2).ok_or_else(err)?,
            "05" => sec = num(&mut v, 2, 2).ok_or_else(err)?,
            "5" => sec = num(&mut v, 1, 2).ok_or_else(err)?,
            "PM" | "pm" => {
                let word = v.get(..2).ok_or_else(err)?.to_ascii_uppercase();
                pm = Some(match word.as_str() {
                    "PM" => true,
                    "AM" => false,
                    _ => return Err(err()),
                });
                v = &v[2..];
            }
            "January" | "Jan" => {
                let found = MONTHS.iter().enumerate().find(|(_, m)| {
                    let name = if tok == "Jan" { &m[..3] } else { m };
                    v.to_ascii_lowercase()
                        .starts_with(&name.to_ascii_lowercase())
                });
                let (idx, name) = found.ok_or_else(err)?;
                month = idx as u32 + 1;
                v = &v[if tok == "Jan" { 3 } else { name.len() }..];
            }
            "Monday" | "Mon" => {
                let found = DAYS.iter().find(|d| {
                    let name = if tok == "Mon" { &d[..3] } else { d };
                    v.to_ascii_lowercase()
                        .starts_with(&name.to_ascii_lowercase())
                });
                let name = found.ok_or_else(err)?;
                v = &v[if tok == "Mon" { 3 } else { name.len() }..];
            }
            "MST" => {
                let n = v.bytes().take_while(u8::is_ascii_uppercase).count();
                v = &v[n..];
            }
            t if t.starts_with('Z') || t.starts_with('-') => {
                if t.starts_with('Z') && v.starts_with('Z') {
                    v = &v[1..];
                    offset = Some(0);
                    continue;
                }
                let sign = match v.as_bytes().first() {
                    Some(b'+') => 1,
                    Some(b'-') => -1,
                    _ => return Err(err()),
                };
                v = &v[1..];
                let h = num(&mut v, 2, 2).ok_or_else(err)? as i32;
                let mut m = 0;
                if t.len() > 3 {
                    v = v.strip_prefix(':').unwrap_or(v);
                    m = num(&mut v, 2, 2).ok_or_else(err)? as i32;
                }
                offset = Some(sign * (h * 3600 + m * 60));
            }
            frac => {
                v = v.strip_prefix(&frac[..1]).ok_or_else(err)?;
                let n = v.bytes().take_while(u8::is_ascii_digit).count();
                let digits = format!("{:0<9}", &v[..n.min(9)]);
                nanos = digits.parse().unwrap_or(0);
                v = &v[n..];
            }
        }
    }
    // A fractional second may follow the seconds even when the layout has none.
    if let Some(after) = v.strip_prefix('.')
        && after.bytes().all(|b| b.is_ascii_digit())
        && !after.is_empty()
    {
        nanos = format!("{:0<9}", &after[..after.len().min(9)])
            .parse()
            .unwrap_or(0);
        v = "";
    }
    if !v.is_empty() {
        return Err(format!(
            "parsing time {}: extra text: {}",
            crate::template::quote::quote(value),
            crate::template::quote::quote(v)
        ));
    }
    if let Some(pm) = pm {
        if pm && hour < 12 {
            hour += 12;
        } else if !pm && hour == 12 {
            hour = 0;
        }
    }
    let local_offset = chrono::Local::now().offset().fix();
    let off = offset
        .map(|o| FixedOffset::east_opt(o).unwrap_or(local_offset))
        .unwrap_or(local_offset);
    let at = off
        .with_ymd_and_hms(year, month, day, hour, min, sec)
        .single()
        .ok_or_else(|| {
            format!(
                "parsing time {}: day out of range",
                crate::template::quote::quote(value)
            )
        })?
        + chrono::Duration::nanoseconds(i64::from(nanos));
    Ok(GoTime {
        zone: zone_name(off),
        at,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn go_layouts() {
        let t = FixedOffset::east_opt(-7 * 3600)
            .unwrap()
            .with_ymd_and_hms(2006, 1, 2, 15, 4, 5)
            .unwrap();
        assert_eq!(
            format_layout(&t, "2006-01-02T15:04:05Z07:00", "MST"),
            "2006-01-02T15:04:05-07:00"
        );
        assert_eq!(
            format_layout(&t, "Mon Jan _2 3:04PM", "MST"),
            "Mon Jan  2 3:04PM"
        );
        assert_eq!(
            format_layout(&t, "02/01/06 .000 MST", "MST"),
            "02/01/06 .000 MST"
        );
        let p = parse_layout("2006-01-02", "2024-03-15").unwrap();
        assert_eq!(format_layout(&p.at, "2006-01-02", &p.zone), "2024-03-15");
        assert_eq!(format_duration(3_723_000_000_000), "1h2m3s");
        assert_eq!(format_duration(60_000_000_000), "1m0s");
        assert_eq!(format_duration(1_500_000), "1.5ms");
        assert_eq!(parse_duration("1h30m").unwrap(), 5_400_000_000_000);
        assert_eq!(duration_round(2 * 86_400_000_000_000 + 5), "2d");
    }
}
