//! The Kustomization controller end to end: the embedded API server (HTTPS, workload
//! simulator), real git repositories, the GitRepository controller and real kubectl for every
//! change a user would make.

mod support;

use std::sync::Arc;
use std::time::Duration;

use serde_json::Value;
use support::*;

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn create_change_drift_prune_break_suspend_delete() {
    let env = start().await;
    let repo = Repo::new();
    repo.write("deploy/namespace.yaml", NAMESPACE);
    repo.write("deploy/app.yaml", &config_map("app", "one"));
    repo.write("deploy/extra.yaml", &config_map("extra", "x"));
    let r1 = push(&env, &repo, "first");
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization("app", "./deploy", "  wait: true\n"),
    );

    // Commit → created, with owner labels, inventory, events.
    let k = ks_until(&env, "app", "first apply", applied(&r1)).await;
    assert_eq!(
        condition(&k, "Ready").unwrap()["message"],
        format!("Applied revision: {r1}")
    );
    assert_eq!(
        condition(&k, "Ready").unwrap()["reason"],
        "ReconciliationSucceeded"
    );
    assert!(is(&k, "Healthy", "True"), "{k:#}");
    assert!(condition(&k, "Reconciling").is_none(), "{k:#}");
    assert_eq!(
        k["status"]["observedGeneration"],
        k["metadata"]["generation"]
    );
    assert_eq!(k["status"]["lastAttemptedRevision"], r1.as_str());
    let ids: Vec<&str> = k["status"]["inventory"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "_apps__Namespace",
            "apps_app__ConfigMap",
            "apps_extra__ConfigMap"
        ]
    );
    let cm =
        get(&env, "-napps configmap/app --show-managed-fields").expect("the ConfigMap was created");
    assert_eq!(
        cm["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"],
        "app"
    );
    assert_eq!(
        cm["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/namespace"],
        "default"
    );
    let managers: Vec<&str> = cm["metadata"]["managedFields"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["manager"].as_str().unwrap())
        .collect();
    assert!(managers.contains(&"kustomize-controller"), "{managers:?}");
    let evs = events(&env, "app");
    assert!(
        evs.iter().any(|(t, _, m)| t == "Normal"
            && m.contains("Namespace/apps created")
            && m.contains("ConfigMap/apps/app created")),
        "{evs:#?}"
    );
    assert!(
        evs.iter().any(|(_, r, m)| r == "ReconciliationSucceeded"
            && m.starts_with("Reconciliation finished in")),
        "{evs:#?}"
    );

    // Change → configured.
    repo.write("deploy/app.yaml", &config_map("app", "two"));
    let r2 = push(&env, &repo, "second");
    ks_until(&env, "app", "second revision", applied(&r2)).await;
    assert_eq!(
        data_of(&env, "-napps configmap/app").as_deref(),
        Some("two")
    );

    // kubectl edit (the editor is sed) and kubectl delete → corrected on the next reconcile.
    env.server.ok_env(
        &["-n", "apps", "edit", "configmap", "app"],
        &[("KUBE_EDITOR", "sed -i 's/key: two/key: edited/'")],
    );
    assert_eq!(
        data_of(&env, "-napps configmap/app").as_deref(),
        Some("edited"),
        "kubectl edit changed the live object"
    );
    env.server
        .ok(&["-n", "apps", "delete", "configmap", "extra"]);
    request(&env, "kustomization/app", "drift-1");
    ks_until(&env, "app", "drift corrected", |o| {
        o["status"]["lastHandledReconcileAt"] == "drift-1" && is(o, "Ready", "True")
    })
    .await;
    assert_eq!(
        data_of(&env, "-napps configmap/app").as_deref(),
        Some("two")
    );
    assert_eq!(
        data_of(&env, "-napps configmap/extra").as_deref(),
        Some("x")
    );
    let evs = events(&env, "app");
    assert!(
        evs.iter()
            .any(|(_, _, m)| m.contains("ConfigMap/apps/app configured")
                && m.contains("ConfigMap/apps/extra created")),
        "{evs:#?}"
    );

    // File removed → pruned.
    std::fs::remove_file(repo.work().join("deploy/extra.yaml")).unwrap();
    let r3 = push(&env, &repo, "drop extra");
    let k = ks_until(&env, "app", "prune", applied(&r3)).await;
    assert!(
        get(&env, "-napps configmap/extra").is_none(),
        "extra was pruned"
    );
    assert_eq!(
        k["status"]["inventory"]["entries"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert!(
        events(&env, "app")
            .iter()
            .any(|(_, _, m)| m.contains("ConfigMap/apps/extra deleted")),
    );

    // A broken manifest → Ready=False BuildFailed; nothing pruned, old objects intact.
    repo.write(
        "deploy/app.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata: [broken\n",
    );
    let r4 = push(&env, &repo, "broken");
    let k = ks_until(&env, "app", "build failure", |o| {
        is(o, "Ready", "False") && o["status"]["lastAttemptedRevision"] == r4.as_str()
    })
    .await;
    let ready = condition(&k, "Ready").unwrap();
    assert_eq!(ready["reason"], "BuildFailed", "{k:#}");
    assert!(
        ready["message"].as_str().unwrap().contains("app.yaml"),
        "{ready}"
    );
    assert_eq!(k["status"]["lastAppliedRevision"], r3.as_str());
    assert_eq!(
        k["status"]["inventory"]["entries"]
            .as_array()
            .unwrap()
            .len(),
        2
    );
    assert_eq!(
        data_of(&env, "-napps configmap/app").as_deref(),
        Some("two")
    );
    assert!(
        events(&env, "app")
            .iter()
            .any(|(t, r, _)| t == "Warning" && r == "BuildFailed"),
    );

    // Fixed → ready again.
    repo.write("deploy/app.yaml", &config_map("app", "three"));
    let r5 = push(&env, &repo, "fixed");
    ks_until(&env, "app", "recovery", applied(&r5)).await;
    assert_eq!(
        data_of(&env, "-napps configmap/app").as_deref(),
        Some("three")
    );

    // Suspend: a new revision is not applied; resume applies it.
    env.server.ok(&[
        "patch",
        "kustomization",
        "app",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":true}}"#,
    ]);
    repo.write("deploy/app.yaml", &config_map("app", "four"));
    let r6 = push(&env, &repo, "while suspended");
    until(
        "the source to have the new revision",
        || get(&env, "gitrepository/repo").unwrap()["status"]["artifact"]["revision"].clone(),
        |v| *v == r6.as_str(),
    )
    .await;
    tokio::time::sleep(Duration::from_secs(2)).await;
    assert_eq!(
        ks(&env, "app")["status"]["lastAppliedRevision"],
        r5.as_str()
    );
    assert_eq!(
        data_of(&env, "-napps configmap/app").as_deref(),
        Some("three")
    );
    env.server.ok(&[
        "patch",
        "kustomization",
        "app",
        "--type=merge",
        "-p",
        r#"{"spec":{"suspend":false}}"#,
    ]);
    ks_until(&env, "app", "resume", applied(&r6)).await;
    assert_eq!(
        data_of(&env, "-napps configmap/app").as_deref(),
        Some("four")
    );

    // Deletion with prune: the inventory goes with it (MirrorPrune).
    env.server
        .ok(&["delete", "kustomization", "app", "--wait=true"]);
    until(
        "the namespace's objects to be deleted",
        || get(&env, "-napps configmap/app").is_some(),
        |present| !present,
    )
    .await;
}

/// A kustomization.yaml emptied (or left with only a comment) builds to nothing: applied with
/// prune, that would delete everything the Kustomization manages. It fails the build, as in
/// Flux, and every object stays.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_empty_kustomization_yaml_prunes_nothing() {
    let env = start().await;
    let repo = Repo::new();
    repo.write("deploy/namespace.yaml", NAMESPACE);
    repo.write("deploy/app.yaml", &config_map("app", "one"));
    repo.write(
        "deploy/kustomization.yaml",
        "resources:\n- namespace.yaml\n- app.yaml\n",
    );
    let r1 = push(&env, &repo, "first");
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    env.server
        .ok_stdin(&["apply", "-f", "-"], &kustomization("app", "./deploy", ""));
    ks_until(&env, "app", "first apply", applied(&r1)).await;

    for (i, text) in ["# emptied by mistake\n", ""].into_iter().enumerate() {
        repo.write("deploy/kustomization.yaml", text);
        let r = push(&env, &repo, &format!("empty {i}"));
        let k = ks_until(&env, "app", "the empty build to fail", |o| {
            is(o, "Ready", "False") && o["status"]["lastAttemptedRevision"] == r.as_str()
        })
        .await;
        let ready = condition(&k, "Ready").unwrap();
        assert_eq!(ready["reason"], "BuildFailed", "{k:#}");
        assert!(
            ready["message"]
                .as_str()
                .unwrap()
                .contains("kustomization.yaml is empty"),
            "{ready}"
        );
        assert_eq!(k["status"]["lastAppliedRevision"], r1.as_str());
        assert_eq!(
            k["status"]["inventory"]["entries"]
                .as_array()
                .unwrap()
                .len(),
            2,
            "{k:#}"
        );
        assert_eq!(
            data_of(&env, "-napps configmap/app").as_deref(),
            Some("one"),
            "nothing pruned"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn depends_on_chain_applies_in_order_and_health_failures_are_reported() {
    let env = start().await;
    let repo = Repo::new();
    repo.write(
        "infra/crd.yaml",
        r#"apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec: {type: object, x-kubernetes-preserve-unknown-fields: true}
"#,
    );
    repo.write("infra/namespace.yaml", NAMESPACE);
    repo.write(
        "apps/widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w1\n  namespace: apps\nspec:\n  size: 3\n",
    );
    repo.write(
        "apps/deploy.yaml",
        &web_deployment("  namespace: apps\n", "2", "nginx:1.27"),
    );
    let r1 = push(&env, &repo, "infra and apps");
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    // The dependent first: it must wait for its dependency.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization(
            "apps",
            "./apps",
            "  wait: true\n  timeout: 30s\n  dependsOn:\n  - name: infra\n",
        ),
    );
    let k = ks_until(&env, "apps", "dependency not ready", |o| {
        condition(o, "Ready").is_some_and(|c| c["reason"] == "DependencyNotReady")
    })
    .await;
    assert_eq!(
        condition(&k, "Ready").unwrap()["message"],
        "dependency 'default/infra' not found: kustomizations.kustomize.toolkit.fluxcd.io \"infra\" not found"
    );
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization("infra", "./infra", ""),
    );
    // The dependent is woken by its dependency's readiness, well before the 30s retry.
    let woke = std::time::Instant::now();
    let apps = ks_until(&env, "apps", "apps applied after infra", applied(&r1)).await;
    assert!(
        woke.elapsed() < Duration::from_secs(25),
        "{:?}",
        woke.elapsed()
    );
    let infra = ks(&env, "infra");
    let at = |o: &Value| {
        condition(o, "Ready").unwrap()["lastTransitionTime"]
            .as_str()
            .unwrap()
            .to_string()
    };
    assert!(
        at(&infra) <= at(&apps),
        "infra {} apps {}",
        at(&infra),
        at(&apps)
    );
    assert!(is(&apps, "Healthy", "True"), "{apps:#}");
    let w = get(&env, "-napps widget/w1").unwrap();
    assert_eq!(w["spec"]["size"], 3);

    // A workload that fails its rollout → HealthCheckFailed with kstatus' reason.
    repo.write(
        "apps/deploy.yaml",
        &std::fs::read_to_string(repo.work().join("apps/deploy.yaml"))
            .unwrap()
            .replace(
                "  namespace: apps\n",
                "  namespace: apps\n  annotations:\n    tidegate.dev/simulate: fail\n",
            )
            .replace("nginx:1.27", "nginx:broken"),
    );
    let r2 = push(&env, &repo, "bad rollout");
    let k = ks_until(&env, "apps", "health check failure", |o| {
        is(o, "Ready", "False") && o["status"]["lastAttemptedRevision"] == r2.as_str()
    })
    .await;
    let ready = condition(&k, "Ready").unwrap();
    assert_eq!(ready["reason"], "HealthCheckFailed", "{k:#}");
    let message = ready["message"].as_str().unwrap();
    assert!(
        message.starts_with("health check failed after"),
        "{message}"
    );
    assert!(message.contains("Deployment/apps/web"), "{message}");
    assert!(is(&k, "Healthy", "False"), "{k:#}");
    // The revision was applied, only not healthy: lastAppliedRevision stays at the last good one.
    assert_eq!(k["status"]["lastAppliedRevision"], r1.as_str());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn overlays_substitution_and_common_metadata() {
    let env = start().await;
    let repo = Repo::new();
    repo.write(
        "app/kustomization.yaml",
        "resources:\n- cm.yaml\n- deploy.yaml\n",
    );
    repo.write(
        "app/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  cluster: ${cluster_name}\n  region: ${region:=eu-west-1}\n  team: ${team}\n  literal: $${not_a_var}\n",
    );
    repo.write(
        "app/deploy.yaml",
        &web_deployment("", "${replicas}", "ghcr.io/example/web:1.0.0"),
    );
    let r1 = push(&env, &repo, "app");
    env.server.ok(&["create", "namespace", "staging"]);
    env.server.ok(&[
        "create",
        "configmap",
        "cluster-vars",
        "--from-literal=cluster_name=dev-1",
        "--from-literal=team=platform",
        "--from-literal=replicas=1",
    ]);
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "secret-vars",
        "--from-literal=team=secret-team",
    ]);
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization(
            "app",
            "./app",
            r#"  targetNamespace: staging
  namePrefix: stg-
  commonMetadata:
    labels:
      env: staging
    annotations:
      owner: platform
  images:
  - name: ghcr.io/example/web
    newTag: 2.0.0
  patches:
  - patch: |
      - op: add
        path: /metadata/annotations/patched
        value: "yes"
    target:
      kind: Deployment
  postBuild:
    substitute:
      replicas: "3"
    substituteFrom:
    - kind: ConfigMap
      name: cluster-vars
    - kind: Secret
      name: secret-vars
    - kind: Secret
      name: not-there
      optional: true
"#,
        ),
    );
    ks_until(&env, "app", "applied", applied(&r1)).await;
    let cm = get(&env, "-nstaging configmap/stg-settings").expect("prefixed ConfigMap in staging");
    assert_eq!(cm["data"]["cluster"], "dev-1");
    assert_eq!(cm["data"]["region"], "eu-west-1");
    assert_eq!(cm["data"]["team"], "secret-team", "later sources win");
    assert_eq!(cm["data"]["literal"], "${not_a_var}");
    assert_eq!(cm["metadata"]["labels"]["env"], "staging");
    assert_eq!(cm["metadata"]["annotations"]["owner"], "platform");
    let d = get(&env, "-nstaging deployment/stg-web").expect("deployment");
    assert_eq!(
        d["spec"]["replicas"], 3,
        "inline substitute wins, as a number"
    );
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "ghcr.io/example/web:2.0.0"
    );
    assert_eq!(d["metadata"]["annotations"]["patched"], "yes");

    // An undefined variable without default fails the build in strict mode; nothing changes.
    repo.write(
        "app/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: settings\ndata:\n  cluster: ${cluster_name}\n  missing: ${undefined_var}\n",
    );
    let r2 = push(&env, &repo, "undefined var");
    let k = ks_until(&env, "app", "substitution failure", |o| {
        is(o, "Ready", "False") && o["status"]["lastAttemptedRevision"] == r2.as_str()
    })
    .await;
    let ready = condition(&k, "Ready").unwrap();
    assert_eq!(ready["reason"], "BuildFailed");
    assert_eq!(
        ready["message"],
        "post build failed for 'ConfigMap/staging/stg-settings': envsubst error: variable substitution failed: variable not set (strict mode): \"undefined_var\""
    );
    assert!(get(&env, "-nstaging deployment/stg-web").is_some());

    // A missing required source of variables.
    env.server.ok(&[
        "patch", "kustomization", "app", "--type=json", "-p",
        r#"[{"op":"add","path":"/spec/postBuild/substituteFrom/-","value":{"kind":"ConfigMap","name":"absent"}}]"#,
    ]);
    let k = ks_until(&env, "app", "missing substituteFrom", |o| {
        condition(o, "Ready")
            .is_some_and(|c| c["message"].as_str().unwrap_or("").contains("absent"))
    })
    .await;
    assert_eq!(
        condition(&k, "Ready").unwrap()["message"],
        "substitute from 'ConfigMap/absent' error: configmaps \"absent\" not found"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn kube_config_applies_to_a_remote_cluster() {
    let env = start().await;
    let remote = common::start().await;
    let repo = Repo::new();
    repo.write("deploy/namespace.yaml", NAMESPACE);
    repo.write("deploy/app.yaml", &config_map("remote-app", "r"));
    let r1 = push(&env, &repo, "remote");
    let secret = tempfile::NamedTempFile::new().unwrap();
    std::fs::write(secret.path(), &remote.server.kubeconfig).unwrap();
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "remote-kubeconfig",
        &format!("--from-file=value={}", secret.path().display()),
    ]);
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization(
            "remote",
            "./deploy",
            "  kubeConfig:\n    secretRef:\n      name: remote-kubeconfig\n",
        ),
    );
    ks_until(&env, "remote", "applied remotely", applied(&r1)).await;
    let out = remote.ok(&["-n", "apps", "get", "configmap", "remote-app", "-o", "json"]);
    let cm: Value = serde_json::from_str(&out).unwrap();
    assert_eq!(cm["data"]["key"], "r");
    assert_eq!(
        cm["metadata"]["labels"]["kustomize.toolkit.fluxcd.io/name"],
        "remote"
    );
    assert!(
        get(&env, "-napps configmap/remote-app").is_none(),
        "not in the local cluster"
    );

    // A secret without the key names the problem.
    env.server.ok(&[
        "create",
        "secret",
        "generic",
        "empty-kubeconfig",
        "--from-literal=other=x",
    ]);
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization(
            "broken-remote",
            "./deploy",
            "  kubeConfig:\n    secretRef:\n      name: empty-kubeconfig\n",
        ),
    );
    let k = ks_until(&env, "broken-remote", "kubeconfig failure", |o| {
        is(o, "Ready", "False")
    })
    .await;
    let message = condition(&k, "Ready").unwrap()["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        message.contains("KubeConfig secret 'default/empty-kubeconfig' does not contain a 'value' or 'value.yaml' key"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_workload_that_degrades_later_fails_the_next_periodic_health_check() {
    let env = start().await;
    let repo = Repo::new();
    repo.write("deploy/namespace.yaml", NAMESPACE);
    repo.write(
        "deploy/deploy.yaml",
        &web_deployment("  namespace: apps\n", "1", "nginx:1.27"),
    );
    let r1 = push(&env, &repo, "web");
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    // A short interval: periodic reconciles, with nothing new to apply.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization("web", "./deploy", "  wait: true\n  timeout: 30s\n")
            .replace("interval: 1h", "interval: 2s"),
    );
    ks_until(&env, "web", "healthy", |o| {
        applied(&r1)(o) && is(o, "Healthy", "True")
    })
    .await;
    // Let a few unchanged reconciles pass (the health check is then answered from the live
    // index), then degrade the workload behind the controller's back. Through a field manager
    // of its own: what `kubectl` writes the controller takes over (as Flux's SSA cleanup does)
    // and the next apply would remove the annotation again (and, the annotations of a
    // Deployment being part of its generation, roll it back to health).
    tokio::time::sleep(Duration::from_secs(5)).await;
    assert!(is(&ks(&env, "web"), "Healthy", "True"));
    env.server.ok(&[
        "-n",
        "apps",
        "annotate",
        "--field-manager=chaos",
        "deployment/web",
        "tidegate.dev/simulate=fail",
    ]);
    let k = ks_until(&env, "web", "the degraded workload to be noticed", |o| {
        is(o, "Healthy", "False")
    })
    .await;
    let ready = condition(&k, "Ready").unwrap();
    assert_eq!(ready["reason"], "HealthCheckFailed", "{k:#}");
    assert!(
        ready["message"]
            .as_str()
            .unwrap()
            .contains("Deployment/apps/web"),
        "{ready}"
    );
}

