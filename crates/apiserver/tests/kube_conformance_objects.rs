//! Answers recorded from a real kube-apiserver 1.36 (with etcd and kube-controller-manager,
//! driven by kubectl 1.32/1.35 and the Python client) about objects: what its validation
//! accepts and refuses, what admission and defaulting add, what its controllers do. Each is
//! kept as data; the embedded server must answer the same.

mod common;
mod raw;

use raw::{raw, raw_json};
use serde_json::{Value, json};
use std::time::Duration;

const CMS: &str = "/api/v1/namespaces/default/configmaps";

/// Objects kube-apiserver 1.36 creates (its validation does not check what ours once did).
#[tokio::test(flavor = "multi_thread")]
async fn what_kube_accepts_is_accepted() {
    let t = common::start().await;
    let client = t.client().await;
    let sts = json!({"apiVersion": "apps/v1", "kind": "StatefulSet", "metadata": {"name": "loki"},
        "spec": {"serviceName": "loki", "selector": {"matchLabels": {"app": "loki"}},
            "template": {"metadata": {"labels": {"app": "loki"}},
                "spec": {"containers": [{"name": "loki", "image": "grafana/loki",
                    "volumeMounts": [{"name": "storage", "mountPath": "/data"}]}]}},
            "volumeClaimTemplates": [{"metadata": {"name": "storage"},
                "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}}]}});
    let deployment = |name: &str, spec: Value| {
        let mut d = json!({"apiVersion": "apps/v1", "kind": "Deployment", "metadata": {"name": name},
            "spec": {"selector": {"matchLabels": {"app": name}},
                "template": {"metadata": {"labels": {"app": name}},
                    "spec": {"containers": [{"name": "app", "image": "nginx"}]}}}});
        json_patch::merge(&mut d["spec"]["template"]["spec"], &spec);
        d
    };
    let cases: Vec<(&str, Value)> = vec![
        ("/apis/apps/v1/namespaces/default/statefulsets", sts.clone()),
        (
            "/api/v1/namespaces/default/secrets",
            json!({"apiVersion": "v1", "kind": "Secret", "metadata": {"name": "tls"},
                "type": "kubernetes.io/tls", "stringData": {"tls.crt": "crt", "tls.key": "key"}}),
        ),
        (
            CMS,
            json!({"apiVersion": "v1", "kind": "ConfigMap",
            "metadata": {"name": "upper", "annotations": {"Example.COM/Owner": "x"}}}),
        ),
        (
            "/apis/apps/v1/namespaces/default/deployments",
            deployment(
                "blank-image",
                json!({"containers": [{"name": "app", "image": " "}]}),
            ),
        ),
        (
            "/apis/apps/v1/namespaces/default/deployments",
            deployment("grace", json!({"terminationGracePeriodSeconds": -1})),
        ),
        (
            "/api/v1/namespaces/default/services",
            json!({"apiVersion": "v1", "kind": "Service", "metadata": {"name": "ext"},
                "spec": {"type": "ExternalName", "externalName": "example.com."}}),
        ),
        (
            "/api/v1/namespaces/default/persistentvolumeclaims",
            json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "rwop"},
                "spec": {"accessModes": ["ReadWriteOncePod", "ReadWriteOncePod"],
                    "resources": {"requests": {"storage": "1Gi"}}}}),
        ),
        (
            "/apis/networking.k8s.io/v1/namespaces/default/ingresses",
            json!({"apiVersion": "networking.k8s.io/v1", "kind": "Ingress", "metadata": {"name": "web"},
                "spec": {"rules": [{"http": {"paths": [{"path": "/", "pathType": "Prefix",
                    "backend": {"service": {"name": "web", "port": {"name": "", "number": 80}}}}]}}]}}),
        ),
    ];
    let mut failures = Vec::new();
    for (path, obj) in &cases {
        let (code, body) = raw(&client, "POST", path, Some(obj.clone())).await;
        if code != 201 {
            failures.push(format!(
                "{} {}: {code} {body}",
                obj["kind"], obj["metadata"]["name"]
            ));
        }
    }
    assert!(failures.is_empty(), "refused:\n{}", failures.join("\n"));

    // The same StatefulSet through server-side apply and a server dry-run (kubectl).
    let mut applied = sts.clone();
    applied["metadata"]["name"] = json!("loki-ssa");
    t.ok_stdin(&["apply", "--server-side", "-f", "-"], &applied.to_string());
    applied["metadata"]["name"] = json!("loki-dry");
    t.ok_stdin(
        &["create", "--dry-run=server", "-f", "-"],
        &applied.to_string(),
    );

    // stringData is merged into data and never stored.
    let (_, secret) = raw_json(
        &client,
        "GET",
        "/api/v1/namespaces/default/secrets/tls",
        None,
    )
    .await;
    assert_eq!(secret["data"]["tls.crt"], "Y3J0", "{secret}");
    assert!(secret.get("stringData").is_none(), "{secret}");
}

/// Updates kube allows: scheduling directives of a suspended Job that never started, removing
/// a Pod's scheduling gate, binding a claim once.
#[tokio::test(flavor = "multi_thread")]
async fn updates_kube_allows_are_allowed() {
    let t = common::start().await;
    let client = t.client().await;
    let job = json!({"apiVersion": "batch/v1", "kind": "Job", "metadata": {"name": "queued"},
        "spec": {"suspend": true, "template": {"spec": {"restartPolicy": "Never",
            "containers": [{"name": "c", "image": "busybox"}]}}}});
    assert_eq!(
        raw(
            &client,
            "POST",
            "/apis/batch/v1/namespaces/default/jobs",
            Some(job)
        )
        .await
        .0,
        201
    );
    let (code, body) = raw(
        &client,
        "PATCH",
        "/apis/batch/v1/namespaces/default/jobs/queued",
        Some(
            json!({"spec": {"template": {"metadata": {"labels": {"queue": "a"}},
            "spec": {"nodeSelector": {"pool": "a"}}}}}),
        ),
    )
    .await;
    assert_eq!(code, 200, "{body}");

    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "gated"},
        "spec": {"schedulingGates": [{"name": "example.com/wait"}],
            "containers": [{"name": "c", "image": "busybox"}]}});
    assert_eq!(
        raw(
            &client,
            "POST",
            "/api/v1/namespaces/default/pods",
            Some(pod)
        )
        .await
        .0,
        201
    );
    let (code, body) = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/pods/gated",
        Some(json!({"spec": {"schedulingGates": null, "nodeSelector": {"pool": "a"}}})),
    )
    .await;
    assert_eq!(code, 200, "{body}");
    let (code, body) = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/pods/gated",
        Some(json!({"spec": {"schedulingGates": [{"name": "late"}]}})),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert!(
        body.contains("only deletion is allowed, but found new scheduling gate 'late'"),
        "{body}"
    );

    let pvc = json!({"apiVersion": "v1", "kind": "PersistentVolumeClaim", "metadata": {"name": "claim"},
        "spec": {"accessModes": ["ReadWriteOnce"], "resources": {"requests": {"storage": "1Gi"}}}});
    assert_eq!(
        raw(
            &client,
            "POST",
            "/api/v1/namespaces/default/persistentvolumeclaims",
            Some(pvc)
        )
        .await
        .0,
        201
    );
    let (code, body) = raw(
        &client,
        "PATCH",
        "/api/v1/namespaces/default/persistentvolumeclaims/claim",
        Some(json!({"spec": {"volumeName": "pv-1"}})),
    )
    .await;
    assert_eq!(code, 200, "{body}");
}

