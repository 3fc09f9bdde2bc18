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
    // Also when a directory entry names the link first (the extractor remembers directories
    // it made, never a link to one), or when the link sits in a directory already written to.
    for tar in [
        raw_tar(&[
            ("sub", Directory, "", b""),
            ("l", Symlink, "sub", b""),
            ("l", Directory, "", b""),
            ("l/f", Regular, "", b"x"),
        ]),
        raw_tar(&[
            ("sub", Directory, "", b""),
            ("d/a", Regular, "", b"x"),
            ("d/l", Symlink, "../sub", b""),
            ("d/l/f", Regular, "", b"x"),
        ]),
    ] {
        let (r, _o) = extract(&tar, Limits::default());
        assert!(
            matches!(
                r,
                Err(ExtractError::ThroughLink { .. }) | Err(ExtractError::Io { .. })
            ),
            "{r:?}"
        );
    }
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

/// A tar.gz of one special entry (`kind` with `body`: a PAX header, a GNU long name) followed by
/// the regular file `name` holding `data`, as Go's archive/tar or GNU tar write long names.
fn special_then_file(kind: tar::EntryType, body: &[u8], name: &str, data: &[u8]) -> Vec<u8> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    let mut x = tar::Header::new_gnu();
    x.as_gnu_mut().unwrap().name[..6].copy_from_slice(b"@Extra");
    x.set_entry_type(kind);
    x.set_size(body.len() as u64);
    x.set_cksum();
    b.append(&x, body).unwrap();
    let mut f = tar::Header::new_gnu();
    f.set_path(name).unwrap();
    f.set_size(data.len() as u64);
    f.set_mode(0o644);
    f.set_cksum();
    b.append(&f, data).unwrap();
    b.into_inner().unwrap().finish().unwrap()
}

/// A header block of `kind` claiming `size` bytes, followed by only `body` (the archive is
/// cut short, as an attacker's would be: the claim alone must be refused).
fn lying_header(kind: tar::EntryType, size: u64, body: &[u8]) -> Vec<u8> {
    let mut h = tar::Header::new_gnu();
    h.as_gnu_mut().unwrap().name[..10].copy_from_slice(b"././@Longx");
    h.set_entry_type(kind);
    h.set_mode(0o644);
    h.set_size(size);
    h.set_cksum();
    let mut tar = h.as_bytes().to_vec();
    tar.extend_from_slice(body);
    tar.resize(tar.len().div_ceil(512) * 512 + 1024, 0);
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    std::io::Write::write_all(&mut gz, &tar).unwrap();
    gz.finish().unwrap()
}

#[test]
fn headers_claiming_gigabytes_are_refused_before_reading() {
    for kind in [
        tar::EntryType::XHeader,
        tar::EntryType::XGlobalHeader,
        tar::EntryType::GNULongName,
        tar::EntryType::GNULongLink,
    ] {
        let (r, outer) = extract(
            &lying_header(kind, 1 << 30, b"30 path=aaaaaaaaaaaaaaaaaaaa\n"),
            Limits::default(),
        );
        let err = r.expect_err("refused");
        assert!(
            matches!(err, ExtractError::HeaderTooLarge { size, .. } if size == 1 << 30),
            "{kind:?}: {err}"
        );
        assert!(
            err.to_string()
                .contains("exceeds the limit of 1048576 bytes"),
            "{err}"
        );
        nothing_outside(outer.path());
    }
}