/// Flux's documented podinfo Kustomization, unchanged, over a podinfo-shaped repository.
const FLUX_PODINFO: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: podinfo
  namespace: default
spec:
  interval: 10m
  targetNamespace: default
  sourceRef:
    kind: GitRepository
    name: podinfo
  path: \"./kustomize\"
  prune: true
  timeout: 1m
";

/// Flux's documented health-check example, unchanged.
const FLUX_BACKEND: &str = "apiVersion: kustomize.toolkit.fluxcd.io/v1
kind: Kustomization
metadata:
  name: backend
  namespace: default
spec:
  interval: 5m
  prune: true
  sourceRef:
    kind: GitRepository
    name: webapp
  healthChecks:
    - apiVersion: apps/v1
      kind: Deployment
      name: backend
      namespace: dev
";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn flux_documented_kustomizations_reconcile_a_podinfo_shaped_repository() {
    let env = start().await;
    let podinfo = Repo::new();
    let fixture = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/data/podinfo");
    for f in [
        "kustomization.yaml",
        "deployment.yaml",
        "service.yaml",
        "hpa.yaml",
    ] {
        let text = std::fs::read_to_string(fixture.join("kustomize").join(f)).unwrap();
        podinfo.write(&format!("kustomize/{f}"), &text);
    }
    let p1 = format!("main@sha1:{}", podinfo.commit("podinfo"));
    let webapp = Repo::new();
    webapp.write(
        "backend.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: dev\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: backend\n  namespace: dev\nspec:\n  selector: {matchLabels: {app: backend}}\n  template:\n    metadata: {labels: {app: backend}}\n    spec:\n      containers: [{name: backend, image: \"nginx:1.27\"}]\n",
    );
    let w1 = format!("main@sha1:{}", webapp.commit("backend"));
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &source("podinfo", &podinfo.file_url()),
    );
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("webapp", &webapp.file_url()));
    env.server.ok_stdin(&["apply", "-f", "-"], FLUX_PODINFO);
    env.server.ok_stdin(&["apply", "-f", "-"], FLUX_BACKEND);
    let k = ks_until(&env, "podinfo", "podinfo applied", applied(&p1)).await;
    let ids: Vec<&str> = k["status"]["inventory"]["entries"]
        .as_array()
        .unwrap()
        .iter()
        .map(|e| e["id"].as_str().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "default_podinfo__Service",
            "default_podinfo_apps_Deployment",
            "default_podinfo_autoscaling_HorizontalPodAutoscaler"
        ]
    );
    let d = get(&env, "-ndefault deployment/podinfo").unwrap();
    assert_eq!(
        d["spec"]["template"]["spec"]["containers"][0]["image"],
        "ghcr.io/stefanprodan/podinfo:6.7.1"
    );
    let k = ks_until(&env, "backend", "backend healthy", |o| {
        applied(&w1)(o) && is(o, "Healthy", "True")
    })
    .await;
    assert!(
        condition(&k, "Healthy").unwrap()["message"]
            .as_str()
            .unwrap()
            .starts_with("Health check passed in "),
        "{k:#}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn service_account_name_is_impersonated_on_every_apply() {
    let mut recorded = None;
    let env = start_with(Route::Recording(&mut recorded)).await;
    let recorded = recorded.unwrap();
    let repo = Repo::new();
    repo.write("deploy/namespace.yaml", NAMESPACE);
    repo.write("deploy/app.yaml", &config_map("impersonated", "i"));
    let r1 = push(&env, &repo, "sa");
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization("sa", "./deploy", "  serviceAccountName: deployer\n"),
    );
    ks_until(&env, "sa", "applied", applied(&r1)).await;
    let text = String::from_utf8_lossy(&recorded.lock().unwrap()).to_lowercase();
    // The applies (server-side apply PATCHes of the ConfigMap) carry the header; the
    // controller's own requests (status of the Kustomization) do not.
    let applies: Vec<&str> = text
        .split("\r\n\r\n")
        .filter(|head| head.starts_with("patch /api/v1/namespaces/apps/configmaps/impersonated"))
        .collect();
    assert!(
        !applies.is_empty(),
        "no apply of the ConfigMap went through the proxy"
    );
    for head in &applies {
        assert!(
            head.contains("impersonate-user: system:serviceaccount:default:deployer"),
            "{head}"
        );
    }
    let status: Vec<&str> = text
        .split("\r\n\r\n")
        .filter(|head| head.contains("/kustomizations/sa/status"))
        .collect();
    assert!(!status.is_empty());
    assert!(
        status.iter().all(|h| !h.contains("impersonate-user")),
        "{status:?}"
    );
}