/// Messages kube words differently from what we used to.
#[tokio::test(flavor = "multi_thread")]
async fn refusals_worded_as_kube() {
    let t = common::start().await;
    let client = t.client().await;
    let pod = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "ws"},
        "spec": {"containers": [{"name": "c", "image": "nginx "}]}});
    let (code, body) = raw_json(
        &client,
        "POST",
        "/api/v1/namespaces/default/pods",
        Some(pod),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "Pod \"ws\" is invalid: spec.containers[0].image: Invalid value: \"nginx \": must not have leading or trailing whitespace"
    );
    let ds = json!({"apiVersion": "apps/v1", "kind": "DaemonSet", "metadata": {"name": "ds"},
        "spec": {"selector": {"matchLabels": {"a": "b"}}, "template": {"metadata": {"labels": {"a": "b"}},
            "spec": {"activeDeadlineSeconds": 5, "containers": [{"name": "c", "image": "nginx"}]}}}});
    let (code, body) = raw_json(
        &client,
        "POST",
        "/apis/apps/v1/namespaces/default/daemonsets",
        Some(ds),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "DaemonSet.apps \"ds\" is invalid: spec.template.spec.activeDeadlineSeconds: Forbidden: activeDeadlineSeconds in DaemonSet is not Supported"
    );
}

