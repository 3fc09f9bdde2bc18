//! Real kubectl against the embedded server: server-side apply, client-side apply, edit, patch,
//! scale and diff.

mod common;

use serde_json::Value;

fn deployment(replicas: Option<u32>, extra_label: Option<&str>, image: &str) -> String {
    let replicas = replicas
        .map(|r| format!("  replicas: {r}\n"))
        .unwrap_or_default();
    let extra = extra_label
        .map(|l| format!("    {l}\n"))
        .unwrap_or_default();
    format!(
        r#"apiVersion: apps/v1
kind: Deployment
metadata:
  name: web
  namespace: ssa
  labels:
    app: web
{extra}spec:
{replicas}  selector:
    matchLabels: {{app: web}}
  template:
    metadata:
      labels: {{app: web}}
    spec:
      containers:
      - name: web
        image: {image}
        ports:
        - containerPort: 80
"#
    )
}

/// `kubectl -n ssa patch deployment web` with extra arguments.
fn patch_web(t: &common::TestServer, extra: &[&str]) -> String {
    let mut args = vec!["-n", "ssa", "patch", "deployment", "web"];
    args.extend_from_slice(extra);
    t.ok(&args)
}

fn get_json(t: &common::TestServer, args: &[&str]) -> Value {
    let mut full = vec!["get"];
    full.extend_from_slice(args);
    full.extend_from_slice(&["-o", "json", "--show-managed-fields"]);
    serde_json::from_str(&t.ok(&full)).expect("kubectl printed JSON")
}

fn managers(obj: &Value) -> Vec<(String, String)> {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .map(|m| {
            (
                m["manager"].as_str().unwrap_or("").to_string(),
                m["operation"].as_str().unwrap_or("").to_string(),
            )
        })
        .collect()
}

fn fields_of<'a>(obj: &'a Value, manager: &str) -> &'a Value {
    obj.pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .and_then(|l| l.iter().find(|m| m["manager"] == manager))
        .map(|m| &m["fieldsV1"])
        .unwrap_or(&Value::Null)
}

