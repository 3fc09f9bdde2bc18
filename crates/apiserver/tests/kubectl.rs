//! Real kubectl against the embedded server: the everyday commands a user types.

mod common;

use std::io::Read;
use std::process::Stdio;

const CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: widgets, singular: widget, kind: Widget, shortNames: [wd]}
  versions:
  - name: v1
    served: true
    storage: true
    subresources: {status: {}}
    additionalPrinterColumns:
    - {name: Size, type: integer, jsonPath: .spec.size}
    - {name: Color, type: string, jsonPath: .spec.color}
    schema:
      openAPIV3Schema:
        type: object
        properties:
          spec:
            type: object
            required: [size]
            properties:
              size: {type: integer, minimum: 1}
              color: {type: string, enum: [red, blue]}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn everyday_commands() {
    let t = common::start().await;
    let ns = t.ok(&["get", "ns"]);
    for want in ["default", "kube-system", "kube-public", "kube-node-lease"] {
        assert!(ns.contains(want), "{ns}");
    }
    assert!(ns.starts_with("NAME"), "table header: {ns}");
    assert_eq!(
        t.ok(&["create", "ns", "demo"]).trim(),
        "namespace/demo created"
    );
    assert_eq!(
        t.ok(&[
            "-n",
            "demo",
            "create",
            "configmap",
            "app",
            "--from-literal=greeting=hello"
        ])
        .trim(),
        "configmap/app created"
    );
    let yaml = t.ok(&["-n", "demo", "get", "configmap", "app", "-o", "yaml"]);
    assert!(yaml.contains("greeting: hello"), "{yaml}");
    assert!(yaml.contains("resourceVersion:"), "{yaml}");
    assert!(yaml.contains("uid:"), "{yaml}");
    assert_eq!(
        t.ok(&["-n", "demo", "label", "cm", "app", "tier=web"])
            .trim(),
        "configmap/app labeled"
    );
    assert_eq!(
        t.ok(&["-n", "demo", "annotate", "cm", "app", "note=hi"])
            .trim(),
        "configmap/app annotated"
    );
    let labels = t.ok(&[
        "-n",
        "demo",
        "get",
        "cm",
        "-l",
        "tier=web",
        "-o",
        "jsonpath={.items[*].metadata.name}",
    ]);
    assert_eq!(labels.trim(), "app");
    let ann = t.ok(&[
        "-n",
        "demo",
        "get",
        "cm",
        "app",
        "-o",
        "jsonpath={.metadata.annotations.note}",
    ]);
    assert_eq!(ann.trim(), "hi");
    let wide = t.ok(&["-n", "demo", "get", "cm", "app", "--show-labels"]);
    assert!(wide.contains("tier=web"), "{wide}");
    // Typed generators send protobuf.
    t.ok(&[
        "-n",
        "demo",
        "create",
        "deployment",
        "web",
        "--image=nginx",
        "--replicas=2",
    ]);
    let replicas = t.ok(&[
        "-n",
        "demo",
        "get",
        "deploy",
        "web",
        "-o",
        "jsonpath={.spec.replicas} {.spec.template.spec.containers[0].image}",
    ]);
    assert_eq!(replicas.trim(), "2 nginx");
    t.ok(&[
        "-n",
        "demo",
        "create",
        "secret",
        "generic",
        "creds",
        "--from-literal=password=s3cret",
    ]);
    let data = t.ok(&[
        "-n",
        "demo",
        "get",
        "secret",
        "creds",
        "-o",
        "jsonpath={.data.password} {.type}",
    ]);
    assert_eq!(data.trim(), "czNjcmV0 Opaque");
    assert_eq!(
        t.ok(&["-n", "demo", "delete", "cm", "app"]).trim(),
        "configmap \"app\" deleted"
    );
    let err = t.fails(&["-n", "demo", "get", "cm", "app"]);
    assert!(
        err.contains("Error from server (NotFound): configmaps \"app\" not found"),
        "{err}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn watch_shows_later_changes() {
    let t = common::start().await;
    let mut child = std::process::Command::new(common::kubectl_bin())
        .arg("--kubeconfig")
        .arg(&t.kubeconfig)
        .args(["get", "configmaps", "--watch", "--request-timeout=20s"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("kubectl --watch");
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    t.ok(&["create", "configmap", "first", "--from-literal=a=1"]);
    t.ok(&["create", "configmap", "second", "--from-literal=a=1"]);
    tokio::time::sleep(std::time::Duration::from_millis(800)).await;
    let _ = child.kill();
    let _ = child.wait();
    let mut out = String::new();
    child
        .stdout
        .take()
        .expect("stdout")
        .read_to_string(&mut out)
        .expect("read");
    assert!(
        out.contains("first") && out.contains("second"),
        "watch output: {out}"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn discovery_and_explain() {
    let t = common::start().await;
    let res = t.ok(&["api-resources"]);
    let line = res
        .lines()
        .find(|l| l.starts_with("deployments "))
        .expect("deployments listed");
    assert!(
        line.contains("deploy") && line.contains("apps/v1") && line.contains("Deployment"),
        "{line}"
    );
    assert!(
        res.lines()
            .any(|l| l.starts_with("configmaps ") && l.contains(" cm ")),
        "{res}"
    );
    let explain = t.ok(&["explain", "deployment.spec"]);
    assert!(explain.contains("KIND:       Deployment"), "{explain}");
    assert!(explain.contains("replicas"), "{explain}");
    assert!(explain.contains("template"), "{explain}");
    let version = t.ok(&["version", "-o", "json"]);
    assert!(version.contains("\"gitVersion\": \"v1.35.0\""), "{version}");
}

#[tokio::test(flavor = "multi_thread")]
async fn custom_resources() {
    let t = common::start().await;
    let out = t.ok_stdin(&["apply", "-f", "-"], CRD);
    assert_eq!(
        out.trim(),
        "customresourcedefinition.apiextensions.k8s.io/widgets.example.com created"
    );
    let waited = t.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/widgets.example.com",
        "--timeout=20s",
    ]);
    assert!(waited.contains("condition met"), "{waited}");
    let res = t.ok(&["api-resources", "--api-group=example.com"]);
    assert!(res.contains("widgets") && res.contains("wd"), "{res}");
    let w = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: small}\nspec: {size: 3, color: red, bogus: 1}\n";
    // kubectl validates strictly by default: the server rejects the unknown field...
    let err = t.kubectl_stdin(&["create", "-f", "-"], Some(w));
    assert!(!err.status.success());
    let stderr = String::from_utf8_lossy(&err.stderr);
    assert!(
        stderr.contains(
            "Widget in version \"v1\" cannot be handled as a Widget: strict decoding error: unknown field \"spec.bogus\""
        ),
        "{stderr}"
    );
    // ...warns with --validate=warn, and prunes it silently with --validate=false.
    let warned = t.kubectl_stdin(
        &["create", "--validate=warn", "--dry-run=server", "-f", "-"],
        Some(w),
    );
    assert!(warned.status.success());
    let stderr = String::from_utf8_lossy(&warned.stderr);
    assert!(
        stderr.contains("Warning: unknown field \"spec.bogus\""),
        "{stderr}"
    );
    t.ok_stdin(&["create", "--validate=false", "-f", "-"], w);
    let table = t.ok(&["get", "widgets"]);
    let mut lines = table.lines();
    let header: Vec<&str> = lines.next().expect("header").split_whitespace().collect();
    assert_eq!(header, vec!["NAME", "SIZE", "COLOR", "AGE"]);
    let row: Vec<&str> = lines.next().expect("row").split_whitespace().collect();
    assert_eq!(&row[..3], &["small", "3", "red"]);
    let spec = t.ok(&["get", "wd", "small", "-o", "jsonpath={.spec}"]);
    assert!(!spec.contains("bogus"), "unknown fields are pruned: {spec}");
    let bad = "apiVersion: example.com/v1\nkind: Widget\nmetadata: {name: bad}\nspec: {size: 0, color: pink}\n";
    let out = t.kubectl_stdin(&["create", "-f", "-"], Some(bad));
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("The Widget \"bad\" is invalid"), "{err}");
    assert!(
        err.contains(
            "spec.size: Invalid value: 0: spec.size in body should be greater than or equal to 1"
        ),
        "{err}"
    );
    assert!(
        err.contains("spec.color: Unsupported value: \"pink\""),
        "{err}"
    );
    // Deleting the CRD removes its objects and the resource.
    t.ok(&["delete", "crd", "widgets.example.com", "--timeout=20s"]);
    let err = t.fails(&["get", "widgets"]);
    // kubectl's discovery cache may still name the resource; the server then answers 404.
    assert!(
        err.contains("doesn't have a resource type \"widgets\"")
            || err.contains("the server could not find the requested resource"),
        "{err}"
    );
    let crds = t.ok(&["get", "crds", "-o", "name"]);
    assert!(crds.trim().is_empty(), "{crds}");
}

/// A CRD with CEL validation rules: a rule on `spec`, a transition rule (`oldSelf`) making a
/// field immutable, a rule on the root that reads metadata, and a `messageExpression`.
const CEL_CRD: &str = r#"
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: gadgets.example.com
spec:
  group: example.com
  scope: Namespaced
  names: {plural: gadgets, singular: gadget, kind: Gadget}
  versions:
  - name: v1
    served: true
    storage: true
    schema:
      openAPIV3Schema:
        type: object
        x-kubernetes-validations:
        - rule: "self.metadata.name.startsWith('g-')"
          message: "name must start with g-"
        properties:
          spec:
            type: object
            x-kubernetes-validations:
            - rule: "!has(self.max) || self.min <= self.max"
              messageExpression: "'min ' + string(self.min) + ' exceeds max ' + string(self.max)"
            properties:
              min: {type: integer, default: 0}
              max: {type: integer}
              class:
                type: string
                x-kubernetes-validations:
                - {rule: "self == oldSelf", message: "class is immutable"}
"#;

#[tokio::test(flavor = "multi_thread")]
async fn crd_cel_validation_rules_are_enforced() {
    let t = common::start().await;
    t.ok_stdin(&["apply", "-f", "-"], CEL_CRD);
    t.ok(&[
        "wait",
        "--for=condition=Established",
        "crd/gadgets.example.com",
    ]);
    let gadget = |name: &str, spec: &str| {
        format!(
            "apiVersion: example.com/v1\nkind: Gadget\nmetadata: {{name: {name}}}\nspec: {spec}\n"
        )
    };
    t.ok_stdin(
        &["apply", "-f", "-"],
        &gadget("g-one", "{min: 1, max: 3, class: a}"),
    );
    let err = t.fails_stdin(&["apply", "-f", "-"], &gadget("g-two", "{min: 5, max: 3}"));
    assert!(
        err.contains(
            "The Gadget \"g-two\" is invalid: spec: Invalid value: \"object\": min 5 exceeds max 3"
        ),
        "{err}"
    );
    let err = t.fails_stdin(&["apply", "-f", "-"], &gadget("two", "{min: 1}"));
    assert!(
        err.contains("<nil>: Invalid value: \"object\": name must start with g-"),
        "{err}"
    );
    // The transition rule: the class may be set on create, never changed after.
    let err = t.fails_stdin(
        &["apply", "-f", "-"],
        &gadget("g-one", "{min: 1, max: 3, class: b}"),
    );
    assert!(
        err.contains("spec.class: Invalid value: \"string\": class is immutable"),
        "{err}"
    );
    t.ok_stdin(
        &["apply", "-f", "-"],
        &gadget("g-one", "{min: 2, max: 3, class: a}"),
    );
    let min = t.ok(&["get", "gadget", "g-one", "-o", "jsonpath={.spec.min}"]);
    assert_eq!(min, "2");
}

#[tokio::test(flavor = "multi_thread")]
async fn bad_input_is_refused_with_kube_messages() {
    let t = common::start().await;
    let before = t.server.state().store.revision();
    let err = t.fails(&["create", "ns", "Bad_Name"]);
    assert!(err.contains("The Namespace \"Bad_Name\" is invalid: metadata.name: Invalid value: \"Bad_Name\": a lowercase RFC 1123 label"), "{err}");
    let err = t.fails(&[
        "-n",
        "missing",
        "create",
        "configmap",
        "x",
        "--from-literal=a=b",
    ]);
    assert!(err.contains("namespaces \"missing\" not found"), "{err}");
    let err = t.fails(&["get", "frobnicators"]);
    assert!(
        err.contains("the server doesn't have a resource type \"frobnicators\""),
        "{err}"
    );
    let broken = "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: x\n";
    let out = t.kubectl_stdin(&["create", "-f", "-"], Some(broken));
    assert!(!out.status.success());
    assert_eq!(
        t.server.state().store.revision(),
        before,
        "nothing was stored"
    );
}

/// kubectl's typed `create` commands send protobuf; each object must arrive whole.
#[tokio::test(flavor = "multi_thread")]
async fn typed_creates_arrive_whole() {
    let t = common::start().await;
    let json = |args: &[&str]| -> serde_json::Value {
        let out = t.ok(args);
        serde_json::from_str(&out).unwrap_or_else(|e| panic!("{args:?}: {e}: {out}"))
    };
    t.ok(&[
        "create",
        "ingress",
        "web",
        "--class=nginx",
        "--rule=foo.com/bar=svc1:8080",
        "--rule=bar.com/*=svc2:http,tls=my-cert",
    ]);
    let ing = json(&["get", "ingress", "web", "-o", "json"]);
    assert_eq!(ing["spec"]["ingressClassName"], "nginx");
    let rules = &ing["spec"]["rules"];
    assert_eq!(rules[0]["host"], "foo.com");
    assert_eq!(rules[0]["http"]["paths"][0]["path"], "/bar");
    assert_eq!(rules[0]["http"]["paths"][0]["pathType"], "Exact");
    assert_eq!(
        rules[0]["http"]["paths"][0]["backend"]["service"],
        serde_json::json!({"name": "svc1", "port": {"number": 8080}})
    );
    assert_eq!(rules[1]["http"]["paths"][0]["pathType"], "Prefix");
    assert_eq!(
        rules[1]["http"]["paths"][0]["backend"]["service"]["port"],
        serde_json::json!({"name": "http"})
    );
    assert_eq!(ing["spec"]["tls"][0]["secretName"], "my-cert");

    t.ok(&[
        "create",
        "role",
        "reader",
        "--verb=get,list",
        "--resource=pods,configmaps",
    ]);
    let role = json(&["get", "role", "reader", "-o", "json"]);
    assert_eq!(
        role["rules"][0]["verbs"],
        serde_json::json!(["get", "list"])
    );
    t.ok(&[
        "create",
        "rolebinding",
        "reader",
        "--role=reader",
        "--user=alice",
        "--serviceaccount=default:robot",
    ]);
    let rb = json(&["get", "rolebinding", "reader", "-o", "json"]);
    assert_eq!(
        rb["roleRef"],
        serde_json::json!({"apiGroup": "rbac.authorization.k8s.io", "kind": "Role", "name": "reader"})
    );
    assert_eq!(rb["subjects"].as_array().map(Vec::len), Some(2), "{rb}");

    t.ok(&[
        "create",
        "pdb",
        "web",
        "--selector=app=web",
        "--min-available=0",
    ]);
    let pdb = json(&["get", "pdb", "web", "-o", "json"]);
    assert_eq!(
        pdb["spec"]["minAvailable"], 0,
        "an explicit zero on a pointer field is kept: {pdb}"
    );
    t.ok(&[
        "create",
        "cronjob",
        "tick",
        "--image=busybox",
        "--schedule=*/5 * * * *",
        "--",
        "date",
    ]);
    let cj = json(&["get", "cronjob", "tick", "-o", "json"]);
    assert_eq!(cj["spec"]["schedule"], "*/5 * * * *");
    assert_eq!(
        cj["spec"]["jobTemplate"]["spec"]["template"]["spec"]["containers"][0]["command"],
        serde_json::json!(["date"])
    );
}

/// Lists and gets are written from the stored encodings when the object is shown as stored;
/// another version of the same resource still shows its own apiVersion.
#[tokio::test(flavor = "multi_thread")]
async fn lists_show_the_version_asked_for() {
    let t = common::start().await;
    t.ok_stdin(
        &["apply", "-f", "-"],
        r#"{"kind": "HorizontalPodAutoscaler", "apiVersion": "autoscaling/v2",
            "metadata": {"name": "web"},
            "spec": {"scaleTargetRef": {"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"},
                     "minReplicas": 1, "maxReplicas": 3}}"#,
    );
    let raw = |path: &str| -> serde_json::Value {
        serde_json::from_str(&t.ok(&["get", "--raw", path])).expect("json")
    };
    let base = "namespaces/default/horizontalpodautoscalers";
    let v2 = raw(&format!("/apis/autoscaling/v2/{base}"));
    assert_eq!(v2["apiVersion"], "autoscaling/v2", "{v2}");
    assert_eq!(v2["items"][0]["apiVersion"], "autoscaling/v2", "{v2}");
    let v1 = raw(&format!("/apis/autoscaling/v1/{base}"));
    assert_eq!(v1["kind"], "HorizontalPodAutoscalerList", "{v1}");
    assert_eq!(v1["apiVersion"], "autoscaling/v1", "{v1}");
    assert_eq!(v1["items"][0]["apiVersion"], "autoscaling/v1", "{v1}");
    let one = raw(&format!("/apis/autoscaling/v1/{base}/web"));
    assert_eq!(one["apiVersion"], "autoscaling/v1");
    assert_eq!(one["kind"], "HorizontalPodAutoscaler");
}

