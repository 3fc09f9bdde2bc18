//! Conformance of `tidegate_core::semver` with Go's `github.com/Masterminds/semver/v3`.
//!
//! `data/masterminds-semver.json` holds the upstream test tables (inputs and expected outputs)
//! and, under `observed_*` keys, outputs of the real Go package for extra probe inputs; its
//! `_meta` key says where every group comes from. Every test runs all rows of its group and
//! reports every failing row at once.
//!
//! Not run here, because they need Go-only switches or internal helpers: `versions_coerce_false`
//! and `version_errors_coerce_false` (`CoerceNewVersion = false`, `DetailedNewVersionErrors`),
//! `inc`, `set_prerelease`, `set_metadata`, `original_v_prefix` (no such API), and
//! `check_parse_constraint_only` (the internal parser's `""` means `*`; `NewConstraint("")` is an
//! error, which `observed_constraint_parse` checks). The internal-helper tables `rewrite_range`,
//! `is_x`, `parse_constraint`, `validate_prerelease` and `validate_metadata` are unit tests in
//! `src/semver/`.

use std::cmp::Ordering;
use std::fmt::{Debug, Display};
use std::sync::LazyLock;

use serde_json::Value;
use tidegate_core::semver::{Constraints, SemverError, Version};

static DATA: LazyLock<Value> = LazyLock::new(|| {
    serde_json::from_str(include_str!("data/masterminds-semver.json")).expect("valid test data")
});

fn rows(key: &str) -> &'static [Value] {
    DATA[key]
        .as_array()
        .unwrap_or_else(|| panic!("test data has no array {key:?}"))
}

fn text(v: &Value) -> &str {
    v.as_str()
        .unwrap_or_else(|| panic!("expected a string, got {v}"))
}

fn flag(v: &Value) -> bool {
    v.as_bool()
        .unwrap_or_else(|| panic!("expected a bool, got {v}"))
}

fn num(v: &Value) -> i64 {
    v.as_i64()
        .unwrap_or_else(|| panic!("expected a number, got {v}"))
}

/// Prints how many rows ran, and fails listing every failing row.
fn report(group: &str, total: usize, failures: &[String]) {
    eprintln!("{group}: {total} rows run, {} failed", failures.len());
    assert!(
        failures.is_empty(),
        "{group}: {} of {total} rows failed:\n  {}",
        failures.len(),
        failures.join("\n  ")
    );
}

/// Runs `check` on every row of `group`, then reports. `check` returns what is wrong with a
/// row; the failure lists it after the row itself.
fn table(group: &str, check: impl Fn(&Value) -> Result<(), String>) {
    let rows = rows(group);
    let failures: Vec<String> = rows
        .iter()
        .filter_map(|row| check(row).err().map(|e| format!("{row}: {e}")))
        .collect();
    report(group, rows.len(), &failures);
}

/// Fails a row with every message that is present, joined; passes it when there are none.
fn problems<const N: usize>(found: [Option<String>; N]) -> Result<(), String> {
    let found: Vec<String> = found.into_iter().flatten().collect();
    if found.is_empty() {
        Ok(())
    } else {
        Err(found.join("; "))
    }
}

/// Both parsed values, or a failure showing both parse results.
fn both<A: Debug, B: Debug, E: Debug, F: Debug>(
    a: Result<A, E>,
    b: Result<B, F>,
) -> Result<(A, B), String> {
    match (a, b) {
        (Ok(a), Ok(b)) => Ok((a, b)),
        (a, b) => Err(format!("parse gave {a:?} / {b:?}")),
    }
}

/// Checks that parsing failed exactly when `want_err`; gives the parsed value, if any.
fn expect_err<T: Display>(
    got: Result<T, SemverError>,
    want_err: bool,
) -> Result<Option<T>, String> {
    match (got, want_err) {
        (Ok(v), true) => Err(format!("parsed as {v}")),
        (Err(e), false) => Err(format!("error {e}")),
        (got, _) => Ok(got.ok()),
    }
}

fn ord_to_int(o: Ordering) -> i64 {
    match o {
        Ordering::Less => -1,
        Ordering::Equal => 0,
        Ordering::Greater => 1,
    }
}

