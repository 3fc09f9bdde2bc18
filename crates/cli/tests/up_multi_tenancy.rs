//! Multi-tenancy on `tidegate up --multi-tenant`, in the shape of fluxcd/flux2-multi-tenancy
//! (staging): a platform repository whose `tenants` Kustomization (impersonating
//! `flux-system/kustomize-controller`) creates the tenant `dev-team` — namespace `apps`, its
//! service account bound to `cluster-admin` in `apps` only, its own GitRepository and a
//! Kustomization impersonating it. Then the tenant tries to reach past its namespace: (a) a
//! ClusterRoleBinding to cluster-admin, (b) a write into another namespace, (c) a
//! Kustomization of its own that references the platform's source, (d) a Kustomization in
//! `flux-system` that would read the platform's Secret through `postBuild.substituteFrom`.
//! Each is refused with Forbidden or AccessDenied in a Ready message, and nothing of that
//! build is applied (a marker ConfigMap in `apps` rides along in each). Then the doors of
//! issue 45: (e) a GitRepository of the tenant's reading the platform's repository through a
//! `file://` URL, (f) a remote-apply kubeconfig whose `exec` section would run a command on
//! the controllers' host, (g) one whose `tokenFile` would read the admin token.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod up_support;

use std::path::Path;

use serde_json::Value;
use up_support::*;

fn platform_repo(tenant_url: &str) -> git_support::Repo {
    let repo = git_support::Repo::new();
    repo.write(
        "clusters/staging/tenants.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: tenants
  namespace: flux-system
spec:
  interval: 5m
  serviceAccountName: kustomize-controller
  sourceRef:
    kind: GitRepository
    name: flux-system
  path: ./tenants/staging
  prune: true
",
    );
    repo.write(
        "tenants/base/dev-team/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: apps
resources:
  - rbac.yaml
  - sync.yaml
",
    );
    repo.write(
        "tenants/base/dev-team/rbac.yaml",
        "---
apiVersion: v1
kind: Namespace
metadata:
  labels:
    toolkit.fluxcd.io/tenant: dev-team
  name: apps
---
apiVersion: v1
kind: ServiceAccount
metadata:
  labels:
    toolkit.fluxcd.io/tenant: dev-team
  name: dev-team
  namespace: apps
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata:
  labels:
    toolkit.fluxcd.io/tenant: dev-team
  name: gotk-reconciler
  namespace: apps
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
- kind: User
  name: gotk:apps:reconciler
- kind: ServiceAccount
  name: dev-team
  namespace: apps
",
    );
    // The tenant's repository is its own (upstream uses a branch of the same repository);
    // the GitRepository polls every 2 s so the test need not wait a minute per push.
    repo.write(
        "tenants/base/dev-team/sync.yaml",
        &format!(
            "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: dev-team
  namespace: apps
spec:
  interval: 2s
  url: {tenant_url}
  ref:
    branch: main
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: dev-team
  namespace: apps
spec:
  serviceAccountName: dev-team
  interval: 5m
  sourceRef:
    kind: GitRepository
    name: dev-team
  prune: true
"
        ),
    );
    repo.write(
        "tenants/staging/kustomization.yaml",
        "apiVersion: kustomize.config.k8s.io/v1beta1
kind: Kustomization
namespace: apps
resources:
  - ../base/dev-team
patches:
  - path: dev-team-patch.yaml
",
    );
    repo.write(
        "tenants/staging/dev-team-patch.yaml",
        "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: dev-team
  namespace: apps
spec:
  path: ./staging
",
    );
    // What case (c) would apply if the platform's source were reachable from `apps`.
    repo.write("tenants/leak/cm.yaml", &config_map("apps", "c-marker"));
    repo.commit("platform");
    repo
}

fn config_map(namespace: &str, name: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {namespace}\ndata:\n  owner: dev-team\n"
    )
}

