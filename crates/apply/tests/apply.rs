//! The apply manager against the embedded API server: staging, every action, policies,
//! ownership takeover, immutable fields, validation, and the no-op path.

mod support;

use support::*;
use tidegate_apply::live::Mode;
use tidegate_apply::{AppliedState, ApplyOptions};

const CRD_SET: &str = r#"
apiVersion: example.dev/v1
kind: Widget
metadata: {name: w1, namespace: shop}
spec: {size: 3}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop}
data: {mode: fast}
---
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata: {name: widgets.example.dev}
spec:
  group: example.dev
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, listKind: WidgetList}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            properties:
              size: {type: integer, maximum: 10}
---
apiVersion: v1
kind: Namespace
metadata: {name: shop}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn crd_and_custom_resources_in_one_set_then_a_no_op_costs_one_list_per_kind() {
    let s = server().await;
    let m = manager(&s, Mode::List).await;
    let mut state = AppliedState::default();
    let first = apply_ok(&m, CRD_SET, &mut state).await;
    assert_eq!(
        first,
        [
            "CustomResourceDefinition/widgets.example.dev created",
            "Namespace/shop created",
            "ConfigMap/shop/settings created",
            "Widget/shop/w1 created",
        ]
    );
    assert_eq!(
        jsonpath(&s, &["get", "widget", "w1", "-n", "shop"], "{.spec.size}"),
        "3"
    );
    // Owner labels are on every object.
    assert_eq!(
        jsonpath(
            &s,
            &["get", "configmap", "settings", "-n", "shop"],
            "{.metadata.labels}"
        ),
        r#"{"test.tidegate.dev/name":"app","test.tidegate.dev/namespace":"default"}"#
    );
    let before = requests(&s);
    let again = apply_ok(&m, CRD_SET, &mut state).await;
    assert!(again.iter().all(|l| l.ends_with(" unchanged")), "{again:?}");
    let spent = requests(&s) - before;
    // One metadata list per kind (4 kinds), no GET, no dry run, no write.
    assert_eq!(spent, 4, "requests for a no-op apply of 4 objects");
}

#[tokio::test(flavor = "multi_thread")]
async fn every_action() {
    let s = server().await;
    let m = manager(&s, Mode::List).await;
    let mut state = AppliedState::default();
    let v1 = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: a, namespace: default}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: b, namespace: default}
data: {k: "1"}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: c
  namespace: default
  annotations: {kustomize.toolkit.fluxcd.io/ssa: Ignore}
data: {k: "1"}
"#;
    assert_eq!(
        apply_ok(&m, v1, &mut state).await,
        [
            "ConfigMap/default/a created",
            "ConfigMap/default/b created",
            "ConfigMap/default/c skipped"
        ]
    );
    s.fails(&["get", "configmap", "c"]);
    let v2 = v1.replacen("data: {k: \"1\"}", "data: {k: \"2\"}", 1);
    let cs = m
        .apply_all_staged(objects(&v2), &ApplyOptions::default(), &mut state)
        .await
        .expect("apply");
    assert_eq!(
        lines(&cs),
        [
            "ConfigMap/default/a configured",
            "ConfigMap/default/b unchanged",
            "ConfigMap/default/c skipped"
        ]
    );
    assert_eq!(cs.changes(), "ConfigMap/default/a configured");
    assert_eq!(jsonpath(&s, &["get", "configmap", "a"], "{.data.k}"), "2");
    // Prune what left the set.
    let old = tidegate_apply::Inventory::from_change_set(&cs);
    let v3 = v2.split("---").next().unwrap_or("").to_string();
    let cs3 = m
        .apply_all_staged(objects(&v3), &ApplyOptions::default(), &mut state)
        .await
        .expect("apply");
    let stale = old.stale(&tidegate_apply::Inventory::from_change_set(&cs3));
    let (pruned, result) = m.delete_all(&stale).await;
    result.expect("prune");
    assert_eq!(
        lines(&pruned),
        ["ConfigMap/default/c deleted", "ConfigMap/default/b deleted"]
    );
    s.fails(&["get", "configmap", "b"]);
}

