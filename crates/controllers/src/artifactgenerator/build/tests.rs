//! source-watcher's builder tables (builder_test.go, merge_test.go, extract_test.go), ported
//! as data: sources, copy operations, and the files expected (or the error).

use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

use tidegate_api::artifactgenerator::CopyOperation;

use super::{apply, dir_hash};

struct Case {
    name: &'static str,
    sources: &'static [(&'static str, &'static [(&'static str, &'static str)])],
    ops: &'static [(
        &'static str,
        &'static str,
        &'static [&'static str],
        &'static str,
    )],
    present: &'static [(&'static str, Option<&'static str>)],
    absent: &'static [&'static str],
    error: Option<&'static str>,
}

const CASES: &[Case] = &[
    Case {
        name: "single file",
        sources: &[("s", &[("config.yaml", "apiVersion: v1\nkind: ConfigMap")])],
        ops: &[("@s/config.yaml", "@artifact/", &[], "")],
        present: &[("config.yaml", Some("apiVersion: v1\nkind: ConfigMap"))],
        absent: &[],
        error: None,
    },
    Case {
        name: "two sources",
        sources: &[
            ("git", &[("app.yaml", "apiVersion: apps/v1")]),
            ("oci", &[("config.json", "{\"version\": \"1.0\"}")]),
        ],
        ops: &[
            ("@git/app.yaml", "@artifact/manifests/", &[], ""),
            ("@oci/config.json", "@artifact/config/", &[], ""),
        ],
        present: &[
            ("manifests/app.yaml", Some("apiVersion: apps/v1")),
            ("config/config.json", None),
        ],
        absent: &[],
        error: None,
    },
    Case {
        name: "glob",
        sources: &[(
            "s",
            &[
                ("deployment.yaml", "d"),
                ("service.yaml", "s"),
                ("configmap.yaml", "c"),
            ],
        )],
        ops: &[("@s/*.yaml", "@artifact/manifests/", &[], "")],
        present: &[
            ("manifests/deployment.yaml", None),
            ("manifests/service.yaml", None),
            ("manifests/configmap.yaml", None),
        ],
        absent: &[],
        error: None,
    },
    Case {
        name: "root dir",
        sources: &[("s", &[("root.yaml", "r"), ("subdir/nested.yaml", "n")])],
        ops: &[("@s/", "@artifact/", &[], "")],
        present: &[("root.yaml", None), ("subdir/nested.yaml", None)],
        absent: &[],
        error: None,
    },
    Case {
        name: "root glob",
        sources: &[("s", &[("root.yaml", "r"), ("subdir/nested.yaml", "n")])],
        ops: &[("@s/**", "@artifact/", &[], "")],
        present: &[("root.yaml", None), ("subdir/nested.yaml", None)],
        absent: &[],
        error: None,
    },
    Case {
        name: "later sources overwrite",
        sources: &[
            (
                "s1",
                &[
                    ("config/app.yaml", "source1: app"),
                    ("config/database.yaml", "source1: db"),
                ],
            ),
            (
                "s2",
                &[
                    ("config/app.yaml", "source2: app"),
                    ("config/network.yaml", "source2: net"),
                ],
            ),
        ],
        ops: &[
            ("@s1/**", "@artifact/", &[], ""),
            ("@s2/**", "@artifact/", &[], ""),
        ],
        present: &[
            ("config/app.yaml", Some("source2: app")),
            ("config/database.yaml", Some("source1: db")),
            ("config/network.yaml", Some("source2: net")),
        ],
        absent: &[],
        error: None,
    },
    Case {
        name: "dir keeps its name",
        sources: &[("s", &[("config/app.yaml", "a"), ("config/db.yaml", "d")])],
        ops: &[("@s/config", "@artifact/dest", &[], "")],
        present: &[
            ("dest/config/app.yaml", None),
            ("dest/config/db.yaml", None),
        ],
        absent: &[],
        error: None,
    },
    Case {
        name: "dir with slashes",
        sources: &[("s", &[("config/app.yaml", "a"), ("config/db.yaml", "d")])],
        ops: &[("@s/config/", "@artifact/dest/", &[], "")],
        present: &[
            ("dest/config/app.yaml", None),
            ("dest/config/db.yaml", None),
        ],
        absent: &[],
        error: None,
    },
    Case {
        name: "file into dir",
        sources: &[("s", &[("config.yaml", "c")])],
        ops: &[("@s/config.yaml", "@artifact/dest/", &[], "")],
        present: &[("dest/config.yaml", None)],
        absent: &[],
        error: None,
    },
    Case {
        name: "dir contents",
        sources: &[(
            "s",
            &[("config/app.yaml", "a"), ("config/subdir/db.yaml", "d")],
        )],
        ops: &[("@s/config/**", "@artifact/dest/", &[], "")],
        present: &[("dest/app.yaml", None), ("dest/subdir/db.yaml", None)],
        absent: &[],
        error: None,
    },
    Case {
        name: "chart with values",
        sources: &[
            (
                "chart",
                &[("Chart.yaml", "name: podinfo"), ("values.yaml", "env: dev")],
            ),
            (
                "repo",
                &[("charts/podinfo/values-prod.yaml", "env: production")],
            ),
        ],
        ops: &[
            ("@chart/**", "@artifact/", &[], ""),
            (
                "@repo/charts/podinfo/values-prod.yaml",
                "@artifact/podinfo/values.yaml",
                &[],
                "",
            ),
        ],
        present: &[
            ("Chart.yaml", None),
            ("podinfo/values.yaml", Some("env: production")),
        ],
        absent: &[],
        error: None,
    },
    Case {
        name: "file into existing dir",
        sources: &[("s", &[("file1.txt", "1"), ("subdir/file2.txt", "2")])],
        ops: &[
            ("@s/subdir/", "@artifact/", &[], ""),
            ("@s/file1.txt", "@artifact/subdir", &[], ""),
        ],
        present: &[("subdir/file1.txt", None), ("subdir/file2.txt", None)],
        absent: &[],
        error: None,
    },
    // Errors.
    Case {
        name: "missing file",
        sources: &[("s", &[("other.yaml", "o")])],
        ops: &[("@s/test.yaml", "@artifact/", &[], "")],
        present: &[],
        absent: &[],
        error: Some("does not exist"),
    },
    Case {
        name: "no match",
        sources: &[("s", &[])],
        ops: &[("@s/*.yaml", "@artifact/", &[], "")],
        present: &[],
        absent: &[],
        error: Some("no files match pattern"),
    },
    Case {
        name: "bad glob",
        sources: &[("s", &[("a", "a")])],
        ops: &[("@s/[", "@artifact/", &[], "")],
        present: &[],
        absent: &[],
        error: Some("syntax error in pattern"),
    },
    Case {
        name: "missing alias",
        sources: &[("s", &[("a", "a")])],
        ops: &[("@missing/file.yaml", "@artifact/", &[], "")],
        present: &[],
        absent: &[],
        error: Some("source alias 'missing' not found"),
    },
    // Excludes.
    Case {
        name: "exclude md",
        sources: &[(
            "s",
            &[
                ("app.yaml", "a"),
                ("config.json", "c"),
                ("README.md", "r"),
                ("notes.md", "n"),
            ],
        )],
        ops: &[("@s/**", "@artifact/", &["*.md"], "")],
        present: &[("app.yaml", None), ("config.json", None)],
        absent: &["README.md", "notes.md"],
        error: None,
    },
    Case {
        name: "exclude testdata",
        sources: &[(
            "s",
            &[
                ("app.yaml", "a"),
                ("testdata/test.yaml", "t"),
                ("testdata/fixture.json", "f"),
                ("configs/prod.yaml", "p"),
            ],
        )],
        ops: &[("@s/**", "@artifact/", &["**/testdata/**"], "")],
        present: &[("app.yaml", None), ("configs/prod.yaml", None)],
        absent: &["testdata"],
        error: None,
    },
    Case {
        name: "several excludes",
        sources: &[(
            "s",
            &[
                ("app.yaml", "a"),
                ("README.md", "r"),
                ("temp.tmp", "t"),
                (".hidden", "h"),
                ("docs/guide.md", "g"),
                ("tests/test.go", "t"),
            ],
        )],
        ops: &[(
            "@s/**",
            "@artifact/",
            &["*.md", "*.tmp", "**/.*", "**/tests/**"],
            "",
        )],
        present: &[("app.yaml", None)],
        absent: &["README.md", "temp.tmp", ".hidden", "docs/guide.md", "tests"],
        error: None,
    },
    Case {
        name: "exclude from glob",
        sources: &[(
            "s",
            &[
                ("app.yaml", "a"),
                ("config.yaml", "c"),
                ("secret.yaml", "s"),
                ("other.json", "o"),
            ],
        )],
        ops: &[("@s/*.yaml", "@artifact/configs/", &["secret.yaml"], "")],
        present: &[("configs/app.yaml", None), ("configs/config.yaml", None)],
        absent: &["configs/secret.yaml", "configs/other.json"],
        error: None,
    },
    Case {
        name: "excluded single file",
        sources: &[("s", &[("secret.yaml", "s")])],
        ops: &[(
            "@s/secret.yaml",
            "@artifact/config.yaml",
            &["secret.yaml"],
            "",
        )],
        present: &[],
        absent: &["config.yaml"],
        error: None,
    },
    Case {
        name: "exclude by source path",
        sources: &[("s", INFRA)],
        ops: &[(
            "@s/infrastructure/**",
            "@artifact/",
            &["infrastructure/controllers/descheduler/**"],
            "",
        )],
        present: &[
            ("controllers/sealed-secrets/release.yaml", None),
            ("configs/cluster-issuer.yaml", None),
        ],
        absent: &["controllers/descheduler"],
        error: None,
    },
    Case {
        name: "exclude in dir copy",
        sources: &[("s", INFRA)],
        ops: &[(
            "@s/infrastructure",
            "@artifact/",
            &["infrastructure/controllers/descheduler/**"],
            "",
        )],
        present: &[
            (
                "infrastructure/controllers/sealed-secrets/release.yaml",
                None,
            ),
            ("infrastructure/configs/cluster-issuer.yaml", None),
        ],
        absent: &["infrastructure/controllers/descheduler"],
        error: None,
    },
    Case {
        name: "exclude by selection path",
        sources: &[("s", INFRA)],
        ops: &[(
            "@s/infrastructure/**",
            "@artifact/",
            &["controllers/descheduler/**"],
            "",
        )],
        present: &[
            ("controllers/sealed-secrets/release.yaml", None),
            ("configs/cluster-issuer.yaml", None),
        ],
        absent: &["controllers/descheduler"],
        error: None,
    },
    Case {
        name: "exclude anchored at selection",
        sources: &[(
            "s",
            &[
                ("infrastructure/descheduler/release.yaml", "a"),
                ("infrastructure/controllers/descheduler/release.yaml", "b"),
                (
                    "infrastructure/controllers/sealed-secrets/release.yaml",
                    "c",
                ),
            ],
        )],
        ops: &[(
            "@s/infrastructure/**",
            "@artifact/",
            &["descheduler/**"],
            "",
        )],
        present: &[
            ("controllers/descheduler/release.yaml", None),
            ("controllers/sealed-secrets/release.yaml", None),
        ],
        absent: &["descheduler"],
        error: None,
    },
    Case {
        name: "exclude in dir copy by selection path",
        sources: &[("s", INFRA)],
        ops: &[(
            "@s/infrastructure",
            "@artifact/",
            &["controllers/descheduler/**"],
            "",
        )],
        present: &[
            (
                "infrastructure/controllers/sealed-secrets/release.yaml",
                None,
            ),
            ("infrastructure/configs/cluster-issuer.yaml", None),
        ],
        absent: &["infrastructure/controllers/descheduler"],
        error: None,
    },
    Case {
        name: "exclude one file",
        sources: &[(
            "s",
            &[
                ("infrastructure/configs/app.yaml", "a"),
                ("infrastructure/configs/secret.yaml", "s"),
            ],
        )],
        ops: &[(
            "@s/infrastructure/**",
            "@artifact/",
            &["infrastructure/configs/secret.yaml"],
            "",
        )],
        present: &[("configs/app.yaml", None)],
        absent: &["configs/secret.yaml"],
        error: None,
    },
    Case {
        name: "all excluded",
        sources: &[("s", &[("test.md", "t"), ("other.md", "o")])],
        ops: &[("@s/*.md", "@artifact/", &["*.md"], "")],
        present: &[],
        absent: &[],
        error: Some("all files matching pattern"),
    },
    Case {
        name: "bad exclude",
        sources: &[("s", &[("a.yaml", "a")])],
        ops: &[("@s/*.yaml", "@artifact/", &["[*.md"], "")],
        present: &[],
        absent: &[],
        error: Some("invalid exclude pattern"),
    },
    // Merge.
    Case {
        name: "merge",
        sources: &[
            (
                "s1",
                &[(
                    "config.yaml",
                    "name: app\nports: [80, 443]\nlabels: {env: dev, keep: me}\nversion: 1.0.0\nreplicas: 3\n",
                )],
            ),
            (
                "s2",
                &[(
                    "config.yaml",
                    "replicas: 5\nports: [8080]\nlabels: {env: prod}\nenv: production\n",
                )],
            ),
        ],
        ops: &[
            ("@s1/config.yaml", "@artifact/config.yaml", &[], ""),
            ("@s2/config.yaml", "@artifact/config.yaml", &[], "Merge"),
        ],
        present: &[(
            "config.yaml",
            Some(
                "env: production\nlabels:\n  env: prod\n  keep: me\nname: app\nports:\n- 8080\nreplicas: 5\nversion: 1.0.0\n",
            ),
        )],
        absent: &[],
        error: None,
    },
    Case {
        name: "merge globs",
        sources: &[
            (
                "s1",
                &[
                    ("config1.yaml", "env: dev\nregion: us-west-1\n"),
                    ("config2.yaml", "version: 1.0.0\nimage: my-app:latest\n"),
                ],
            ),
            (
                "s2",
                &[
                    ("config1.yaml", "env: prod\n"),
                    ("config2.yaml", "replicas: 5\n"),
                ],
            ),
        ],
        ops: &[
            ("@s1/**", "@artifact/", &[], ""),
            ("@s2/**", "@artifact/", &[], "Merge"),
        ],
        present: &[
            ("config1.yaml", Some("env: prod\nregion: us-west-1\n")),
            (
                "config2.yaml",
                Some("image: my-app:latest\nreplicas: 5\nversion: 1.0.0\n"),
            ),
        ],
        absent: &[],
        error: None,
    },
    Case {
        name: "merge with exclude",
        sources: &[
            (
                "s1",
                &[("config.yaml", "a: 1\n"), ("secret.yaml", "token: base\n")],
            ),
            (
                "s2",
                &[("config.yaml", "b: 2\n"), ("secret.yaml", "token: leak\n")],
            ),
        ],
        ops: &[
            ("@s1/**", "@artifact/", &[], ""),
            ("@s2/**", "@artifact/", &["secret.yaml"], "Merge"),
        ],
        present: &[
            ("config.yaml", Some("a: 1\nb: 2\n")),
            ("secret.yaml", Some("token: base\n")),
        ],
        absent: &[],
        error: None,
    },
    Case {
        name: "merge into nothing copies",
        sources: &[("s", &[("config.yaml", "a: b")])],
        ops: &[("@s/config.yaml", "@artifact/config.yaml", &[], "Merge")],
        present: &[("config.yaml", Some("a: b"))],
        absent: &[],
        error: None,
    },
    Case {
        name: "merge non-yaml",
        sources: &[
            ("s1", &[("config.env", "A=B\n")]),
            ("s2", &[("config.yaml", "a: b\n")]),
        ],
        ops: &[
            ("@s1/config.env", "@artifact/config.yaml", &[], ""),
            ("@s2/config.yaml", "@artifact/config.yaml", &[], "Merge"),
        ],
        present: &[],
        absent: &[],
        error: Some("cannot unmarshal YAML document"),
    },
];

