//! Differential tests against the real sops: a corpus of plaintext files (YAML, JSON, dotenv,
//! INI, binary) is encrypted by `sops -e` with fresh age, SSH and OpenPGP keys under every
//! rule sops offers, then decrypted by `sops -d` and by this crate; the bytes must be equal.
//! Tampering, a wrong key and a missing key must fail with sops' messages.

mod common;

use std::process::Command;

use common::{Keyring, data, ok, run, sops_type};
use tidegate_sops::{DecryptError, Format, Keys, decrypt};

fn corpus() -> Vec<(String, Vec<u8>, Format)> {
    let dir = data().join("plain");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("corpus")
        .map(|e| e.expect("entry").path())
        .collect();
    files.sort();
    assert!(files.len() >= 8, "the corpus is in {}", dir.display());
    files
        .into_iter()
        .map(|p| {
            let name = p.file_name().unwrap().to_string_lossy().into_owned();
            let format = Format::from_path(&name);
            (name, std::fs::read(&p).unwrap(), format)
        })
        .collect()
}

fn encrypt(k: &Keyring, name: &str, plain: &[u8], format: Format, args: &[&str]) -> Vec<u8> {
    let path = k.path(&format!("plain-{name}"));
    std::fs::write(&path, plain).unwrap();
    let t = sops_type(format);
    ok(k.sops()
        .args(["-e", "--input-type", t, "--output-type", t])
        .args(args)
        .arg(&path))
}

fn sops_decrypt(k: &Keyring, name: &str, enc: &[u8], input: Format, output: Format) -> Vec<u8> {
    let path = k.path(&format!("enc-{name}"));
    std::fs::write(&path, enc).unwrap();
    ok(k.sops()
        .args(["-d", "--input-type", sops_type(input)])
        .args(["--output-type", sops_type(output)])
        .arg(&path))
}

fn age_keys(k: &Keyring) -> Keys {
    let mut keys = Keys::new();
    keys.add_age(&k.read("age.txt")).unwrap();
    keys
}

#[test]
fn every_rule_and_format_decrypts_as_sops_does() {
    let k = Keyring::new();
    let keys = age_keys(&k);
    let r = k.age_recipient.clone();
    let rules: Vec<Vec<&str>> = vec![
        vec![],
        vec!["--encrypted-regex", "^(data|stringData|password)$"],
        vec!["--unencrypted-regex", "^(kind|apiVersion|metadata)$"],
        vec!["--unencrypted-suffix", "_plain"],
        vec!["--encrypted-suffix", "_secret"],
        vec!["--encrypted-comment-regex", "sops:enc"],
        vec!["--unencrypted-comment-regex", "keep"],
        vec!["--mac-only-encrypted"],
        vec!["--encrypted-regex", "^password$", "--mac-only-encrypted"],
    ];
    let mut checked = 0;
    for (name, plain, format) in corpus() {
        for rule in &rules {
            let mut args = vec!["--age", r.as_str()];
            args.extend(rule.iter().copied());
            let enc = encrypt(&k, &name, &plain, format, &args);
            let want = sops_decrypt(&k, &name, &enc, format, format);
            let got = decrypt(&enc, format, format, &keys)
                .unwrap_or_else(|e| panic!("{name} {rule:?}: {e}"));
            assert_eq!(
                String::from_utf8_lossy(&got),
                String::from_utf8_lossy(&want),
                "{name} encrypted with {rule:?}"
            );
            checked += 1;
        }
    }
    assert!(checked >= 72);
}

#[test]
fn output_in_another_format_matches_sops() {
    let k = Keyring::new();
    let keys = age_keys(&k);
    let r = k.age_recipient.clone();
    let pairs = [
        ("app.yaml", Format::Json),
        ("values.yaml", Format::Json),
        ("config.json", Format::Yaml),
        ("app.env", Format::Yaml),
        ("app.env", Format::Json),
        ("settings.ini", Format::Json),
        ("settings.ini", Format::Yaml),
        ("token.txt", Format::Yaml),
    ];
    let corpus = corpus();
    for (name, output) in pairs {
        let (_, plain, input) = corpus.iter().find(|(n, ..)| n == name).unwrap();
        let enc = encrypt(&k, name, plain, *input, &["--age", &r]);
        let want = sops_decrypt(&k, name, &enc, *input, output);
        let got = decrypt(&enc, *input, output, &keys).unwrap();
        assert_eq!(
            String::from_utf8_lossy(&got),
            String::from_utf8_lossy(&want),
            "{name} as {output:?}"
        );
    }
}