#[tokio::test(flavor = "multi_thread")]
async fn an_invalid_object_applies_nothing() {
    let s = server().await;
    let m = manager(&s, Mode::List).await;
    let mut state = AppliedState::default();
    let set = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: fine, namespace: default}
data: {k: v}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: default}
stringData: {password: hunter2-very-secret}
---
apiVersion: v1
kind: ServiceAccount
metadata:
  name: robot
  namespace: default
  labels: {"bad label!": x}
"#;
    let err = apply(&m, set, &mut state).await.expect_err("invalid set");
    let text = err.to_string();
    assert!(
        text.starts_with("ServiceAccount/default/robot dry-run failed (Invalid): "),
        "{text}"
    );
    assert!(!text.contains("hunter2"), "secret value leaked: {text}");
    s.fails(&["get", "configmap", "fine"]);
    s.fails(&["get", "secret", "creds"]);
    // A namespaced object without a namespace is named and nothing is applied.
    let missing_ns = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x}\n---\napiVersion: v1\nkind: ConfigMap\nmetadata: {name: y, namespace: default}\n";
    let err = apply(&m, missing_ns, &mut state)
        .await
        .expect_err("no namespace");
    assert_eq!(
        err.to_string(),
        "ConfigMap/x namespace not specified: ConfigMap is a namespaced kind"
    );
    s.fails(&["get", "configmap", "y"]);
    // An unknown kind is named.
    let unknown =
        "apiVersion: nope.dev/v1\nkind: Gadget\nmetadata: {name: g, namespace: default}\n";
    let err = apply(&m, unknown, &mut state)
        .await
        .expect_err("unknown kind");
    assert!(
        err.to_string()
            .contains("Gadget/default/g dry-run failed: no matches for kind \"Gadget\""),
        "{err}"
    );
    // A custom resource that its CRD (in the same set) rejects fails before its stage.
    let bad_cr = CRD_SET.replace("size: 3", "size: 30");
    let err = apply(&m, &bad_cr, &mut state)
        .await
        .expect_err("schema violation");
    assert!(
        err.to_string()
            .contains("Widget/shop/w1 dry-run failed (Invalid)"),
        "{err}"
    );
    s.fails(&["get", "configmap", "settings", "-n", "shop"]);
}

const DEPLOYMENT: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: default}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27"}]
"#;