const INFRA: &[(&str, &str)] = &[
    ("infrastructure/controllers/descheduler/release.yaml", "r"),
    (
        "infrastructure/controllers/descheduler/kustomization.yaml",
        "k",
    ),
    (
        "infrastructure/controllers/sealed-secrets/release.yaml",
        "s",
    ),
    ("infrastructure/configs/cluster-issuer.yaml", "c"),
];

fn write_sources(
    dir: &std::path::Path,
    sources: &[(&str, &[(&str, &str)])],
) -> HashMap<String, PathBuf> {
    let mut out = HashMap::new();
    for (alias, files) in sources {
        let root = dir.join(alias);
        std::fs::create_dir_all(&root).unwrap();
        for (path, content) in *files {
            let p = root.join(path);
            std::fs::create_dir_all(p.parent().unwrap()).unwrap();
            std::fs::write(p, content).unwrap();
        }
        out.insert(alias.to_string(), root);
    }
    out
}

fn ops(list: &[(&str, &str, &[&str], &str)]) -> Vec<CopyOperation> {
    list.iter()
        .map(|(from, to, exclude, strategy)| CopyOperation {
            from: from.to_string(),
            to: to.to_string(),
            exclude: exclude.iter().map(|s| s.to_string()).collect(),
            strategy: (!strategy.is_empty()).then(|| strategy.to_string()),
        })
        .collect()
}