/// `/openapi/v2` as protobuf: kubectl's OpenAPI v2 paths (explain's plaintext-openapiv2, and
/// validation of kinds without a PATCH operation) read it.
#[tokio::test(flavor = "multi_thread")]
async fn openapi_v2_protobuf() {
    let t = common::start().await;
    let out = t.ok(&[
        "explain",
        "deployment.spec.strategy",
        "--output=plaintext-openapiv2",
    ]);
    assert!(out.contains("KIND:     Deployment"), "{out}");
    assert!(out.contains("rollingUpdate\t<Object>"), "{out}");
    let out = t.ok(&[
        "explain",
        "pods.spec.containers.ports",
        "--output=plaintext-openapiv2",
    ]);
    assert!(out.contains("containerPort\t<integer>"), "{out}");
    // A create-only kind validates against it (kubectl looks for its PATCH operation).
    let review = t.ok_stdin(
        &["create", "-f", "-", "-o", "jsonpath={.status.allowed}"],
        r#"{"apiVersion": "authorization.k8s.io/v1", "kind": "SelfSubjectAccessReview",
            "spec": {"resourceAttributes": {"verb": "get", "resource": "pods"}}}"#,
    );
    assert_eq!(review, "true");
}

/// Core and events.k8s.io Events are one store seen through both.
#[tokio::test(flavor = "multi_thread")]
async fn both_event_apis_share_one_store() {
    let t = common::start().await;
    let v1_event = r#"{"apiVersion": "events.k8s.io/v1", "kind": "Event", "metadata": {"name": "ev1"},
        "eventTime": "2026-01-02T03:04:05.000000Z", "reportingController": "me",
        "reportingInstance": "me-1", "action": "Test", "reason": "Tested",
        "regarding": {"kind": "Pod", "name": "p", "namespace": "default"}, "note": "hello",
        "type": "Normal"}"#;
    t.ok_stdin(&["apply", "--server-side", "-f", "-"], v1_event);
    let core = t.ok(&["get", "--raw", "/api/v1/namespaces/default/events/ev1"]);
    let core: serde_json::Value = serde_json::from_str(&core).expect("json");
    assert_eq!(core["apiVersion"], "v1");
    assert_eq!(core["message"], "hello");
    assert_eq!(core["involvedObject"]["name"], "p");
    assert_eq!(core["reportingComponent"], "me");
    t.ok(&[
        "patch",
        "event",
        "ev1",
        "--type=merge",
        "-p",
        r#"{"message":"changed"}"#,
    ]);
    let v1: serde_json::Value = serde_json::from_str(&t.ok(&[
        "get",
        "--raw",
        "/apis/events.k8s.io/v1/namespaces/default/events/ev1",
    ]))
    .expect("json");
    assert_eq!(v1["note"], "changed", "{v1}");
    assert_eq!(v1["regarding"]["name"], "p");
    assert!(v1.get("message").is_none(), "{v1}");
    let list: serde_json::Value = serde_json::from_str(&t.ok(&[
        "get",
        "--raw",
        "/apis/events.k8s.io/v1/namespaces/default/events",
    ]))
    .expect("json");
    assert_eq!(list["items"][0]["apiVersion"], "events.k8s.io/v1");
    assert_eq!(list["items"][0]["note"], "changed");
    // A change through events.k8s.io shows in the core view.
    t.ok_stdin(
        &["apply", "--server-side", "-f", "-"],
        &v1_event.replace("\"hello\"", "\"again\""),
    );
    let row = t.ok(&["get", "events"]);
    assert!(row.contains("Tested") && row.contains("again"), "{row}");
    t.ok(&["delete", "events.v1.events.k8s.io", "ev1"]);
    let gone = t.fails(&["get", "event", "ev1"]);
    assert!(gone.contains("not found"), "{gone}");
}

