//! Random output compared by structure against real helm v4.1.4: the differential test masks
//! certificates, keys and hashes (they differ on every run), so here the chart
//! `quirk-random-structure` is rendered by both and each value is reduced to what does not
//! depend on chance: a certificate to its version, serial size and sign, algorithms, issuer
//! and subject bytes, validity length and its extensions in order (values byte for byte,
//! key identifiers by length); a private key to its PEM label and DER layout; a bcrypt hash
//! to its version and cost. Both shapes must be equal.
//!
//! helm is found at `$TIDEGATE_HELM4` or `~/.cache/tidegate-tools/helm-v4.1.4/helm`; without
//! it the test fails.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use tidegate_helm::action::{TemplateOptions, template};
use x509_parser::prelude::*;

fn chart() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus/charts/quirk-random-structure")
}

fn helm() -> PathBuf {
    common::helm_binary("v4.1.4", "TIDEGATE_HELM4")
}

/// The Secret's `stringData`, key by key.
fn string_data(manifest: &str) -> BTreeMap<String, String> {
    let doc: serde_json::Value = yaml_serde::from_str(
        manifest
            .split("\n---\n")
            .find(|d| d.contains("kind: Secret"))
            .expect("the Secret"),
    )
    .expect("YAML");
    doc["stringData"]
        .as_object()
        .expect("stringData")
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect()
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

fn certificate_shape(der: &[u8]) -> String {
    let (rest, cert) = X509Certificate::from_der(der).expect("a certificate");
    assert!(rest.is_empty(), "trailing bytes");
    let serial = cert.raw_serial();
    let mut out = vec![
        format!("version {:?}", cert.version()),
        format!(
            "serial positive={} at-most-17-bytes={}",
            serial[0] & 0x80 == 0,
            serial.len() <= 17
        ),
        format!("signature {}", cert.signature_algorithm.algorithm),
        format!("issuer {}", hex(cert.issuer().as_raw())),
        format!("subject {}", hex(cert.subject().as_raw())),
        format!(
            "validity {} s",
            cert.validity().not_after.timestamp() - cert.validity().not_before.timestamp()
        ),
        format!(
            "public key {} ({} bytes)",
            cert.public_key().algorithm.algorithm,
            cert.public_key().subject_public_key.data.len()
        ),
    ];
    for ext in cert.extensions() {
        let oid = ext.oid.to_id_string();
        // Key identifiers are hashes of random keys: their length is the structure.
        let value = if oid == "2.5.29.14" || oid == "2.5.29.35" {
            format!("{} bytes", ext.value.len())
        } else {
            hex(ext.value)
        };
        out.push(format!("extension {oid} critical={} {value}", ext.critical));
    }
    out.join("\n")
}

fn shape(key: &str, value: &str) -> String {
    if let Some(hash) = value
        .strip_prefix("user:")
        .or_else(|| value.starts_with("$2").then_some(value))
    {
        // `$2a$10$` and 53 characters of salt and hash.
        let parts: Vec<&str> = hash.splitn(4, '$').collect();
        return format!("bcrypt {:?} length {}", &parts[..3], hash.len());
    }
    let block = ::pem::parse(value).unwrap_or_else(|e| panic!("{key}: not PEM: {e}"));
    match block.tag() {
        "CERTIFICATE" => certificate_shape(block.contents()),
        // A key's layout: its label, its DER length, and the bytes before the key material
        // (PKCS#8's version and algorithm; SEC 1's version and the length of the secret).
        label => {
            let der = block.contents();
            let structure = match label {
                // SEQUENCE, version 1, OCTET STRING of 32 | [0] prime256v1, [1] BIT STRING 04…
                "EC PRIVATE KEY" if der.len() > 56 => {
                    format!("{} / {}", hex(&der[..7]), hex(&der[39..56]))
                }
                // SEQUENCE, version, algorithm, OCTET STRING { OCTET STRING of 32 }.
                _ => hex(&der[..der.len().min(16)]),
            };
            format!("{label}: {} bytes, layout {structure}", der.len())
        }
    }
}

#[test]
fn certificates_keys_and_hashes_have_helm_s_structure() {
    let helm = helm();
    let out = Command::new(&helm)
        .args(["template", "r"])
        .arg(chart())
        .env("HELM_CACHE_HOME", "/tmp/tidegate-helm-cache")
        .env("HELM_CONFIG_HOME", "/tmp/tidegate-helm-config")
        .env("HELM_DATA_HOME", "/tmp/tidegate-helm-data")
        .output()
        .unwrap_or_else(|e| panic!("helm v4.1.4 must be installed at {}: {e}", helm.display()));
    assert!(
        out.status.success(),
        "helm: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs = string_data(&String::from_utf8_lossy(&out.stdout));
    let opts = TemplateOptions {
        release_name: "r".into(),
        ..TemplateOptions::default()
    };
    let ours = string_data(&template(&chart(), &opts).expect("renders"));
    assert_eq!(
        theirs.keys().collect::<Vec<_>>(),
        ours.keys().collect::<Vec<_>>()
    );
    assert!(theirs.len() >= 10, "the chart renders every case");
    for (key, value) in &theirs {
        let expected = shape(key, value);
        let actual = shape(key, &ours[key]);
        assert_eq!(actual, expected, "{key}: ours (left) and helm's (right)");
    }
    // The ed25519 key is PKCS#8 version 1 (seed only, 48 bytes), as Go writes it.
    assert!(shape("ed.key", &ours["ed.key"]).starts_with("PRIVATE KEY: 48 bytes"));
}