/// Re-applying an unchanged bundle changes nothing (kubectl diff is empty, generation stays);
/// generation only on the kinds kube gives one.
#[tokio::test(flavor = "multi_thread")]
async fn no_op_applies_change_nothing() {
    let t = common::start().await;
    let bundle = r#"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - name: db
        image: postgres
        ports: [{containerPort: 5432}]
        volumeMounts: [{name: data, mountPath: /var/lib/postgresql}]
  volumeClaimTemplates:
  - metadata: {name: data}
    spec:
      accessModes: [ReadWriteOnce]
      resources: {requests: {storage: 1Gi}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: db}
spec:
  podSelector: {matchLabels: {app: db}}
  ingress:
  - ports: [{port: 5432}]
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: lock}
spec: {holderIdentity: me}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: db}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: StatefulSet, name: db}
  maxReplicas: 3
"#;
    for _ in 0..2 {
        t.ok_stdin(&["apply", "--server-side", "-f", "-"], bundle);
    }
    let generation = |kind: &str, name: &str| -> String {
        t.ok(&["get", kind, name, "-o", "jsonpath={.metadata.generation}"])
    };
    assert_eq!(generation("statefulset", "db"), "1");
    assert_eq!(generation("networkpolicy", "db"), "1");
    assert_eq!(
        generation("lease", "lock"),
        "",
        "kube sets no generation on Leases"
    );
    assert_eq!(
        generation("hpa", "db"),
        "",
        "kube 1.36 sets no generation on HPAs"
    );
    let out = t.kubectl_stdin(&["diff", "--server-side", "-f", "-"], Some(bundle));
    assert_eq!(
        out.status.code(),
        Some(0),
        "kubectl diff finds nothing: {}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    // A real change still bumps it.
    t.ok(&[
        "patch",
        "statefulset",
        "db",
        "--type=merge",
        "-p",
        r#"{"spec":{"replicas":2}}"#,
    ]);
    assert_eq!(generation("statefulset", "db"), "2");

    // DaemonSets carry the template generation kube keeps in an annotation.
    t.ok_stdin(
        &["apply", "-f", "-"],
        r#"
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec: {containers: [{name: a, image: busybox}]}
"#,
    );
    let template_generation = || {
        t.ok(&[
            "get",
            "ds",
            "agent",
            "-o",
            r"jsonpath={.metadata.annotations.deprecated\.daemonset\.template\.generation}",
        ])
    };
    assert_eq!(template_generation(), "1");
    t.ok(&["set", "image", "ds/agent", "a=busybox:1.37"]);
    assert_eq!(template_generation(), "2");
    assert_eq!(generation("ds", "agent"), "2");
}