/// Runs `[constraint, version, expected]` rows through `Check`, and checks that `Validate`
/// agrees with `Check`.
fn run_check_rows(group: &str, include_prerelease: bool) {
    table(group, |row| {
        let (c, v, want) = (text(&row[0]), text(&row[1]), flag(&row[2]));
        let cs = Constraints::parse(c)
            .map_err(|e| format!("constraint error: {e}"))?
            .with_include_prerelease(include_prerelease);
        let version = Version::parse(v).map_err(|e| format!("version error: {e}"))?;
        let got = cs.check(&version);
        let validated = cs.validate(&version);
        problems([
            (got != want).then(|| format!("check gave {got}")),
            (validated.is_ok() != got)
                .then(|| format!("validate gave {validated:?}, check gave {got}")),
        ])
    });
}

#[test]
fn check() {
    run_check_rows("check", false);
}

#[test]
fn check_include_prerelease() {
    run_check_rows("check_include_prerelease", true);
}

#[test]
fn observed_check() {
    run_check_rows("observed_check", false);
}

#[test]
fn constraint_errors() {
    table("constraint_errors", |row| {
        expect_err(Constraints::parse(text(row)), true).map(drop)
    });
}

#[test]
fn new_constraint() {
    table("new_constraint", |row| {
        let (c, ors, count, is_err) = (text(&row[0]), num(&row[1]), num(&row[2]), flag(&row[3]));
        let Some(cs) = expect_err(Constraints::parse(c), is_err)? else {
            return Ok(());
        };
        let got = (cs.groups() as i64, cs.group_len(0) as i64);
        problems([
            (got != (ors, count)).then(|| format!("got (groups, items in group 0) = {got:?}"))
        ])
    });
}

#[test]
fn observed_constraint_parse() {
    table("observed_constraint_parse", |row| {
        let (c, is_err, want) = (text(&row[0]), flag(&row[1]), text(&row[2]));
        let got = match Constraints::parse(c) {
            Ok(cs) => (false, cs.to_string()),
            Err(e) => (true, e.to_string()),
        };
        problems([(got != (is_err, want.to_string())).then(|| format!("got {got:?}"))])
    });
}

/// Runs `[input, is_err]` rows through `parse`.
fn run_version_rows(group: &str, parse: fn(&str) -> Result<Version, SemverError>) {
    table(group, |row| {
        expect_err(parse(text(&row[0])), flag(&row[1])).map(drop)
    });
}

#[test]
fn versions() {
    run_version_rows("versions", Version::parse);
}

#[test]
fn strict_versions() {
    run_version_rows("strict_versions", Version::parse_strict);
}

/// Runs `[input, error message]` rows through `parse`, which must fail with that message.
fn run_error_message_rows<T: Display>(group: &str, parse: fn(&str) -> Result<T, SemverError>) {
    table(group, |row| {
        let (s, want) = (text(&row[0]), text(&row[1]));
        match parse(s) {
            Ok(v) => Err(format!("parsed as {v}")),
            Err(e) if e.to_string() != want => Err(format!("error {e}")),
            Err(_) => Ok(()),
        }
    });
}

#[test]
fn observed_constraint_error_messages() {
    run_error_message_rows("observed_constraint_error_messages", Constraints::parse);
}

#[test]
fn observed_version_error_messages() {
    run_error_message_rows("observed_version_error_messages", Version::parse);
}

#[test]
fn observed_strict_version_error_messages() {
    run_error_message_rows(
        "observed_strict_version_error_messages",
        Version::parse_strict,
    );
}

#[test]
fn observed_version_parse() {
    // [input, NewVersion error or null, NewVersion String() or null, StrictNewVersion error or null]
    table("observed_version_parse", |row| {
        let s = text(&row[0]);
        let (loose_err, loose_str, strict_err) =
            (row[1].as_str(), row[2].as_str(), row[3].as_str());
        let loose = Version::parse(s);
        let got_err = loose.as_ref().err().map(|e| e.to_string());
        let got_str = loose.as_ref().ok().map(|v| v.to_string());
        let strict = Version::parse_strict(s).err().map(|e| e.to_string());
        problems([
            (got_err.as_deref() != loose_err || got_str.as_deref() != loose_str)
                .then(|| format!("loose gave {got_err:?} / {got_str:?}")),
            (strict.as_deref() != strict_err).then(|| format!("strict gave {strict:?}")),
        ])
    });
}