#[tokio::test(flavor = "multi_thread")]
async fn drift_by_kubectl_is_corrected() {
    let s = server().await;
    for mode in [Mode::List, Mode::Watch] {
        let m = manager(&s, mode).await;
        let mut state = AppliedState::default();
        apply_ok(&m, DEPLOYMENT, &mut state).await;
        // Let the simulator settle the status, then see the no-op path.
        tokio::time::sleep(std::time::Duration::from_millis(400)).await;
        assert_eq!(
            apply_ok(&m, DEPLOYMENT, &mut state).await,
            ["Deployment/default/web unchanged"]
        );
        if mode == Mode::Watch {
            tokio::time::sleep(std::time::Duration::from_millis(300)).await;
            let before = requests(&s);
            assert_eq!(
                apply_ok(&m, DEPLOYMENT, &mut state).await,
                ["Deployment/default/web unchanged"]
            );
            assert_eq!(requests(&s) - before, 0, "a watched no-op makes no request");
        }
        let settle = || tokio::time::sleep(std::time::Duration::from_millis(300));
        // kubectl scale
        s.ok(&["scale", "deployment", "web", "--replicas=5"]);
        settle().await;
        assert_eq!(
            apply_ok(&m, DEPLOYMENT, &mut state).await,
            ["Deployment/default/web configured"]
        );
        assert_eq!(
            jsonpath(&s, &["get", "deploy", "web"], "{.spec.replicas}"),
            "2"
        );
        // kubectl edit
        s.ok_env(
            &["edit", "deployment", "web"],
            &[("KUBE_EDITOR", "sed -i s/nginx:1.27/nginx:evil/")],
        );
        settle().await;
        assert_eq!(
            apply_ok(&m, DEPLOYMENT, &mut state).await,
            ["Deployment/default/web configured"]
        );
        assert_eq!(
            jsonpath(
                &s,
                &["get", "deploy", "web"],
                "{.spec.template.spec.containers[0].image}"
            ),
            "nginx:1.27"
        );
        // A label added with kubectl is taken over and removed, as Flux does...
        s.ok(&["label", "deployment", "web", "team=blue"]);
        settle().await;
        assert_eq!(
            apply_ok(&m, DEPLOYMENT, &mut state).await,
            ["Deployment/default/web configured"]
        );
        assert_eq!(
            jsonpath(&s, &["get", "deploy", "web"], "{.metadata.labels.team}"),
            ""
        );
        // ...while one written by another field manager is not ours: no drift, it stays.
        s.ok(&[
            "label",
            "deployment",
            "web",
            "team=green",
            "--field-manager=ops-team",
        ]);
        settle().await;
        assert_eq!(
            apply_ok(&m, DEPLOYMENT, &mut state).await,
            ["Deployment/default/web unchanged"]
        );
        assert_eq!(
            jsonpath(&s, &["get", "deploy", "web"], "{.metadata.labels.team}"),
            "green"
        );
        // kubectl delete
        s.ok(&["delete", "deployment", "web"]);
        settle().await;
        assert_eq!(
            apply_ok(&m, DEPLOYMENT, &mut state).await,
            ["Deployment/default/web created"]
        );
        s.ok(&["delete", "deployment", "web"]);
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn takeover_from_kubectl_and_merge_opt_out() {
    let s = server().await;
    let m = manager(&s, Mode::List).await;
    let cm = |name: &str, keys: &str, extra: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: default\n{extra}data: {{{keys}}}\n"
        )
    };
    // Client-side kubectl apply, then ours without key b: b goes, the annotation goes.
    s.ok_stdin(&["apply", "-f", "-"], &cm("csa", "a: '1', b: '2'", ""));
    // Server-side kubectl apply.
    s.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &cm("ssa", "a: '1', b: '2'", ""),
    );
    // Merge opts out: kubectl's b stays.
    s.ok_stdin(&["apply", "-f", "-"], &cm("merged", "a: '1', b: '2'", ""));
    let mut state = AppliedState::default();
    let set = [
        cm("csa", "a: '1'", ""),
        cm("ssa", "a: '1'", ""),
        cm(
            "merged",
            "a: '1'",
            "  annotations: {kustomize.toolkit.fluxcd.io/ssa: Merge}\n",
        ),
    ]
    .join("---\n");
    let out = apply_ok(&m, &set, &mut state).await;
    assert_eq!(
        out,
        [
            "ConfigMap/default/csa configured",
            "ConfigMap/default/merged configured",
            "ConfigMap/default/ssa configured"
        ]
    );
    assert_eq!(
        jsonpath(&s, &["get", "cm", "csa"], "{.data}"),
        r#"{"a":"1"}"#
    );
    assert_eq!(
        jsonpath(&s, &["get", "cm", "ssa"], "{.data}"),
        r#"{"a":"1"}"#
    );
    assert_eq!(
        jsonpath(&s, &["get", "cm", "merged"], "{.data}"),
        r#"{"a":"1","b":"2"}"#
    );
    let annotations = jsonpath(&s, &["get", "cm", "csa"], "{.metadata.annotations}");
    assert!(
        !annotations.contains("last-applied-configuration"),
        "{annotations}"
    );
    let managers = jsonpath(
        &s,
        &["get", "cm", "ssa"],
        "{.metadata.managedFields[*].manager}",
    );
    assert_eq!(managers, "tidegate");
}

