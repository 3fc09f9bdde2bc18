//! Files encrypted by earlier sops releases and by Flux's tests (taken as data from
//! getsops/sops v3.13.2 and fluxcd/kustomize-controller): each decrypts here to exactly what the
//! real `sops -d` prints for it.

mod common;

use std::process::Command;

use common::{data, ok, run, sops_type};
use tidegate_sops::{Format, Keys, decrypt};

struct Oracle {
    home: tempfile::TempDir,
    age: std::path::PathBuf,
    keys: Keys,
}

fn oracle() -> Oracle {
    let up = data().join("upstream");
    let home = tempfile::tempdir().unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(home.path(), std::fs::Permissions::from_mode(0o700)).unwrap();
    }
    let mut keys = Keys::new();
    for asc in ["sops/sops_functional_tests_key.asc", "flux/keys/pgp.asc"] {
        ok(Command::new("gpg")
            .env("GNUPGHOME", home.path())
            .args(["--batch", "--import"])
            .arg(up.join(asc)));
        keys.add_pgp(&std::fs::read_to_string(up.join(asc)).unwrap())
            .unwrap();
    }
    let mut age = String::new();
    for k in ["flux/keys/age.txt", "flux/keys/age-global.txt"] {
        let text = std::fs::read_to_string(up.join(k)).unwrap();
        keys.add_age(&text).unwrap();
        age.push_str(&text);
    }
    let age_path = home.path().join("age.txt");
    std::fs::write(&age_path, age).unwrap();
    Oracle {
        home,
        age: age_path,
        keys,
    }
}

impl Oracle {
    fn sops(&self, path: &std::path::Path, format: Format) -> std::process::Output {
        let t = sops_type(format);
        run(Command::new("sops")
            .env("GNUPGHOME", self.home.path())
            .env("SOPS_AGE_KEY_FILE", &self.age)
            .args(["-d", "--input-type", t, "--output-type", t])
            .arg(path))
    }
}

#[test]
fn upstream_fixtures_decrypt_as_sops_does() {
    let o = oracle();
    let up = data().join("upstream");
    let files = [
        ("sops/example.yaml", Format::Yaml),
        ("sops/example.json", Format::Json),
        ("sops/example.ini", Format::Ini),
        ("sops/example.txt", Format::Binary),
        ("sops/format.enc.yaml", Format::Yaml),
        ("sops/format.enc.json", Format::Json),
        ("sops/format.enc.env", Format::Dotenv),
        ("sops/format.enc.ini", Format::Ini),
        ("sops/format-2.enc.ini", Format::Ini),
        ("sops/comments.enc.yaml", Format::Yaml),
        ("sops/multiple_keys.yaml", Format::Yaml),
        ("flux/algorithms/age.yaml", Format::Yaml),
        ("flux/algorithms/pgp.yaml", Format::Yaml),
        ("flux/patches/merge1.yaml", Format::Yaml),
        ("flux/patches/merge2.yaml", Format::Yaml),
        ("flux/envs/env.env", Format::Dotenv),
        ("flux/component/env.env", Format::Dotenv),
        ("flux/remote/env.env", Format::Dotenv),
        ("flux/files/file.txt", Format::Binary),
        ("flux/global/secret.yaml", Format::Yaml),
    ];
    for (file, format) in files {
        let path = up.join(file);
        let want = o.sops(&path, format);
        assert!(
            want.status.success(),
            "sops -d {file}: {}",
            String::from_utf8_lossy(&want.stderr)
        );
        let got = decrypt(&std::fs::read(&path).unwrap(), format, format, &o.keys)
            .unwrap_or_else(|e| panic!("{file}: {e}"));
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want.stdout),
            "{file}"
        );
    }
}

#[test]
fn a_file_without_a_mac_fails_in_both() {
    let o = oracle();
    let path = data().join("upstream/sops/no_mac.yaml");
    let sops = o.sops(&path, Format::Yaml);
    assert!(!sops.status.success());
    let stderr = String::from_utf8_lossy(&sops.stderr);
    let computed = stderr
        .split("computed ")
        .nth(1)
        .map(|s| s.trim().to_string())
        .expect("sops names the MAC it computed");
    let err = decrypt(
        &std::fs::read(&path).unwrap(),
        Format::Yaml,
        Format::Yaml,
        &o.keys,
    )
    .unwrap_err()
    .to_string();
    assert_eq!(
        err,
        format!("failed to verify sops data integrity: expected mac 'no MAC', got '{computed}'")
    );
}

#[test]
fn the_post_quantum_age_fixture_is_refused_with_a_reason() {
    let text = std::fs::read_to_string(data().join("upstream/flux/keys/age-pq.txt")).unwrap();
    let err = Keys::new().add_age(&text).unwrap_err().to_string();
    assert!(err.contains("post-quantum"), "{err}");
}