/// Secret `data` is `[]byte` in kube: Go's decoder skips line breaks in base64 (kustomize wraps
/// generated values at 70 columns), the stored value is canonical, and invalid base64 is a 400.
#[tokio::test(flavor = "multi_thread")]
async fn byte_fields_are_decoded_as_go_decodes_them() {
    let t = common::start().await;
    let wrapped = "apiVersion: v1\nkind: Secret\nmetadata: {name: wrapped}\ndata:\n  k: \"aGVsbG8g\\nd29ybGQ=\"\n";
    t.ok_stdin(&["apply", "--server-side", "-f", "-"], wrapped);
    let got = t.ok(&["get", "secret", "wrapped", "-o", "jsonpath={.data.k}"]);
    assert_eq!(got, "aGVsbG8gd29ybGQ=");
    let bad = "apiVersion: v1\nkind: Secret\nmetadata: {name: bad}\ndata:\n  k: \"a!b=\"\n";
    let out = t.kubectl_stdin(&["create", "-f", "-"], Some(bad));
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(
            "Secret in version \"v1\" cannot be handled as a Secret: illegal base64 data at input byte 1"
        ),
        "{stderr}"
    );
}

/// The RFC 7386 merge patch turning `from` into `to` (controller-runtime's `client.MergeFrom`):
/// every field of `from` missing in `to` becomes `null`.
fn merge_from(from: &serde_json::Value, to: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match (from, to) {
        (Value::Object(f), Value::Object(t)) => {
            let mut out = serde_json::Map::new();
            for (k, tv) in t {
                match f.get(k) {
                    Some(fv) if fv == tv => {}
                    Some(fv) => {
                        out.insert(k.clone(), merge_from(fv, tv));
                    }
                    None => {
                        out.insert(k.clone(), tv.clone());
                    }
                }
            }
            for k in f.keys() {
                if !t.contains_key(k) {
                    out.insert(k.clone(), Value::Null);
                }
            }
            Value::Object(out)
        }
        (_, t) => t.clone(),
    }
}