/// Under RBAC a Kustomization applies only what its service account may: without rights the
/// apply is refused with the API server's Forbidden in the Ready message and nothing is
/// written; with a RoleBinding the same revision applies.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn rbac_limits_an_impersonated_service_account() {
    let env = start_rbac().await;
    let repo = Repo::new();
    repo.write(
        "deploy/cm.yaml",
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: tenant-config\n  namespace: default\ndata:\n  key: v\n",
    );
    let r1 = push(&env, &repo, "tenant");
    env.server.ok(&["create", "serviceaccount", "deployer"]);
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization("tenant", "./deploy", "  serviceAccountName: deployer\n"),
    );
    let refused = ks_until(&env, "tenant", "refused", |o| {
        o["status"]["conditions"]
            .as_array()
            .into_iter()
            .flatten()
            .any(|c| {
                c["type"] == "Ready"
                    && c["status"] == "False"
                    && c["message"].as_str().is_some_and(|m| {
                        m.contains(
                            "is forbidden: User \"system:serviceaccount:default:deployer\" cannot",
                        )
                    })
            })
    })
    .await;
    assert!(
        refused["status"]["lastAppliedRevision"].is_null(),
        "{refused}"
    );
    assert!(
        env.server
            .kubectl(&["get", "configmap", "tenant-config"])
            .status
            .code()
            != Some(0),
        "nothing of a refused build is applied"
    );
    env.server.ok(&[
        "create",
        "role",
        "deployer",
        "--verb=get,list,watch,create,update,patch,delete",
        "--resource=configmaps",
    ]);
    env.server.ok(&[
        "create",
        "rolebinding",
        "deployer",
        "--role=deployer",
        "--serviceaccount=default:deployer",
    ]);
    request(&env, "kustomization/tenant", "granted");
    ks_until(&env, "tenant", "applied", applied(&r1)).await;
    env.server.ok(&["get", "configmap", "tenant-config"]);
}

