//! The image-automation-controller against the embedded API server (through kube-rs), Debian's
//! docker-registry and `git http-backend` on loopback: a pushed tag scanned, selected, written
//! into Git as an SSH-signed commit with the templated message (checked by the real git),
//! fetched by the GitRepository and applied by the Kustomization; Flux's refusals.

#[path = "../../source/tests/registry_support/mod.rs"]
mod registry_support;
mod source_support;

use std::collections::BTreeMap;

use base64::Engine as _;
use registry_support::{Mode, Registry};
use source_support::git_support::{HttpBackend, Repo, ssh_keygen};
use source_support::*;
use tidegate_source::oci::{self, Credentials};

async fn push(reg: &Registry, repo: &str, tag: &str) {
    let (repository, _) = oci::parse_artifact_url(&reg.url(repo)).unwrap();
    let registry = oci::Registry::connect(
        &repository,
        &oci::Options {
            credentials: Credentials::Anonymous,
            ..Default::default()
        },
    )
    .await
    .unwrap();
    registry
        .push_artifact(
            tag,
            format!("content of {tag}").into_bytes().into(),
            oci::registry::FLUX_CONTENT,
            &BTreeMap::new(),
        )
        .await
        .unwrap();
}

fn b64(s: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(s)
}

fn deployment(image: &str) -> String {
    format!(
        "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app\n  namespace: default\nspec:\n  selector:\n    matchLabels:\n      app: app\n  template:\n    metadata:\n      labels:\n        app: app\n    spec:\n      containers:\n      - name: app\n        # the tag follows the policy\n        image: {image}:0.9.0 # {{\"$imagepolicy\": \"default:app\"}}\n"
    )
}

const TEMPLATE: &str = "Automated image update\n\n{{ range $file, $objects := .Changed.FileChanges -}}\n{{ range $obj, $changes := $objects -}}\n{{ range $changes -}}\n- {{ $file }} {{ $obj.Kind }}/{{ $obj.Name }}: {{ .OldValue }} -> {{ .NewValue }}\n{{ end -}}\n{{ end -}}\n{{ end -}}\ncluster: {{ .Values.cluster }}\n";