/// Cluster API's `Reconcile` strategy patches a live object with a merge patch from the live
/// object to the bare manifest, so the patch sets `metadata.uid`, `creationTimestamp`,
/// `managedFields`, `status` and every defaulted field to `null`. kube-apiserver keeps the
/// system fields, ignores `status` on the main resource and defaults again; so must we.
#[tokio::test(flavor = "multi_thread")]
async fn a_merge_patch_from_the_live_object_keeps_what_the_server_owns() {
    let server = common::start_simulated(50);
    let server = server.await;
    let manifest = serde_json::json!({
        "apiVersion": "apps/v1", "kind": "Deployment",
        "metadata": {"name": "web", "namespace": "default"},
        "spec": {"replicas": 1, "selector": {"matchLabels": {"app": "web"}},
            "template": {"metadata": {"labels": {"app": "web"}},
                "spec": {"containers": [{"name": "web", "image": "nginx:1"}]}}}});
    server.ok_stdin(&["create", "-f", "-"], &manifest.to_string());
    let mut live = serde_json::Value::Null;
    for _ in 0..100 {
        live =
            serde_json::from_str(&server.ok(&["get", "deployment", "web", "-o", "json"])).unwrap();
        if live["status"]["readyReplicas"] == 1 {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    assert_eq!(live["status"]["readyReplicas"], 1, "{live}");
    server.ok(&["label", "deployment", "web", "by=hand"]);
    let live: serde_json::Value = serde_json::from_str(&server.ok(&[
        "get",
        "deployment",
        "web",
        "-o",
        "json",
        "--show-managed-fields",
    ]))
    .unwrap();
    let mut desired = manifest.clone();
    desired["spec"]["replicas"] = serde_json::json!(2);
    desired["metadata"]["resourceVersion"] = live["metadata"]["resourceVersion"].clone();
    let patch = merge_from(&live, &desired);
    for null in [
        "/metadata/uid",
        "/metadata/creationTimestamp",
        "/metadata/managedFields",
        "/metadata/labels",
        "/status",
        "/spec/strategy",
    ] {
        assert!(
            patch.pointer(null).is_some_and(|v| v.is_null()),
            "{null}: {patch}"
        );
    }
    server.ok(&[
        "patch",
        "deployment",
        "web",
        "--type=merge",
        "-p",
        &patch.to_string(),
    ]);
    let after: serde_json::Value = serde_json::from_str(&server.ok(&[
        "get",
        "deployment",
        "web",
        "-o",
        "json",
        "--show-managed-fields",
    ]))
    .unwrap();
    assert_eq!(after["metadata"]["uid"], live["metadata"]["uid"]);
    assert_eq!(
        after["metadata"]["creationTimestamp"],
        live["metadata"]["creationTimestamp"]
    );
    assert!(
        after["metadata"]["managedFields"]
            .as_array()
            .is_some_and(|m| !m.is_empty()),
        "{after}"
    );
    assert!(after["metadata"].get("labels").is_none(), "{after}");
    assert_eq!(after["spec"]["replicas"], 2);
    assert_eq!(
        after["spec"]["strategy"]["type"], "RollingUpdate",
        "defaulted again"
    );
    assert!(
        after["status"]["observedGeneration"].is_number(),
        "status kept: {after}"
    );
    assert_eq!(
        after["metadata"]["generation"].as_i64(),
        live["metadata"]["generation"].as_i64().map(|g| g + 1)
    );
}
