//! Safe extraction: hostile archives are refused with an error naming the entry, and nothing
//! lands outside the root. Also the artifact server and the consumer's digest check.

use std::path::Path;
use std::sync::Arc;

use tidegate_source::archive::ArchiveWriter;
use tidegate_source::extract::{ExtractError, Limits, extract_tar_gz};
use tidegate_source::fetch::{FetchError, fetch_artifact};
use tidegate_source::storage::{Retention, Storage};

/// A tar.gz built from raw headers, so names the tar crate would refuse can be written.
fn raw_tar(entries: &[(&str, tar::EntryType, &str, &[u8])]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    for (name, kind, link, data) in entries {
        let mut h = tar::Header::new_old();
        let bytes = name.as_bytes();
        h.as_old_mut().name[..bytes.len()].copy_from_slice(bytes);
        if !link.is_empty() {
            h.as_old_mut().linkname[..link.len()].copy_from_slice(link.as_bytes());
        }
        h.set_entry_type(*kind);
        h.set_mode(0o644);
        h.set_size(data.len() as u64);
        h.set_cksum();
        b.append(&h, *data).unwrap();
    }
    b.into_inner().unwrap().finish().unwrap()
}

fn extract(bytes: &[u8], limits: Limits) -> (Result<(), ExtractError>, tempfile::TempDir) {
    let outer = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(outer.path().join("root")).unwrap();
    let r = extract_tar_gz(bytes, &outer.path().join("root"), limits);
    (r, outer)
}

fn nothing_outside(outer: &Path) {
    let names: Vec<_> = std::fs::read_dir(outer)
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(
        names,
        vec![std::ffi::OsString::from("root")],
        "something was written outside the root"
    );
}

use tar::EntryType::{Directory, Link, Regular, Symlink};

#[test]
fn parent_and_absolute_paths_are_refused() {
    for name in ["../evil", "a/../../evil", "/tmp/evil-abs"] {
        let (r, outer) = extract(&raw_tar(&[(name, Regular, "", b"x")]), Limits::default());
        let err = r.expect_err(name);
        assert!(matches!(err, ExtractError::UnsafePath(_)), "{name}: {err}");
        assert!(err.to_string().contains(name), "{err}");
        nothing_outside(outer.path());
    }
}

#[test]
fn escaping_links_are_refused() {
    for target in ["../outside", "/etc", "sub/../../x"] {
        let (r, outer) = extract(
            &raw_tar(&[("link", Symlink, target, b"")]),
            Limits::default(),
        );
        let err = r.expect_err(target);
        assert!(
            matches!(err, ExtractError::EscapingLink { .. }),
            "{target}: {err}"
        );
        assert!(err.to_string().contains("'link'"), "{err}");
        nothing_outside(outer.path());
    }
    // Writing through a link, even one pointing inside, is refused.
    let tar = raw_tar(&[
        ("sub", Directory, "", b""),
        ("l", Symlink, "sub", b""),
        ("l/f", Regular, "", b"x"),
    ]);
    let (r, _o) = extract(&tar, Limits::default());
    assert!(matches!(r, Err(ExtractError::ThroughLink { .. })), "{r:?}");
    // A link that only escapes once a later link exists.
    let tar = raw_tar(&[("a", Symlink, "b/..", b""), ("b", Symlink, ".", b"")]);
    let (r, _o) = extract(&tar, Limits::default());
    let err = r.expect_err("chained escape");
    assert!(matches!(err, ExtractError::EscapingLink { .. }), "{err}");
    // Hard links are refused.
    let (r, _o) = extract(
        &raw_tar(&[("h", Link, "/etc/passwd", b"")]),
        Limits::default(),
    );
    assert!(matches!(r, Err(ExtractError::Unsupported { .. })), "{r:?}");
}

#[test]
fn links_inside_and_limits() {
    let tar = raw_tar(&[
        ("sub/f", Regular, "", b"data"),
        ("l", Symlink, "sub/f", b""),
    ]);
    let (r, outer) = extract(&tar, Limits::default());
    r.unwrap();
    assert_eq!(
        std::fs::read_to_string(outer.path().join("root/l")).unwrap(),
        "data"
    );
    let big = vec![b'a'; 4096];
    let (r, _o) = extract(
        &raw_tar(&[("big", Regular, "", &big)]),
        Limits {
            max_size: 1000,
            max_entries: 10,
        },
    );
    assert!(matches!(r, Err(ExtractError::TooLarge(1000))), "{r:?}");
    let many: Vec<String> = (0..20).map(|i| format!("f{i}")).collect();
    let entries: Vec<(&str, tar::EntryType, &str, &[u8])> = many
        .iter()
        .map(|n| (n.as_str(), Regular, "", b"x".as_slice()))
        .collect();
    let (r, _o) = extract(
        &raw_tar(&entries),
        Limits {
            max_size: 1 << 20,
            max_entries: 10,
        },
    );
    assert!(matches!(r, Err(ExtractError::TooManyEntries(10))), "{r:?}");
    let (r, _o) = extract(b"not a gzip stream", Limits::default());
    assert!(r.is_err());
}

#[tokio::test]
async fn served_artifacts_are_checked_by_digest() {
    let store_dir = tempfile::tempdir().unwrap();
    let storage =
        Arc::new(Storage::new(store_dir.path(), "127.0.0.1:0", Retention::default()).unwrap());
    let path = Storage::artifact_path("GitRepository", "default", "app", "c0ffee.tar.gz");
    let written = storage
        .write_atomic(&path, |out| {
            let mut w = ArchiveWriter::new(out);
            w.add_dir("deploy")?;
            w.add_file("deploy/app.yaml", false, b"kind: ConfigMap\n")?;
            w.finish()
        })
        .unwrap();
    let (addr, serve) =
        tidegate_source::server::bind(storage.clone(), "127.0.0.1:0".parse().unwrap())
            .await
            .unwrap();
    tokio::spawn(serve);
    let url = format!("http://{addr}/{path}");
    let client = tidegate_source::tls::http_client();

    let ok = tempfile::tempdir().unwrap();
    fetch_artifact(&client, &url, &written.digest, ok.path(), Limits::default())
        .await
        .unwrap();
    assert_eq!(
        std::fs::read_to_string(ok.path().join("deploy/app.yaml")).unwrap(),
        "kind: ConfigMap\n"
    );

    let bad = tempfile::tempdir().unwrap();
    let wrong = format!("sha256:{}", "0".repeat(64));
    let err = fetch_artifact(&client, &url, &wrong, bad.path(), Limits::default())
        .await
        .unwrap_err();
    assert!(matches!(err, FetchError::Digest { .. }), "{err}");
    assert!(err.to_string().contains(&wrong), "{err}");
    assert_eq!(
        std::fs::read_dir(bad.path()).unwrap().count(),
        0,
        "nothing extracted on a digest mismatch"
    );

    let missing = format!("http://{addr}/gitrepository/default/app/missing.tar.gz");
    let err = fetch_artifact(
        &client,
        &missing,
        &written.digest,
        bad.path(),
        Limits::default(),
    )
    .await
    .unwrap_err();
    assert!(
        matches!(err, tidegate_source::fetch::FetchError::NotFound { .. }),
        "{err}"
    );
    assert!(err.to_string().contains("artifact not found"), "{err}");
    let escape = format!("http://{addr}/..%2F..%2Fetc%2Fpasswd");
    let resp = client.get(&escape).send().await.unwrap();
    assert_eq!(resp.status(), 404);
}
