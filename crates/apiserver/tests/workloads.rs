//! Built-in kinds as a real cluster stores them (defaults, allocation) and workloads that
//! behave as their controllers would, driven by real kubectl.

mod common;

use serde_json::{Value, json};
use std::time::Duration;

async fn start() -> common::TestServer {
    common::start_simulated(100).await
}

fn get_json(t: &common::TestServer, args: &[&str]) -> Value {
    let mut full = args.to_vec();
    full.extend(["-o", "json"]);
    let out = t.ok(&full);
    serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
}

/// Polls `check` for up to 20 s.
fn eventually(what: &str, mut check: impl FnMut() -> bool) {
    for _ in 0..200 {
        if check() {
            return;
        }
        std::thread::sleep(Duration::from_millis(100));
    }
    panic!("timed out waiting for {what}");
}

const OBJECTS: &str = r#"
apiVersion: apps/v1
kind: Deployment
metadata: {name: web}
spec:
  selector: {matchLabels: {app: web}}
  template:
    metadata: {labels: {app: web}}
    spec:
      containers:
      - name: web
        image: nginx:1.27
        ports: [{containerPort: 80}]
        readinessProbe: {httpGet: {port: 80}}
        resources: {limits: {cpu: 100m}}
      volumes:
      - name: cfg
        configMap: {name: web}
      - name: scratch
---
apiVersion: v1
kind: Service
metadata: {name: web}
spec:
  selector: {app: web}
  ports: [{port: 80}]
---
apiVersion: v1
kind: Service
metadata: {name: edge}
spec:
  type: NodePort
  selector: {app: web}
  ports: [{port: 443, targetPort: https}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: once}
spec:
  template:
    spec:
      restartPolicy: Never
      containers: [{name: run, image: busybox, command: ["true"]}]
---
apiVersion: networking.k8s.io/v1
kind: NetworkPolicy
metadata: {name: np}
spec:
  podSelector: {}
  egress: [{ports: [{port: 53}]}]
---
apiVersion: rbac.authorization.k8s.io/v1
kind: RoleBinding
metadata: {name: rb}
roleRef: {kind: ClusterRole, name: view}
subjects: [{kind: User, name: alice}, {kind: ServiceAccount, name: robot, namespace: default}]
"#;

