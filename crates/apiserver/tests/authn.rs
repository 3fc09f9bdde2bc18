//! Who a request is, beyond the admin token and service accounts: users of a static token file
//! (kube's CSV format) and of client certificates signed by the server's client CA, driven
//! by real kubectl under RBAC; and what is refused — a certificate from another CA, an
//! unknown token, no credentials — with nothing written.

mod common;

use base64::Engine as _;
use serde_json::Value;
use tidegate_apiserver::{AuthorizationMode, Config};

/// A kubeconfig for the server at `server` (trusting `ca_pem`) whose user presents `cert`.
fn cert_kubeconfig(server: &str, ca_pem: &str, (cert, key): &(String, String)) -> String {
    let b = |s: &str| base64::engine::general_purpose::STANDARD.encode(s);
    format!(
        "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster:\n    server: {server}\n    certificate-authority-data: {}\ncontexts:\n- name: c\n  context:\n    cluster: c\n    user: u\ncurrent-context: c\nusers:\n- name: u\n  user:\n    client-certificate-data: {}\n    client-key-data: {}\n",
        b(ca_pem),
        b(cert),
        b(key)
    )
}

fn whoami(t: &common::TestServer, args: &[&str]) -> Value {
    let mut a = args.to_vec();
    a.extend(["auth", "whoami", "-o", "json"]);
    serde_json::from_str(&t.ok(&a)).expect("json")
}

#[tokio::test(flavor = "multi_thread")]
async fn token_file_and_client_certificate_users() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(
        &tokens,
        "jane-token,jane,1001,\"devs,ops\"\nroot-token,root,0,system:masters\n",
    )
    .expect("write");
    let t = common::start_with(Config {
        authorization: AuthorizationMode::Rbac,
        token_auth_file: Some(tokens),
        ..Default::default()
    })
    .await;
    t.ok(&["create", "namespace", "team"]);
    t.ok(&[
        "-n",
        "team",
        "create",
        "rolebinding",
        "devs-view",
        "--clusterrole=view",
        "--group=devs",
    ]);

    // A token file user: its name, uid and groups, then what RBAC gives its groups.
    let me = whoami(&t, &["--token", "jane-token"]);
    assert_eq!(me["status"]["userInfo"]["username"], "jane");
    assert_eq!(me["status"]["userInfo"]["uid"], "1001");
    assert_eq!(
        me["status"]["userInfo"]["groups"],
        serde_json::json!(["devs", "ops", "system:authenticated"])
    );
    t.ok(&["--token", "jane-token", "-n", "team", "get", "configmaps"]);
    let err = t.fails(&[
        "--token",
        "jane-token",
        "-n",
        "team",
        "create",
        "configmap",
        "x",
    ]);
    assert!(
        err.contains("configmaps is forbidden: User \"jane\" cannot create resource \"configmaps\" in API group \"\" in the namespace \"team\""),
        "{err}"
    );
    // In system:masters through the file: everything.
    t.ok(&[
        "--token",
        "root-token",
        "-n",
        "team",
        "create",
        "configmap",
        "by-root",
    ]);
    // An unknown token, and no credentials at all: 401.
    let err = t.fails(&["--token", "nobody", "get", "namespaces"]);
    assert!(err.contains("Unauthorized"), "{err}");

    // A client certificate: the common name is the user, organizations the groups.
    let creds = &t.server.credentials;
    let alice = tidegate_apiserver::tls::client_certificate(creds, "alice", &["devs".into()], 1)
        .expect("certificate");
    let alice_kc = t.dir.path().join("alice.kubeconfig");
    std::fs::write(
        &alice_kc,
        cert_kubeconfig(&t.server.url, &creds.ca_pem, &alice),
    )
    .expect("write");
    let alice_kc = alice_kc.to_str().expect("utf-8");
    let me = whoami(&t, &["--kubeconfig", alice_kc]);
    assert_eq!(me["status"]["userInfo"]["username"], "alice");
    assert_eq!(
        me["status"]["userInfo"]["groups"],
        serde_json::json!(["devs", "system:authenticated"])
    );
    t.ok(&["--kubeconfig", alice_kc, "-n", "team", "get", "pods"]);
    let err = t.fails(&["--kubeconfig", alice_kc, "get", "secrets", "-A"]);
    assert!(
        err.contains(
            "User \"alice\" cannot list resource \"secrets\" in API group \"\" at the cluster scope"
        ),
        "{err}"
    );
    // Impersonating someone needs the right to.
    let err = t.fails(&["--kubeconfig", alice_kc, "--as", "admin", "get", "pods"]);
    assert!(
        err.contains("User \"alice\" cannot impersonate resource \"users\" in API group \"\""),
        "{err}"
    );

    // A certificate from another CA is refused in the handshake, and writes nothing.
    let other = tidegate_apiserver::tls::load_or_create(None).expect("another CA");
    let mallory = tidegate_apiserver::tls::client_certificate(
        &other,
        "mallory",
        &["system:masters".into()],
        1,
    )
    .expect("certificate");
    let mallory_kc = t.dir.path().join("mallory.kubeconfig");
    std::fs::write(
        &mallory_kc,
        cert_kubeconfig(&t.server.url, &creds.ca_pem, &mallory),
    )
    .expect("write");
    let mallory_kc = mallory_kc.to_str().expect("utf-8");
    let err = t.fails(&[
        "--kubeconfig",
        mallory_kc,
        "-n",
        "team",
        "create",
        "configmap",
        "evil",
    ]);
    // The handshake fails (the other CA has the same name, so rustls finds the signature
    // does not verify: a decrypt_error alert).
    // kubectl may also be writing its request when the refused handshake closes the
    // connection, and then says so instead (a reset, or a broken pipe on its write).
    assert!(
        err.contains("remote error: tls: ")
            || err.contains("connection reset by peer")
            || err.contains("write: broken pipe"),
        "{err}"
    );
    let names = t.ok(&["-n", "team", "get", "configmaps", "-o", "name"]);
    assert!(!names.contains("configmap/evil"), "{names}");
    assert!(names.contains("configmap/by-root"), "{names}");
}