#[test]
fn source_watcher_builder_tables() {
    for case in CASES {
        let dir = tempfile::tempdir().unwrap();
        let sources = write_sources(&dir.path().join("sources"), case.sources);
        let staging = dir.path().join("staging");
        std::fs::create_dir_all(&staging).unwrap();
        let result = apply(&sources, &staging, &ops(case.ops));
        match case.error {
            Some(want) => {
                let err = result.expect_err(case.name);
                assert!(err.contains(want), "{}: {err}", case.name);
                assert!(
                    err.starts_with("failed to apply copy operations: "),
                    "{err}"
                );
            }
            None => {
                result.unwrap_or_else(|e| panic!("{}: {e}", case.name));
                for (path, content) in case.present {
                    let got = std::fs::read_to_string(staging.join(path))
                        .unwrap_or_else(|_| panic!("{}: {path} missing", case.name));
                    if let Some(want) = content {
                        assert_eq!(&got, want, "{}: {path}", case.name);
                    }
                }
                for path in case.absent {
                    assert!(
                        !staging.join(path).exists(),
                        "{}: {path} present",
                        case.name
                    );
                }
            }
        }
    }
}

fn tarball(files: &[(&str, &str)]) -> Vec<u8> {
    let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for (path, content) in files {
        let mut h = tar::Header::new_gnu();
        h.set_size(content.len() as u64);
        h.set_mode(0o644);
        h.set_cksum();
        b.append_data(&mut h, path, content.as_bytes()).unwrap();
    }
    let mut gz = b.into_inner().unwrap();
    gz.flush().unwrap();
    gz.finish().unwrap()
}

