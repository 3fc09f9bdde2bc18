//! The kustomize build over a directory whose kustomization.yaml and one resource come from the
//! input (split at the first NUL byte): errors, never panics.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tidegate_kustomize::{Builder, LoadRestrictions, Options};

fuzz_target!(|data: &[u8]| {
    let (kustomization, resource) = match data.iter().position(|b| *b == 0) {
        Some(i) => (&data[..i], &data[i + 1..]),
        None => (data, &b""[..]),
    };
    let Ok(dir) = tempfile::tempdir() else {
        return;
    };
    let app = dir.path().join("app");
    if std::fs::create_dir_all(&app).is_err()
        || std::fs::write(app.join("kustomization.yaml"), kustomization).is_err()
        || std::fs::write(app.join("resource.yaml"), resource).is_err()
    {
        return;
    }
    let options = Options {
        load_restrictions: LoadRestrictions::RootOnly,
        generate_missing: false,
        overlay: None,
    };
    if let Ok(b) = Builder::new(dir.path(), options) {
        let _ = b.build(&app);
    }
});