/// A reconcile never starts from a cached copy older than the status the previous reconcile
/// wrote. The controller's Kustomization watch lags five seconds behind (a slow watch cache, as
/// after a restart); a commit that removes an object lands right after the commit that added
/// it was applied, so the next reconcile is triggered (by the source) while the cache still
/// holds the inventory from before. It must prune the object all the same.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_lagging_watch_cache_never_hides_what_to_prune() {
    let lag: intercept::Lag = Arc::new(|seen: &intercept::Seen| {
        (seen.uri.contains("/kustomizations") && seen.uri.contains("watch=true"))
            .then_some(Duration::from_secs(5))
    });
    let env = start_with(Route::Lagging(lag)).await;
    let repo = Repo::new();
    repo.write("deploy/namespace.yaml", NAMESPACE);
    repo.write("deploy/a.yaml", &config_map("a", "1"));
    let first = push(&env, &repo, "a");
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    env.server
        .ok_stdin(&["apply", "-f", "-"], &kustomization("app", "./deploy", ""));
    ks_until(&env, "app", "the first commit applied", applied(&first)).await;

    repo.write("deploy/b.yaml", &config_map("b", "1"));
    let second = push(&env, &repo, "add b");
    ks_until(&env, "app", "b applied", applied(&second)).await;
    assert!(data_of(&env, "-napps configmap/b").is_some());

    // At once: the cached Kustomization still says the inventory holds only a.
    std::fs::remove_file(repo.work().join("deploy/b.yaml")).expect("remove b");
    let third = push(&env, &repo, "remove b");
    ks_until(&env, "app", "b removed", applied(&third)).await;
    until(
        "b pruned",
        || data_of(&env, "-napps configmap/b"),
        Option::is_none,
    )
    .await;
    let k = ks(&env, "app");
    let ids: Vec<&str> = k["status"]["inventory"]["entries"]
        .as_array()
        .expect("inventory")
        .iter()
        .filter_map(|e| e["id"].as_str())
        .collect();
    assert_eq!(ids, ["_apps__Namespace", "apps_a__ConfigMap"], "{k:#}");
}