fn run_compare_rows(group: &str) {
    table(group, |row| {
        let (a, b, want) = (text(&row[0]), text(&row[1]), num(&row[2]));
        let (a, b) = both(Version::parse(a), Version::parse(b))?;
        let got = ord_to_int(a.cmp(&b));
        let back = ord_to_int(b.cmp(&a));
        problems([
            (got != want || back != -want).then(|| format!("got {got} (reversed {back})")),
            ((a == b) != (want == 0)).then(|| "== disagrees with cmp".to_string()),
        ])
    });
}

#[test]
fn compare() {
    run_compare_rows("compare");
}

#[test]
fn observed_compare() {
    run_compare_rows("observed_compare");
}

#[test]
fn relational() {
    table("relational", |row| {
        let (method, want) = (text(&row[0]), flag(&row[3]));
        // `null` is Go's nil *Version: only Equal takes it, and Option's == matches Go's rules.
        let parse = |v: &Value| v.as_str().map(Version::parse).transpose();
        let (a, b) = both(parse(&row[1]), parse(&row[2]))?;
        let got = match (method, &a, &b) {
            ("Equal", a, b) => a == b,
            ("LessThan", Some(a), Some(b)) => a < b,
            ("LessThanEqual", Some(a), Some(b)) => a <= b,
            ("GreaterThan", Some(a), Some(b)) => a > b,
            ("GreaterThanEqual", Some(a), Some(b)) => a >= b,
            _ => return Err("unknown method or nil operand".to_string()),
        };
        problems([(got != want).then(|| format!("got {got}"))])
    });
}

/// Runs `[input, want]` rows: `input` must parse, and `show` must print it as `want`.
fn run_version_text_rows(group: &str, show: fn(&Version) -> String) {
    table(group, |row| {
        let (s, want) = (text(&row[0]), text(&row[1]));
        match Version::parse(s) {
            Ok(v) if show(&v) == want => Ok(()),
            got => Err(format!("got {got:?}")),
        }
    });
}

#[test]
fn string() {
    run_version_text_rows("string", Version::to_string);
}

#[test]
fn original() {
    run_version_text_rows("original", |v| v.original().to_string());
}

#[test]
fn new_string() {
    table("new_string", |row| {
        let n = |i: usize| {
            row[i]
                .as_u64()
                .unwrap_or_else(|| panic!("{row}: not a u64"))
        };
        let v = Version::new(n(0), n(1), n(2), text(&row[3]), text(&row[4]));
        problems([(v.to_string() != text(&row[5])).then(|| format!("got {v}"))])
    });
}

#[test]
fn parts() {
    table("parts", |row| {
        let v = Version::parse(text(&row[0])).map_err(|e| format!("error {e}"))?;
        let got = serde_json::json!([
            text(&row[0]),
            v.major(),
            v.minor(),
            v.patch(),
            v.prerelease(),
            v.metadata()
        ]);
        problems([(got != *row).then(|| format!("got {got}"))])
    });
}

#[test]
fn collection_sort() {
    let row = rows("collection_sort");
    let mut versions: Vec<Version> = row[0]
        .as_array()
        .unwrap_or_else(|| panic!("inputs"))
        .iter()
        .filter_map(|s| Version::parse(text(s)).ok())
        .collect();
    versions.sort();
    let got: Vec<String> = versions.iter().map(Version::to_string).collect();
    let want: Vec<&str> = row[1]
        .as_array()
        .unwrap_or_else(|| panic!("sorted"))
        .iter()
        .map(text)
        .collect();
    let failures: Vec<String> = (got != want)
        .then(|| format!("sorted to {got:?}, want {want:?}"))
        .into_iter()
        .collect();
    report("collection_sort", 1, &failures);
}

/// Parses the `[constraint, version, include_prerelease, ..]` start of a row; the version is
/// parsed strictly, as in the upstream test.
fn constraint_and_version(row: &Value) -> Result<(Constraints, Version), String> {
    let (c, v, include) = (text(&row[0]), text(&row[1]), flag(&row[2]));
    let (cs, version) = both(Constraints::parse(c), Version::parse_strict(v))?;
    Ok((cs.with_include_prerelease(include), version))
}

