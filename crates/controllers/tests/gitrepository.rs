//! The GitRepository controller against the embedded API server (over HTTPS, through kube-rs),
//! with real git repositories and real kubectl.

#[path = "../../apiserver/tests/common/mod.rs"]
mod common;
#[path = "../../source/tests/support/mod.rs"]
mod git_support;

use std::sync::Arc;
use std::time::Duration;

use git_support::{GitDaemon, Repo};
use serde_json::Value;
use tidegate_controllers::gitrepository;
use tidegate_controllers::metrics::Metrics;

struct Env {
    server: common::TestServer,
    storage_dir: tempfile::TempDir,
    base: String,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    metrics: Arc<Metrics>,
}

impl Drop for Env {
    fn drop(&mut self) {
        if let Some(tx) = self.stop.take() {
            let _ = tx.send(());
        }
    }
}

async fn start() -> Env {
    let server = common::start().await;
    let crds = tidegate_api::crds::stream();
    server.ok_stdin(&["apply", "--server-side", "-f", "-"], &crds);
    server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/gitrepositories.source.toolkit.fluxcd.io",
    ]);
    let (storage, storage_dir) = git_support::artifact_server().await;
    let base = storage.url("").trim_end_matches('/').to_string();
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    let metrics = Metrics::new();
    let client = server.client().await;
    let options = gitrepository::Options {
        concurrent: 4,
        file_urls: tidegate_controllers::file_urls::FileUrls::All,
        ..Default::default()
    };
    tokio::spawn(gitrepository::run(
        client,
        storage,
        metrics.clone(),
        options,
        async {
            let _ = rx.await;
        },
    ));
    Env {
        server,
        storage_dir,
        base,
        stop: Some(tx),
        metrics,
    }
}

fn get(env: &Env, name: &str) -> Value {
    let out = env.server.ok(&["get", "gitrepository", name, "-o", "json"]);
    serde_json::from_str(&out).unwrap()
}