fn annotate(env: &Env, what: &str) {
    env.server.ok(&[
        "annotate",
        "--overwrite",
        what,
        &format!(
            "reconcile.fluxcd.io/requestedAt={}",
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap()
                .as_nanos()
        ),
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn pushed_tag_becomes_a_signed_commit_and_reaches_the_cluster() {
    let reg = Registry::start(Mode::Plain);
    let image = format!("{}/team/app", reg.host);
    let repo = Repo::new();
    repo.write("deploy/app.yaml", &deployment(&image));
    repo.write("other/untouched.yaml", &deployment(&image));
    repo.commit("initial");
    let server = HttpBackend::start(&repo.base, Some(("bot", "pw")));
    let keys = tempfile::tempdir().unwrap();
    let (key, public) = ssh_keygen(keys.path(), "signing");
    let identity = std::fs::read_to_string(&key).unwrap();
    push(&reg, "team/app", "1.0.0").await;
    let env = start().await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: v1
kind: Secret
metadata:
  name: git-auth
  namespace: default
data:
  username: {}
  password: {}
---
apiVersion: v1
kind: Secret
metadata:
  name: signing
  namespace: default
data:
  identity: {}
---
apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: repo
  namespace: default
spec:
  url: {}
  interval: 1h
  ref:
    branch: main
  secretRef:
    name: git-auth
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageRepository
metadata:
  name: app
  namespace: default
spec:
  image: {image}
  interval: 1h
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata:
  name: app
  namespace: default
spec:
  imageRepositoryRef:
    name: app
  policy:
    semver:
      range: 1.0.x
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: app
  namespace: default
spec:
  interval: 1h
  path: ./deploy
  prune: true
  sourceRef:
    kind: GitRepository
    name: repo
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImageUpdateAutomation
metadata:
  name: auto
  namespace: default
spec:
  interval: 1h
  sourceRef:
    kind: GitRepository
    name: repo
  git:
    commit:
      author:
        name: Flux Bot
        email: bot@tidegate.invalid
      signingKey:
        type: ssh
        secretRef:
          name: signing
      messageTemplate: {}
      messageTemplateValues:
        cluster: prod
    push:
      branch: main
  update:
    path: ./deploy
    strategy: Setters
",
            b64("bot"),
            b64("pw"),
            b64(&identity),
            server.url("repo.git"),
            serde_json::to_string(TEMPLATE).unwrap(),
        ),
    );
    let auto = wait_for(&env, "imageupdateautomation/auto", "a push", |o| {
        ready(o) && o["status"]["lastPushCommit"].is_string()
    })
    .await;
    let st = &auto["status"];
    let commit = st["lastPushCommit"].as_str().unwrap().to_string();
    assert_eq!(
        condition(&auto, "Ready").unwrap()["message"],
        "repository up-to-date"
    );
    assert_eq!(
        st["observedPolicies"],
        serde_json::json!({"app": {"name": image, "tag": "1.0.0"}})
    );
    assert_eq!(
        st["observedSourceRevision"],
        format!("main@sha1:{commit}").as_str()
    );
    assert!(st["lastPushTime"].is_string() && st["lastAutomationRunTime"].is_string());

    // The real git sees the commit: signed, templated, only the file under the path changed.
    repo.git(&["fetch", "-q", "origin"]);
    assert_eq!(repo.git(&["rev-parse", "origin/main"]), commit);
    let allowed = keys.path().join("allowed_signers");
    std::fs::write(&allowed, format!("bot@tidegate.invalid {public}\n")).unwrap();
    repo.git(&[
        "-c",
        "gpg.format=ssh",
        "-c",
        &format!("gpg.ssh.allowedSignersFile={}", allowed.display()),
        "verify-commit",
        "origin/main",
    ]);
    assert_eq!(
        repo.git(&["log", "-1", "--format=%B", "origin/main"]),
        format!(
            "Automated image update\n\n- app.yaml Deployment/app: {image}:0.9.0 -> {image}:1.0.0\ncluster: prod"
        )
    );
    assert_eq!(
        repo.git(&["show", "origin/main:deploy/app.yaml"]),
        deployment(&image).replace(":0.9.0", ":1.0.0").trim_end()
    );
    assert_eq!(
        repo.git(&["diff", "--name-only", "origin/main^", "origin/main"]),
        "deploy/app.yaml"
    );
    let events = env.server.ok(&[
        "get",
        "events",
        "--field-selector",
        "involvedObject.kind=ImageUpdateAutomation",
        "-o",
        "jsonpath={.items[*].message}",
    ]);
    assert!(
        events.contains(&format!(
            "pushed commit '{}' to branch 'main'",
            &commit[..7]
        )),
        "{events}"
    );

    // The GitRepository fetches it and the Kustomization applies the new image.
    annotate(&env, "gitrepository/repo");
    wait_for(&env, "deployment/app", "the new image", |o| {
        o["spec"]["template"]["spec"]["containers"][0]["image"] == format!("{image}:1.0.0").as_str()
    })
    .await;

    // A newer tag: scanned, selected, and the policy change alone triggers the automation.
    push(&reg, "team/app", "1.0.1").await;
    annotate(&env, "imagerepository/app");
    let auto = wait_for(&env, "imageupdateautomation/auto", "the second push", |o| {
        o["status"]["lastPushCommit"]
            .as_str()
            .is_some_and(|c| c != commit)
    })
    .await;
    repo.git(&["fetch", "-q", "origin"]);
    assert_eq!(
        repo.git(&["rev-parse", "origin/main^"]),
        commit,
        "the second commit builds on the first"
    );
    assert!(
        repo.git(&["show", "origin/main:deploy/app.yaml"])
            .contains(":1.0.1 # {"),
        "{auto}"
    );

    // Nothing left to do: another run pushes nothing.
    let second = auto["status"]["lastPushCommit"].clone();
    annotate(&env, "imageupdateautomation/auto");
    let again = wait_for(&env, "imageupdateautomation/auto", "a quiet run", |o| {
        ready(o)
            && o["status"]["lastHandledReconcileAt"] != auto["status"]["lastHandledReconcileAt"]
    })
    .await;
    assert_eq!(again["status"]["lastPushCommit"], second);
    // The progress written at the start of the run is replaced, not left behind.
    assert!(condition(&again, "Reconciling").is_none(), "{again}");
    assert_eq!(
        condition(&again, "Ready").unwrap()["message"],
        "repository up-to-date"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn refusals_as_flux_words_them() {
    let repo = Repo::new();
    repo.write(
        "app.yaml",
        "image: x:1 # {\"$imagepolicy\": \"default:p\"}\n",
    );
    repo.commit("initial");
    let env = start().await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: repo
  namespace: default
spec:
  url: {}
  interval: 1h
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata:
  name: p
  namespace: default
spec:
  imageRepositoryRef:
    name: none
  policy:
    semver:
      range: 1.x
",
            repo.file_url()
        ),
    );
    // A policy with a latest image (as the reflector would write it).
    env.server.ok(&[
        "patch",
        "imagepolicy/p",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"latestRef":{"name":"x","tag":"2"}}}"#,
    ]);
    let automation = |name: &str, source: &str, git: &str| {
        format!(
            "apiVersion: image.toolkit.fluxcd.io/v1\nkind: ImageUpdateAutomation\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 1h\n  sourceRef:\n    kind: GitRepository\n    name: {source}\n{git}"
        )
    };
    let commit = "  git:\n    commit:\n      author:\n        email: bot@tidegate.invalid\n";
    let checkout = "    checkout:\n      ref:\n        branch: main\n";
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &[
            automation("missing", "nope", &format!("{commit}    push:\n      branch: main\n")),
            // No push branch, and the GitRepository's ref names none.
            automation("nobranch", "repo", commit),
            automation(
                "removed",
                "repo",
                &format!(
                    "{commit}      messageTemplate: '{{{{ range .Updated.Images }}}}{{{{ . }}}}{{{{ end }}}}'\n{checkout}"
                ),
            ),
            automation(
                "badsigner",
                "repo",
                &format!(
                    "{commit}      signingKey:\n        secretRef:\n          name: absent\n{checkout}"
                ),
            ),
            automation("nogit", "repo", ""),
            // A selector no policy matches: nothing to do, nothing pushed.
            automation(
                "selected",
                "repo",
                &format!("{commit}{checkout}  policySelector:\n    matchLabels:\n      team: other\n"),
            ),
            automation(
                "badselector",
                "repo",
                &format!(
                    "{commit}{checkout}  policySelector:\n    matchExpressions:\n    - key: team\n      operator: Bogus\n"
                ),
            ),
        ]
        .join("---\n"),
    );
    let reason_message = |o: &serde_json::Value, t: &str| {
        let c = condition(o, t).cloned().unwrap_or_default();
        (
            c["reason"].as_str().unwrap_or("").to_string(),
            c["message"].as_str().unwrap_or("").to_string(),
        )
    };
    let o = wait_for(
        &env,
        "imageupdateautomation/missing",
        "failure",
        ready_false,
    )
    .await;
    assert_eq!(
        reason_message(&o, "Ready"),
        (
            "SourceManagerFailed".into(),
            "failed configuring source manager: referenced git repository does not exist: gitrepositories.source.toolkit.fluxcd.io \"nope\" not found".into()
        )
    );
    assert_eq!(
        condition(&o, "Reconciling").unwrap()["reason"],
        "ProgressingWithRetry"
    );
    let o = wait_for(
        &env,
        "imageupdateautomation/nobranch",
        "failure",
        ready_false,
    )
    .await;
    assert_eq!(
        reason_message(&o, "Ready").1,
        "failed configuring source manager: push spec not provided, and cannot be inferred from .spec.git.checkout.ref or GitRepository .spec.ref"
    );
    let o = wait_for(&env, "imageupdateautomation/removed", "stalled", |o| {
        condition(o, "Stalled").is_some()
    })
    .await;
    assert_eq!(
        reason_message(&o, "Stalled"),
        (
            "RemovedTemplateField".into(),
            "template uses removed '.Updated' field. Please use '.Changed' instead. See: https://fluxcd.io/flux/components/image/imageupdateautomations/#message-template".into()
        )
    );
    let o = wait_for(
        &env,
        "imageupdateautomation/badsigner",
        "failure",
        ready_false,
    )
    .await;
    assert!(
        reason_message(&o, "Ready").1.starts_with(
            "failed configuring source manager: could not find signing key secret 'absent'"
        ),
        "{o}"
    );
    let o = wait_for(&env, "imageupdateautomation/nogit", "stalled", |o| {
        condition(o, "Stalled").is_some()
    })
    .await;
    assert_eq!(
        reason_message(&o, "Stalled"),
        (
            "InvalidSourceConfiguration".into(),
            "source kind 'GitRepository' necessitates field .spec.git: invalid source configuration".into()
        )
    );
    let o = wait_for(&env, "imageupdateautomation/selected", "ready", ready).await;
    assert_eq!(reason_message(&o, "Ready").1, "repository up-to-date");
    assert!(o["status"]["lastPushCommit"].is_null(), "{o}");
    assert_eq!(o["status"]["observedPolicies"], serde_json::Value::Null);
    let o = wait_for(&env, "imageupdateautomation/badselector", "stalled", |o| {
        condition(o, "Stalled").is_some()
    })
    .await;
    assert_eq!(
        reason_message(&o, "Stalled"),
        (
            "InvalidPolicySelector".into(),
            "failed to parse policy selector: \"Bogus\" is not a valid label selector operator"
                .into()
        )
    );
    // Nothing was pushed by any of them.
    assert_eq!(repo.git(&["rev-list", "--count", "origin/main"]), "1");
    repo.git(&["fetch", "-q", "origin"]);
    assert_eq!(repo.git(&["rev-list", "--count", "origin/main"]), "1");
}