#[tokio::test(flavor = "multi_thread")]
async fn policies_if_not_present_reconcile_disabled_and_force() {
    let s = server().await;
    let m = manager(&s, Mode::List).await;
    let mut state = AppliedState::default();
    let once = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: once\n  namespace: default\n  annotations: {kustomize.toolkit.fluxcd.io/ssa: IfNotPresent}\ndata: {k: v1}\n";
    assert_eq!(
        apply_ok(&m, once, &mut state).await,
        ["ConfigMap/default/once created"]
    );
    let changed = once.replace("k: v1", "k: v2");
    assert_eq!(
        apply_ok(&m, &changed, &mut state).await,
        ["ConfigMap/default/once skipped"]
    );
    assert_eq!(jsonpath(&s, &["get", "cm", "once"], "{.data.k}"), "v1");
    // reconcile: disabled set on the live object by someone else.
    let plain = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: plain, namespace: default}\ndata: {k: v1}\n";
    apply_ok(&m, plain, &mut state).await;
    s.ok(&[
        "annotate",
        "cm",
        "plain",
        "kustomize.toolkit.fluxcd.io/reconcile=disabled",
    ]);
    let plain2 = plain.replace("k: v1", "k: v2");
    assert_eq!(
        apply_ok(&m, &plain2, &mut state).await,
        ["ConfigMap/default/plain skipped"]
    );
    // Immutable change: an error naming the object and field without force...
    apply_ok(&m, DEPLOYMENT, &mut state).await;
    let uid = jsonpath(&s, &["get", "deploy", "web"], "{.metadata.uid}");
    let reselected = DEPLOYMENT.replace("app: web", "app: web2");
    let err = apply(&m, &reselected, &mut state)
        .await
        .expect_err("immutable");
    let text = err.to_string();
    assert!(
        text.starts_with("Deployment/default/web dry-run failed (Invalid): "),
        "{text}"
    );
    assert!(
        text.contains("spec.selector") && text.contains("field is immutable"),
        "{text}"
    );
    // ...and a recreate with the force annotation.
    let forced = reselected.replace(
        "metadata: {name: web, namespace: default}",
        "metadata:\n  name: web\n  namespace: default\n  annotations: {kustomize.toolkit.fluxcd.io/force: enabled}",
    );
    assert_eq!(
        apply_ok(&m, &forced, &mut state).await,
        ["Deployment/default/web created"]
    );
    assert_ne!(
        jsonpath(&s, &["get", "deploy", "web"], "{.metadata.uid}"),
        uid
    );
    assert_eq!(
        jsonpath(
            &s,
            &["get", "deploy", "web"],
            "{.spec.selector.matchLabels.app}"
        ),
        "web2"
    );
    // Force as an option of the apply, for an immutable ConfigMap.
    let frozen = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: frozen, namespace: default}\nimmutable: true\ndata: {k: v1}\n";
    apply_ok(&m, frozen, &mut state).await;
    let thawed = frozen.replace("k: v1", "k: v2");
    let err = apply(&m, &thawed, &mut state)
        .await
        .expect_err("immutable configmap");
    assert!(
        err.to_string()
            .contains("data: Forbidden: field is immutable when `immutable` is set"),
        "{err}"
    );
    let cs = m
        .apply_all_staged(
            objects(&thawed),
            &ApplyOptions {
                force: true,
                ..Default::default()
            },
            &mut state,
        )
        .await
        .expect("forced");
    assert_eq!(lines(&cs), ["ConfigMap/default/frozen created"]);
    assert_eq!(jsonpath(&s, &["get", "cm", "frozen"], "{.data.k}"), "v2");
}

#[tokio::test(flavor = "multi_thread")]
async fn prune_only_what_carries_owner_labels() {
    let s = server().await;
    let m = manager(&s, Mode::List).await;
    let mut state = AppliedState::default();
    let set = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: owned, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata: {name: adopted, namespace: default}
---
apiVersion: v1
kind: ConfigMap
metadata:
  name: kept
  namespace: default
  annotations: {kustomize.toolkit.fluxcd.io/prune: disabled}
"#;
    let cs = m
        .apply_all_staged(objects(set), &ApplyOptions::default(), &mut state)
        .await
        .expect("apply");
    let old = tidegate_apply::Inventory::from_change_set(&cs);
    // Someone removes our owner label from one object.
    s.ok(&["label", "cm", "adopted", "test.tidegate.dev/name-"]);
    let (pruned, result) = m.delete_all(&old.stale(&Default::default())).await;
    result.expect("prune");
    assert_eq!(
        lines(&pruned),
        [
            "ConfigMap/default/owned deleted",
            "ConfigMap/default/kept skipped",
            "ConfigMap/default/adopted skipped"
        ]
    );
    s.fails(&["get", "cm", "owned"]);
    s.ok(&["get", "cm", "adopted"]);
    s.ok(&["get", "cm", "kept"]);
}