/// Waiting for health holds no worker: with one worker, a Kustomization whose health check
/// names a Deployment that never appears waits (for ten minutes), while a second one is built,
/// applied and ready meanwhile.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn waiting_for_health_holds_no_worker() {
    let env = start_with_options(tidegate_controllers::kustomization::Options {
        concurrent: 1,
        ..default_options()
    })
    .await;
    let repo = Repo::new();
    repo.write(
        "slow/cm.yaml",
        &config_map("slow", "x").replace("namespace: apps", "namespace: default"),
    );
    repo.write(
        "quick/cm.yaml",
        &config_map("quick", "y").replace("namespace: apps", "namespace: default"),
    );
    let revision = push(&env, &repo, "two apps");
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization(
            "slow",
            "./slow",
            "  timeout: 10m\n  healthChecks:\n  - apiVersion: apps/v1\n    kind: Deployment\n    name: never\n    namespace: default\n",
        ),
    );
    ks_until(&env, "slow", "the health check to start", |k| {
        is(k, "Healthy", "Unknown")
    })
    .await;
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization("quick", "./quick", ""),
    );
    ks_until(
        &env,
        "quick",
        "the second to be applied",
        applied(&revision),
    )
    .await;
    let slow = ks(&env, "slow");
    assert!(is(&slow, "Healthy", "Unknown"), "still waiting: {slow:#}");
    assert!(!is(&slow, "Ready", "True"), "{slow:#}");
}

