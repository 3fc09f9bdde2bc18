//! Artifact extraction: any bytes, as a tar stream or a tar.gz, extract within the limits or
//! fail, never panic, and never write outside the root.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tidegate_source::extract::{Limits, extract_tar, extract_tar_gz};

fuzz_target!(|data: &[u8]| {
    let Ok(outer) = tempfile::tempdir() else {
        return;
    };
    let root = outer.path().join("root");
    let limits = Limits {
        max_size: 1 << 20,
        max_entries: 1000,
    };
    let _ = extract_tar(data, &root, limits);
    let _ = std::fs::remove_dir_all(&root);
    let _ = extract_tar_gz(data, &root, limits);
    // Nothing beside the root.
    let names: Vec<_> = std::fs::read_dir(outer.path())
        .map(|d| d.flatten().map(|e| e.file_name()).collect())
        .unwrap_or_default();
    assert!(names.iter().all(|n| n == "root"), "wrote outside the root: {names:?}");
});
