//! `tidegate push/pull/tag/list/diff artifact` against Debian's docker-registry on loopback
//! (plain, htpasswd basic auth, TLS with a test CA), cross-checked with skopeo.

#[path = "../../source/tests/registry_support/mod.rs"]
mod registry_support;

use std::path::Path;
use std::process::{Command, Output};

use registry_support::{Mode, Registry, skopeo};

fn tidegate(args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tidegate"));
    cmd.args(args).env_remove("DOCKER_CONFIG");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().expect("tidegate runs")
}

fn ok(args: &[&str], env: &[(&str, &str)]) -> (String, String) {
    let out = tidegate(args, env);
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    assert!(out.status.success(), "tidegate {args:?} failed: {stderr}");
    (String::from_utf8_lossy(&out.stdout).into_owned(), stderr)
}

fn fails(args: &[&str], env: &[(&str, &str)]) -> String {
    let out = tidegate(args, env);
    assert_eq!(out.status.code(), Some(1), "tidegate {args:?} should fail");
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A small tree of manifests, with files `flux push artifact` leaves out by default.
fn sample(dir: &Path) {
    std::fs::create_dir_all(dir.join("apps/podinfo")).unwrap();
    std::fs::create_dir_all(dir.join(".git")).unwrap();
    std::fs::write(
        dir.join("kustomization.yaml"),
        "resources:\n- apps/podinfo\n",
    )
    .unwrap();
    std::fs::write(
        dir.join("apps/podinfo/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: podinfo\ndata:\n  k: v\n",
    )
    .unwrap();
    std::fs::write(dir.join("logo.png"), [0x89, b'P', b'N', b'G']).unwrap();
    std::fs::write(dir.join(".git/HEAD"), "ref: refs/heads/main\n").unwrap();
}

fn files_under(dir: &Path) -> Vec<String> {
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            let p = e.path();
            if p.is_dir() {
                stack.push(p);
            } else {
                out.push(p.strip_prefix(dir).unwrap().to_string_lossy().into_owned());
            }
        }
    }
    out.sort();
    out
}