/// A CRD with a status subresource, whose objects no controller ever reports on.
const WIDGET_CRD: &str = "apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}
  scope: Namespaced
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-preserve-unknown-fields: true
";

const WIDGET_HEALTH: &str = "  wait: true
  timeout: 20s
  healthCheckExprs:
  - apiVersion: example.com/v1
    kind: Widget
    failed: status.conditions.filter(e, e.type == 'Synced').all(e, e.status == 'False')
    current: status.conditions.filter(e, e.type == 'Synced').all(e, e.status == 'True')
";

fn set_synced(env: &Env, status: &str) {
    env.server.ok(&[
        "patch",
        "widget/w",
        "-n",
        "default",
        "--subresource=status",
        "--type=merge",
        "-p",
        &format!(
            r#"{{"status":{{"conditions":[{{"type":"Synced","status":"{status}","reason":"Test","message":"m"}}]}}}}"#
        ),
    ]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_check_exprs_decide_the_health_of_custom_resources() {
    let env = start().await;
    env.server.ok_stdin(&["apply", "-f", "-"], WIDGET_CRD);
    env.server.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
    ]);
    let repo = Repo::new();
    repo.write(
        "deploy/widget.yaml",
        "apiVersion: example.com/v1\nkind: Widget\nmetadata:\n  name: w\n  namespace: default\nspec:\n  size: 1\n",
    );
    let r1 = push(&env, &repo, "widget");
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));

    // A bad expression stalls the Kustomization before anything is applied.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization(
            "widgets",
            "./deploy",
            &WIDGET_HEALTH.replace("e.status == 'True')", "e.status == 'True'"),
        ),
    );
    let k = ks_until(&env, "widgets", "stalled on the bad expression", |o| {
        is(o, "Stalled", "True")
    })
    .await;
    let ready = condition(&k, "Ready").unwrap();
    assert_eq!(ready["reason"], "InvalidCELExpression");
    let message = ready["message"].as_str().unwrap();
    assert!(
        message.starts_with(
            "Reconciliation failed terminally due to configuration error: failed to create custom \
             status evaluator for healthchecks[0]: failed to parse the expression Current: failed \
             to parse the CEL expression"
        ),
        "{message}"
    );
    assert!(get(&env, "widget/w").is_none(), "nothing applied");

    // Valid expressions: a Widget without the condition is not healthy (kstatus alone would
    // call an object without conditions Current).
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization("widgets", "./deploy", WIDGET_HEALTH),
    );
    ks_until(&env, "widgets", "health checks running", |o| {
        is(o, "Healthy", "Unknown") && !is(o, "Stalled", "True")
    })
    .await;
    assert!(get(&env, "widget/w").is_some());
    set_synced(&env, "True");
    let k = ks_until(&env, "widgets", "healthy by its expression", |o| {
        applied(&r1)(o) && is(o, "Healthy", "True")
    })
    .await;
    assert!(is(&k, "Ready", "True"), "{k:#}");

    // The failed expression fails the health check early.
    set_synced(&env, "False");
    request(&env, "kustomization/widgets", "failed");
    let k = ks_until(&env, "widgets", "failed by its expression", |o| {
        is(o, "Healthy", "False")
    })
    .await;
    let ready = condition(&k, "Ready").unwrap();
    assert_eq!(ready["reason"], "HealthCheckFailed", "{k:#}");
    let message = ready["message"].as_str().unwrap();
    assert!(
        message
            .contains("failed early due to stalled resources: [Widget/default/w status: 'Failed']"),
        "{message}"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn depends_on_ready_expr_decides_readiness() {
    let env = start().await;
    let repo = Repo::new();
    repo.write(
        "first/cm.yaml",
        &config_map("first", "1").replace("namespace: apps", "namespace: default"),
    );
    repo.write(
        "second/cm.yaml",
        &config_map("second", "2").replace("namespace: apps", "namespace: default"),
    );
    let r1 = push(&env, &repo, "two");
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization("first", "./first", ""),
    );
    ks_until(&env, "first", "applied", applied(&r1)).await;
    let depends =
        |expr: &str| format!("  dependsOn:\n  - name: first\n    readyExpr: \"{expr}\"\n");
    // The expression alone decides: `first` is Ready, but not labelled yet.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization(
            "second",
            "./second",
            &depends(
                "dep.metadata.?labels.?tier.orValue('') == 'db' && self.metadata.name == 'second'",
            ),
        ),
    );
    let k = ks_until(&env, "second", "waiting on the expression", |o| {
        condition(o, "Ready").is_some_and(|c| c["reason"] == "DependencyNotReady")
    })
    .await;
    assert_eq!(
        condition(&k, "Ready").unwrap()["message"],
        "dependency 'default/first' is not ready according to readyExpr eval"
    );
    env.server.ok(&["label", "kustomization/first", "tier=db"]);
    request(&env, "kustomization/second", "labelled");
    ks_until(
        &env,
        "second",
        "applied once the expression holds",
        applied(&r1),
    )
    .await;

    // An expression that does not parse is a configuration error.
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &kustomization("second", "./second", &depends("dep.status.(")),
    );
    let k = ks_until(&env, "second", "stalled", |o| is(o, "Stalled", "True")).await;
    let ready = condition(&k, "Ready").unwrap();
    assert_eq!(ready["reason"], "InvalidCELExpression");
    assert!(
        ready["message"].as_str().unwrap().starts_with(
            "Reconciliation failed terminally due to configuration error: failed to evaluate \
             dependency first: failed to parse the CEL expression 'dep.status.(':"
        ),
        "{ready}"
    );
}