#[test]
fn openpgp_ssh_several_recipients_and_shamir_groups() {
    let k = Keyring::new();
    let (_, plain, _) = corpus()
        .into_iter()
        .find(|(n, ..)| n == "app.yaml")
        .unwrap();
    let only = |add: &dyn Fn(&mut Keys)| {
        let mut keys = Keys::new();
        add(&mut keys);
        keys
    };
    let rsa = only(&|keys| keys.add_pgp(&k.read("rsa.asc")).unwrap());
    let ecc = only(&|keys| keys.add_pgp(&k.read("ecc.asc")).unwrap());
    let ssh = only(&|keys| keys.add_age(&k.read("id_ed25519")).unwrap());
    let age = age_keys(&k);

    // OpenPGP RSA, OpenPGP Curve25519 (ECDH) and an SSH ed25519 recipient, one at a time.
    for (args, keys) in [
        (vec!["--pgp", k.pgp_rsa.as_str()], &rsa),
        (vec!["--pgp", k.pgp_ecc.as_str()], &ecc),
    ] {
        let enc = encrypt(&k, "app.yaml", &plain, Format::Yaml, &args);
        let want = sops_decrypt(&k, "app.yaml", &enc, Format::Yaml, Format::Yaml);
        assert_eq!(
            &*decrypt(&enc, Format::Yaml, Format::Yaml, keys).unwrap(),
            &want[..]
        );
    }
    let ssh_pub = std::fs::read_to_string(k.path("id_ed25519.pub")).unwrap();
    let enc = encrypt(
        &k,
        "app.yaml",
        &plain,
        Format::Yaml,
        &["--age", ssh_pub.trim()],
    );
    let want = sops_decrypt(&k, "app.yaml", &enc, Format::Yaml, Format::Yaml);
    assert_eq!(
        &*decrypt(&enc, Format::Yaml, Format::Yaml, &ssh).unwrap(),
        &want[..]
    );

    // One group of three recipients: any one key is enough.
    let pgp_both = format!("{},{}", k.pgp_rsa, k.pgp_ecc);
    let enc = encrypt(
        &k,
        "app.yaml",
        &plain,
        Format::Yaml,
        &["--age", &k.age_recipient, "--pgp", &pgp_both],
    );
    for keys in [&age, &rsa, &ecc] {
        assert_eq!(
            &*decrypt(&enc, Format::Yaml, Format::Yaml, keys).unwrap(),
            &want[..]
        );
    }

    // Three key groups with a Shamir threshold of two.
    std::fs::write(
        k.path(".sops.yaml"),
        format!(
            "creation_rules:\n  - shamir_threshold: 2\n    key_groups:\n      - age: [{}]\n      - pgp: [{}]\n      - pgp: [{}]\n",
            k.age_recipient, k.pgp_rsa, k.pgp_ecc
        ),
    )
    .unwrap();
    let enc = encrypt(&k, "app.yaml", &plain, Format::Yaml, &[]);
    std::fs::remove_file(k.path(".sops.yaml")).unwrap();
    assert!(String::from_utf8_lossy(&enc).contains("shamir_threshold: 2"));
    let mut two = age_keys(&k);
    two.add_pgp(&k.read("ecc.asc")).unwrap();
    assert_eq!(
        &*decrypt(&enc, Format::Yaml, Format::Yaml, &two).unwrap(),
        &want[..]
    );
    let err = decrypt(&enc, Format::Yaml, Format::Yaml, &rsa)
        .unwrap_err()
        .to_string()
        .replace('\n', " ");
    assert!(
        err.contains("Group 1: SUCCESS")
            && err.contains("Group 0: FAILED")
            && err.contains("encrypted with a Shamir threshold of 2, but only 1 part(s)"),
        "{err}"
    );
}