/// Names longer than a header holds arrive as GNU long names (the tar crate's builder) or PAX
/// `path` records (Go's archive/tar, so Flux's artifacts): both are honoured.
#[test]
fn long_names_from_gnu_and_pax_headers() {
    let long = format!("{}/file.yaml", "d".repeat(150));
    // GNU: the tar crate writes an 'L' entry for a long path.
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
    let mut b = tar::Builder::new(gz);
    let mut h = tar::Header::new_gnu();
    h.set_size(2);
    h.set_mode(0o644);
    b.append_data(&mut h, &long, &b"ok"[..]).unwrap();
    let (r, outer) = extract(
        &b.into_inner().unwrap().finish().unwrap(),
        Limits::default(),
    );
    r.expect("gnu long name");
    assert_eq!(
        std::fs::read_to_string(outer.path().join("root").join(&long)).unwrap(),
        "ok"
    );
    // PAX: an 'x' entry with a path record before a ustar entry with a short name.
    let record = |k: &str, v: &str| {
        let body = format!(" {k}={v}\n");
        let mut n = body.len() + 1;
        while format!("{n}{body}").len() != n {
            n += 1;
        }
        format!("{n}{body}")
    };
    let pax = format!("{}{}", record("path", &long), record("mtime", "0"));
    let (r, outer) = extract(
        &special_then_file(tar::EntryType::XHeader, pax.as_bytes(), "short", b"pax"),
        Limits::default(),
    );
    r.expect("pax path");
    assert_eq!(
        std::fs::read_to_string(outer.path().join("root").join(&long)).unwrap(),
        "pax"
    );
    assert!(!outer.path().join("root/short").exists());
}

#[test]
fn malformed_pax_records_and_size_overrides_are_refused() {
    for body in [
        "99999 path=x\n",
        "abc path=x\n",
        "12 pathx\n",
        "12 size=999\n",
    ] {
        let (r, outer) = extract(
            &special_then_file(tar::EntryType::XHeader, body.as_bytes(), "f", b"x"),
            Limits::default(),
        );
        let err = r.expect_err(body);
        assert!(
            matches!(err, ExtractError::Unsupported { .. }),
            "{body:?}: {err}"
        );
        nothing_outside(outer.path());
    }
}

/// An entry name of a megabyte is cut in the error message (the message used to carry it whole
/// into logs and events).
#[test]
fn messages_never_carry_attacker_sized_names() {
    let name = format!("../{}", "x".repeat(900_000));
    let mut body = name.into_bytes();
    body.push(0);
    let (r, outer) = extract(
        &special_then_file(tar::EntryType::GNULongName, &body, "f", b"x"),
        Limits::default(),
    );
    let err = r.expect_err("unsafe");
    assert!(matches!(err, ExtractError::UnsafePath(_)), "{err}");
    assert!(
        err.to_string().len() < 1000,
        "{} bytes",
        err.to_string().len()
    );
    nothing_outside(outer.path());
}

/// A gzip bomb: a few kilobytes that inflate past the size limit stop at the limit.
#[test]
fn gzip_bombs_stop_at_the_size_limit() {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    let mut b = tar::Builder::new(gz);
    let mut h = tar::Header::new_gnu();
    h.set_size(200 << 20);
    h.set_mode(0o644);
    h.set_cksum();
    let mut data = std::io::Read::take(std::io::repeat(0), 200 << 20);
    b.append_data(&mut h, "bomb", &mut data).unwrap();
    let bytes = b.into_inner().unwrap().finish().unwrap();
    assert!(bytes.len() < 1 << 20, "{} compressed bytes", bytes.len());
    let (r, outer) = extract(&bytes, Limits::default());
    assert!(matches!(r, Err(ExtractError::TooLarge(_))), "{r:?}");
    nothing_outside(outer.path());
}