#[test]
fn push_tag_list_pull_and_diff_round_trip() {
    let reg = Registry::start(Mode::Plain);
    let src = tempfile::tempdir().unwrap();
    sample(src.path());
    let url = reg.url("fleet/manifests:6.0.0");
    let (stdout, stderr) = ok(
        &[
            "push",
            "artifact",
            &url,
            "--path",
            src.path().to_str().unwrap(),
            "--source",
            "https://github.com/example/fleet",
            "--revision",
            "main@sha1:0123abcd",
            "--annotations",
            "team=platform",
        ],
        &[],
    );
    assert!(stdout.is_empty(), "{stdout}");
    let lines: Vec<&str> = stderr.lines().collect();
    assert_eq!(
        lines[0],
        format!("► pushing artifact to {}/fleet/manifests:6.0.0", reg.host)
    );
    let digest = lines[1]
        .strip_prefix(&format!(
            "✔ artifact successfully pushed to {}/fleet/manifests@",
            reg.host
        ))
        .unwrap_or_else(|| panic!("{stderr}"))
        .to_string();
    assert!(
        digest.starts_with("sha256:") && digest.len() == 71,
        "{digest}"
    );

    // skopeo, an independent client, reads the manifest as Flux writes it.
    let raw = skopeo(&[
        "inspect",
        "--tls-verify=false",
        "--raw",
        &format!("docker://{}/fleet/manifests:6.0.0", reg.host),
    ]);
    let m: serde_json::Value = serde_json::from_str(&raw).unwrap();
    assert_eq!(m["mediaType"], "application/vnd.oci.image.manifest.v1+json");
    assert_eq!(
        m["config"]["mediaType"],
        "application/vnd.cncf.flux.config.v1+json"
    );
    assert_eq!(
        m["layers"][0]["mediaType"],
        "application/vnd.cncf.flux.content.v1.tar+gzip"
    );
    assert_eq!(
        m["annotations"]["org.opencontainers.image.source"],
        "https://github.com/example/fleet"
    );
    assert_eq!(
        m["annotations"]["org.opencontainers.image.revision"],
        "main@sha1:0123abcd"
    );
    assert_eq!(m["annotations"]["team"], "platform");
    let created = m["annotations"]["org.opencontainers.image.created"]
        .as_str()
        .unwrap();
    assert!(created.len() == 20 && created.ends_with('Z'), "{created}");
    use sha2::Digest as _;
    let sum = format!(
        "sha256:{:x}",
        sha2::Sha256::digest(raw.trim_end().as_bytes())
    );
    assert_eq!(sum, digest, "the printed digest is the manifest's");

    // skopeo copies it out; the layer holds the files, without the ignored ones.
    let layout = tempfile::tempdir().unwrap();
    skopeo(&[
        "copy",
        "--src-tls-verify=false",
        &format!("docker://{}/fleet/manifests:6.0.0", reg.host),
        &format!("dir:{}", layout.path().display()),
    ]);
    let layer_hex = m["layers"][0]["digest"]
        .as_str()
        .unwrap()
        .trim_start_matches("sha256:")
        .to_string();
    let blob = std::fs::read(layout.path().join(&layer_hex)).unwrap();
    let extracted = tempfile::tempdir().unwrap();
    tar::Archive::new(flate2::read::GzDecoder::new(&blob[..]))
        .unpack(extracted.path())
        .unwrap();
    assert_eq!(
        files_under(extracted.path()),
        ["apps/podinfo/cm.yaml", "kustomization.yaml"]
    );

    // Tags, then the listing.
    let (_, stderr) = ok(&["tag", "artifact", &url, "--tag", "latest,stable"], &[]);
    assert!(
        stderr.contains(&format!(
            "✔ artifact tagged as {}/fleet/manifests:stable",
            reg.host
        )),
        "{stderr}"
    );
    let (table, _) = ok(&["list", "artifacts", &reg.url("fleet/manifests")], &[]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(rows[0], ["ARTIFACT", "DIGEST", "SOURCE", "REVISION"]);
    assert_eq!(rows.len(), 4, "{table}");
    assert_eq!(rows[1][0], format!("{}/fleet/manifests:stable", reg.host));
    assert!(
        rows[1..]
            .iter()
            .all(|r| r[1] == digest && r[3] == "main@sha1:0123abcd"),
        "{table}"
    );
    let (table, _) = ok(
        &[
            "list",
            "artifacts",
            &reg.url("fleet/manifests"),
            "--filter-semver",
            ">=6.0.0",
        ],
        &[],
    );
    assert_eq!(table.lines().count(), 2, "{table}");

    // Pull by tag and by digest.
    for r in [
        reg.url("fleet/manifests:stable"),
        format!("{}@{digest}", reg.url("fleet/manifests")),
    ] {
        let out = tempfile::tempdir().unwrap();
        let (_, stderr) = ok(
            &["pull", "artifact", &r, "-o", out.path().to_str().unwrap()],
            &[],
        );
        assert!(
            stderr.contains("✔ source https://github.com/example/fleet"),
            "{stderr}"
        );
        assert!(
            stderr.contains(&format!("✔ digest {}/fleet/manifests@{digest}", reg.host)),
            "{stderr}"
        );
        assert_eq!(
            files_under(out.path()),
            ["apps/podinfo/cm.yaml", "kustomization.yaml"]
        );
    }

    // diff: same content, then a change.
    let out = tidegate(
        &[
            "diff",
            "artifact",
            &url,
            "--path",
            src.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "✔ no changes detected\n"
    );
    std::fs::write(src.path().join("kustomization.yaml"), "resources: []\n").unwrap();
    let out = tidegate(
        &[
            "diff",
            "artifact",
            &url,
            "--path",
            src.path().to_str().unwrap(),
        ],
        &[],
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        String::from_utf8_lossy(&out.stderr),
        "✗ the remote artifact contents differs from the local one\n"
    );

    // --reproducible: the same content twice, the same digest; JSON output.
    let mut digests = Vec::new();
    for tag in ["r1", "r2"] {
        let (stdout, _) = ok(
            &[
                "push",
                "artifact",
                &reg.url(&format!("fleet/manifests:{tag}")),
                "--path",
                src.path().to_str().unwrap(),
                "--source",
                "s",
                "--revision",
                "r",
                "--reproducible",
                "-o",
                "json",
            ],
            &[],
        );
        let v: serde_json::Value = serde_json::from_str(&stdout).unwrap();
        assert_eq!(v["tag"], tag);
        assert_eq!(v["repository"], format!("{}/fleet/manifests", reg.host));
        digests.push(v["digest"].as_str().unwrap().to_string());
    }
    assert_eq!(digests[0], digests[1]);
}

#[test]
fn bad_input_is_refused_clearly() {
    let reg = Registry::start(Mode::Plain);
    let src = tempfile::tempdir().unwrap();
    sample(src.path());
    let path = src.path().to_str().unwrap();
    let err = fails(
        &[
            "push",
            "artifact",
            "https://example.com/app:1",
            "--path",
            path,
            "--source",
            "s",
            "--revision",
            "r",
        ],
        &[],
    );
    assert_eq!(
        err,
        "✗ URL must be in format 'oci://<domain>/<org>/<repo>'\n"
    );
    let err = fails(
        &[
            "push",
            "artifact",
            &reg.url("app:1"),
            "--path",
            path,
            "--revision",
            "r",
        ],
        &[],
    );
    assert_eq!(err, "✗ --source is required\n");
    let err = fails(
        &[
            "push",
            "artifact",
            &reg.url("app:1"),
            "--path",
            "/no/such",
            "--source",
            "s",
            "--revision",
            "r",
        ],
        &[],
    );
    assert!(
        err.starts_with("✗ invalid path '/no/such', must point to an existing directory or file: "),
        "{err}"
    );
    let err = fails(
        &[
            "push",
            "artifact",
            &reg.url("app:1"),
            "--path",
            path,
            "--source",
            "s",
            "--revision",
            "r",
            "-a",
            "a=b=c",
        ],
        &[],
    );
    assert_eq!(
        err,
        "✗ invalid annotation a=b=c, must be in the format key=value\n"
    );
    let out = tempfile::tempdir().unwrap();
    let err = fails(
        &[
            "pull",
            "artifact",
            &reg.url("app:missing"),
            "-o",
            out.path().to_str().unwrap(),
        ],
        &[],
    );
    assert!(
        err.contains("missing") || err.contains("not found") || err.contains("unknown"),
        "{err}"
    );
    assert!(
        std::fs::read_dir(out.path()).unwrap().next().is_none(),
        "nothing written"
    );
    let err = fails(
        &["pull", "artifact", &reg.url("app:1"), "-o", "/no/such/dir"],
        &[],
    );
    assert!(
        err.starts_with("✗ invalid output path \"/no/such/dir\""),
        "{err}"
    );
    let err = fails(&["tag", "artifact", &reg.url("app:1")], &[]);
    assert_eq!(err, "✗ --tag is required\n");
    let err = fails(
        &[
            "list",
            "artifacts",
            &reg.url("app"),
            "--filter-semver",
            "not a range",
        ],
        &[],
    );
    assert!(
        err.starts_with("✗ semver 'not a range' parse error: "),
        "{err}"
    );
}

#[test]
fn basic_auth_from_creds_and_docker_config() {
    let reg = Registry::start(Mode::Htpasswd("fleet", "s3cret-pass"));
    let src = tempfile::tempdir().unwrap();
    sample(src.path());
    let path = src.path().to_str().unwrap();
    let url = reg.url("private/app:1.0.0");
    let push = |extra: &[&str], env: &[(&str, &str)]| {
        let mut args = vec![
            "push",
            "artifact",
            url.as_str(),
            "--path",
            path,
            "--source",
            "s",
            "--revision",
            "r",
        ];
        args.extend_from_slice(extra);
        tidegate(&args, env)
    };
    for (extra, what) in [
        (vec![], "anonymous"),
        (vec!["--creds", "fleet:wrong"], "wrong password"),
    ] {
        let out = push(&extra, &[]);
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(1), "{what}: {err}");
        assert!(
            err.contains("pushing artifact failed")
                || err.contains("401")
                || err.to_lowercase().contains("auth"),
            "{what}: {err}"
        );
        assert!(
            !err.contains("s3cret-pass") && !err.contains("wrong"),
            "no credentials in messages: {err}"
        );
    }
    let out = push(&["--creds", "fleet:s3cret-pass"], &[]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.starts_with("► logging in to registry with credentials\n"),
        "{err}"
    );
    // The user's Docker config, as docker login writes it.
    let docker = tempfile::tempdir().unwrap();
    use base64::Engine as _;
    let auth = base64::engine::general_purpose::STANDARD.encode("fleet:s3cret-pass");
    std::fs::write(
        docker.path().join("config.json"),
        format!(r#"{{"auths":{{"{}":{{"auth":"{auth}"}}}}}}"#, reg.host),
    )
    .unwrap();
    let out = tempfile::tempdir().unwrap();
    let (_, stderr) = ok(
        &["pull", "artifact", &url, "-o", out.path().to_str().unwrap()],
        &[("DOCKER_CONFIG", docker.path().to_str().unwrap())],
    );
    assert!(
        stderr.contains("✔ artifact content extracted to"),
        "{stderr}"
    );
    assert_eq!(
        files_under(out.path()),
        ["apps/podinfo/cm.yaml", "kustomization.yaml"]
    );
}

#[test]
fn tls_registry_needs_a_trusted_certificate_or_insecure() {
    let reg = Registry::start(Mode::Tls);
    let src = tempfile::tempdir().unwrap();
    sample(src.path());
    let path = src.path().to_str().unwrap();
    // 127.0.0.1 may fall back to HTTP, but this registry speaks only TLS; its certificate is
    // not trusted, so the push fails.
    let err = fails(
        &[
            "push",
            "artifact",
            &reg.url("app:1"),
            "--path",
            path,
            "--source",
            "s",
            "--revision",
            "r",
        ],
        &[],
    );
    assert!(
        err.starts_with("✗ ") && err.to_lowercase().contains("certificate"),
        "{err}"
    );
    let (_, stderr) = ok(
        &[
            "push",
            "artifact",
            &reg.url("app:1"),
            "--path",
            path,
            "--source",
            "s",
            "--revision",
            "r",
            "--insecure-registry",
        ],
        &[],
    );
    assert!(
        stderr.contains("✔ artifact successfully pushed"),
        "{stderr}"
    );
    // skopeo, trusting the test CA, reads what was pushed over TLS.
    let cert_dir = reg.cert_dir.as_ref().unwrap().to_str().unwrap().to_string();
    let raw = skopeo(&[
        "inspect",
        "--raw",
        "--cert-dir",
        &cert_dir,
        &format!("docker://{}/app:1", reg.host),
    ]);
    assert!(
        raw.contains("application/vnd.cncf.flux.content.v1.tar+gzip"),
        "{raw}"
    );
}

/// A child process killed when dropped.
struct Running(std::process::Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

#[test]
fn create_get_reconcile_and_trace_an_oci_source() {
    let reg = Registry::start(Mode::Plain);
    let src = tempfile::tempdir().unwrap();
    std::fs::write(
        src.path().join("cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-oci\n  namespace: default\ndata:\n  k: v\n",
    )
    .unwrap();
    let path = src.path().to_str().unwrap();
    ok(
        &[
            "push",
            "artifact",
            &reg.url("fleet/app:1.0.0"),
            "--path",
            path,
            "--source",
            "s",
            "--revision",
            "r1",
        ],
        &[],
    );
    let dir = tempfile::tempdir().unwrap();
    let spawn = |args: &[&str]| {
        Running(
            Command::new(env!("CARGO_BIN_EXE_tidegate"))
                .args(args)
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap(),
        )
    };
    let api_port = free_port();
    let _api = spawn(&[
        "apiserver",
        "--data-dir",
        dir.path().join("api").to_str().unwrap(),
        "--listen",
        &format!("127.0.0.1:{api_port}"),
    ]);
    let kc = dir.path().join("api/kubeconfig");
    let kc = kc.to_str().unwrap().to_string();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while !(Path::new(&kc).exists()
        && tidegate(&["get", "sources", "oci", "-A", "--kubeconfig", &kc], &[])
            .status
            .success())
    {
        // Until the server answers (the CRDs are not installed yet, so the listing fails).
        if Path::new(&kc).exists() {
            let install = Command::new(env!("CARGO_BIN_EXE_tidegate"))
                .args(["install", "--export"])
                .output()
                .unwrap();
            let mut k = Command::new("kubectl")
                .args(["--kubeconfig", &kc, "apply", "--server-side", "-f", "-"])
                .stdin(std::process::Stdio::piped())
                .stdout(std::process::Stdio::null())
                .stderr(std::process::Stdio::null())
                .spawn()
                .unwrap();
            use std::io::Write;
            k.stdin.take().unwrap().write_all(&install.stdout).unwrap();
            let _ = k.wait();
        }
        assert!(
            std::time::Instant::now() < deadline,
            "the API server and CRDs are up"
        );
        std::thread::sleep(std::time::Duration::from_millis(300));
    }
    let free = || format!("127.0.0.1:{}", free_port());
    let _controllers = spawn(&[
        "controllers",
        "--kubeconfig",
        &kc,
        "--storage-path",
        dir.path().join("artifacts").to_str().unwrap(),
        "--storage-addr",
        &free(),
        "--metrics-addr",
        &free(),
        "--health-addr",
        &free(),
    ]);
    let ns = ["--kubeconfig", kc.as_str(), "-n", "default"];
    let with = |args: &[&str]| -> Vec<String> {
        args.iter()
            .chain(ns.iter())
            .map(|s| s.to_string())
            .collect()
    };
    let run = |args: &[&str]| {
        let a = with(args);
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        ok(&a, &[])
    };
    let url = reg.url("fleet/app");
    let (_, stderr) = run(&[
        "create",
        "source",
        "oci",
        "app",
        "--url",
        &url,
        "--tag-semver",
        ">=1.0.0",
        "--interval",
        "10m",
        "--timeout",
        "60s",
    ]);
    assert!(
        stderr.contains("✔ OCIRepository source reconciliation completed"),
        "{stderr}"
    );
    assert!(
        stderr.contains("✔ fetched revision: 1.0.0@sha256:"),
        "{stderr}"
    );
    let (table, _) = run(&["get", "sources", "oci"]);
    let rows: Vec<Vec<&str>> = table
        .lines()
        .map(|l| l.split('\t').map(str::trim).collect())
        .collect();
    assert_eq!(
        rows[0],
        ["NAME", "REVISION", "SUSPENDED", "READY", "MESSAGE"],
        "{table}"
    );
    assert_eq!(rows[1][0], "app");
    assert!(
        rows[1][1].starts_with("1.0.0@sha256:") && rows[1][3] == "True",
        "{table}"
    );
    // A new tag, then reconcile on request.
    ok(
        &[
            "push",
            "artifact",
            &reg.url("fleet/app:1.1.0"),
            "--path",
            path,
            "--source",
            "s",
            "--revision",
            "r2",
        ],
        &[],
    );
    let (_, stderr) = run(&["reconcile", "source", "oci", "app", "--timeout", "60s"]);
    assert!(
        stderr.contains("✔ fetched revision 1.1.0@sha256:"),
        "{stderr}"
    );
    // A Kustomization from it, traced back to the OCIRepository.
    let (_, stderr) = run(&[
        "create",
        "kustomization",
        "app",
        "--source",
        "OCIRepository/app",
        "--path",
        "./",
        "--prune=true",
        "--timeout",
        "60s",
    ]);
    assert!(
        stderr.contains("✔ applied revision: 1.1.0@sha256:"),
        "{stderr}"
    );
    let (trace, _) = run(&["trace", "configmap", "from-oci"]);
    assert!(
        trace.contains("OCIRepository:") && trace.contains(&url) && trace.contains("Tag:"),
        "{trace}"
    );
    let (_, stderr) = run(&["suspend", "source", "oci", "app"]);
    assert!(stderr.contains("suspend"), "{stderr}");
    let (exported, _) = run(&["export", "source", "oci", "app"]);
    assert!(
        exported.contains("kind: OCIRepository") && exported.contains("suspend: true"),
        "{exported}"
    );
}