#[test]
fn tampering_a_wrong_key_and_no_key_fail_clearly_and_leak_nothing() {
    let k = Keyring::new();
    let keys = age_keys(&k);
    let plain = b"apiVersion: v1\nkind: Secret\nmetadata:\n  name: db\nstringData:\n  password: hunter2-very-secret\n";
    let enc = encrypt(
        &k,
        "s.yaml",
        plain,
        Format::Yaml,
        &[
            "--age",
            &k.age_recipient,
            "--encrypted-regex",
            "^stringData$",
        ],
    );
    let text = String::from_utf8(enc.clone()).unwrap();

    // A plaintext field changed after encryption: the MAC no longer matches, in sops and here.
    let tampered = text.replace("name: db", "name: other");
    let path = k.path("tampered.yaml");
    std::fs::write(&path, &tampered).unwrap();
    let sops = run(k.sops().arg("-d").arg(&path));
    assert!(!sops.status.success());
    assert!(String::from_utf8_lossy(&sops.stderr).contains("MAC mismatch"));
    let err = decrypt(tampered.as_bytes(), Format::Yaml, Format::Yaml, &keys).unwrap_err();
    assert!(matches!(err, DecryptError::Mac { .. }), "{err}");
    assert!(
        err.to_string()
            .starts_with("failed to verify sops data integrity: expected mac '")
    );

    // An encrypted value altered: authentication fails for that value.
    let start = text.find("password: ENC[AES256_GCM,data:").unwrap() + 30;
    let mut bytes = text.clone().into_bytes();
    bytes[start] = if bytes[start] == b'A' { b'B' } else { b'A' };
    let err = decrypt(&bytes, Format::Yaml, Format::Yaml, &keys)
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("Could not decrypt value: Could not decrypt with AES_GCM: cipher: message authentication failed"),
        "{err}"
    );

    // A key that is not a recipient, and no key at all.
    let out = ok(&mut Command::new("age-keygen"));
    let mut other = Keys::new();
    other.add_age(&String::from_utf8(out).unwrap()).unwrap();
    let err = decrypt(&enc, Format::Yaml, Format::Yaml, &other)
        .unwrap_err()
        .to_string();
    assert!(err.starts_with("cannot get sops data key: Failed to get the data key required to decrypt the SOPS file."), "{err}");
    assert!(
        err.contains(&format!("{}: FAILED", k.age_recipient)),
        "{err}"
    );
    assert!(
        err.contains("no identity matched any of the recipients"),
        "{err}"
    );
    let err = decrypt(&enc, Format::Yaml, Format::Yaml, &Keys::new())
        .unwrap_err()
        .to_string();
    assert!(err.contains("failed to load age identities"), "{err}");

    // No message carries the secret.
    for e in [
        decrypt(tampered.as_bytes(), Format::Yaml, Format::Yaml, &keys).unwrap_err(),
        decrypt(&bytes, Format::Yaml, Format::Yaml, &keys).unwrap_err(),
        decrypt(&enc, Format::Yaml, Format::Yaml, &other).unwrap_err(),
    ] {
        assert!(!e.to_string().contains("hunter2"), "{e}");
    }
}

#[test]
fn cloud_kms_recipients_are_reported_as_not_supported() {
    // An AWS KMS entry as sops writes it (the key cannot be reached offline), beside nothing
    // else: the report names the key and says why.
    let doc = "a: ENC[AES256_GCM,data:AA==,iv:AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA=,tag:AAAAAAAAAAAAAAAAAAAAAA==,type:str]\nsops:\n    kms:\n        - arn: arn:aws:kms:us-east-1:111122223333:key/abcd\n          created_at: \"2024-01-01T00:00:00Z\"\n          enc: AQICAHg=\n          aws_profile: \"\"\n    lastmodified: \"2024-01-01T00:00:00Z\"\n    mac: \"\"\n    version: 3.9.0\n";
    let err = decrypt(doc.as_bytes(), Format::Yaml, Format::Yaml, &Keys::new())
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("arn:aws:kms:us-east-1:111122223333:key/abcd: FAILED"),
        "{err}"
    );
    assert!(err.contains("AWS KMS keys need the key service"), "{err}");
}

#[test]
fn nesting_deeper_than_the_limit_is_refused_not_a_crash() {
    // 2,000 nested mappings (600 overflowed a 2 MiB stack before the limit) with sops
    // metadata: refused with a message, on a small stack.
    let mut doc = String::from("a:\n");
    for i in 1..2_000 {
        doc.push_str(&" ".repeat(i));
        doc.push_str("k:\n");
    }
    doc.push_str("sops:\n  mac: ENC[x]\n  lastmodified: \"2024-01-01T00:00:00Z\"\n");
    let handle = std::thread::Builder::new()
        .stack_size(2 * 1024 * 1024)
        .spawn(move || {
            decrypt(doc.as_bytes(), Format::Yaml, Format::Yaml, &Keys::new())
                .unwrap_err()
                .to_string()
        })
        .unwrap();
    let err = handle.join().expect("no stack overflow");
    assert!(err.contains("exceeded max depth of 300"), "{err}");
}