fn token_secret(name: &str, sa: &str) -> String {
    format!(
        "apiVersion: v1\nkind: Secret\ntype: kubernetes.io/service-account-token\nmetadata:\n  name: {name}\n  namespace: team\n  annotations:\n    kubernetes.io/service-account.name: {sa}\n"
    )
}

/// The token the server put into a Secret, once it has.
async fn secret_token(t: &common::TestServer, name: &str) -> String {
    for _ in 0..100 {
        let out = t.ok(&[
            "-n",
            "team",
            "get",
            "secret",
            name,
            "-o",
            "jsonpath={.data.token}",
        ]);
        if !out.is_empty() {
            let raw = base64::engine::general_purpose::STANDARD
                .decode(out.trim())
                .expect("base64");
            return String::from_utf8(raw).expect("utf-8");
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    panic!("secret {name} was never given a token");
}

#[tokio::test(flavor = "multi_thread")]
async fn legacy_service_account_token_secrets() {
    let t = common::start().await;
    t.ok(&["create", "namespace", "team"]);
    t.ok(&["-n", "team", "create", "serviceaccount", "old"]);
    t.ok_stdin(&["apply", "-f", "-"], &token_secret("old-token", "old"));
    let token = secret_token(&t, "old-token").await;
    let who = t.ok(&[
        "--token",
        &token,
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.username}",
    ]);
    assert_eq!(who, "system:serviceaccount:team:old");
    let secret: Value =
        serde_json::from_str(&t.ok(&["-n", "team", "get", "secret", "old-token", "-o", "json"]))
            .expect("json");
    let uid = t.ok(&[
        "-n",
        "team",
        "get",
        "sa",
        "old",
        "-o",
        "jsonpath={.metadata.uid}",
    ]);
    assert_eq!(
        secret["metadata"]["annotations"]["kubernetes.io/service-account.uid"],
        uid.as_str()
    );
    let field = |k: &str| {
        let v = secret["data"][k].as_str().expect("field");
        String::from_utf8(
            base64::engine::general_purpose::STANDARD
                .decode(v)
                .expect("b64"),
        )
        .expect("utf-8")
    };
    assert_eq!(field("namespace"), "team");
    assert!(field("ca.crt").starts_with("-----BEGIN CERTIFICATE-----"));

    // A Secret naming a service account yet to come is filled when it comes.
    t.ok_stdin(&["apply", "-f", "-"], &token_secret("later-token", "later"));
    t.ok(&["-n", "team", "create", "serviceaccount", "later"]);
    let later = secret_token(&t, "later-token").await;
    let who = t.ok(&[
        "--token",
        &later,
        "auth",
        "whoami",
        "-o",
        "jsonpath={.status.userInfo.username}",
    ]);
    assert_eq!(who, "system:serviceaccount:team:later");

    // Deleting the Secret revokes its token; so does deleting the service account.
    t.ok(&["-n", "team", "delete", "secret", "old-token"]);
    let err = t.fails(&["--token", &token, "get", "namespaces"]);
    assert!(err.contains("Unauthorized"), "{err}");
    t.ok(&["-n", "team", "delete", "serviceaccount", "later"]);
    let err = t.fails(&["--token", &later, "get", "namespaces"]);
    assert!(err.contains("Unauthorized"), "{err}");
}

#[tokio::test(flavor = "multi_thread")]
async fn a_malformed_token_file_stops_the_server_naming_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let tokens = dir.path().join("tokens.csv");
    std::fs::write(&tokens, "good,user,1\nbad-line-without-user\n").expect("write");
    let err = tidegate_apiserver::ApiServer::start(Config {
        token_auth_file: Some(tokens.clone()),
        ..Default::default()
    })
    .await
    .err()
    .expect("refused");
    assert_eq!(
        err.to_string(),
        format!(
            "token file '{}' line 2: must have at least 3 columns (token, user name, user uid), found 1",
            tokens.display()
        )
    );
}