/// A push the server refuses (a pre-receive hook, as a protected branch): `GitOperationFailed`
/// with the server's words, and the branch keeps its commit.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_push_the_server_rejects_changes_nothing() {
    let repo = Repo::new();
    repo.write(
        "app.yaml",
        "image: x:1 # {\"$imagepolicy\": \"default:p\"}\n",
    );
    let initial = repo.commit("initial");
    let hook = repo.bare().join("hooks/pre-receive");
    std::fs::write(&hook, "#!/bin/sh\necho 'main is protected' >&2\nexit 1\n").unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    let server = HttpBackend::start(&repo.base, None);
    let env = start().await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata: {{name: repo, namespace: default}}
spec: {{url: {}, interval: 1h, ref: {{branch: main}}}}
---
apiVersion: image.toolkit.fluxcd.io/v1
kind: ImagePolicy
metadata: {{name: p, namespace: default}}
spec: {{imageRepositoryRef: {{name: none}}, policy: {{semver: {{range: 1.x}}}}}}
",
            server.url("repo.git")
        ),
    );
    env.server.ok(&[
        "patch",
        "imagepolicy/p",
        "--subresource=status",
        "--type=merge",
        "-p",
        r#"{"status":{"latestRef":{"name":"x","tag":"2"}}}"#,
    ]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        "apiVersion: image.toolkit.fluxcd.io/v1\nkind: ImageUpdateAutomation\nmetadata: {name: auto, namespace: default}\nspec:\n  interval: 1h\n  sourceRef: {kind: GitRepository, name: repo}\n  git:\n    commit:\n      author: {email: bot@tidegate.invalid}\n",
    );
    let o = wait_for(&env, "imageupdateautomation/auto", "failure", ready_false).await;
    let c = condition(&o, "Ready").unwrap();
    assert_eq!(c["reason"], "GitOperationFailed");
    assert_eq!(
        c["message"],
        "failed to update source: failed to push: refs/heads/main pre-receive hook declined"
    );
    assert!(o["status"]["lastPushCommit"].is_null());
    repo.git(&["fetch", "-q", "origin"]);
    assert_eq!(repo.git(&["rev-parse", "origin/main"]), initial);
}
