//! The real sops, age-keygen, gpg and ssh-keygen as oracles; a test that cannot find them
//! fails, it never skips.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

/// Runs a tool and returns its output; panics with a clear message when it is missing.
pub fn run(cmd: &mut Command) -> Output {
    let name = format!("{:?}", cmd.get_program());
    cmd.output()
        .unwrap_or_else(|e| panic!("{name} is required by this test (installed by .ci/run): {e}"))
}

/// Runs a tool that must succeed and returns its stdout.
pub fn ok(cmd: &mut Command) -> Vec<u8> {
    let out = run(cmd);
    assert!(
        out.status.success(),
        "{cmd:?} failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// The data directory of this crate's tests.
pub fn data() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data")
}

/// A scratch directory with an age key, an SSH key and a GnuPG home holding two key pairs
/// (RSA and Curve25519), none with a passphrase.
pub struct Keyring {
    pub dir: tempfile::TempDir,
    pub age_recipient: String,
    pub pgp_rsa: String,
    pub pgp_ecc: String,
}

impl Keyring {
    pub fn new() -> Keyring {
        let dir = tempfile::tempdir().expect("tempdir");
        let p = dir.path();
        ok(Command::new("age-keygen").arg("-o").arg(p.join("age.txt")));
        let text = std::fs::read_to_string(p.join("age.txt")).expect("age key");
        let age_recipient = text
            .lines()
            .find_map(|l| l.strip_prefix("# public key: "))
            .expect("age public key")
            .to_string();
        ok(Command::new("ssh-keygen")
            .args(["-q", "-t", "ed25519", "-N", "", "-f"])
            .arg(p.join("id_ed25519")));
        let home = p.join("gnupg");
        std::fs::create_dir(&home).expect("gnupg home");
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(&home, std::fs::Permissions::from_mode(0o700)).expect("chmod");
        }
        let gpg = |args: &[&str]| {
            ok(Command::new("gpg")
                .env("GNUPGHOME", &home)
                .args(["--batch", "--passphrase", ""])
                .args(args))
        };
        gpg(&[
            "--quick-gen-key",
            "RSA <rsa@example.com>",
            "rsa2048",
            "sign,cert",
            "never",
        ]);
        let pgp_rsa = fingerprint(&home, "rsa@example.com");
        gpg(&["--quick-add-key", &pgp_rsa, "rsa2048", "encr", "never"]);
        gpg(&[
            "--quick-gen-key",
            "ECC <ecc@example.com>",
            "future-default",
            "default",
            "never",
        ]);
        let pgp_ecc = fingerprint(&home, "ecc@example.com");
        for (fp, file) in [(&pgp_rsa, "rsa.asc"), (&pgp_ecc, "ecc.asc")] {
            let armored = gpg(&["--armor", "--export-secret-keys", fp]);
            std::fs::write(p.join(file), armored).expect("write key");
        }
        Keyring {
            dir,
            age_recipient,
            pgp_rsa,
            pgp_ecc,
        }
    }

    pub fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    pub fn read(&self, name: &str) -> String {
        std::fs::read_to_string(self.path(name)).expect("key file")
    }

    /// `sops` with this keyring's age key file and GnuPG home, run in the scratch directory.
    pub fn sops(&self) -> Command {
        let mut c = Command::new("sops");
        c.env("SOPS_AGE_KEY_FILE", self.path("age.txt"))
            .env("SOPS_AGE_SSH_PRIVATE_KEY_FILE", self.path("id_ed25519"))
            .env("GNUPGHOME", self.path("gnupg"))
            .current_dir(self.dir.path());
        c
    }
}

fn fingerprint(home: &Path, uid: &str) -> String {
    let out = ok(Command::new("gpg").env("GNUPGHOME", home).args([
        "--batch",
        "--with-colons",
        "--list-secret-keys",
        uid,
    ]));
    String::from_utf8_lossy(&out)
        .lines()
        .find_map(|l| {
            l.strip_prefix("fpr:")
                .map(|r| r.trim_matches(':').to_string())
        })
        .expect("fingerprint")
}

/// The sops type name of a format.
pub fn sops_type(f: tidegate_sops::Format) -> &'static str {
    use tidegate_sops::Format;
    match f {
        Format::Yaml => "yaml",
        Format::Json => "json",
        Format::Dotenv => "dotenv",
        Format::Ini => "ini",
        Format::Binary => "binary",
    }
}
