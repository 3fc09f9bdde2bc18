//! The allocator's configuration follows the command: `tidegate helm template` (one render,
//! then exit) runs on transparent huge pages without jemalloc's background thread; every
//! other command keeps the long-running configuration. jemalloc prints the options it took
//! when asked (`stats_print`, which adds to the configuration rather than replacing it).
#![cfg(not(feature = "system-allocator"))]

use std::path::Path;
use std::process::Command;

fn options(args: &[&str]) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tidegate"))
        .args(args)
        .env("_RJEM_MALLOC_CONF", "stats_print:true")
        .output()
        .expect("runs");
    String::from_utf8_lossy(&out.stderr)
        .lines()
        .filter(|l| l.trim_start().starts_with("opt."))
        .map(|l| l.trim().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

#[test]
fn helm_template_runs_on_huge_pages_and_other_commands_do_not() {
    let chart = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../helm/tests/corpus/charts/podinfo-podinfo")
        .display()
        .to_string();
    let template = options(&["helm", "template", &chart]);
    assert!(template.contains("opt.thp: \"always\""), "{template}");
    assert!(
        template.contains("opt.background_thread: false"),
        "{template}"
    );
    assert!(template.contains("opt.narenas: 1"), "{template}");

    let other = options(&["--help"]);
    assert!(other.contains("opt.thp: \"default\""), "{other}");
    assert!(other.contains("opt.background_thread: true"), "{other}");
    assert!(other.contains("opt.dirty_decay_ms: 500"), "{other}");
}