/// An object moved to another owner between the prune's read and its delete is not deleted:
/// the delete carries the read's uid and resourceVersion as preconditions (Flux's rule: prune
/// only what carries your owner labels at the moment of deletion).
#[tokio::test(flavor = "multi_thread")]
async fn prune_spares_an_object_taken_over_after_it_was_read() {
    use std::sync::Arc;
    use support::intercept;
    let s = server().await;
    let cm = r#"
apiVersion: v1
kind: ConfigMap
metadata: {name: moved, namespace: default}
data: {k: v}
"#;
    let a = manager(&s, Mode::List).await;
    let mut state = AppliedState::default();
    let cs = a
        .apply_all_staged(objects(cm), &ApplyOptions::default(), &mut state)
        .await
        .expect("A applies");
    let stale = tidegate_apply::Inventory::from_change_set(&cs).stale(&Default::default());

    // B, another owner, applies the same object at the moment A's prune sends its DELETE.
    let b = other_manager(s.client().await);
    let b = Arc::new(tokio::sync::Mutex::new(Some(b)));
    let hook: intercept::Hook = Arc::new(move |seen: intercept::Seen| {
        let b = b.clone();
        Box::pin(async move {
            if seen.method != "DELETE" {
                return;
            }
            if let Some(b) = b.lock().await.take() {
                let mut state = AppliedState::default();
                b.apply_all_staged(objects(cm), &ApplyOptions::default(), &mut state)
                    .await
                    .expect("B applies");
            }
        })
    });
    let pruner = a.derive(hooked_client(&s, hook).await, Some(owner()));
    let (pruned, result) = pruner.delete_all(&stale).await;
    result.expect("prune");
    assert_eq!(lines(&pruned), ["ConfigMap/default/moved skipped"]);
    assert_eq!(
        jsonpath(
            &s,
            &["get", "cm", "moved"],
            "{.metadata.labels.test\\.tidegate\\.dev/name}"
        ),
        "other"
    );
}

/// An apply that takes an object over from another owner reports that owner (so it can be
/// woken), and loses, rather than steals, when the other owner writes the object between the
/// plan and the apply: the apply carries the planned resourceVersion as a precondition.
#[tokio::test(flavor = "multi_thread")]
async fn taking_over_reports_the_previous_owner_and_loses_a_race_with_it() {
    use std::sync::Arc;
    use support::intercept;
    let s = server().await;
    let cm = |value: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: moved, namespace: default}}\ndata: {{k: {value}}}\n"
        )
    };
    let a = manager(&s, Mode::List).await;
    apply_ok(&a, &cm("a"), &mut AppliedState::default()).await;
    // The other owner takes it over: reported, and the labels are its own.
    let b = other_manager(s.client().await);
    apply_ok(&b, &cm("b"), &mut AppliedState::default()).await;
    assert_eq!(b.taken_from(), vec![support::owner()]);
    assert!(b.taken_from().is_empty(), "reported once");
    // A takes it back, but B writes it between A's plan and A's apply: A's apply fails.
    let b = Arc::new(tokio::sync::Mutex::new(Some(other_manager(
        s.client().await,
    ))));
    let hook: intercept::Hook = Arc::new(move |seen: intercept::Seen| {
        let b = b.clone();
        Box::pin(async move {
            if seen.method != "PATCH" || seen.uri.contains("dryRun") {
                return;
            }
            if let Some(b) = b.lock().await.take() {
                let yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: moved, namespace: default}\ndata: {k: b2}\n";
                apply_ok(&b, yaml, &mut AppliedState::default()).await;
            }
        })
    });
    let racing = a.derive(hooked_client(&s, hook).await, Some(support::owner()));
    let err = apply(&racing, &cm("a2"), &mut AppliedState::default())
        .await
        .expect_err("lost the race");
    assert!(
        err.to_string()
            .contains("the object changed while it was being taken over from default/other"),
        "{err}"
    );
    assert!(racing.taken_from().is_empty());
    assert_eq!(jsonpath(&s, &["get", "cm", "moved"], "{.data.k}"), "b2");
    // Without a race it takes it back.
    apply_ok(&a, &cm("a3"), &mut AppliedState::default()).await;
    assert_eq!(jsonpath(&s, &["get", "cm", "moved"], "{.data.k}"), "a3");
}