#[tokio::test(flavor = "multi_thread")]
async fn server_side_apply_ownership_and_conflicts() {
    let t = common::start().await;
    t.ok(&["create", "ns", "ssa"]);
    let out = t.ok_stdin(
        &["apply", "--server-side", "--field-manager=mgr-a", "-f", "-"],
        &deployment(Some(2), Some("team: a"), "nginx:1.25"),
    );
    assert_eq!(out.trim(), "deployment.apps/web serverside-applied");
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert_eq!(managers(&obj), vec![("mgr-a".into(), "Apply".into())]);
    let fa = fields_of(&obj, "mgr-a");
    assert_eq!(
        fa.pointer("/f:spec/f:replicas"),
        Some(&serde_json::json!({}))
    );
    assert!(
        fa.pointer("/f:spec/f:template/f:spec/f:containers/k:{\"name\":\"web\"}/f:ports/k:{\"containerPort\":80,\"protocol\":\"TCP\"}")
            .is_some()
            || fa
                .pointer("/f:spec/f:template/f:spec/f:containers/k:{\"name\":\"web\"}/f:ports/k:{\"containerPort\":80}")
                .is_some(),
        "container port owned: {fa}"
    );
    assert_eq!(
        fa.pointer("/f:metadata/f:labels"),
        Some(&serde_json::json!({"f:app": {}, "f:team": {}}))
    );

    // Manager B applies a different replica count: conflict, as Kubernetes words it.
    let b_patch = "apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: web\n  namespace: ssa\nspec:\n  replicas: 5\n";
    let err = t.fails_stdin(
        &["apply", "--server-side", "--field-manager=mgr-b", "-f", "-"],
        b_patch,
    );
    assert!(
        err.contains("Apply failed with 1 conflict: conflict with \"mgr-a\": .spec.replicas"),
        "{err}"
    );
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert_eq!(obj.pointer("/spec/replicas"), Some(&serde_json::json!(2)));

    // --force-conflicts moves ownership of .spec.replicas to B.
    t.ok_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=mgr-b",
            "--force-conflicts",
            "-f",
            "-",
        ],
        b_patch,
    );
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert_eq!(obj.pointer("/spec/replicas"), Some(&serde_json::json!(5)));
    assert!(
        fields_of(&obj, "mgr-a")
            .pointer("/f:spec/f:replicas")
            .is_none()
    );
    assert_eq!(
        fields_of(&obj, "mgr-b"),
        &serde_json::json!({"f:spec": {"f:replicas": {}}})
    );

    // A re-applies without replicas: the value stays (B owns it). A drops the label only it
    // owned: the label is gone.
    t.ok_stdin(
        &["apply", "--server-side", "--field-manager=mgr-a", "-f", "-"],
        &deployment(None, None, "nginx:1.25"),
    );
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert_eq!(obj.pointer("/spec/replicas"), Some(&serde_json::json!(5)));
    assert_eq!(
        obj.pointer("/metadata/labels"),
        Some(&serde_json::json!({"app": "web"}))
    );

    // An Update manager (kubectl patch) then owns replicas; A's apply conflicts "using apps/v1".
    patch_web(
        &t,
        &[
            "--type=merge",
            "--field-manager=mgr-c",
            "-p",
            r#"{"spec":{"replicas":7}}"#,
        ],
    );
    let err = t.fails_stdin(
        &["apply", "--server-side", "--field-manager=mgr-a", "-f", "-"],
        &deployment(Some(2), None, "nginx:1.25"),
    );
    assert!(
        err.contains(
            "Apply failed with 1 conflict: conflict with \"mgr-c\" using apps/v1: .spec.replicas"
        ),
        "{err}"
    );
    let yaml = t.ok(&[
        "-n",
        "ssa",
        "get",
        "deployment",
        "web",
        "-o",
        "yaml",
        "--show-managed-fields",
    ]);
    for want in [
        "manager: mgr-a",
        "operation: Apply",
        "manager: mgr-c",
        "operation: Update",
        "fieldsType: FieldsV1",
        "f:replicas: {}",
    ] {
        assert!(yaml.contains(want), "{want} missing in:\n{yaml}");
    }
    // Without --show-managed-fields kubectl hides them, as on a real cluster.
    let plain = t.ok(&["-n", "ssa", "get", "deployment", "web", "-o", "yaml"]);
    assert!(!plain.contains("managedFields"), "{plain}");

    // Server-side dry-run changes nothing.
    let rv =
        get_json(&t, &["-n", "ssa", "deployment", "web"])["metadata"]["resourceVersion"].clone();
    t.ok_stdin(
        &[
            "apply",
            "--server-side",
            "--field-manager=mgr-a",
            "--force-conflicts",
            "--dry-run=server",
            "-f",
            "-",
        ],
        &deployment(Some(9), None, "nginx:1.26"),
    );
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert_eq!(obj["metadata"]["resourceVersion"], rv);
    assert_eq!(obj.pointer("/spec/replicas"), Some(&serde_json::json!(7)));
}