/// Replaces the tenant's `staging/` with `docs` (one file each) and pushes; the commit.
fn push_tenant(repo: &git_support::Repo, docs: &[String], message: &str) -> String {
    let _ = std::fs::remove_dir_all(repo.work().join("staging"));
    let mut resources = String::new();
    for (i, d) in docs.iter().enumerate() {
        repo.write(&format!("staging/doc{i}.yaml"), d);
        resources.push_str(&format!("  - doc{i}.yaml\n"));
    }
    repo.write(
        "staging/kustomization.yaml",
        &format!(
            "apiVersion: kustomize.config.k8s.io/v1beta1\nkind: Kustomization\nresources:\n{resources}"
        ),
    );
    repo.commit(message)
}

fn kustomization(kc: &Path, ns: &str, name: &str) -> Option<Value> {
    kubectl_ok(kc, &["-n", ns, "get", "kustomization", name])
        .then(|| json(kc, &["-n", ns, "get", "kustomization", name]))
}

fn condition(k: &Value, type_: &str) -> Option<(String, String, String)> {
    k["status"]["conditions"]
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
        .map(|c| {
            let s = |f: &str| c[f].as_str().unwrap_or("").to_string();
            (s("status"), s("reason"), s("message"))
        })
}

/// Waits until the tenant's Kustomization has tried `commit`; its Ready condition.
fn attempted(kc: &Path, commit: &str) -> (String, String, String) {
    let mut last = None;
    wait_until(&format!("apps/dev-team to try {commit}"), || {
        last = kustomization(kc, "apps", "dev-team").filter(|k| {
            k["status"]["lastAttemptedRevision"]
                .as_str()
                .is_some_and(|r| r.ends_with(commit))
                && condition(k, "Ready").is_some_and(|(s, _, _)| s != "Unknown")
        });
        last.is_some()
    });
    condition(&last.unwrap(), "Ready").unwrap()
}

/// Pushes `docs` as the tenant's build and waits until the tenant's Kustomization applied it.
fn tenant_applies(kc: &Path, tenant: &git_support::Repo, docs: &[String], message: &str) {
    let commit = push_tenant(tenant, docs, message);
    let (status, _, ready) = attempted(kc, &commit);
    assert_eq!(status, "True", "{ready}");
}

/// kubectl's stdout, trimmed, whatever its exit status (`auth can-i` exits 1 for "no").
fn answer(kc: &Path, args: &[&str]) -> String {
    std::process::Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args(args)
        .output()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap()
}

fn exists(kc: &Path, args: &[&str]) -> bool {
    kubectl_ok(kc, args)
}