#[tokio::test(flavor = "multi_thread")]
async fn built_in_kinds_are_defaulted_as_kube_apiserver_does() {
    let t = start().await;
    t.ok_stdin(&["apply", "-f", "-"], OBJECTS);

    let d = get_json(&t, &["get", "deploy", "web"]);
    let spec = &d["spec"];
    assert_eq!(spec["replicas"], 1);
    assert_eq!(spec["revisionHistoryLimit"], 10);
    assert_eq!(spec["progressDeadlineSeconds"], 600);
    assert_eq!(
        spec["strategy"],
        json!({"type": "RollingUpdate", "rollingUpdate": {"maxSurge": "25%", "maxUnavailable": "25%"}})
    );
    let pod = &spec["template"]["spec"];
    assert_eq!(pod["dnsPolicy"], "ClusterFirst");
    assert_eq!(pod["restartPolicy"], "Always");
    assert_eq!(pod["schedulerName"], "default-scheduler");
    assert_eq!(pod["securityContext"], json!({}));
    assert_eq!(pod["terminationGracePeriodSeconds"], 30);
    assert!(pod.get("enableServiceLinks").is_none(), "Pods only: {pod}");
    let c = &pod["containers"][0];
    assert_eq!(c["imagePullPolicy"], "IfNotPresent");
    assert_eq!(c["terminationMessagePath"], "/dev/termination-log");
    assert_eq!(c["terminationMessagePolicy"], "File");
    assert_eq!(c["ports"][0]["protocol"], "TCP");
    assert_eq!(
        c["readinessProbe"],
        json!({"httpGet": {"port": 80, "path": "/", "scheme": "HTTP"}, "timeoutSeconds": 1,
            "periodSeconds": 10, "successThreshold": 1, "failureThreshold": 3})
    );
    assert!(
        c["resources"].get("requests").is_none(),
        "templates keep limits alone"
    );
    assert_eq!(pod["volumes"][0]["configMap"]["defaultMode"], 420);
    assert_eq!(pod["volumes"][1]["emptyDir"], json!({}));

    let svc = get_json(&t, &["get", "svc", "web"]);
    assert_eq!(svc["spec"]["type"], "ClusterIP");
    assert_eq!(svc["spec"]["sessionAffinity"], "None");
    assert_eq!(svc["spec"]["internalTrafficPolicy"], "Cluster");
    assert_eq!(
        svc["spec"]["ports"][0],
        json!({"port": 80, "protocol": "TCP", "targetPort": 80})
    );
    let ip = svc["spec"]["clusterIP"].as_str().unwrap_or_default();
    assert!(ip.starts_with("10.96.") && ip != "10.96.0.1", "{ip}");
    assert_eq!(svc["spec"]["clusterIPs"], json!([ip]));
    let edge = get_json(&t, &["get", "svc", "edge"]);
    assert_eq!(edge["spec"]["externalTrafficPolicy"], "Cluster");
    let node_port = edge["spec"]["ports"][0]["nodePort"].as_u64().unwrap_or(0);
    assert!((30000..=32767).contains(&node_port), "{edge}");
    assert_ne!(edge["spec"]["clusterIP"], svc["spec"]["clusterIP"]);
    // The address survives an apply that does not mention it, and is released on delete.
    t.ok_stdin(&["apply", "-f", "-"], OBJECTS);
    let again = get_json(&t, &["get", "svc", "web"]);
    assert_eq!(again["spec"]["clusterIP"], svc["spec"]["clusterIP"]);

    let job = get_json(&t, &["get", "job", "once"]);
    let uid = job["metadata"]["uid"].as_str().unwrap_or_default();
    assert_eq!(
        job["spec"]["selector"],
        json!({"matchLabels": {"batch.kubernetes.io/controller-uid": uid}})
    );
    assert_eq!(
        job["spec"]["template"]["metadata"]["labels"]["job-name"],
        "once"
    );
    assert_eq!(job["spec"]["backoffLimit"], 6);
    assert_eq!(job["spec"]["completions"], 1);
    assert_eq!(job["spec"]["parallelism"], 1);
    assert_eq!(job["spec"]["completionMode"], "NonIndexed");

    let np = get_json(&t, &["get", "networkpolicy", "np"]);
    assert_eq!(np["spec"]["policyTypes"], json!(["Ingress", "Egress"]));
    assert_eq!(np["spec"]["egress"][0]["ports"][0]["protocol"], "TCP");
    let rb = get_json(&t, &["get", "rolebinding", "rb"]);
    assert_eq!(rb["roleRef"]["apiGroup"], "rbac.authorization.k8s.io");
    assert_eq!(rb["subjects"][0]["apiGroup"], "rbac.authorization.k8s.io");
    assert!(rb["subjects"][1].get("apiGroup").is_none(), "{rb}");

    let ns = get_json(&t, &["get", "ns", "default"]);
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "default"
    );
    t.ok(&["create", "ns", "team-a"]);
    let ns = get_json(&t, &["get", "ns", "team-a"]);
    assert_eq!(
        ns["metadata"]["labels"]["kubernetes.io/metadata.name"],
        "team-a"
    );
    let kubernetes = get_json(&t, &["get", "svc", "kubernetes"]);
    assert_eq!(kubernetes["spec"]["clusterIP"], "10.96.0.1");

    // A dry run shows the defaulted object too.
    let dry = t.ok(&[
        "create",
        "deployment",
        "dry",
        "--image=nginx",
        "--dry-run=server",
        "-o",
        "jsonpath={.spec.template.spec.containers[0].imagePullPolicy}",
    ]);
    assert_eq!(dry, "Always", "the latest tag pulls always");
}

