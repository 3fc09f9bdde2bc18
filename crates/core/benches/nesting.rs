//! CPU spent on deeply nested YAML, before and after the nesting check (issue 45), in one run.
//!
//! "before" reads the text as the readers did (the YAML parser, then the recursion limit);
//! "after" is `parse_one_with`, which checks nesting first. Also the costliest texts the check
//! lets through: 3 MiB of flow collections 128 deep, beside 3 MiB of ordinary block YAML.
//! `cargo bench -p tidegate-core --bench nesting`.

use std::time::Duration;

use tidegate_core::yaml::{Duplicates, parse_one_with};

/// CPU time of this thread (the machine is shared: wall time would count the neighbours).
fn cpu() -> Duration {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes the struct this function owns.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    Duration::new(ts.tv_sec as u64, ts.tv_nsec as u32)
}

/// What `parse_one_with` did before the check: the reader straight on the parser.
fn before(text: &str) -> Duration {
    let start = cpu();
    let _ = tidegate_core::yaml::read_value(
        yaml_serde::Deserializer::from_str(text),
        text.len(),
        Duplicates::LastWins,
    );
    cpu() - start
}

fn after(text: &str) -> (Duration, bool) {
    let start = cpu();
    let ok = parse_one_with(text, Duplicates::LastWins).is_ok();
    (cpu() - start, ok)
}

fn main() {
    println!(
        "| text | bytes | before (parser, then recursion limit) | after (nesting check first) |"
    );
    println!("| --- | ---: | ---: | ---: |");
    type Shape = (&'static str, fn(usize) -> String);
    let shapes: [Shape; 3] = [
        ("`[[[…]]]`", |d| {
            format!("{}{}", "[".repeat(d), "]".repeat(d))
        }),
        ("`[ [ […] ] ]`", |d| {
            format!("{}{}", "[ ".repeat(d), "] ".repeat(d))
        }),
        ("`{a: {a: …}}`", |d| {
            format!("{}1{}", "{a: ".repeat(d), "}".repeat(d))
        }),
    ];
    for (shape, make) in shapes {
        for depth in [5_000usize, 10_000, 20_000, 100_000] {
            let text = make(depth);
            // The slow path is not run where it would take about a minute (nested maps grow
            // with the square of their depth).
            let b = if depth <= 20_000 || !shape.starts_with("`{") {
                format!("{:.3} s", before(&text).as_secs_f64())
            } else {
                "(not run: ~1 min)".to_string()
            };
            let (a, ok) = after(&text);
            assert!(!ok, "refused");
            println!(
                "| {shape} {depth} deep | {} | {b} | {:.6} s |",
                text.len(),
                a.as_secs_f64()
            );
        }
    }
    let limit = 3 << 20;
    let unit = format!("- {}{}\n", "[".repeat(120), "]".repeat(120));
    let flows = unit.repeat(limit / unit.len());
    let unit = "- name: item\n  value: \"some text\"\n  labels: {a: b, c: d}\n";
    let block = unit.repeat(limit / unit.len());
    for (name, text) in [
        ("flows 120 deep, 3 MiB", flows),
        ("block YAML, 3 MiB", block),
    ] {
        let b = before(&text);
        let (a, ok) = after(&text);
        assert!(ok, "{name} is accepted");
        println!(
            "| {name} | {} | {:.3} s | {:.3} s |",
            text.len(),
            b.as_secs_f64(),
            a.as_secs_f64()
        );
    }
}