#[test]
fn validate_messages() {
    // [constraint, version, include_prerelease, first message]
    table("validate_messages", |row| {
        let want = text(&row[3]);
        let (cs, version) = constraint_and_version(row)?;
        let validated = cs.validate(&version);
        let first = validated.as_ref().err().and_then(|msgs| msgs.first());
        problems([
            (first.map(String::as_str) != Some(want)).then(|| format!("got {validated:?}")),
            cs.check(&version).then(|| "check passed".to_string()),
        ])
    });
}

#[test]
fn validate_all_messages() {
    // [constraint, version, include_prerelease, all messages]
    table("validate_all_messages", |row| {
        let want: Vec<&str> = row[3]
            .as_array()
            .unwrap_or_else(|| panic!("{row}: messages"))
            .iter()
            .map(text)
            .collect();
        let (cs, version) = constraint_and_version(row)?;
        match cs.validate(&version) {
            Err(msgs) if msgs == want => Ok(()),
            got => Err(format!("got {got:?}")),
        }
    });
}

#[test]
fn constraint_string() {
    table("constraint_string", |row| {
        let (c, want) = (text(&row[0]), text(&row[1]));
        match Constraints::parse(c) {
            Ok(cs) if cs.to_string() == want => match Constraints::parse(want) {
                Ok(again) if again.to_string() == want => Ok(()),
                got => Err(format!("re-parse gave {got:?}")),
            },
            got => Err(format!("got {:?}", got.map(|cs| cs.to_string()))),
        }
    });
}

/// Runs everything on an input; only panics matter.
fn exercise(s: &str) {
    let probes = ["0.0.0", "1.2.3", "1.2.3-beta.1", "2.0.0-0", "0.0.1+meta"];
    let probes: Vec<Version> = probes
        .iter()
        .filter_map(|p| Version::parse(p).ok())
        .collect();
    if let Ok(v) = Version::parse(s) {
        let _ = (v.to_string(), v.original().len());
        for p in &probes {
            let _ = v.cmp(p);
        }
    }
    if let Ok(v) = Version::parse_strict(s) {
        let _ = v.to_string();
    }
    if let Ok(cs) = Constraints::parse(s) {
        let printed = cs.to_string();
        assert!(
            Constraints::parse(&printed).is_ok(),
            "{s:?} printed as {printed:?} does not re-parse"
        );
        for include in [false, true] {
            let cs = cs.clone().with_include_prerelease(include);
            for p in &probes {
                assert_eq!(cs.check(p), cs.validate(p).is_ok(), "{s:?} vs {p}");
            }
        }
    }
}

#[test]
fn fuzz_seeds() {
    let groups = rows("fuzz_seeds");
    let mut total = 0;
    for group in groups {
        for seed in group[1]
            .as_array()
            .unwrap_or_else(|| panic!("{group}: seeds"))
        {
            exercise(text(seed));
            total += 1;
        }
    }
    report("fuzz_seeds", total, &[]);
}

#[test]
fn generated_inputs_do_not_panic() {
    // A small deterministic generator over the characters that matter to the grammars.
    const ALPHABET: &[u8] = b"0123456789..--++xX*v ~^<>=!|,\t\nab";
    let mut state: u64 = 0x9e37_79b9_7f4a_7c15;
    let mut next = move || {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        state
    };
    for _ in 0..20_000 {
        let len = (next() % 14) as usize;
        let s: String = (0..len)
            .map(|_| ALPHABET[(next() % ALPHABET.len() as u64) as usize] as char)
            .collect();
        exercise(&s);
    }
    for s in [
        "1.2.3-é",
        "é",
        "~1.2 || ☃",
        "99999999999999999999999",
        "1.2.99999999999999999999",
    ] {
        exercise(s);
    }
}

// --- The Flux use: pick the highest tag that satisfies a range. ---

/// What Flux does with a `semver` ref: parse every tag loosely, drop the ones that do not parse
/// or do not match, keep the highest, and use its original tag text.
fn latest<'a>(range: &str, tags: &[&'a str]) -> Option<&'a str> {
    let cs = Constraints::parse(range).ok()?;
    tags.iter()
        .filter_map(|t| Version::parse(t).ok().map(|v| (v, *t)))
        .filter(|(v, _)| cs.check(v))
        .max_by(|a, b| a.0.cmp(&b.0))
        .map(|(_, t)| t)
}

