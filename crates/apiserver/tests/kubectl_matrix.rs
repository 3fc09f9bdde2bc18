//! A matrix of everyday kubectl commands across the built-in kinds, each one's output checked
//! (not only its exit code): every output format of `get`, `describe`, `explain`, rollouts of
//! Deployments, StatefulSets and DaemonSets, `create token`, `auth`, `logs`, `expose`, `create
//! ingress`, events, `wait`, scaling, labels, and the delete variants.

mod common;

const FIXTURE: &str = r#"
apiVersion: v1
kind: Namespace
metadata: {name: shop}
---
apiVersion: apps/v1
kind: Deployment
metadata: {name: web, namespace: shop, labels: {app: web}}
spec:
  replicas: 2
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers: [{name: web, image: "nginx:1.27", ports: [{containerPort: 80, name: http}]}]
---
apiVersion: apps/v1
kind: StatefulSet
metadata: {name: db, namespace: shop}
spec:
  serviceName: db
  replicas: 2
  selector: {matchLabels: {app: db}}
  template:
    metadata: {labels: {app: db}}
    spec:
      containers: [{name: db, image: "postgres:16"}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent, namespace: shop}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: "busybox:1.36"}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate, namespace: shop}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: migrate, image: "busybox:1.36"}]
---
apiVersion: batch/v1
kind: CronJob
metadata: {name: nightly, namespace: shop}
spec:
  schedule: "0 2 * * *"
  jobTemplate:
    spec:
      template:
        spec:
          restartPolicy: OnFailure
          containers: [{name: job, image: "busybox:1.36"}]
---
apiVersion: v1
kind: Service
metadata: {name: web, namespace: shop}
spec:
  selector: {app: web}
  ports: [{name: http, port: 80, targetPort: http}]
---
apiVersion: v1
kind: ConfigMap
metadata: {name: settings, namespace: shop, labels: {tier: web}}
data: {color: blue, size: large}
---
apiVersion: v1
kind: Secret
metadata: {name: creds, namespace: shop}
stringData: {password: s3cret}
---
apiVersion: v1
kind: PersistentVolumeClaim
metadata: {name: data, namespace: shop}
spec:
  accessModes: [ReadWriteOnce]
  resources: {requests: {storage: 1Gi}}
---
apiVersion: autoscaling/v2
kind: HorizontalPodAutoscaler
metadata: {name: web, namespace: shop}
spec:
  scaleTargetRef: {apiVersion: apps/v1, kind: Deployment, name: web}
  minReplicas: 2
  maxReplicas: 5
---
apiVersion: policy/v1
kind: PodDisruptionBudget
metadata: {name: web, namespace: shop}
spec:
  minAvailable: 1
  selector: {matchLabels: {app: web}}
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: deny, namespace: shop}
spec:
  podSelector: {matchLabels: {app: web}}