/// Admission and validation kube performs: object size, event namespaces, a pod's service
/// account and priority class, the system namespaces, tokens bound to another account's pod.
#[tokio::test(flavor = "multi_thread")]
async fn admission_and_validation_kube_performs() {
    let t = common::start().await;
    let client = t.client().await;
    let big = json!({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
        "data": {"a": "x".repeat(1024 * 1024 + 1)}});
    let (code, body) = raw_json(&client, "POST", CMS, Some(big)).await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "ConfigMap \"big\" is invalid: []: Too long: may not be more than 1048576 bytes"
    );

    let event = json!({"apiVersion": "v1", "kind": "Event", "metadata": {"name": "e"},
        "involvedObject": {"kind": "Pod", "name": "p", "namespace": "other"}, "reason": "R", "message": "m"});
    let (code, body) = raw_json(
        &client,
        "POST",
        "/api/v1/namespaces/default/events",
        Some(event),
    )
    .await;
    assert_eq!(code, 422);
    assert_eq!(
        body["message"],
        "Event \"e\" is invalid: involvedObject.namespace: Invalid value: \"other\": does not match event.namespace"
    );

    let pod = |name: &str, extra: Value| {
        let mut p = json!({"apiVersion": "v1", "kind": "Pod", "metadata": {"name": name},
            "spec": {"containers": [{"name": "c", "image": "busybox"}]}});
        json_patch::merge(&mut p["spec"], &extra);
        p
    };
    let pods = "/api/v1/namespaces/default/pods";
    let (code, body) = raw_json(
        &client,
        "POST",
        pods,
        Some(pod("ghostly", json!({"serviceAccountName": "ghost"}))),
    )
    .await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "pods \"ghostly\" is forbidden: error looking up service account default/ghost: serviceaccount \"ghost\" not found"
    );
    let (code, body) = raw_json(
        &client,
        "POST",
        pods,
        Some(pod("unclassed", json!({"priorityClassName": "nope"}))),
    )
    .await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "pods \"unclassed\" is forbidden: no PriorityClass with name nope was found"
    );
    let (code, body) = raw_json(
        &client,
        "POST",
        pods,
        Some(pod(
            "critical",
            json!({"priorityClassName": "system-cluster-critical"}),
        )),
    )
    .await;
    assert_eq!(code, 201, "{body}");
    assert_eq!(body["spec"]["priority"], 2_000_000_000);

    let (code, body) = raw_json(&client, "DELETE", "/api/v1/namespaces/default", None).await;
    assert_eq!(code, 403);
    assert_eq!(
        body["message"],
        "namespaces \"default\" is forbidden: this namespace may not be deleted"
    );

    // Services: a node port another Service holds, a cluster IP changed once set.
    let svc = |name: &str, spec: Value| {
        json!({"apiVersion": "v1", "kind": "Service",
        "metadata": {"name": name}, "spec": spec})
    };
    let services = "/api/v1/namespaces/default/services";
    let (code, body) = raw_json(&client, "POST", services, Some(svc("np1",
        json!({"type": "NodePort", "selector": {"a": "b"}, "ports": [{"port": 80, "nodePort": 30080}]})))).await;
    assert_eq!(code, 201, "{body}");
    let (code, body) = raw_json(&client, "POST", services, Some(svc("np2",
        json!({"type": "NodePort", "selector": {"a": "b"}, "ports": [{"port": 80, "nodePort": 30080}]})))).await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "Service \"np2\" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated"
    );
    let (code, body) = raw_json(
        &client,
        "PATCH",
        &format!("{services}/np1"),
        Some(json!({"spec": {"clusterIP": "10.96.200.200", "clusterIPs": ["10.96.200.200"]}})),
    )
    .await;
    assert_eq!(code, 422, "{body}");
    assert_eq!(
        body["message"],
        "Service \"np1\" is invalid: spec.clusterIPs[0]: Invalid value: [\"10.96.200.200\"]: may not change once set"
    );
    // Headless Services get kube's IP families: single-stack with a selector, dual-stack
    // asked for without one.
    let (_, headless) = raw_json(
        &client,
        "POST",
        services,
        Some(svc(
            "headless",
            json!({"clusterIP": "None", "selector": {"a": "b"}, "ports": [{"port": 80}]}),
        )),
    )
    .await;
    assert_eq!(
        (
            headless["spec"]["ipFamilyPolicy"].as_str(),
            &headless["spec"]["ipFamilies"]
        ),
        (Some("SingleStack"), &json!(["IPv4"])),
        "{headless}"
    );
    let (_, bare) = raw_json(
        &client,
        "POST",
        services,
        Some(svc("bare", json!({"clusterIP": "None"}))),
    )
    .await;
    assert_eq!(bare["spec"]["ipFamilyPolicy"], "RequireDualStack", "{bare}");

    t.ok(&["create", "serviceaccount", "other"]);
    let review = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest",
        "spec": {"boundObjectRef": {"kind": "Pod", "apiVersion": "v1", "name": "critical"}}});
    let (code, body) = raw_json(
        &client,
        "POST",
        "/api/v1/namespaces/default/serviceaccounts/other/token",
        Some(review),
    )
    .await;
    assert_eq!(code, 400);
    assert_eq!(
        body["message"],
        "cannot bind token for serviceaccount \"other\" to pod running with different serviceaccount name."
    );
}