/// The packer refuses what consumers would refuse to extract: one limit on both sides.
#[test]
fn the_packer_holds_artifacts_to_the_extraction_limits() {
    assert_eq!(Limits::default().max_entries, 100_000);
    let limits = Limits {
        max_size: 10,
        max_entries: 3,
    };
    let mut w = ArchiveWriter::with_limits(Vec::new(), limits);
    w.add_dir("a").unwrap();
    w.add_file("a/b", false, b"12345").unwrap();
    w.add_file("a/c", false, b"1").unwrap();
    let err = w.add_file("a/d", false, b"1").expect_err("too many");
    assert!(
        err.to_string()
            .contains("more than 3 files and directories"),
        "{err}"
    );
    let mut w = ArchiveWriter::with_limits(Vec::new(), limits);
    let err = w.add_file("big", false, &[0; 11]).expect_err("too large");
    assert!(err.to_string().contains("more than 10 bytes"), "{err}");
    // What the packer accepts, the extraction accepts.
    let mut w = ArchiveWriter::with_limits(Vec::new(), limits);
    w.add_dir("a").unwrap();
    w.add_file("a/b", false, b"1234567890").unwrap();
    let (bytes, _) = w.finish().unwrap();
    let (r, _o) = extract(&bytes, limits);
    r.expect("extracts");
}

/// `tar` compressed as gzip members, one per part between the given offsets, as parallel and
/// block compressors (pigz, bgzip) and concatenated archives are written.
fn gzip_members(tar: &[u8], cuts: &[usize]) -> Vec<u8> {
    use std::io::Write;
    let mut out = Vec::new();
    let mut start = 0;
    for &end in cuts.iter().chain(std::iter::once(&tar.len())) {
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(&tar[start..end]).unwrap();
        out.extend(gz.finish().unwrap());
        start = end;
    }
    out
}

fn plain_tar(entries: &[(&str, &[u8])]) -> (Vec<u8>, Vec<usize>) {
    let mut b = tar::Builder::new(Vec::new());
    let mut ends = Vec::new();
    for (name, data) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, name, *data).unwrap();
        ends.push(b.get_ref().len());
    }
    (b.into_inner().unwrap(), ends)
}

#[test]
fn multi_member_gzip_archives_are_read_to_the_end() {
    let (tar, ends) = plain_tar(&[
        ("a.yaml", b"kind: A\n"),
        ("b.yaml", b"kind: B\n"),
        ("c.yaml", b"kind: C\n"),
    ]);
    // A member boundary after each entry: `gzip -d`, `tar` and Go's reader see all three.
    let bytes = gzip_members(&tar, &ends[..2]);
    let (r, outer) = extract(&bytes, Limits::default());
    r.unwrap();
    for (f, kind) in [("a.yaml", "A"), ("b.yaml", "B"), ("c.yaml", "C")] {
        assert_eq!(
            std::fs::read_to_string(outer.path().join("root").join(f)).unwrap(),
            format!("kind: {kind}\n"),
            "{f}"
        );
    }
    // A boundary inside an entry's content.
    let bytes = gzip_members(&tar, &[700]);
    let (r, outer) = extract(&bytes, Limits::default());
    r.unwrap();
    assert!(outer.path().join("root/c.yaml").exists());
}

#[test]
fn a_later_gzip_member_cannot_hide_what_the_limits_refuse() {
    let big = vec![b'x'; 64 << 10];
    let (tar, ends) = plain_tar(&[("small", b"s"), ("big", &big)]);
    let bytes = gzip_members(&tar, &ends[..1]);
    let (r, outer) = extract(
        &bytes,
        Limits {
            max_size: 32 << 10,
            max_entries: 10,
        },
    );
    assert!(matches!(r, Err(ExtractError::TooLarge(_))), "{r:?}");
    nothing_outside(outer.path());
    let many: Vec<(String, Vec<u8>)> = (0..6).map(|i| (format!("f{i}"), vec![b'x'])).collect();
    let entries: Vec<(&str, &[u8])> = many
        .iter()
        .map(|(n, d)| (n.as_str(), d.as_slice()))
        .collect();
    let (tar, ends) = plain_tar(&entries);
    let bytes = gzip_members(&tar, &ends[..3]);
    let (r, _o) = extract(
        &bytes,
        Limits {
            max_size: 1 << 20,
            max_entries: 4,
        },
    );
    assert!(matches!(r, Err(ExtractError::TooManyEntries(4))), "{r:?}");
}