#[tokio::test(flavor = "multi_thread")]
async fn deployments_own_replica_sets_and_pods_with_history() {
    let t = start().await;
    t.ok(&[
        "create",
        "deployment",
        "web",
        "--image=nginx:1.26",
        "--replicas=2",
    ]);
    t.ok(&["rollout", "status", "deploy/web", "--timeout=20s"]);
    let pods = || {
        get_json(&t, &["get", "pods", "-l", "app=web"])["items"]
            .as_array()
            .cloned()
            .unwrap_or_default()
    };
    eventually("two running pods", || {
        let p = pods();
        p.len() == 2 && p.iter().all(|p| p["status"]["phase"] == "Running")
    });
    let pod = &pods()[0];
    assert_eq!(pod["spec"]["nodeName"], "tidegate");
    assert_eq!(pod["spec"]["serviceAccountName"], "default");
    assert_eq!(pod["spec"]["enableServiceLinks"], true);
    assert!(
        pod["status"]["podIP"]
            .as_str()
            .is_some_and(|ip| ip.starts_with("10.42."))
    );
    let rs = get_json(&t, &["get", "rs", "-l", "app=web"]);
    let first = &rs["items"][0];
    let hash = first["metadata"]["labels"]["pod-template-hash"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert_eq!(first["metadata"]["name"], format!("web-{hash}"));
    assert_eq!(
        first["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "1"
    );
    assert_eq!(
        first["spec"]["selector"]["matchLabels"]["pod-template-hash"],
        hash
    );
    assert_eq!(
        pod["metadata"]["ownerReferences"][0]["name"],
        format!("web-{hash}")
    );

    t.ok(&["set", "image", "deploy/web", "nginx=nginx:1.27"]);
    t.ok(&["rollout", "status", "deploy/web", "--timeout=20s"]);
    eventually("pods of the new revision", || {
        let p = pods();
        p.len() == 2
            && p.iter()
                .all(|p| p["spec"]["containers"][0]["image"] == "nginx:1.27")
    });
    let history = t.ok(&["rollout", "history", "deploy/web"]);
    assert!(
        history.contains("\n1 ") && history.contains("\n2 "),
        "{history}"
    );
    t.ok(&["rollout", "undo", "deploy/web"]);
    eventually("the first ReplicaSet back as revision 3", || {
        let rs = get_json(&t, &["get", "rs", &format!("web-{hash}")]);
        rs["metadata"]["annotations"]["deployment.kubernetes.io/revision"] == "3"
            && rs["spec"]["replicas"] == 2
    });
    let history = t.ok(&["rollout", "history", "deploy/web"]);
    assert!(
        history.contains("\n2 ") && history.contains("\n3 ") && !history.contains("\n1 "),
        "{history}"
    );
    let d = get_json(&t, &["get", "deploy", "web"]);
    assert_eq!(
        d["metadata"]["annotations"]["deployment.kubernetes.io/revision"],
        "3"
    );
    let events = get_json(
        &t,
        &[
            "get",
            "events",
            "--field-selector",
            "reason=ScalingReplicaSet",
        ],
    );
    let first_scale = format!("Scaled up replica set web-{hash} from 0 to 2");
    assert!(
        events["items"]
            .as_array()
            .is_some_and(|e| e.iter().any(|e| {
                e["message"] == first_scale.as_str()
                    && e["involvedObject"]["name"] == "web"
                    && e["source"]["component"] == "deployment-controller"
            })),
        "{events}"
    );

    // A deleted pod is replaced; scaling down removes pods.
    let name = pods()[0]["metadata"]["name"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    t.ok(&["delete", "pod", &name]);
    eventually("a replacement pod", || {
        let p = pods();
        p.len() == 2 && p.iter().all(|p| p["metadata"]["name"] != name.as_str())
    });
    t.ok(&["scale", "deploy/web", "--replicas=1"]);
    eventually("one pod", || pods().len() == 1);
    t.ok(&["rollout", "restart", "deploy/web"]);
    t.ok(&["rollout", "status", "deploy/web", "--timeout=20s"]);
    // Deleting the Deployment removes its ReplicaSets and Pods.
    t.ok(&["delete", "deploy", "web"]);
    eventually("nothing left", || {
        get_json(&t, &["get", "rs,pods", "-l", "app=web"])["items"]
            .as_array()
            .is_some_and(Vec::is_empty)
    });
}

const STATEFUL: &str = r#"
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
      containers: [{name: db, image: postgres:16}]
---
apiVersion: apps/v1
kind: DaemonSet
metadata: {name: agent}
spec:
  selector: {matchLabels: {app: agent}}
  template:
    metadata: {labels: {app: agent}}
    spec:
      containers: [{name: agent, image: busybox:1.36}]
---
apiVersion: batch/v1
kind: Job
metadata: {name: migrate}
spec:
  template:
    spec:
      restartPolicy: OnFailure
      containers: [{name: run, image: busybox:1.36}]
---
apiVersion: batch/v1
kind: Job
metadata:
  name: broken
spec:
  backoffLimit: 0
  template:
    metadata:
      annotations: {tidegate.dev/simulate: fail}
    spec:
      restartPolicy: Never
      containers: [{name: run, image: busybox:1.36}]
"#;

#[tokio::test(flavor = "multi_thread")]
async fn stateful_sets_daemon_sets_and_jobs() {
    let t = start().await;
    t.ok_stdin(&["apply", "-f", "-"], STATEFUL);
    let out = t.ok(&["rollout", "status", "sts/db", "--timeout=20s"]);
    assert!(out.contains("roll out complete"), "{out}");
    let out = t.ok(&["rollout", "status", "ds/agent", "--timeout=20s"]);
    assert!(out.contains("successfully rolled out"), "{out}");
    eventually("db-0 and db-1", || {
        let p = get_json(&t, &["get", "pods", "-l", "app=db"]);
        let names: Vec<_> = p["items"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|p| p["metadata"]["name"].as_str())
            .collect();
        names == ["db-0", "db-1"]
    });
    let db0 = get_json(&t, &["get", "pod", "db-0"]);
    assert_eq!(
        db0["metadata"]["labels"]["statefulset.kubernetes.io/pod-name"],
        "db-0"
    );
    assert_eq!(
        db0["metadata"]["labels"]["apps.kubernetes.io/pod-index"],
        "0"
    );
    assert_eq!(db0["spec"]["hostname"], "db-0");
    assert_eq!(db0["spec"]["subdomain"], "db");
    let sts = get_json(&t, &["get", "sts", "db"]);
    assert_eq!(
        db0["metadata"]["labels"]["controller-revision-hash"],
        sts["status"]["updateRevision"]
    );
    t.ok(&["set", "image", "sts/db", "db=postgres:17"]);
    t.ok(&["rollout", "status", "sts/db", "--timeout=20s"]);
    eventually("two StatefulSet revisions", || {
        let h = t.ok(&["rollout", "history", "sts/db"]);
        h.contains("\n1 ") && h.contains("\n2 ")
    });
    eventually("pods of the new revision", || {
        get_json(&t, &["get", "pod", "db-0"])["spec"]["containers"][0]["image"] == "postgres:17"
    });
    let h = t.ok(&["rollout", "history", "ds/agent"]);
    assert!(h.contains("\n1 "), "{h}");
    t.ok(&[
        "wait",
        "--for=condition=complete",
        "job/migrate",
        "--timeout=20s",
    ]);
    eventually("the job's pod succeeded", || {
        let p = get_json(&t, &["get", "pods", "-l", "job-name=migrate"]);
        p["items"][0]["status"]["phase"] == "Succeeded"
            && p["items"][0]["status"]["containerStatuses"][0]["state"]["terminated"]["reason"]
                == "Completed"
    });
    t.ok(&[
        "wait",
        "--for=condition=failed",
        "job/broken",
        "--timeout=20s",
    ]);
    eventually("the failing job's pod failed", || {
        let p = get_json(&t, &["get", "pods", "-l", "job-name=broken"]);
        p["items"][0]["status"]["phase"] == "Failed"
    });
    let nodes = t.ok(&["get", "nodes", "-o", "name"]);
    assert_eq!(nodes.trim(), "node/tidegate");
}

/// `kubectl get` prints each kind with kube-apiserver's printer columns.
#[tokio::test(flavor = "multi_thread")]
async fn tables_print_as_a_cluster_does() {
    let t = start().await;
    t.ok_stdin(&["apply", "-f", "-"], OBJECTS);
    t.ok(&["rollout", "status", "deploy/web", "--timeout=20s"]);
    t.ok(&[
        "wait",
        "--for=condition=complete",
        "job/once",
        "--timeout=20s",
    ]);
    let header = |args: &[&str]| -> Vec<String> {
        let out = t.ok(args);
        out.lines()
            .next()
            .unwrap_or_default()
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let expect = [
        (vec!["get", "pods"], "NAME READY STATUS RESTARTS AGE"),
        (
            vec!["get", "pods", "-o", "wide"],
            "NAME READY STATUS RESTARTS AGE IP NODE NOMINATED NODE READINESS GATES",
        ),
        (vec!["get", "deploy"], "NAME READY UP-TO-DATE AVAILABLE AGE"),
        (
            vec!["get", "deploy", "-o", "wide"],
            "NAME READY UP-TO-DATE AVAILABLE AGE CONTAINERS IMAGES SELECTOR",
        ),
        (vec!["get", "rs"], "NAME DESIRED CURRENT READY AGE"),
        (
            vec!["get", "svc"],
            "NAME TYPE CLUSTER-IP EXTERNAL-IP PORT(S) AGE",
        ),
        (vec!["get", "jobs"], "NAME STATUS COMPLETIONS DURATION AGE"),
        (
            vec!["get", "events"],
            "LAST SEEN TYPE REASON OBJECT MESSAGE",
        ),
        (vec!["get", "nodes"], "NAME STATUS ROLES AGE VERSION"),
        (vec!["get", "netpol"], "NAME POD-SELECTOR AGE"),
        (
            vec!["get", "rolebinding", "-o", "wide"],
            "NAME ROLE AGE USERS GROUPS SERVICEACCOUNTS",
        ),
        (vec!["get", "ns"], "NAME STATUS AGE"),
    ];
    for (args, want) in expect {
        assert_eq!(header(&args).join(" "), want, "kubectl {args:?}");
    }
    let row = |args: &[&str], name: &str| -> Vec<String> {
        let out = t.ok(args);
        out.lines()
            .find(|l| l.split_whitespace().any(|c| c == name))
            .unwrap_or_else(|| panic!("{name} in {out}"))
            .split_whitespace()
            .map(str::to_string)
            .collect()
    };
    let svc = row(&["get", "svc", "edge"], "edge");
    assert_eq!(svc[1], "NodePort");
    assert!(
        svc[4].starts_with("443:3") && svc[4].ends_with("/TCP"),
        "{svc:?}"
    );
    let deploy = row(&["get", "deploy", "web", "-o", "wide"], "web");
    assert_eq!(&deploy[1..4], ["1/1", "1", "1"]);
    assert_eq!(&deploy[5..], ["web", "nginx:1.27", "app=web"]);
    let job = row(&["get", "job", "once"], "once");
    assert_eq!(&job[1..3], ["Complete", "1/1"]);
    let pod = row(&["get", "pods", "-l", "job-name=once"], "Completed");
    assert_eq!(&pod[1..4], ["0/1", "Completed", "0"]);
    let rb = row(&["get", "rolebinding", "rb", "-o", "wide"], "rb");
    assert_eq!(&rb[1..2], ["ClusterRole/view"]);
    assert_eq!(&rb[3..], ["alice", "default/robot"]);
    let node = row(&["get", "nodes"], "tidegate");
    assert_eq!(&node[1..3], ["Ready", "control-plane"]);
    let events = t.ok(&["get", "events"]);
    assert!(
        events.contains("ScalingReplicaSet") && events.contains("deployment/web"),
        "{events}"
    );
}