/// Defaults kube writes that we once left out.
#[tokio::test(flavor = "multi_thread")]
async fn defaults_kube_sets() {
    let t = common::start().await;
    t.ok_stdin(
        &["apply", "-f", "-"],
        r#"
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: c, image: busybox}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly}
spec:
  schedule: "0 0 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: Never
          containers: [{name: c, image: busybox}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec: {containers: [{name: db, image: postgres}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"#,
    );
    assert_eq!(
        t.ok(&[
            "get",
            "job",
            "once",
            "-o",
            "jsonpath={.spec.manualSelector}"
        ]),
        "false"
    );
    assert_eq!(
        t.ok(&[
            "get",
            "cronjob",
            "nightly",
            "-o",
            "jsonpath={.spec.jobTemplate.metadata}"
        ]),
        "{}"
    );
    assert_eq!(
        t.ok(&["get", "sts", "db", "-o", "jsonpath={.spec.volumeClaimTemplates[0].apiVersion}/{.spec.volumeClaimTemplates[0].kind}"]),
        "v1/PersistentVolumeClaim"
    );
    // The kubernetes Service points at the port the server listens on.
    let port = t.server.url.rsplit(':').next().expect("port").to_string();
    assert_eq!(
        t.ok(&[
            "get",
            "svc",
            "kubernetes",
            "-o",
            "jsonpath={.spec.ports[0].targetPort}"
        ]),
        port
    );
    // The system priority classes exist.
    assert_eq!(
        t.ok(&[
            "get",
            "priorityclass",
            "system-node-critical",
            "-o",
            "jsonpath={.value}"
        ]),
        "2000001000"
    );
}

/// What kube-controller-manager does that clients see: the change cause reaches the
/// ReplicaSet (`rollout history`), a StatefulSet's claims are made from its templates, and a
/// namespace's `default` ServiceAccount and root CA ConfigMap come back when deleted.
#[tokio::test(flavor = "multi_thread")]
async fn controller_effects_clients_see() {
    let t = common::start_simulated(50).await;
    let wait_for = |args: &[&str], want: &str| {
        for _ in 0..100 {
            let out = t.kubectl(args);
            if String::from_utf8_lossy(&out.stdout).trim() == want {
                return;
            }
            std::thread::sleep(Duration::from_millis(50));
        }
        panic!("{args:?} never gave {want:?}");
    };
    t.ok(&["create", "deployment", "web", "--image=nginx:1.27"]);
    t.ok(&[
        "annotate",
        "deployment",
        "web",
        "kubernetes.io/change-cause=first release",
    ]);
    wait_for(
        &[
            "get",
            "rs",
            "-l",
            "app=web",
            "-o",
            "jsonpath={.items[0].metadata.annotations.kubernetes\\.io/change-cause}",
        ],
        "first release",
    );
    let history = t.ok(&["rollout", "history", "deployment/web"]);
    assert!(history.contains("first release"), "{history}");

    t.ok_stdin(
        &["apply", "-f", "-"],
        r#"
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers:
      - {name: db, image: postgres, volumeMounts: [{name: data, mountPath: /data}]}
  volumeClaimTemplates:
  - metadata: {name: data}
    spec: {accessModes: [ReadWriteOnce], resources: {requests: {storage: 1Gi}}}
"#,
    );
    wait_for(
        &[
            "get",
            "pvc",
            "-l",
            "app=db",
            "-o",
            "jsonpath={.items[*].metadata.name}",
        ],
        "data-db-0 data-db-1",
    );
    wait_for(
        &[
            "get",
            "pod",
            "db-1",
            "-o",
            "jsonpath={.spec.volumes[0].persistentVolumeClaim.claimName}",
        ],
        "data-db-1",
    );

    t.ok(&["delete", "serviceaccount", "default"]);
    t.ok(&["delete", "configmap", common::ROOT_CA]);
    wait_for(
        &["get", "serviceaccount", "default", "-o", "name"],
        "serviceaccount/default",
    );
    wait_for(
        &["get", "configmap", common::ROOT_CA, "-o", "name"],
        "configmap/kube-root-ca.crt",
    );
}