const TAGS: &[&str] = &[
    "latest",
    "v0.9.0",
    "v1.0.0",
    "v1.2.3",
    "v1.10.0",
    "1.9.9",
    "v2.0.0-rc.1",
    "v2.0.0-rc.2",
    "v2.0.0",
    "v2.1.0-beta.1",
    "sha-1234abcd",
    "v3.0.0-alpha.1",
];

#[test]
fn flux_picks_highest_release_in_range() {
    assert_eq!(latest(">=1.0.0 <2.0.0", TAGS), Some("v1.10.0"));
    assert_eq!(latest("^1.x", TAGS), Some("v1.10.0"));
    assert_eq!(latest("~1.2", TAGS), Some("v1.2.3"));
    assert_eq!(latest("1.9.x", TAGS), Some("1.9.9"));
    assert_eq!(latest("*", TAGS), Some("v2.0.0"));
    assert_eq!(latest(">=2", TAGS), Some("v2.0.0"));
    assert_eq!(latest("<1.0.0", TAGS), Some("v0.9.0"));
}

#[test]
fn flux_prereleases_need_opting_in() {
    // Without a prerelease in the range, prerelease tags never match.
    assert_eq!(latest(">=3.0.0", TAGS), None);
    // `-0` opts the group in; then prereleases compete by plain SemVer order.
    assert_eq!(latest(">=3.0.0-0", TAGS), Some("v3.0.0-alpha.1"));
    // No npm-style "same major.minor.patch" rule: `2.1.0-beta.1` is below `2.1.0`.
    assert_eq!(latest(">=2.0.0-0 <2.1.0", TAGS), Some("v2.1.0-beta.1"));
    assert_eq!(latest(">=2.0.0-0 <2.1.0-0", TAGS), Some("v2.0.0"));
    assert_eq!(latest(">=2.0.0-0 <2.0.0", TAGS), Some("v2.0.0-rc.2"));
    assert_eq!(latest("*-0", TAGS), Some("v3.0.0-alpha.1"));
    // Only the group with the prerelease is opted in.
    assert_eq!(latest("<2 || >=3.0.0-0", TAGS), Some("v3.0.0-alpha.1"));
    assert_eq!(latest(">=2.1.0-0 <3 || <1", TAGS), Some("v3.0.0-alpha.1"));
    assert_eq!(
        latest(">=2.1.0-0 <3.0.0-0 || <1", TAGS),
        Some("v2.1.0-beta.1")
    );
    assert_eq!(latest(">=2.1.0 <3 || <1", TAGS), Some("v0.9.0"));
}

#[test]
fn flux_include_prerelease_switch() {
    let cs = Constraints::parse(">=2.0.0 <3")
        .expect("valid range")
        .with_include_prerelease(true);
    let best = TAGS
        .iter()
        .filter_map(|t| Version::parse(t).ok())
        .filter(|v| cs.check(v))
        .max();
    // `3.0.0-alpha.1 < 3.0.0`, so it is inside the range once prereleases are let in.
    assert_eq!(
        best.map(|v| v.original().to_string()),
        Some("v3.0.0-alpha.1".to_string())
    );
}

#[test]
fn flux_no_match_and_bad_ranges() {
    assert_eq!(latest(">=5", TAGS), None);
    assert_eq!(latest("not a range", TAGS), None);
    let err = Constraints::parse(">= 1.2 ||").expect_err("empty group");
    assert_eq!(err.to_string(), r#"improper constraint: """#);
    let v = Version::parse("v1.2.3").expect("valid");
    let cs = Constraints::parse("^2").expect("valid");
    assert_eq!(
        cs.validate(&v),
        Err(vec![r#""1.2.3" is less than "2""#.to_string()])
    );
}

#[test]
fn flux_hyphen_range_and_metadata() {
    let tags = ["1.4.5", "1.4.6", "1.4.5+build.7", "1.2.0"];
    // Metadata is ignored by the order, so `1.4.5` and `1.4.5+build.7` tie and the later one
    // wins `max_by`; `1.4.6` is above the full-version upper bound.
    assert_eq!(latest("1.2 - 1.4.5", &tags), Some("1.4.5+build.7"));
    assert_eq!(latest("1.1 - 2", &["2.9.9", "3.0.0"]), Some("2.9.9"));
    let a = Version::parse("1.4.5").expect("valid");
    let b = Version::parse("1.4.5+build.7").expect("valid");
    assert_eq!(a, b);
    assert_eq!(b.metadata(), "build.7");
}