#[test]
fn a_tenant_is_confined_to_its_namespace_under_multi_tenant() {
    let tenant = git_support::Repo::new();
    // The tenant's repository is served over git://: under --multi-tenant only the bootstrap
    // GitRepository may read a repository on this machine's filesystem.
    let daemon = git_support::GitDaemon::start(&tenant.base);
    let good = push_tenant(&tenant, &[config_map("apps", "good")], "good");
    let platform = platform_repo(&daemon.url("repo.git"));
    let dir = tempfile::tempdir().unwrap();
    let bare = platform.bare().display().to_string();
    let up = up(
        &dir.path().join("data"),
        git_support::free_port(),
        &[
            "--multi-tenant",
            "--git",
            &bare,
            "--path",
            "./clusters/staging",
        ],
        true,
    );
    let kc = up.kubeconfig.clone();

    // The platform reconciles as kustomize-controller; the tenant as itself.
    let (status, reason, message) = attempted(&kc, &good);
    assert_eq!(
        (status.as_str(), reason.as_str()),
        ("True", "ReconciliationSucceeded"),
        "{message}"
    );
    assert!(exists(&kc, &["-n", "apps", "get", "configmap", "good"]));
    let tenants = kustomization(&kc, "flux-system", "tenants").unwrap();
    assert_eq!(condition(&tenants, "Ready").unwrap().0, "True");
    let flux_system = kustomization(&kc, "flux-system", "flux-system").unwrap();
    assert_eq!(
        flux_system["spec"]["serviceAccountName"], "kustomize-controller",
        "the bootstrap Kustomization impersonates kustomize-controller"
    );
    // The controllers reach the server with their own service account's token.
    let token =
        std::fs::read_to_string(dir.path().join("data/tidegate-controllers.token")).unwrap();
    assert_eq!(
        kubectl(
            &kc,
            &[
                "--token",
                token.trim(),
                "auth",
                "whoami",
                "-o",
                "jsonpath={.status.userInfo.username}"
            ]
        ),
        "system:serviceaccount:flux-system:tidegate-controllers"
    );
    // The admin kubeconfig stays cluster-admin; the tenant's identity is confined.
    assert_eq!(
        kubectl(&kc, &["auth", "can-i", "create", "clusterrolebindings"]).trim(),
        "yes"
    );
    let as_tenant = |args: &[&str]| {
        let mut a = vec!["--as", "system:serviceaccount:apps:dev-team"];
        a.extend(args);
        answer(&kc, &a)
    };
    assert_eq!(
        as_tenant(&["auth", "can-i", "create", "deployments", "-n", "apps"]),
        "yes"
    );
    assert_eq!(
        as_tenant(&["auth", "can-i", "create", "deployments", "-n", "default"]),
        "no"
    );
    assert_eq!(
        as_tenant(&["auth", "can-i", "get", "secrets", "-n", "flux-system"]),
        "no"
    );
    // flux-view and flux-edit extend Kubernetes' view and edit with the toolkit's kinds.
    for (binding, role, user) in [("jane-view", "view", "jane"), ("joe-edit", "edit", "joe")] {
        let role = format!("--clusterrole={role}");
        let user = format!("--user={user}");
        kubectl(
            &kc,
            &["-n", "apps", "create", "rolebinding", binding, &role, &user],
        );
    }
    let can = |user: &str, verb: &str| {
        let what = "kustomizations.kustomize.toolkit.fluxcd.io";
        answer(
            &kc,
            &["auth", "can-i", verb, what, "-n", "apps", "--as", user],
        )
    };
    wait_until("view and edit to aggregate the toolkit's kinds", || {
        can("jane", "list") == "yes" && can("joe", "patch") == "yes"
    });
    assert_eq!(can("jane", "patch"), "no");

    // (a) A ClusterRoleBinding to cluster-admin.
    let crb = "apiVersion: rbac.authorization.k8s.io/v1
kind: ClusterRoleBinding
metadata:
  name: dev-team-takeover
roleRef:
  apiGroup: rbac.authorization.k8s.io
  kind: ClusterRole
  name: cluster-admin
subjects:
- kind: ServiceAccount
  name: dev-team
  namespace: apps
"
    .to_string();
    let a = push_tenant(
        &tenant,
        &[
            config_map("apps", "good"),
            config_map("apps", "a-marker"),
            crb,
        ],
        "take over the cluster",
    );
    let (status, _, message) = attempted(&kc, &a);
    eprintln!("(a) {message}");
    assert_eq!(status, "False");
    assert!(
        message.contains("Forbidden") || message.contains("forbidden"),
        "{message}"
    );
    assert!(
        message.contains("User \"system:serviceaccount:apps:dev-team\""),
        "the refusal names the tenant: {message}"
    );
    assert!(!exists(
        &kc,
        &["get", "clusterrolebinding", "dev-team-takeover"]
    ));
    assert!(!exists(
        &kc,
        &["-n", "apps", "get", "configmap", "a-marker"]
    ));
    assert!(
        exists(&kc, &["-n", "apps", "get", "configmap", "good"]),
        "nothing pruned"
    );

    // (b) A write into another namespace.
    let b = push_tenant(
        &tenant,
        &[
            config_map("apps", "good"),
            config_map("apps", "b-marker"),
            config_map("default", "intruder"),
        ],
        "write elsewhere",
    );
    let (status, _, message) = attempted(&kc, &b);
    eprintln!("(b) {message}");
    assert_eq!(status, "False");
    assert!(message.contains("forbidden"), "{message}");
    assert!(
        message.contains("in the namespace \"default\""),
        "{message}"
    );
    assert!(!exists(
        &kc,
        &["-n", "default", "get", "configmap", "intruder"]
    ));
    assert!(!exists(
        &kc,
        &["-n", "apps", "get", "configmap", "b-marker"]
    ));

    // (d) A Kustomization in flux-system reading the platform's Secret through substituteFrom.
    kubectl(
        &kc,
        &[
            "-n",
            "flux-system",
            "create",
            "secret",
            "generic",
            "platform-vars",
            "--from-literal=password=s3cr3t",
        ],
    );
    let steal = "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: steal
  namespace: flux-system
spec:
  interval: 5m
  path: ./staging
  prune: false
  sourceRef:
    kind: GitRepository
    name: flux-system
  postBuild:
    substituteFrom:
    - kind: Secret
      name: platform-vars
"
    .to_string();
    let d = push_tenant(
        &tenant,
        &[
            config_map("apps", "good"),
            config_map("apps", "d-marker"),
            steal,
        ],
        "read the platform's secret",
    );
    let (status, _, message) = attempted(&kc, &d);
    eprintln!("(d) {message}");
    assert_eq!(status, "False");
    assert!(message.contains("forbidden"), "{message}");
    assert!(
        message.contains("in the namespace \"flux-system\""),
        "{message}"
    );
    assert!(kustomization(&kc, "flux-system", "steal").is_none());
    assert!(!exists(
        &kc,
        &["-n", "apps", "get", "configmap", "d-marker"]
    ));

    // (c) A Kustomization of the tenant's own pointing at the platform's source: applied (it
    // is the tenant's to create), then refused by the controller, Stalled, nothing built.
    let cross = "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: cross
  namespace: apps
spec:
  interval: 5m
  path: ./tenants/leak
  prune: true
  sourceRef:
    kind: GitRepository
    name: flux-system
    namespace: flux-system
"
    .to_string();
    tenant_applies(
        &kc,
        &tenant,
        &[config_map("apps", "good"), cross],
        "borrow the platform source",
    );
    let mut denied = None;
    wait_until("apps/cross to be refused", || {
        denied = kustomization(&kc, "apps", "cross")
            .and_then(|k| condition(&k, "Ready").zip(condition(&k, "Stalled")))
            .filter(|(r, _)| r.0 == "False");
        denied.is_some()
    });
    let (ready, stalled) = denied.unwrap();
    assert_eq!(
        ready,
        (
            "False".into(),
            "AccessDenied".into(),
            "can't access 'GitRepository/flux-system/flux-system', cross-namespace references have been blocked".into()
        )
    );
    assert_eq!(
        (stalled.0.as_str(), stalled.1.as_str()),
        ("True", "AccessDenied")
    );
    assert!(!exists(
        &kc,
        &["-n", "apps", "get", "configmap", "c-marker"]
    ));

    // (e) A GitRepository of the tenant's own reading the platform's repository on this
    // machine: Stalled with URLInvalid, nothing published, nothing applied.
    let platform_url = format!("file://{bare}");
    let local = format!(
        "apiVersion: source.toolkit.fluxcd.io/v1
kind: GitRepository
metadata:
  name: platform-copy
  namespace: apps
spec:
  interval: 1m
  url: {platform_url}
  ref:
    branch: main
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: local
  namespace: apps
spec:
  interval: 5m
  path: ./tenants/leak
  prune: true
  sourceRef:
    kind: GitRepository
    name: platform-copy
"
    );
    tenant_applies(
        &kc,
        &tenant,
        &[config_map("apps", "good"), local],
        "read the platform repository from disk",
    );
    let mut refused = None;
    wait_until("apps/platform-copy to be refused", || {
        refused = kubectl_ok(
            &kc,
            &["-n", "apps", "get", "gitrepository", "platform-copy"],
        )
        .then(|| {
            json(
                &kc,
                &["-n", "apps", "get", "gitrepository", "platform-copy"],
            )
        })
        .and_then(|g| condition(&g, "Stalled").zip(Some(g)))
        .filter(|(s, _)| s.0 == "True");
        refused.is_some()
    });
    let (stalled, repo) = refused.unwrap();
    assert_eq!(stalled.1, "URLInvalid", "{stalled:?}");
    assert!(
        stalled
            .2
            .contains("file:// URLs are refused for GitRepository apps/platform-copy")
            && stalled.2.contains("only flux-system/flux-system may"),
        "{stalled:?}"
    );
    assert!(repo["status"]["artifact"].is_null(), "nothing published");
    assert!(!exists(
        &kc,
        &["-n", "apps", "get", "configmap", "c-marker"]
    ));

    // (f) A kubeconfig whose user runs a command, and (g) one whose user reads the admin
    // token from the controllers' filesystem: both refused before any client is built.
    let owned = dir.path().join("owned");
    let server = kubectl(
        &kc,
        &[
            "config",
            "view",
            "--minify",
            "-o",
            "jsonpath={.clusters[0].cluster.server}",
        ],
    );
    let remote = |name: &str, user: &str| {
        let kubeconfig = format!(
            "apiVersion: v1\nkind: Config\ncurrent-context: c\ncontexts:\n- name: c\n  context: {{cluster: k, user: u}}\nclusters:\n- name: k\n  cluster: {{server: '{server}'}}\nusers:\n- name: u\n  user:\n{user}"
        );
        let quoted = serde_json::to_string(&kubeconfig).unwrap();
        format!(
            "apiVersion: v1
kind: Secret
metadata:
  name: {name}
  namespace: apps
stringData:
  value: {quoted}
---
apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: {name}
  namespace: apps
spec:
  interval: 5m
  path: ./staging
  prune: false
  sourceRef:
    kind: GitRepository
    name: dev-team
  kubeConfig:
    secretRef:
      name: {name}
"
        )
    };
    let exec = format!(
        "    exec:\n      apiVersion: client.authentication.k8s.io/v1\n      interactiveMode: Never\n      command: sh\n      args: ['-c', 'touch {}; echo {{}}']\n",
        owned.display()
    );
    let token_file = format!(
        "    tokenFile: {}\n",
        dir.path().join("data/token").display()
    );
    tenant_applies(
        &kc,
        &tenant,
        &[
            config_map("apps", "good"),
            remote("exec", &exec),
            remote("tokenfile", &token_file),
        ],
        "reach the controllers' host through a kubeconfig",
    );
    for (name, expected) in [
        ("exec", "user 'u' has an exec section"),
        (
            "tokenfile",
            "user 'u' references a tokenFile, only an inline token is supported",
        ),
    ] {
        let mut ready = None;
        wait_until(&format!("apps/{name} to be refused"), || {
            ready = kustomization(&kc, "apps", name)
                .and_then(|k| condition(&k, "Ready"))
                .filter(|r| r.0 == "False");
            ready.is_some()
        });
        let (_, _, message) = ready.unwrap();
        assert!(
            message.starts_with("failed to build kube client: ") && message.contains(expected),
            "{name}: {message}"
        );
    }
    assert!(
        !owned.exists(),
        "the exec command ran on the controllers' host"
    );

    // The platform itself was never touched by the tenant.
    assert_eq!(
        condition(
            &kustomization(&kc, "flux-system", "tenants").unwrap(),
            "Ready"
        )
        .unwrap()
        .0,
        "True"
    );
}