fn condition<'a>(obj: &'a Value, type_: &str) -> Option<&'a Value> {
    obj["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

/// Waits until `check` holds on the object; panics with the last object otherwise.
async fn wait_for(env: &Env, name: &str, what: &str, check: impl Fn(&Value) -> bool) -> Value {
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    loop {
        let obj = get(env, name);
        if check(&obj) {
            return obj;
        }
        if std::time::Instant::now() > deadline {
            panic!(
                "{name}: timed out waiting for {what}: {}",
                serde_json::to_string_pretty(&obj["status"]).unwrap()
            );
        }
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
}

fn ready_at(revision: &str) -> impl Fn(&Value) -> bool + '_ {
    move |o| {
        condition(o, "Ready").is_some_and(|c| c["status"] == "True")
            && o["status"]["artifact"]["revision"] == revision
    }
}

fn ready_false(o: &Value) -> bool {
    condition(o, "Ready").is_some_and(|c| c["status"] == "False")
}

fn manifest(name: &str, url: &str, extra: &str) -> String {
    format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 5m0s\n  url: {url}\n{extra}"
    )
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn becomes_ready_serves_its_artifact_and_follows_new_commits() {
    let env = start().await;
    let repo = Repo::new();
    repo.write(
        "deploy/app.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app\n",
    );
    let c1 = repo.commit("Add the app\n\nwith a body");
    let daemon = GitDaemon::start(&repo.base);
    let url = daemon.url("repo.git");
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &manifest("podinfo", &url, "  ref:\n    branch: main\n"),
    );

    let obj = wait_for(
        &env,
        "podinfo",
        "Ready",
        ready_at(&format!("main@sha1:{c1}")),
    )
    .await;
    let artifact = &obj["status"]["artifact"];
    let path = format!("gitrepository/default/podinfo/{c1}.tar.gz");
    assert_eq!(artifact["path"], path);
    assert_eq!(artifact["url"], format!("{}/{path}", env.base));
    let ready = condition(&obj, "Ready").unwrap();
    assert_eq!(ready["reason"], "Succeeded");
    assert_eq!(
        ready["message"],
        format!("stored artifact for revision 'main@sha1:{c1}'")
    );
    assert_eq!(
        condition(&obj, "ArtifactInStorage").unwrap()["status"],
        "True"
    );
    assert_eq!(
        obj["status"]["observedGeneration"],
        obj["metadata"]["generation"]
    );
    assert_eq!(obj["metadata"]["finalizers"][0], "finalizers.fluxcd.io");
    // The API server filled in the CRD's default, as kube-apiserver does.
    assert_eq!(obj["spec"]["timeout"], "60s");
    // The URL serves bytes with the advertised digest and size.
    let (bytes, digest) = git_support::download(artifact["url"].as_str().unwrap()).await;
    assert_eq!(artifact["digest"], digest);
    assert_eq!(artifact["size"], bytes.len() as u64);
    // The event names the commit subject; kubectl shows the printer columns.
    let events = env.server.ok(&["get", "events", "-o", "json"]);
    assert!(
        events.contains("NewArtifact")
            && events.contains("stored artifact for commit 'Add the app'"),
        "{events}"
    );
    let table = env.server.ok(&["get", "gitrepo", "podinfo"]);
    assert!(
        table.contains("URL") && table.contains("READY") && table.contains("True"),
        "{table}"
    );

    // A new commit plus requestedAt: the new revision is stored; lastHandledReconcileAt echoes.
    repo.write(
        "deploy/app.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app2\n",
    );
    let c2 = repo.commit("Second");
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "gitrepository/podinfo",
        "reconcile.fluxcd.io/requestedAt=now-1",
    ]);
    let obj = wait_for(
        &env,
        "podinfo",
        "the new revision",
        ready_at(&format!("main@sha1:{c2}")),
    )
    .await;
    assert_eq!(obj["status"]["lastHandledReconcileAt"], "now-1");
    // Retention: two records stay.
    let dir = env.storage_dir.path().join("gitrepository/default/podinfo");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 2);
    // Metrics carry the duration histogram.
    assert!(env.metrics.encode().contains("gotk_reconcile_duration_seconds_count{kind=\"GitRepository\",name=\"podinfo\",namespace=\"default\"}"));

    // Suspend: a new commit is not picked up even when requested.
    env.server.ok(&[
        "patch",
        "gitrepository/podinfo",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":true}}"#,
    ]);
    repo.write("x.yaml", "x: 1\n");
    repo.commit("Third");
    env.server.ok(&[
        "annotate",
        "--overwrite",
        "gitrepository/podinfo",
        "reconcile.fluxcd.io/requestedAt=now-2",
    ]);
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        get(&env, "podinfo")["status"]["artifact"]["revision"],
        format!("main@sha1:{c2}")
    );

    // Deletion removes the artifacts and the finalizer.
    env.server.ok(&[
        "delete",
        "gitrepository/podinfo",
        "--wait=true",
        "--timeout=30s",
    ]);
    assert!(!dir.exists(), "artifacts removed with the object");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn failures_name_their_cause_and_publish_nothing() {
    let env = start().await;
    let repo = Repo::new();
    repo.write("a.yaml", "a: 1\n");
    let c1 = repo.commit("first");
    repo.git(&["tag", "v1.0.0"]);
    repo.push();
    let daemon = GitDaemon::start(&repo.base);
    let url = daemon.url("repo.git");

    // Unknown branch.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &manifest("nobranch", &url, "  ref:\n    branch: nope\n"),
    );
    let obj = wait_for(&env, "nobranch", "Ready=False", ready_false).await;
    let fetch = condition(&obj, "FetchFailed").expect("FetchFailed");
    assert_eq!(fetch["reason"], "GitOperationFailed");
    assert!(
        fetch["message"]
            .as_str()
            .unwrap()
            .contains("couldn't find remote ref \"refs/heads/nope\""),
        "{fetch}"
    );
    assert!(obj["status"]["artifact"].is_null());
    assert_eq!(
        condition(&obj, "Reconciling").unwrap()["reason"],
        "ProgressingWithRetry"
    );

    // No tag in range.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &manifest("norange", &url, "  ref:\n    semver: '>=2.0.0'\n"),
    );
    let obj = wait_for(&env, "norange", "Ready=False", ready_false).await;
    assert!(
        condition(&obj, "Ready").unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("no match found for semver: >=2.0.0")
    );

    // Unreachable host.
    let dead = format!("git://127.0.0.1:{}/repo.git", git_support::free_port());
    env.server
        .ok_stdin(&["apply", "-f", "-"], &manifest("dead", &dead, ""));
    let obj = wait_for(&env, "dead", "Ready=False", ready_false).await;
    assert!(
        condition(&obj, "FetchFailed").unwrap()["message"]
            .as_str()
            .unwrap()
            .contains(&dead)
    );

    // A missing credentials secret.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &manifest("nosecret", &url, "  secretRef:\n    name: missing\n"),
    );
    let obj = wait_for(&env, "nosecret", "Ready=False", ready_false).await;
    let fetch = condition(&obj, "FetchFailed").unwrap();
    assert_eq!(fetch["reason"], "AuthenticationFailed");
    assert!(
        fetch["message"]
            .as_str()
            .unwrap()
            .starts_with("failed to get secret 'default/missing'"),
        "{fetch}"
    );

    // Verification of an unsigned commit fails; no artifact is published.
    let keys = tempfile::tempdir().unwrap();
    let (_, public) = git_support::ssh_keygen(keys.path(), "signer");
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "keys",
        &format!("--from-literal=author.sshpub={public}"),
    ]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &manifest("unsigned", &url, "  ref:\n    branch: main\n  verify:\n    mode: HEAD\n    secretRef:\n      name: keys\n"),
    );
    let obj = wait_for(&env, "unsigned", "Ready=False", ready_false).await;
    assert!(
        obj["status"]["artifact"].is_null(),
        "an unverified commit never becomes an artifact"
    );
    let verified = condition(&obj, "SourceVerified").expect("SourceVerified");
    assert_eq!(verified["status"], "False");
    let msg = verified["message"].as_str().unwrap();
    assert_eq!(
        msg,
        format!(
            "signature verification of commit '{c1}' failed: unsupported signature type: empty"
        )
    );
    assert_eq!(verified["reason"], "InvalidCommitSignature");
    assert_eq!(
        condition(&obj, "Ready").unwrap()["reason"],
        "InvalidCommitSignature"
    );
    // Tag verification on a branch reference stalls.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &manifest("tagmode", &url, "  ref:\n    branch: main\n  verify:\n    mode: Tag\n    secretRef:\n      name: keys\n"),
    );
    let obj = wait_for(&env, "tagmode", "Stalled", |o| {
        condition(o, "Stalled").is_some()
    })
    .await;
    let stalled = condition(&obj, "Stalled").unwrap();
    assert_eq!(stalled["reason"], "InvalidVerificationMode");
    assert_eq!(
        stalled["message"],
        "cannot verify tag object's signature if a tag reference is not specified"
    );
    assert_eq!(
        env.storage_dir
            .path()
            .join("gitrepository/default")
            .read_dir()
            .map(|d| d.count())
            .unwrap_or(0),
        0
    );
    // A field Tidegate does not implement stalls the object instead of being ignored.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &manifest("submodules", &url, "  recurseSubmodules: true\n"),
    );
    let obj = wait_for(&env, "submodules", "Stalled", |o| {
        condition(o, "Stalled").is_some()
    })
    .await;
    assert_eq!(
        condition(&obj, "Stalled").unwrap()["message"],
        "spec.recurseSubmodules is not supported by Tidegate yet"
    );
    // Warning events carry the reasons.
    let events = env.server.ok(&[
        "get",
        "events",
        "--field-selector",
        "type=Warning",
        "-o",
        "json",
    ]);
    assert!(
        events.contains("GitOperationFailed") && events.contains("AuthenticationFailed"),
        "{events}"
    );
}

