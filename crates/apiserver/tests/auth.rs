//! Identity and the review APIs through real kubectl: `auth can-i`, `auth whoami`,
//! `create token` (a token the server accepts back), `TokenReview`, the issuer's discovery
//! documents; and the pod subresources kubectl uses (`logs`, eviction).

mod common;

use serde_json::{Value, json};
use std::time::Duration;

#[tokio::test(flavor = "multi_thread")]
async fn reviews_tokens_and_identity() {
    let t = common::start().await;
    assert_eq!(t.ok(&["auth", "can-i", "get", "pods"]).trim(), "yes");
    assert_eq!(
        t.ok(&["auth", "can-i", "delete", "nodes", "--all-namespaces"])
            .trim(),
        "yes"
    );
    let list = t.ok(&["auth", "can-i", "--list"]);
    assert!(list.lines().any(|l| l.starts_with("*.*")), "{list}");
    let whoami = t.ok(&["auth", "whoami", "-o", "json"]);
    let me: Value = serde_json::from_str(&whoami).expect("json");
    assert_eq!(me["status"]["userInfo"]["username"], "admin");
    assert_eq!(me["kind"], "SelfSubjectReview");

    // Every namespace has its default ServiceAccount and the CA bundle.
    t.ok(&["create", "namespace", "team"]);
    let mut ready = false;
    for _ in 0..100 {
        let out = t.ok(&["-n", "team", "get", "sa,cm", "-o", "name"]);
        if out.contains("serviceaccount/default") && out.contains("configmap/kube-root-ca.crt") {
            ready = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(ready, "namespace defaults");
    let ca = t.ok(&[
        "-n",
        "team",
        "get",
        "cm",
        "kube-root-ca.crt",
        "-o",
        "jsonpath={.data.ca\\.crt}",
    ]);
    assert!(ca.starts_with("-----BEGIN CERTIFICATE-----"), "{ca}");

    // A service account token is accepted back as a bearer token.
    t.ok(&["-n", "team", "create", "serviceaccount", "robot"]);
    let token = t.ok(&["-n", "team", "create", "token", "robot", "--duration=20m"]);
    let token = token.trim();
    assert_eq!(token.split('.').count(), 3, "a JWT: {token}");
    let as_robot = t.ok(&[
        "--token",
        token,
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.username}",
    ]);
    assert_eq!(as_robot, "system:serviceaccount:team:robot");
    let err = t.fails(&["-n", "team", "create", "token", "robot", "--duration=1m"]);
    assert!(
        err.contains("may not specify a duration less than 10 minutes"),
        "{err}"
    );
    let err = t.fails(&["-n", "team", "create", "token", "ghost"]);
    assert!(err.contains("serviceaccounts \"ghost\" not found"), "{err}");

    // TokenReview tells valid from invalid tokens.
    let review = |tok: &str| -> Value {
        let body = json!({"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview",
            "spec": {"token": tok}});
        let out = t.ok_stdin(&["create", "-f", "-", "-o", "json"], &body.to_string());
        serde_json::from_str(&out).expect("json")
    };
    let ok = review(token);
    assert_eq!(ok["status"]["authenticated"], true, "{ok}");
    assert_eq!(
        ok["status"]["user"]["username"],
        "system:serviceaccount:team:robot"
    );
    let bad = review("not-a-token");
    assert_eq!(bad["status"]["authenticated"], false, "{bad}");

    // Deleting the service account revokes its tokens.
    t.ok(&["-n", "team", "delete", "serviceaccount", "robot"]);
    let err = t.fails(&["--token", token, "get", "pods"]);
    assert!(err.contains("Unauthorized"), "{err}");
    assert_eq!(review(token)["status"]["authenticated"], false);

    // A token bound to a Secret ends with it, though its service account lives on.
    t.ok(&["-n", "team", "create", "serviceaccount", "bound"]);
    t.ok(&["-n", "team", "create", "secret", "generic", "holder"]);
    let bound = t.ok(&[
        "-n",
        "team",
        "create",
        "token",
        "bound",
        "--bound-object-kind=Secret",
        "--bound-object-name=holder",
    ]);
    let bound = bound.trim();
    let who = t.ok(&[
        "--token",
        bound,
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.username}",
    ]);
    assert_eq!(who, "system:serviceaccount:team:bound");
    let err = t.fails(&[
        "-n",
        "team",
        "create",
        "token",
        "bound",
        "--bound-object-kind=Secret",
        "--bound-object-name=nowhere",
    ]);
    assert!(err.contains("secrets \"nowhere\" not found"), "{err}");
    t.ok(&["-n", "team", "delete", "secret", "holder"]);
    let err = t.fails(&["--token", bound, "get", "pods"]);
    assert!(err.contains("Unauthorized"), "{err}");

    // The issuer's documents.
    let oidc: Value =
        serde_json::from_str(&t.ok(&["get", "--raw", "/.well-known/openid-configuration"]))
            .expect("json");
    assert_eq!(
        oidc["issuer"],
        "https://kubernetes.default.svc.cluster.local"
    );
    let jwks: Value =
        serde_json::from_str(&t.ok(&["get", "--raw", "/openid/v1/jwks"])).expect("json");
    assert_eq!(jwks["keys"][0]["alg"], "ES256");

    // Subresources nothing serves are not advertised.
    let resources = t.ok(&["get", "--raw", "/api/v1"]);
    assert!(resources.contains("\"pods/log\"") && resources.contains("\"serviceaccounts/token\""));
    assert!(
        !resources.contains("\"pods/resize\""),
        "pods/resize is not served"
    );
}