---
apiVersion: rbac.authorization.k8s.io/v1
kind: Role
metadata: {name: reader, namespace: shop}
rules: [{apiGroups: [""], resources: [pods], verbs: [get, list]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: reader, namespace: shop}
roleRef: {apiGroup: rbac.authorization.k8s.io, kind: Role, name: reader}
subjects: [{kind: ServiceAccount, name: robot, namespace: shop}]
---
apiVersion: v1
kind: ServiceAccount
metadata: {name: robot, namespace: shop}
---
apiVersion: scheduling.k8s.io/v1
kind: PriorityClass
metadata: {name: high}
value: 1000
---
apiVersion: coordination.k8s.io/v1
kind: Lease
metadata: {name: leader, namespace: shop}
spec: {holderIdentity: me}
"#;

/// What a command's output must show.
enum Want {
    /// Every one of these substrings, in stdout.
    Shows(Vec<String>),
    /// A failure whose stderr has this text.
    Fails(String),
}

fn shows(texts: &[&str]) -> Want {
    Want::Shows(texts.iter().map(|t| t.to_string()).collect())
}

fn fails(text: &str) -> Want {
    Want::Fails(text.to_string())
}

#[tokio::test(flavor = "multi_thread")]
async fn everyday_kubectl_commands() {
    let t = common::start_simulated(100).await;
    t.ok_stdin(&["apply", "-f", "-"], FIXTURE);
    for target in ["deploy/web", "sts/db", "ds/agent"] {
        t.ok(&["-n", "shop", "rollout", "status", target, "--timeout=30s"]);
    }
    t.ok(&[
        "-n",
        "shop",
        "wait",
        "--for=condition=complete",
        "job/migrate",
        "--timeout=30s",
    ]);

    let n = "shop";
    let mut matrix: Vec<(Vec<&str>, Want)> = Vec::new();
    // get, in every output format, for each kind.
    let kinds: &[(&str, &str, &str)] = &[
        ("deployment", "web", "Deployment"),
        ("statefulset", "db", "StatefulSet"),
        ("daemonset", "agent", "DaemonSet"),
        ("job", "migrate", "Job"),
        ("cronjob", "nightly", "CronJob"),
        ("service", "web", "Service"),
        ("configmap", "settings", "ConfigMap"),
        ("secret", "creds", "Secret"),
        ("pvc", "data", "PersistentVolumeClaim"),
        ("hpa", "web", "HorizontalPodAutoscaler"),
        ("pdb", "web", "PodDisruptionBudget"),
        ("networkpolicy", "deny", "NetworkPolicy"),
        ("role", "reader", "Role"),
        ("rolebinding", "reader", "RoleBinding"),
        ("serviceaccount", "robot", "ServiceAccount"),
        ("lease", "leader", "Lease"),
        ("endpoints", "web", "Endpoints"),
    ];
    for (res, name, kind) in kinds {
        matrix.push((vec!["-n", n, "get", res], shows(&["NAME"])));
        matrix.push((vec!["-n", n, "get", res, name], shows(&[])));
        matrix.push((
            vec!["-n", n, "get", res, name, "-o", "wide"],
            shows(&["NAME"]),
        ));
        matrix.push((
            vec!["-n", n, "get", res, name, "-o", "yaml"],
            shows(&[&format!("kind: {kind}")]),
        ));
        matrix.push((
            vec!["-n", n, "get", res, name, "-o", "json"],
            shows(&[&format!("\"kind\": \"{kind}\"")]),
        ));
        matrix.push((vec!["-n", n, "get", res, name, "-o", "name"], shows(&["/"])));
        matrix.push((
            vec!["-n", n, "get", res, name, "-o", "jsonpath={.metadata.name}"],
            shows(&[name]),
        ));
        matrix.push((
            vec![
                "-n",
                n,
                "get",
                res,
                name,
                "-o",
                "custom-columns=N:.metadata.name,NS:.metadata.namespace",
            ],
            shows(&["N", "NS", "shop"]),
        ));
    }
    // Row contents of the tables.
    matrix.extend([
        (vec!["-n", n, "get", "deploy", "web"], shows(&["2/2"])),
        (vec!["-n", n, "get", "sts", "db"], shows(&["2/2"])),
        (
            vec!["-n", n, "get", "ds", "agent"],
            shows(&["DESIRED", "NODE SELECTOR"]),
        ),
        (
            vec!["-n", n, "get", "job", "migrate"],
            shows(&["Complete", "1/1"]),
        ),
        (
            vec!["-n", n, "get", "cronjob", "nightly"],
            shows(&["0 2 * * *", "False"]),
        ),
        (
            vec!["-n", n, "get", "svc", "web"],
            shows(&["ClusterIP", "10.96.", "80/TCP"]),
        ),
        (
            vec!["-n", n, "get", "cm", "settings"],
            shows(&["DATA", "2"]),
        ),
        (
            vec!["-n", n, "get", "secret", "creds"],
            shows(&["Opaque", "1"]),
        ),
        (
            vec!["-n", n, "get", "pvc", "data"],
            shows(&["Bound", "pvc-", "1Gi", "RWO"]),
        ),
        (vec!["get", "pv"], shows(&["shop/data", "Delete", "Bound"])),
        (
            vec!["-n", n, "get", "hpa", "web"],
            shows(&["Deployment/web", "cpu: <unknown>/80%"]),
        ),
        (
            vec!["-n", n, "get", "pdb", "web"],
            shows(&["MIN AVAILABLE", "N/A"]),
        ),
        (
            vec!["-n", n, "get", "rolebinding", "reader", "-o", "wide"],
            shows(&["Role/reader", "shop/robot"]),
        ),
        (
            vec!["-n", n, "get", "lease", "leader"],
            shows(&["HOLDER", "me"]),
        ),
        (vec!["-n", n, "get", "ep", "web"], shows(&[":80"])),
        (
            vec!["-n", n, "get", "endpointslices"],
            shows(&["IPv4", "80"]),
        ),
        (
            vec!["-n", n, "get", "pods"],
            shows(&["Running", "Completed", "db-0", "db-1"]),
        ),
        (
            vec!["-n", n, "get", "pods", "-o", "wide"],
            shows(&["tidegate", "10.42."]),
        ),
        (
            vec!["-n", n, "get", "pods", "-l", "app=web", "-o", "name"],
            shows(&["pod/web-"]),
        ),
        (
            vec![
                "-n",
                n,
                "get",
                "pods",
                "--field-selector",
                "status.phase=Succeeded",
            ],
            shows(&["migrate-"]),
        ),
        (vec!["-n", n, "get", "rs"], shows(&["web-"])),
        (
            vec!["-n", n, "get", "controllerrevisions"],
            shows(&["statefulset.apps/db", "daemonset.apps/agent"]),
        ),
        (
            vec!["-n", n, "get", "all"],
            shows(&[
                "deployment.apps/web",
                "service/web",
                "statefulset.apps/db",
                "cronjob.batch/nightly",
            ]),
        ),
        (
            vec!["-n", n, "get", "events"],
            shows(&["ScalingReplicaSet", "SuccessfulCreate"]),
        ),
        (
            vec![
                "-n",
                n,
                "get",
                "events",
                "--field-selector",
                "reason=SuccessfulCreate",
            ],
            shows(&["Created pod"]),
        ),
        (vec!["-n", n, "events"], shows(&["ScalingReplicaSet"])),
        (
            vec!["get", "nodes"],
            shows(&["tidegate", "Ready", "control-plane"]),
        ),
        (
            vec!["get", "nodes", "-o", "wide"],
            shows(&["INTERNAL-IP", "10.0.0.2"]),
        ),
        (vec!["get", "ns"], shows(&["shop", "Active", "kube-system"])),
        (vec!["get", "priorityclass", "high"], shows(&["1000"])),
        (vec!["get", "sa", "-n", n], shows(&["default", "robot"])),
        (
            vec![
                "get",
                "cm",
                "-n",
                n,
                "kube-root-ca.crt",
                "-o",
                "jsonpath={.data.ca\\.crt}",
            ],
            shows(&["BEGIN CERTIFICATE"]),
        ),
        (vec!["get", "deploy", "-A"], shows(&["NAMESPACE", "shop"])),
        (
            vec![
                "get",
                "pods",
                "-A",
                "--sort-by=.metadata.name",
                "-o",
                "name",
            ],
            shows(&["pod/db-0"]),
        ),
        (
            vec!["-n", n, "get", "cm", "-l", "tier=web", "-o", "name"],
            shows(&["configmap/settings"]),
        ),
        (
            vec![
                "-n",
                n,
                "get",
                "deploy",
                "web",
                "-o",
                "go-template={{.spec.replicas}}",
            ],
            shows(&["2"]),
        ),
        (
            vec!["-n", n, "get", "deploy", "web", "--show-labels"],
            shows(&["app=web"]),
        ),
        (
            vec!["-n", n, "get", "deploy", "web", "-o", "yaml"],
            shows(&[
                "progressDeadlineSeconds: 600",
                "revisionHistoryLimit: 10",
                "deployment.kubernetes.io/revision",
            ]),
        ),
        (
            vec!["api-resources"],
            shows(&["deployments", "apps/v1", "horizontalpodautoscalers"]),
        ),
        (
            vec!["api-resources", "--namespaced=false", "-o", "name"],
            shows(&["nodes", "namespaces"]),
        ),
        (
            vec!["api-versions"],
            shows(&["apps/v1", "batch/v1", "autoscaling/v2"]),
        ),
        (vec!["version", "-o", "json"], shows(&["v1.35.0"])),
        (vec!["cluster-info"], shows(&["Kubernetes control plane"])),
    ]);
    // describe
    for (res, name, want) in [
        (
            "deployment",
            "web",
            &["Replicas:", "RollingUpdateStrategy:", "NewReplicaSet:"][..],
        ),
        ("statefulset", "db", &["Replicas:", "Pods Status:"][..]),
        (
            "daemonset",
            "agent",
            &["Desired Number of Nodes Scheduled:"][..],
        ),
        ("job", "migrate", &["Completions:", "Pods Statuses:"][..]),
        ("cronjob", "nightly", &["Schedule:", "0 2 * * *"][..]),
        ("service", "web", &["Endpoints:", "TargetPort:"][..]),
        ("configmap", "settings", &["color", "blue"][..]),
        ("secret", "creds", &["password:", "6 bytes"][..]),
        ("pvc", "data", &["Status:", "Bound"][..]),
        ("hpa", "web", &["Reference:", "Deployment/web"][..]),
        ("pdb", "web", &["Min available:"][..]),
        ("networkpolicy", "deny", &["PodSelector:"][..]),
        ("role", "reader", &["PolicyRule:", "pods"][..]),
        ("rolebinding", "reader", &["Role:", "ServiceAccount"][..]),
        ("serviceaccount", "robot", &["Name:", "robot"][..]),
    ] {
        matrix.push((vec!["-n", n, "describe", res, name], shows(want)));
    }
    matrix.extend([
        (
            vec!["describe", "node", "tidegate"],
            shows(&["Ready", "Capacity:"]),
        ),
        (
            vec!["describe", "ns", "shop"],
            shows(&["Status:", "Active"]),
        ),
        (
            vec!["-n", n, "describe", "pod", "db-0"],
            shows(&["Node:", "tidegate", "Containers:"]),
        ),
        // explain
        (
            vec!["explain", "deployment.spec.replicas"],
            shows(&["FIELD: replicas <integer>"]),
        ),
        (vec!["explain", "pods.spec.containers"], shows(&["image"])),
        (
            vec!["explain", "cronjob.spec", "--recursive"],
            shows(&["schedule"]),
        ),
        (
            vec!["explain", "svc", "--output=plaintext-openapiv2"],
            shows(&["KIND:     Service"]),
        ),
        // rollouts
        (
            vec!["-n", n, "rollout", "history", "deploy/web"],
            shows(&["REVISION", "1"]),
        ),
        (
            vec!["-n", n, "rollout", "history", "sts/db"],
            shows(&["REVISION", "1"]),
        ),
        (
            vec!["-n", n, "rollout", "history", "ds/agent"],
            shows(&["REVISION", "1"]),
        ),
        (
            vec!["-n", n, "set", "image", "deploy/web", "web=nginx:1.28"],
            shows(&["image updated"]),
        ),
        (
            vec!["-n", n, "rollout", "status", "deploy/web", "--timeout=30s"],
            shows(&["successfully rolled out"]),
        ),
        (
            vec!["-n", n, "rollout", "history", "deploy/web", "--revision=2"],
            shows(&["nginx:1.28"]),
        ),
        (
            vec!["-n", n, "rollout", "undo", "deploy/web"],
            shows(&["rolled back"]),
        ),
        (
            vec!["-n", n, "rollout", "status", "deploy/web", "--timeout=30s"],
            shows(&["successfully rolled out"]),
        ),
        (
            vec!["-n", n, "rollout", "restart", "deploy/web"],
            shows(&["restarted"]),
        ),
        (
            vec!["-n", n, "rollout", "restart", "sts/db"],
            shows(&["restarted"]),
        ),
        (
            vec!["-n", n, "rollout", "status", "sts/db", "--timeout=30s"],
            shows(&["roll out complete"]),
        ),
        (
            vec!["-n", n, "rollout", "restart", "ds/agent"],
            shows(&["restarted"]),
        ),
        (
            vec!["-n", n, "rollout", "status", "ds/agent", "--timeout=30s"],
            shows(&["successfully rolled out"]),
        ),
        (
            vec!["-n", n, "rollout", "pause", "deploy/web"],
            shows(&["paused"]),
        ),
        (
            vec!["-n", n, "rollout", "resume", "deploy/web"],
            shows(&["resumed"]),
        ),
        (
            vec!["-n", n, "scale", "deploy/web", "--replicas=3"],
            shows(&["scaled"]),
        ),
        (
            vec![
                "-n",
                n,
                "wait",
                "--for=jsonpath={.status.readyReplicas}=3",
                "deploy/web",
                "--timeout=30s",
            ],
            shows(&["condition met"]),
        ),
        (
            vec!["-n", n, "scale", "sts/db", "--replicas=1"],
            shows(&["scaled"]),
        ),
        (
            vec!["-n", n, "autoscale", "sts/db", "--max=3"],
            shows(&["autoscaled"]),
        ),
        // identity and tokens
        (vec!["-n", n, "create", "token", "robot"], shows(&["eyJ"])),
        (
            vec!["auth", "can-i", "create", "deployments", "-n", n],
            shows(&["yes"]),
        ),
        (vec!["auth", "can-i", "--list", "-n", n], shows(&["*.*"])),
        (vec!["auth", "whoami"], shows(&["admin"])),
        // logs
        (
            vec!["-n", n, "logs", "db-0"],
            shows(&["container db started"]),
        ),
        (
            vec!["-n", n, "logs", "job/migrate"],
            shows(&["container migrate started"]),
        ),
        (
            vec!["-n", n, "logs", "db-0", "--timestamps"],
            shows(&["Z container db started"]),
        ),
        (
            vec!["-n", n, "logs", "db-0", "-c", "nope"],
            fails("container nope is not valid for pod db-0"),
        ),
        // creating things
        (
            vec![
                "-n",
                n,
                "expose",
                "deploy/web",
                "--name=web2",
                "--port=8080",
                "--target-port=80",
            ],
            shows(&["service/web2 exposed"]),
        ),
        (
            vec![
                "-n",
                n,
                "get",
                "svc",
                "web2",
                "-o",
                "jsonpath={.spec.ports[0].targetPort}",
            ],
            shows(&["80"]),
        ),
        (
            vec![
                "-n",
                n,
                "create",
                "ingress",
                "shop",
                "--rule=shop.example.com/*=web:80,tls=shop-tls",
            ],
            shows(&["created"]),
        ),
        (
            vec!["-n", n, "get", "ingress", "shop"],
            shows(&["shop.example.com", "80, 443"]),
        ),
        (
            vec![
                "-n",
                n,
                "create",
                "configmap",
                "extra",
                "--from-literal=a=1",
            ],
            shows(&["configmap/extra created"]),
        ),
        (
            vec![
                "-n",
                n,
                "create",
                "secret",
                "generic",
                "extra",
                "--from-literal=k=v",
            ],
            shows(&["secret/extra created"]),
        ),
        (
            vec![
                "-n",
                n,
                "create",
                "secret",
                "docker-registry",
                "reg",
                "--docker-server=r.io",
                "--docker-username=u",
                "--docker-password=p",
            ],
            shows(&["secret/reg created"]),
        ),
        (
            vec!["-n", n, "create", "job", "once", "--image=busybox"],
            shows(&["job.batch/once created"]),
        ),
        (
            vec![
                "-n",
                n,
                "create",
                "job",
                "from-cron",
                "--from=cronjob/nightly",
            ],
            shows(&["job.batch/from-cron created"]),
        ),
        (
            vec!["-n", n, "create", "quota", "q", "--hard=pods=10"],
            shows(&["resourcequota/q created"]),
        ),
        (
            vec![
                "-n",
                n,
                "create",
                "poddisruptionbudget",
                "p2",
                "--selector=app=db",
                "--max-unavailable=1",
            ],
            shows(&["created"]),
        ),
        (
            vec![
                "create",
                "clusterrole",
                "viewer",
                "--verb=get",
                "--resource=pods",
            ],
            shows(&["clusterrole.rbac.authorization.k8s.io/viewer created"]),
        ),
        (
            vec![
                "create",
                "clusterrolebinding",
                "viewer",
                "--clusterrole=viewer",
                "--user=bob",
            ],
            shows(&["created"]),
        ),
        (
            vec!["get", "clusterrolebinding", "viewer", "-o", "wide"],
            shows(&["ClusterRole/viewer", "bob"]),
        ),
        (
            vec!["-n", n, "run", "one", "--image=busybox", "--restart=Never"],
            shows(&["pod/one created"]),
        ),
        (
            vec![
                "-n",
                n,
                "run",
                "bad",
                "--image=busybox",
                "--restart=Sometimes",
            ],
            fails("invalid restart policy"),
        ),
        // labels, annotations, patches, edits
        (
            vec!["-n", n, "label", "cm", "settings", "env=prod"],
            shows(&["labeled"]),
        ),
        (
            vec!["-n", n, "label", "cm", "settings", "env-"],
            shows(&["unlabeled"]),
        ),
        (
            vec!["-n", n, "annotate", "cm", "settings", "note=hi"],
            shows(&["annotated"]),
        ),
        (
            vec![
                "-n",
                n,
                "patch",
                "cm",
                "settings",
                "-p",
                r#"{"data":{"size":"small"}}"#,
            ],
            shows(&["patched"]),
        ),
        (
            vec![
                "-n",
                n,
                "patch",
                "deploy",
                "web",
                "--type=json",
                "-p",
                r#"[{"op":"replace","path":"/spec/replicas","value":2}]"#,
            ],
            shows(&["patched"]),
        ),
        (
            vec!["-n", n, "set", "env", "deploy/web", "MODE=prod"],
            shows(&["env updated"]),
        ),
        (
            vec![
                "-n",
                n,
                "set",
                "resources",
                "deploy/web",
                "--limits=cpu=200m",
            ],
            shows(&["resource requirements updated"]),
        ),
        (
            vec![
                "-n",
                n,
                "get",
                "cm",
                "settings",
                "-o",
                "jsonpath={.data.size}",
            ],
            shows(&["small"]),
        ),
        (vec!["-n", n, "diff", "-f", "-"], shows(&[])),
        // errors users meet
        (
            vec!["-n", n, "get", "deploy", "missing"],
            fails("deployments.apps \"missing\" not found"),
        ),
        (
            vec!["get", "widgets"],
            fails("the server doesn't have a resource type \"widgets\""),
        ),
        (
            vec!["-n", n, "create", "configmap", "settings"],
            fails("already exists"),
        ),
        (
            vec!["-n", n, "scale", "deploy/web", "--replicas=-1"],
            fails(""),
        ),
        (
            vec!["-n", "nowhere", "create", "configmap", "x"],
            fails("namespaces \"nowhere\" not found"),
        ),
        // deletes
        (
            vec!["-n", n, "delete", "cm", "extra"],
            shows(&["configmap \"extra\" deleted"]),
        ),
        (
            vec!["-n", n, "delete", "secret", "extra", "reg"],
            shows(&["secret \"extra\" deleted", "secret \"reg\" deleted"]),
        ),
        (
            vec!["-n", n, "delete", "job", "once", "--cascade=foreground"],
            shows(&["deleted"]),
        ),
        (
            vec![
                "-n",
                n,
                "delete",
                "pod",
                "one",
                "--grace-period=0",
                "--force",
            ],
            shows(&["deleted"]),
        ),
        (
            vec!["-n", n, "delete", "svc", "web2", "--wait"],
            shows(&["deleted"]),
        ),
        (
            vec!["-n", n, "delete", "cm", "-l", "tier=web"],
            shows(&["configmap \"settings\" deleted"]),
        ),
        (
            vec!["-n", n, "delete", "deploy", "web", "--dry-run=server"],
            shows(&["deleted (server dry run)"]),
        ),
        (
            vec!["-n", n, "get", "deploy", "web", "-o", "name"],
            shows(&["deployment.apps/web"]),
        ),
        (
            vec!["-n", n, "delete", "deploy", "web"],
            shows(&["deployment.apps \"web\" deleted"]),
        ),
        (
            vec![
                "-n",
                n,
                "wait",
                "--for=delete",
                "pod",
                "-l",
                "app=web",
                "--timeout=30s",
            ],
            shows(&[]),
        ),
        (
            vec!["-n", n, "get", "rs", "-l", "app=web", "-o", "name"],
            shows(&[]),
        ),
        (
            vec!["delete", "clusterrolebinding,clusterrole", "viewer"],
            shows(&["deleted"]),
        ),
        (
            vec!["delete", "ns", "shop", "--wait"],
            shows(&["namespace \"shop\" deleted"]),
        ),
        (
            vec!["get", "ns", "shop"],
            fails("namespaces \"shop\" not found"),
        ),
    ]);
    assert!(matrix.len() >= 150, "{} commands", matrix.len());
    let mut failures = Vec::new();
    for (args, want) in &matrix {
        let out = if args.contains(&"diff") {
            t.kubectl_stdin(args, Some("apiVersion: v1\nkind: ConfigMap\nmetadata: {name: settings, namespace: shop, labels: {tier: web}}\ndata: {color: blue, size: small}\n"))
        } else {
            t.kubectl(args)
        };
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        let ok = match want {
            // `kubectl diff` exits 1 when it found differences, 0 when none.
            Want::Shows(_) if args.contains(&"diff") => {
                out.status.code() == Some(1) || out.status.success()
            }
            Want::Shows(texts) => {
                out.status.success() && texts.iter().all(|x| stdout.contains(x.as_str()))
            }
            Want::Fails(text) => !out.status.success() && stderr.contains(text.as_str()),
        };
        if !ok {
            failures.push(format!(
                "kubectl {}\n  stdout: {}\n  stderr: {}",
                args.join(" "),
                stdout.trim(),
                stderr.trim()
            ));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} commands differ:\n{}",
        failures.len(),
        matrix.len(),
        failures.join("\n")
    );
}