#[tokio::test(flavor = "multi_thread")]
async fn client_side_apply_edit_patch_scale_diff() {
    let t = common::start().await;
    t.ok(&["create", "ns", "ssa"]);
    // Client-side apply: create, change, remove a field.
    let out = t.ok_stdin(
        &["apply", "-f", "-"],
        &deployment(Some(2), Some("team: a"), "nginx:1.25"),
    );
    assert_eq!(out.trim(), "deployment.apps/web created");
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert!(
        obj.pointer("/metadata/annotations/kubectl.kubernetes.io~1last-applied-configuration")
            .is_some()
    );
    assert_eq!(
        managers(&obj),
        vec![("kubectl-client-side-apply".into(), "Update".into())]
    );
    let out = t.ok_stdin(
        &["apply", "-f", "-"],
        &deployment(Some(3), None, "nginx:1.26"),
    );
    assert_eq!(out.trim(), "deployment.apps/web configured");
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert_eq!(obj.pointer("/spec/replicas"), Some(&serde_json::json!(3)));
    assert_eq!(
        obj.pointer("/metadata/labels"),
        Some(&serde_json::json!({"app": "web"}))
    );
    assert_eq!(
        obj.pointer("/spec/template/spec/containers/0/image"),
        Some(&serde_json::json!("nginx:1.26"))
    );
    let out = t.ok_stdin(
        &["apply", "-f", "-"],
        &deployment(Some(3), None, "nginx:1.26"),
    );
    assert_eq!(out.trim(), "deployment.apps/web unchanged");

    // kubectl diff: no difference exits 0, a difference exits 1 and shows it.
    let same = t.kubectl_stdin(
        &["diff", "-f", "-"],
        Some(&deployment(Some(3), None, "nginx:1.26")),
    );
    assert_eq!(same.status.code(), Some(0), "{same:?}");
    let changed = t.kubectl_stdin(
        &["diff", "-f", "-"],
        Some(&deployment(Some(4), None, "nginx:1.26")),
    );
    assert_eq!(changed.status.code(), Some(1), "{changed:?}");
    let text = String::from_utf8_lossy(&changed.stdout);
    assert!(
        text.contains("-  replicas: 3") && text.contains("+  replicas: 4"),
        "{text}"
    );
    let ss = t.kubectl_stdin(
        &["diff", "--server-side", "--force-conflicts", "-f", "-"],
        Some(&deployment(Some(6), None, "nginx:1.26")),
    );
    assert_eq!(ss.status.code(), Some(1), "{ss:?}");
    let text = String::from_utf8_lossy(&ss.stdout);
    assert!(text.contains("+  replicas: 6"), "{text}");
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert_eq!(obj.pointer("/spec/replicas"), Some(&serde_json::json!(3)));

    // kubectl patch: strategic (merge by container name), merge and JSON patch.
    patch_web(
        &t,
        &[
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","image":"busybox"}]}}}}"#,
        ],
    );
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    let names: Vec<&str> = obj
        .pointer("/spec/template/spec/containers")
        .and_then(Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(|c| c["name"].as_str())
        .collect();
    // Kubernetes puts items added by a strategic merge patch without `$setElementOrder` before
    // the server's items (apimachinery's normalizeElementOrder).
    assert_eq!(names, vec!["sidecar", "web"]);
    patch_web(
        &t,
        &[
            "-p",
            r#"{"spec":{"template":{"spec":{"containers":[{"name":"sidecar","$patch":"delete"}]}}}}"#,
        ],
    );
    patch_web(
        &t,
        &[
            "--type=json",
            "-p",
            r#"[{"op":"add","path":"/spec/minReadySeconds","value":4}]"#,
        ],
    );
    patch_web(
        &t,
        &[
            "--type=merge",
            "-p",
            r#"{"metadata":{"annotations":{"note":"x"}}}"#,
        ],
    );
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert_eq!(
        obj.pointer("/spec/template/spec/containers")
            .and_then(Value::as_array)
            .map(Vec::len),
        Some(1)
    );
    assert_eq!(
        obj.pointer("/spec/minReadySeconds"),
        Some(&serde_json::json!(4))
    );
    assert_eq!(
        obj.pointer("/metadata/annotations/note"),
        Some(&serde_json::json!("x"))
    );
    assert!(managers(&obj).contains(&("kubectl-patch".into(), "Update".into())));

    // kubectl scale goes through the scale subresource and is recorded as such.
    assert_eq!(
        t.ok(&["-n", "ssa", "scale", "deployment", "web", "--replicas=5"])
            .trim(),
        "deployment.apps/web scaled"
    );
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert_eq!(obj.pointer("/spec/replicas"), Some(&serde_json::json!(5)));
    let scale = obj
        .pointer("/metadata/managedFields")
        .and_then(Value::as_array)
        .and_then(|l| l.iter().find(|m| m["subresource"] == "scale"))
        .expect("a manager for the scale subresource");
    assert_eq!(scale["manager"], "kubectl");
    assert_eq!(
        scale["fieldsV1"],
        serde_json::json!({"f:spec": {"f:replicas": {}}})
    );

    // kubectl edit through an editor script.
    let dir = tempfile::tempdir().expect("tempdir");
    let editor = dir.path().join("editor.sh");
    std::fs::write(
        &editor,
        "#!/bin/sh\nsed -i 's/image: nginx:1.26/image: nginx:1.27/' \"$1\"\n",
    )
    .expect("write editor");
    let mut perms = std::fs::metadata(&editor).expect("meta").permissions();
    std::os::unix::fs::PermissionsExt::set_mode(&mut perms, 0o755);
    std::fs::set_permissions(&editor, perms).expect("chmod");
    let out = t.ok_env(
        &["-n", "ssa", "edit", "deployment", "web"],
        &[("EDITOR", editor.to_str().expect("utf-8 path"))],
    );
    assert_eq!(out.trim(), "deployment.apps/web edited");
    let obj = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert_eq!(
        obj.pointer("/spec/template/spec/containers/0/image"),
        Some(&serde_json::json!("nginx:1.27"))
    );
    assert!(managers(&obj).contains(&("kubectl-edit".into(), "Update".into())));
}

#[tokio::test(flavor = "multi_thread")]
async fn apply_bad_input() {
    let t = common::start().await;
    t.ok(&["create", "ns", "ssa"]);
    t.ok_stdin(
        &["apply", "--server-side", "--field-manager=a", "-f", "-"],
        &deployment(Some(1), None, "nginx"),
    );
    let before = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    // Duplicate container names (a list-map key) in an apply.
    let dup = deployment(Some(1), None, "nginx").replace(
        "        ports:\n        - containerPort: 80\n",
        "      - name: web\n        image: other\n",
    );
    let err = t.fails_stdin(
        &["apply", "--server-side", "--field-manager=a", "-f", "-"],
        &dup,
    );
    assert!(
        err.contains("duplicate entries for key [name=\"web\"]"),
        "{err}"
    );
    // A value of the wrong type cannot become a typed patch object (a map in a ConfigMap's
    // data): refused, nothing stored.
    let err = t.fails_stdin(
        &["apply", "--server-side", "--field-manager=a", "-f", "-"],
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: typed\n  namespace: ssa\ndata:\n  a: {not: a string}\n",
    );
    assert!(
        err.contains("failed to create typed patch object (/v1, Kind=ConfigMap)")
            && err.contains("ConfigMap.data of type string"),
        "{err}"
    );
    t.fails(&["-n", "ssa", "get", "configmap", "typed"]);
    // A strategic merge patch of a missing object.
    let err = t.fails(&[
        "-n",
        "ssa",
        "patch",
        "deployment",
        "missing",
        "-p",
        r#"{"spec":{"replicas":1}}"#,
    ]);
    assert!(
        err.contains("deployments.apps \"missing\" not found"),
        "{err}"
    );
    // A malformed JSON patch.
    let err = t.fails(&[
        "-n",
        "ssa",
        "patch",
        "deployment",
        "web",
        "--type=json",
        "-p",
        r#"[{"op":"bogus"}]"#,
    ]);
    assert!(!err.is_empty());
    let after = get_json(&t, &["-n", "ssa", "deployment", "web"]);
    assert_eq!(
        before["metadata"]["resourceVersion"],
        after["metadata"]["resourceVersion"]
    );
}

/// Service and container ports without `protocol`: the key field defaults to TCP, so every
/// applier addresses the same list entry (no duplicate port, no spurious conflict).
#[tokio::test(flavor = "multi_thread")]
async fn list_keys_default_their_protocol() {
    let t = common::start().await;
    t.ok(&["create", "ns", "ports"]);
    let service = |target: u32| {
        format!(
            "apiVersion: v1\nkind: Service\nmetadata:\n  name: web\n  namespace: ports\nspec:\n  selector: {{app: web}}\n  ports:\n  - port: 80\n    targetPort: {target}\n"
        )
    };
    t.ok_stdin(
        &["apply", "--server-side", "--field-manager=mgr-a", "-f", "-"],
        &service(8080),
    );
    t.ok_stdin(
        &["apply", "--server-side", "--field-manager=mgr-a", "-f", "-"],
        &service(8080),
    );
    t.ok_stdin(
        &[
            "apply",
            "--server-side",
            "--force-conflicts",
            "--field-manager=mgr-b",
            "-f",
            "-",
        ],
        &service(9090),
    );
    let svc = get_json(&t, &["-n", "ports", "service", "web"]);
    let ports = svc["spec"]["ports"].as_array().unwrap();
    assert_eq!(ports.len(), 1, "{ports:?}");
    assert_eq!(ports[0]["targetPort"], 9090);
    assert_eq!(ports[0]["protocol"], "TCP");
    // mgr-b owns the entry keyed with the defaulted protocol.
    let b = fields_of(&svc, "mgr-b").to_string();
    assert!(b.contains(r#"k:{\"port\":80,\"protocol\":\"TCP\"}"#), "{b}");
}