/// Lists the files of an artifact served at `url`.
async fn artifact_files(url: &str) -> Vec<String> {
    let (bytes, _) = git_support::download(url).await;
    let dir = tempfile::tempdir().unwrap();
    tidegate_source::extract::extract_tar_gz(&bytes[..], dir.path(), Default::default()).unwrap();
    let mut out = Vec::new();
    let mut stack = vec![dir.path().to_path_buf()];
    while let Some(d) = stack.pop() {
        for e in std::fs::read_dir(&d).unwrap() {
            let e = e.unwrap();
            if e.file_type().unwrap().is_dir() {
                stack.push(e.path());
            } else {
                out.push(
                    e.path()
                        .strip_prefix(dir.path())
                        .unwrap()
                        .to_string_lossy()
                        .into_owned(),
                );
            }
        }
    }
    out.sort();
    out
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn include_sparse_checkout_and_ignore() {
    let env = start().await;
    let lib = Repo::new();
    lib.write("deploy/base/lib.yaml", "lib: 1\n");
    lib.write("docs/readme.md", "docs\n");
    let lib_commit = lib.commit("lib");
    let app = Repo::new();
    app.write("apps/web.yaml", "web: 1\n");
    app.write("apps/notes.md", "notes\n");
    app.write("charts/c.yaml", "c: 1\n");
    app.commit("app");
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &manifest("lib", &lib.file_url(), "  ref:\n    branch: main\n"),
    );
    wait_for(
        &env,
        "lib",
        "Ready",
        ready_at(&format!("main@sha1:{lib_commit}")),
    )
    .await;
    let extra = "  ref:\n    branch: main\n  ignore: |\n    *.md\n  sparseCheckout:\n  - apps\n  include:\n  - repository:\n      name: lib\n    fromPath: deploy\n    toPath: vendor/lib\n";
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &manifest("app", &app.file_url(), extra),
    );
    let obj = wait_for(&env, "app", "Ready", |o| {
        condition(o, "Ready").is_some_and(|c| c["status"] == "True")
    })
    .await;
    let files = artifact_files(obj["status"]["artifact"]["url"].as_str().unwrap()).await;
    assert_eq!(
        files,
        vec![
            "apps/web.yaml".to_string(),
            "vendor/lib/base/lib.yaml".to_string()
        ]
    );
    assert_eq!(
        obj["status"]["includedArtifacts"][0]["revision"],
        format!("main@sha1:{lib_commit}")
    );
    assert_eq!(obj["status"]["observedIgnore"], "*.md\n");
    assert_eq!(obj["status"]["observedSparseCheckout"][0], "apps");
    // A missing sparse directory fails with Flux's message.
    env.server.ok(&[
        "patch",
        "gitrepository/app",
        "--type=merge",
        "-p",
        r#"{"spec":{"sparseCheckout":["nope"]}}"#,
    ]);
    let obj = wait_for(&env, "app", "Ready=False", ready_false).await;
    assert!(
        condition(&obj, "Ready").unwrap()["message"]
            .as_str()
            .unwrap()
            .contains("sparse checkout dir 'nope' does not exist")
    );
    // An include that does not exist waits with IncludeUnavailable.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &manifest(
            "orphan",
            &app.file_url(),
            "  ref:\n    branch: main\n  include:\n  - repository:\n      name: ghost\n",
        ),
    );
    let obj = wait_for(&env, "orphan", "IncludeUnavailable", |o| {
        condition(o, "IncludeUnavailable").is_some()
    })
    .await;
    assert_eq!(
        condition(&obj, "IncludeUnavailable").unwrap()["reason"],
        "NotFound"
    );
    assert!(obj["status"]["artifact"].is_null());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_signed_commit_is_verified() {
    let env = start().await;
    let repo = Repo::new();
    let keys = tempfile::tempdir().unwrap();
    let (key, public) = git_support::ssh_keygen(keys.path(), "signer");
    repo.write("a.yaml", "a: 1\n");
    repo.git(&["add", "-A"]);
    let signing_key = format!("user.signingkey={}", key.display());
    repo.git(&[
        "-c",
        "gpg.format=ssh",
        "-c",
        &signing_key,
        "commit",
        "-q",
        "-S",
        "-m",
        "signed",
    ]);
    repo.push();
    let commit = repo.git(&["rev-parse", "HEAD"]);
    let fingerprint = git_support::run(
        std::process::Command::new("ssh-keygen")
            .arg("-lf")
            .arg(key.with_extension("pub")),
    );
    let fingerprint = fingerprint.split_whitespace().nth(1).unwrap().to_string();
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "signers",
        &format!("--from-literal=author.sshpub={public}"),
    ]);
    let verify = "  ref:\n    branch: main\n  verify:\n    secretRef:\n      name: signers\n";
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &manifest("signed", &repo.file_url(), verify),
    );
    let obj = wait_for(
        &env,
        "signed",
        "Ready",
        ready_at(&format!("main@sha1:{commit}")),
    )
    .await;
    let verified = condition(&obj, "SourceVerified").expect("SourceVerified");
    assert_eq!(verified["status"], "True");
    assert_eq!(
        verified["message"],
        format!("verified signature of\n\t- commit '{commit}' with key '{fingerprint}'")
    );
    assert_eq!(obj["status"]["sourceVerificationMode"], "HEAD");
    // The CRD's default for verify.mode was filled in by the API server.
    assert_eq!(obj["spec"]["verify"]["mode"], "HEAD");
}