/// extract_test.go: tarballs found by path or doublestar glob, extracted into the destination.
#[test]
fn extract_strategy() {
    let t1 = tarball(&[("config.yaml", "one"), ("prod/config.yaml", "prod")]);
    let t2 = tarball(&[("int/config.yaml", "int")]);
    let run = |files: &[(&str, &[u8])], op: (&str, &str, &[&str])| {
        let dir = tempfile::tempdir().unwrap();
        let root = dir.path().join("s");
        for (p, data) in files {
            let path = root.join(p);
            std::fs::create_dir_all(path.parent().unwrap()).unwrap();
            std::fs::write(path, data).unwrap();
        }
        std::fs::create_dir_all(root.join("manifests-dir")).unwrap();
        let staging = dir.path().join("staging");
        std::fs::create_dir_all(&staging).unwrap();
        let sources = HashMap::from([("s".to_string(), root)]);
        let op = CopyOperation {
            from: op.0.into(),
            to: op.1.into(),
            exclude: op.2.iter().map(|s| s.to_string()).collect(),
            strategy: Some("Extract".into()),
        };
        let result = apply(&sources, &staging, &[op]);
        (dir, staging, result)
    };
    let (_d, st, r) = run(
        &[("manifests.tgz", &t1)],
        ("@s/manifests.tgz", "@artifact/manifests", &[]),
    );
    r.unwrap();
    assert!(
        st.join("manifests/config.yaml").is_file()
            && st.join("manifests/prod/config.yaml").is_file()
    );
    let (_d, st, r) = run(
        &[("m1.tgz", &t1), ("m2.tgz", &t2)],
        ("@s/*.tg*", "@artifact/", &[]),
    );
    r.unwrap();
    assert!(st.join("config.yaml").is_file() && st.join("int/config.yaml").is_file());
    let (_d, st, r) = run(
        &[("prod/manifests.tgz", &t1), ("int/manifests.tgz", &t2)],
        ("@s/**", "@artifact/", &[]),
    );
    r.unwrap();
    assert!(st.join("prod/config.yaml").is_file() && st.join("int/config.yaml").is_file());
    let (_d, _st, r) = run(
        &[("invalid.tgz", b"text")],
        ("@s/invalid.tgz", "@artifact/", &[]),
    );
    assert!(r.unwrap_err().contains("failed to extract tarball"));
    let (_d, st, r) = run(
        &[("app.tgz", &t1), ("int.tgz", &t2)],
        ("@s/*.tgz", "@artifact/", &["int.tgz"]),
    );
    r.unwrap();
    assert!(st.join("config.yaml").is_file() && !st.join("int/config.yaml").exists());
    let (_d, _st, r) = run(&[("config.yaml", b"x")], ("@s/*.tgz", "@artifact/", &[]));
    assert!(r.unwrap_err().contains("no files match pattern"));
    let (_d, st, r) = run(
        &[("readme.txt", b"x"), ("archive.tgz", &t1)],
        ("@s/*", "@artifact/", &[]),
    );
    r.unwrap();
    assert!(st.join("config.yaml").is_file() && !st.join("readme.txt").exists());
    let (_d, _st, r) = run(&[], ("@s/manifests-dir", "@artifact/", &[]));
    assert!(
        r.unwrap_err()
            .contains("extract strategy is not supported for directories")
    );
    let (_d, _st, r) = run(
        &[("config.yaml", b"x")],
        ("@s/config.yaml", "@artifact/", &[]),
    );
    assert!(
        r.unwrap_err()
            .contains("extract strategy requires tarball file")
    );
}

/// The dirhash examples: the artifact name is part of each file's name.
#[test]
fn dir_hash_names_the_tarball() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("1.yaml"), "---").unwrap();
    assert_eq!(dir_hash(dir.path(), "git-artifact").unwrap(), "2007107758");
    assert_eq!(dir_hash(dir.path(), "oci-artifact").unwrap(), "1997146277");
}