#[tokio::test(flavor = "multi_thread")]
async fn logs_eviction_and_delete_answers() {
    let t = common::start_simulated(100).await;
    t.ok(&["run", "app", "--image=nginx:1.27", "--restart=Never"]);
    let mut log = String::new();
    for _ in 0..100 {
        let out = t.kubectl(&["logs", "app"]);
        if out.status.success() {
            log = String::from_utf8_lossy(&out.stdout).into_owned();
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(
        log.contains("container app started from image nginx:1.27"),
        "{log}"
    );
    let stamped = t.ok(&["logs", "app", "--timestamps"]);
    assert!(stamped.starts_with("20"), "{stamped}");
    let err = t.fails(&["logs", "app", "-c", "nope"]);
    assert!(
        err.contains("container nope is not valid for pod app"),
        "{err}"
    );

    // Eviction deletes the pod.
    let eviction = json!({"apiVersion": "policy/v1", "kind": "Eviction",
        "metadata": {"name": "app", "namespace": "default"}});
    let out = t.ok_stdin(
        &[
            "create",
            "--raw",
            "/api/v1/namespaces/default/pods/app/eviction",
            "-f",
            "-",
        ],
        &eviction.to_string(),
    );
    assert!(out.contains("\"Success\""), "{out}");
    let gone = t.fails(&["get", "pod", "app"]);
    assert!(gone.contains("not found"), "{gone}");

    // DELETE answers a Status for most kinds, the object for pods (as kube-apiserver does).
    t.ok(&["create", "configmap", "c1", "--from-literal=a=b"]);
    let status = t.ok(&[
        "delete",
        "--raw",
        "/api/v1/namespaces/default/configmaps/c1",
    ]);
    let status: Value = serde_json::from_str(&status).expect("json");
    assert_eq!(status["kind"], "Status", "{status}");
    assert_eq!(status["status"], "Success");
    assert_eq!(status["details"]["name"], "c1");
    t.ok(&["run", "p2", "--image=busybox"]);
    let pod = t.ok(&["delete", "--raw", "/api/v1/namespaces/default/pods/p2"]);
    let pod: Value = serde_json::from_str(&pod).expect("json");
    assert_eq!(pod["kind"], "Pod", "{pod}");
}

/// Discovery and OpenAPI documents carry ETags; sent back, they answer 304.
#[tokio::test(flavor = "multi_thread")]
async fn discovery_documents_have_etags() {
    let t = common::start().await;
    let client = t.client().await;
    for path in ["/apis", "/api/v1", "/openapi/v3", "/openapi/v2"] {
        let get = |etag: Option<&str>| {
            let mut b = axum::http::Request::builder().uri(path);
            if let Some(e) = etag {
                b = b.header("if-none-match", e);
            }
            b.body(Vec::new()).expect("request")
        };
        let first = client
            .send(get(None).map(kube::client::Body::from))
            .await
            .expect("first");
        assert_eq!(first.status(), 200, "{path}");
        let etag = first
            .headers()
            .get("etag")
            .and_then(|v| v.to_str().ok())
            .unwrap_or_else(|| panic!("{path} has an etag"))
            .to_string();
        let again = client
            .send(get(Some(&etag)).map(kube::client::Body::from))
            .await
            .expect("again");
        assert_eq!(again.status(), 304, "{path}");
        let stale = client
            .send(get(Some("\"old\"")).map(kube::client::Body::from))
            .await
            .expect("stale");
        assert_eq!(stale.status(), 200, "{path}");
    }
}

/// `kubectl certificate approve` goes through the `approval` subresource; the request records
/// who asked.
#[tokio::test(flavor = "multi_thread")]
async fn certificate_signing_requests_are_approved() {
    let t = common::start().await;
    // A CSR body is opaque to the server (it is not signed here); any PEM-looking request does.
    let request = base64::Engine::encode(
        &base64::engine::general_purpose::STANDARD,
        "-----BEGIN CERTIFICATE REQUEST-----\nMIIB\n-----END CERTIFICATE REQUEST-----\n",
    );
    let csr = json!({"apiVersion": "certificates.k8s.io/v1", "kind": "CertificateSigningRequest",
        "metadata": {"name": "alice"},
        "spec": {"request": request, "signerName": "kubernetes.io/kube-apiserver-client",
            "usages": ["client auth"]}});
    t.ok_stdin(&["create", "-f", "-"], &csr.to_string());
    let row = t.ok(&["get", "csr", "alice"]);
    assert!(row.contains("admin") && row.contains("Pending"), "{row}");
    assert!(
        t.ok(&["certificate", "approve", "alice"])
            .contains("approved")
    );
    let row = t.ok(&["get", "csr", "alice"]);
    assert!(row.contains("Approved"), "{row}");
    let err = t.fails(&["certificate", "deny", "alice"]);
    assert!(err.contains("already Approved"), "{err}");
}

/// `kubectl auth can-i` prints yes or no (and exits 1 for no).
fn can_i(t: &common::TestServer, args: &[&str]) -> String {
    let mut all = vec!["auth", "can-i"];
    all.extend_from_slice(args);
    String::from_utf8_lossy(&t.kubectl(&all).stdout)
        .trim()
        .to_string()
}

#[tokio::test(flavor = "multi_thread")]
async fn rbac_decides_as_kubernetes() {
    let t = common::start_with(tidegate_apiserver::Config {
        authorization: tidegate_apiserver::AuthorizationMode::Rbac,
        ..Default::default()
    })
    .await;
    // The admin is in system:masters: everything, through the bootstrap cluster-admin too.
    assert_eq!(can_i(&t, &["*", "*", "--all-namespaces"]), "yes");
    let admin_binding = t.ok(&[
        "get",
        "clusterrolebinding",
        "cluster-admin",
        "-o",
        "jsonpath={.subjects[0].name}",
    ]);
    assert_eq!(admin_binding, "system:masters");
    t.ok(&["create", "namespace", "team"]);
    t.ok(&["-n", "team", "create", "serviceaccount", "viewer"]);
    t.ok(&["-n", "team", "create", "serviceaccount", "editor"]);
    t.ok(&[
        "-n",
        "team",
        "create",
        "role",
        "cm-reader",
        "--verb=get,list",
        "--resource=configmaps",
    ]);
    t.ok(&[
        "-n",
        "team",
        "create",
        "rolebinding",
        "viewer-reads",
        "--role=cm-reader",
        "--serviceaccount=team:viewer",
    ]);
    t.ok(&[
        "create",
        "clusterrole",
        "impersonate-jane",
        "--verb=impersonate",
        "--resource=users",
        "--resource-name=jane",
    ]);
    t.ok(&[
        "create",
        "clusterrolebinding",
        "editor-as-jane",
        "--clusterrole=impersonate-jane",
        "--serviceaccount=team:editor",
    ]);
    t.ok(&[
        "-n",
        "team",
        "create",
        "configmap",
        "settings",
        "--from-literal=a=b",
    ]);
    let viewer = t
        .ok(&["-n", "team", "create", "token", "viewer"])
        .trim()
        .to_string();
    let editor = t
        .ok(&["-n", "team", "create", "token", "editor"])
        .trim()
        .to_string();
    let as_viewer = |args: &[&str]| {
        let mut all = vec!["--token", viewer.as_str()];
        all.extend_from_slice(args);
        all.iter().map(|s| s.to_string()).collect::<Vec<_>>()
    };
    let run = |args: Vec<String>| {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        t.kubectl(&refs)
    };

    // What the Role allows, in its namespace only.
    let out = run(as_viewer(&[
        "-n",
        "team",
        "get",
        "configmaps",
        "-o",
        "name",
    ]));
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(String::from_utf8_lossy(&out.stdout).contains("configmap/settings"));
    for (args, message) in [
        (
            vec!["-n", "team", "get", "secrets"],
            "Error from server (Forbidden): secrets is forbidden: User \"system:serviceaccount:team:viewer\" cannot list resource \"secrets\" in API group \"\" in the namespace \"team\"",
        ),
        (
            vec!["-n", "default", "get", "configmaps"],
            "Error from server (Forbidden): configmaps is forbidden: User \"system:serviceaccount:team:viewer\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"default\"",
        ),
        (
            vec!["-n", "team", "delete", "configmap", "settings"],
            "Error from server (Forbidden): configmaps \"settings\" is forbidden: User \"system:serviceaccount:team:viewer\" cannot delete resource \"configmaps\" in API group \"\" in the namespace \"team\"",
        ),
        (
            vec![
                "create",
                "clusterrolebinding",
                "escalate",
                "--clusterrole=cluster-admin",
                "--serviceaccount=team:viewer",
            ],
            // kubectl's create subcommands word the failure themselves.
            "error: failed to create clusterrolebinding: clusterrolebindings.rbac.authorization.k8s.io is forbidden: User \"system:serviceaccount:team:viewer\" cannot create resource \"clusterrolebindings\" in API group \"rbac.authorization.k8s.io\" at the cluster scope",
        ),
        (
            vec!["get", "--raw", "/logs"],
            "Error from server (Forbidden): forbidden: User \"system:serviceaccount:team:viewer\" cannot get path \"/logs\"",
        ),
    ] {
        let out = run(as_viewer(&args));
        assert!(!out.status.success(), "{args:?}");
        assert_eq!(
            String::from_utf8_lossy(&out.stderr).trim(),
            message,
            "{args:?}"
        );
    }
    assert!(
        t.ok(&["get", "clusterrolebindings", "-o", "name"])
            .lines()
            .all(|l| l != "clusterrolebinding.rbac.authorization.k8s.io/escalate")
    );
    // Discovery and /version are everyone's.
    assert!(
        run(as_viewer(&["get", "--raw", "/version"]))
            .status
            .success()
    );
    assert!(
        run(as_viewer(&[
            "api-resources",
            "--api-group=rbac.authorization.k8s.io"
        ]))
        .status
        .success()
    );

    // The review APIs answer truthfully, for oneself and about others.
    let yes_no = |args: &[&str]| {
        String::from_utf8_lossy(&run(as_viewer(args)).stdout)
            .trim()
            .to_string()
    };
    assert_eq!(
        yes_no(&["auth", "can-i", "list", "configmaps", "-n", "team"]),
        "yes"
    );
    assert_eq!(
        yes_no(&["auth", "can-i", "delete", "configmaps", "-n", "team"]),
        "no"
    );
    assert_eq!(
        yes_no(&["auth", "can-i", "list", "configmaps", "-n", "default"]),
        "no"
    );
    let list =
        String::from_utf8_lossy(&run(as_viewer(&["auth", "can-i", "--list", "-n", "team"])).stdout)
            .to_string();
    assert!(
        list.lines()
            .any(|l| l.starts_with("configmaps ") && l.contains("[get list]")),
        "{list}"
    );
    assert!(!list.lines().any(|l| l.starts_with("*.*")), "{list}");
    assert_eq!(
        can_i(
            &t,
            &[
                "list",
                "configmaps",
                "-n",
                "team",
                "--as",
                "system:serviceaccount:team:viewer"
            ]
        ),
        "yes"
    );
    assert_eq!(
        can_i(
            &t,
            &[
                "list",
                "secrets",
                "-n",
                "team",
                "--as",
                "system:serviceaccount:team:viewer"
            ]
        ),
        "no"
    );
    let review = t.ok_stdin(
        &["create", "-o", "json", "-f", "-"],
        r#"{"apiVersion": "authorization.k8s.io/v1", "kind": "SubjectAccessReview",
            "spec": {"user": "system:serviceaccount:team:viewer", "groups": ["system:serviceaccounts"],
                     "resourceAttributes": {"namespace": "team", "verb": "get", "resource": "configmaps"}}}"#,
    );
    let review: Value = serde_json::from_str(&review).unwrap();
    assert_eq!(
        review["status"],
        json!({"allowed": true, "reason": "RBAC: allowed by RoleBinding \"viewer-reads/team\" of Role \"cm-reader\" to ServiceAccount \"viewer/team\""})
    );

    // Impersonation: only what the impersonate rules allow, then as the impersonated user.
    let as_editor = |args: &[&str]| {
        let mut all = vec!["--token", editor.as_str()];
        all.extend_from_slice(args);
        run(all.iter().map(|s| s.to_string()).collect())
    };
    let out = as_editor(&[
        "--as",
        "jane",
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.username}",
    ]);
    assert_eq!(
        String::from_utf8_lossy(&out.stdout),
        "jane",
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let out = as_editor(&["--as", "jane", "-n", "team", "get", "configmaps"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (Forbidden): configmaps is forbidden: User \"jane\" cannot list resource \"configmaps\" in API group \"\" in the namespace \"team\""
    );
    let out = as_editor(&["--as", "bob", "-n", "team", "get", "configmaps"]);
    assert_eq!(
        String::from_utf8_lossy(&out.stderr).trim(),
        "Error from server (Forbidden): users \"bob\" is forbidden: User \"system:serviceaccount:team:editor\" cannot impersonate resource \"users\" in API group \"\" at the cluster scope"
    );
    let out = as_editor(&[
        "--as",
        "jane",
        "--as-group",
        "system:masters",
        "get",
        "secrets",
        "-A",
    ]);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("groups \"system:masters\" is forbidden: User \"system:serviceaccount:team:editor\" cannot impersonate resource \"groups\""),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Kubernetes' bootstrap roles, as its test data has them, and aggregation: `view` holds
    // the rules of every ClusterRole labelled to aggregate into it, a new one included.
    let policy: Value = yaml_serde::from_str(
        &std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("src/auth/bootstrap-policy/cluster-roles.yaml"),
        )
        .unwrap(),
    )
    .unwrap();
    for name in [
        "system:aggregate-to-edit",
        "system:node",
        "system:monitoring",
    ] {
        let want = policy["items"]
            .as_array()
            .unwrap()
            .iter()
            .find(|i| i["metadata"]["name"] == name)
            .unwrap();
        let served: Value =
            serde_json::from_str(&t.ok(&["get", "clusterrole", name, "-o", "json"])).unwrap();
        assert_eq!(served["rules"], want["rules"], "{name}");
    }
    t.ok_stdin(
        &["apply", "-f", "-"],
        r#"{"apiVersion": "rbac.authorization.k8s.io/v1", "kind": "ClusterRole",
            "metadata": {"name": "lease-viewer", "labels": {"rbac.authorization.k8s.io/aggregate-to-view": "true"}},
            "rules": [{"apiGroups": ["coordination.k8s.io"], "resources": ["leases"], "verbs": ["get", "list", "watch"]}]}"#,
    );
    t.ok(&[
        "-n",
        "team",
        "create",
        "rolebinding",
        "viewer-views",
        "--clusterrole=view",
        "--serviceaccount=team:viewer",
    ]);
    let mut aggregated = false;
    for _ in 0..100 {
        if yes_no(&[
            "auth",
            "can-i",
            "list",
            "leases.coordination.k8s.io",
            "-n",
            "team",
        ]) == "yes"
        {
            aggregated = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    assert!(
        aggregated,
        "view aggregates lease-viewer: {}",
        t.ok(&[
            "get",
            "clusterrole",
            "view",
            "-o",
            "jsonpath={.rules[*].resources}"
        ])
    );
    assert_eq!(
        yes_no(&["auth", "can-i", "list", "pods", "-n", "team"]),
        "yes"
    );
    assert_eq!(
        yes_no(&["auth", "can-i", "watch", "deployments.apps", "-n", "team"]),
        "yes"
    );
    assert_eq!(
        yes_no(&["auth", "can-i", "get", "secrets", "-n", "team"]),
        "no"
    );
    assert_eq!(
        yes_no(&["auth", "can-i", "list", "pods", "-n", "default"]),
        "no"
    );

    // Escalation: a namespace admin writes roles and bindings only for what it holds.
    t.ok(&["-n", "team", "create", "serviceaccount", "lead"]);
    t.ok(&[
        "-n",
        "team",
        "create",
        "rolebinding",
        "lead-admin",
        "--clusterrole=admin",
        "--serviceaccount=team:lead",
    ]);
    let lead = t
        .ok(&["-n", "team", "create", "token", "lead"])
        .trim()
        .to_string();
    let as_lead = |yaml: &str| {
        let out = t.kubectl_stdin(
            &["--token", lead.as_str(), "-n", "team", "create", "-f", "-"],
            Some(yaml),
        );
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stderr).to_string(),
        )
    };
    let role = |name: &str, group: &str, resource: &str| {
        format!(
        "{{\"apiVersion\": \"rbac.authorization.k8s.io/v1\", \"kind\": \"Role\", \"metadata\": {{\"name\": \"{name}\"}},
          \"rules\": [{{\"apiGroups\": [\"{group}\"], \"resources\": [\"{resource}\"], \"verbs\": [\"list\"]}}]}}"
    )
    };
    let binding = |name: &str, role: &str| {
        format!(
        "{{\"apiVersion\": \"rbac.authorization.k8s.io/v1\", \"kind\": \"RoleBinding\", \"metadata\": {{\"name\": \"{name}\"}},
          \"roleRef\": {{\"apiGroup\": \"rbac.authorization.k8s.io\", \"kind\": \"ClusterRole\", \"name\": \"{role}\"}},
          \"subjects\": [{{\"kind\": \"ServiceAccount\", \"name\": \"lead\"}}]}}"
    )
    };
    assert!(as_lead(&role("read-cm", "", "configmaps")).0);
    assert!(as_lead(&binding("lead-view", "view")).0);
    let groups = "(groups=[\"system:serviceaccounts\" \"system:serviceaccounts:team\" \"system:authenticated\"])";
    let (ok, err) = as_lead(&role("grab-nodes", "", "nodes"));
    assert!(!ok);
    assert!(
        err.contains(&format!("roles.rbac.authorization.k8s.io \"grab-nodes\" is forbidden: user \"system:serviceaccount:team:lead\" {groups} is attempting to grant RBAC permissions not currently held:\n{{APIGroups:[\"\"], Resources:[\"nodes\"], Verbs:[\"list\"]}}")),
        "{err}"
    );
    let (ok, err) = as_lead(&binding("steal", "cluster-admin"));
    assert!(!ok);
    assert!(
        err.contains(&format!("rolebindings.rbac.authorization.k8s.io \"steal\" is forbidden: user \"system:serviceaccount:team:lead\" {groups} is attempting to grant RBAC permissions not currently held:\n")),
        "{err}"
    );
    let written = t.ok(&["-n", "team", "get", "roles,rolebindings", "-o", "name"]);
    assert!(
        written.contains("role.rbac.authorization.k8s.io/read-cm"),
        "{written}"
    );
    assert!(
        !written.contains("grab-nodes") && !written.contains("steal"),
        "{written}"
    );

    // A token of a deleted service account is refused.
    t.ok(&["-n", "team", "delete", "serviceaccount", "viewer"]);
    let out = run(as_viewer(&["-n", "team", "get", "configmaps"]));
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("Unauthorized"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
