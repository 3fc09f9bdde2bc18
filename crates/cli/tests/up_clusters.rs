//! ClusterResourceSets on `tidegate up --clusters 3`: Cluster API's controller scenarios
//! (clusterresourceset_controller_test.go) driven through kubectl against the management
//! server, checked in the workload clusters' own API servers; bad input; and the CLI verbs
//! (`cluster create|list|delete`, `get|tree|reconcile clusterresourceset`).

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod up_support;

use std::path::{Path, PathBuf};

use serde_json::Value;
use up_support::*;

struct Env {
    up: Up,
    dir: tempfile::TempDir,
}

impl Env {
    fn start() -> Env {
        let dir = tempfile::tempdir().unwrap();
        let port = git_support::free_port();
        // A test below reads a fleet repository on this machine (`file://`).
        let up = up(
            &dir.path().join("data"),
            port,
            &["--clusters", "3", "--allow-file-urls"],
            true,
        );
        Env { up, dir }
    }

    fn kc(&self) -> &Path {
        &self.up.kubeconfig
    }

    fn apply(&self, yaml: &str) {
        kubectl_stdin(self.kc(), &["apply", "-f", "-"], yaml);
    }

    /// The kubeconfig of a workload cluster, from its `<name>-kubeconfig` Secret.
    fn workload(&self, cluster: &str) -> PathBuf {
        let path = self.dir.path().join(format!("{cluster}.kubeconfig"));
        if !path.exists() {
            let b64 = kubectl(
                self.kc(),
                &[
                    "get",
                    "secret",
                    &format!("{cluster}-kubeconfig"),
                    "-o",
                    "jsonpath={.data.value}",
                ],
            );
            use base64::Engine as _;
            let bytes = base64::engine::general_purpose::STANDARD
                .decode(b64.trim())
                .unwrap();
            std::fs::write(&path, bytes).unwrap();
        }
        path
    }

    fn binding(&self, cluster: &str) -> Option<Value> {
        let out = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(self.kc())
            .args([
                "get",
                "clusterresourcesetbinding",
                cluster,
                "-o",
                "json",
                "--ignore-not-found",
            ])
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        (!text.trim().is_empty()).then(|| serde_json::from_str(&text).unwrap())
    }

    /// The binding entry of `crs` on `cluster`.
    fn entry(&self, cluster: &str, crs: &str) -> Option<Value> {
        self.binding(cluster)?["spec"]["bindings"]
            .as_array()?
            .iter()
            .find(|b| b["clusterResourceSetName"] == crs)
            .cloned()
    }

    /// Waits until every resource of `crs` on `cluster` is recorded applied (`n` of them).
    fn wait_applied(&self, cluster: &str, crs: &str, n: usize) -> Value {
        let mut last = None;
        wait_until(&format!("{crs} applied to {cluster}"), || {
            last = self.entry(cluster, crs);
            last.as_ref().is_some_and(|e| {
                let r = e["resources"].as_array().cloned().unwrap_or_default();
                r.len() == n && r.iter().all(|r| r["applied"] == true)
            })
        });
        last.unwrap()
    }

    fn crs(&self, name: &str) -> Value {
        json(self.kc(), &["get", "clusterresourceset", name])
    }

    fn label(&self, cluster: &str, label: &str) {
        kubectl(
            self.kc(),
            &["label", "cluster", cluster, label, "--overwrite"],
        );
    }

    /// Deletes ClusterResourceSets and waits until they are gone.
    fn delete_crs(&self, names: &[&str]) {
        for n in names {
            kubectl(
                self.kc(),
                &["delete", "clusterresourceset", n, "--wait=true"],
            );
        }
    }

    fn in_workload(&self, cluster: &str, args: &[&str]) -> Option<Value> {
        let wk = self.workload(cluster);
        let mut a = vec!["get"];
        a.extend_from_slice(args);
        a.extend(["-o", "json", "--ignore-not-found"]);
        let out = std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(&wk)
            .args(&a)
            .output()
            .unwrap();
        let text = String::from_utf8_lossy(&out.stdout);
        (!text.trim().is_empty()).then(|| serde_json::from_str(&text).unwrap())
    }
}

/// A ConfigMap (or Secret, `secret`) holding `objects` under one key.
fn holder(name: &str, secret: bool, objects: &str) -> String {
    let indented: String = objects.lines().map(|l| format!("    {l}\n")).collect();
    if secret {
        format!(
            "apiVersion: v1\nkind: Secret\nmetadata: {{name: {name}, namespace: default}}\ntype: addons.cluster.x-k8s.io/resource-set\nstringData:\n  objects.yaml: |\n{indented}"
        )
    } else {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}, namespace: default}}\ndata:\n  objects.yaml: |\n{indented}"
        )
    }
}

fn cm_object(name: &str, ns: &str, value: &str) -> String {
    format!(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: {ns}\ndata:\n  value: {value}\n"
    )
}

fn crs(name: &str, strategy: &str, label: &str, resources: &[(&str, &str)]) -> String {
    let (k, v) = label.split_once('=').unwrap();
    let mut s = format!(
        "apiVersion: addons.cluster.x-k8s.io/v1beta2\nkind: ClusterResourceSet\nmetadata: {{name: {name}, namespace: default}}\nspec:\n"
    );
    if !strategy.is_empty() {
        s.push_str(&format!("  strategy: {strategy}\n"));
    }
    s.push_str(&format!(
        "  clusterSelector:\n    matchLabels: {{{k}: \"{v}\"}}\n  resources:\n"
    ));
    for (kind, n) in resources {
        s.push_str(&format!("  - {{kind: {kind}, name: {n}}}\n"));
    }
    s
}

fn condition<'a>(obj: &'a Value, path: &str, type_: &str) -> Option<&'a Value> {
    obj.pointer(path)?
        .as_array()?
        .iter()
        .find(|c| c["type"] == type_)
}

fn value_in(env: &Env, cluster: &str, ns: &str, name: &str) -> Option<String> {
    env.in_workload(cluster, &["configmap", "-n", ns, name])
        .and_then(|c| c["data"]["value"].as_str().map(str::to_string))
}

#[test]
fn cluster_api_scenarios() {
    let env = Env::start();
    let clusters = json(env.kc(), &["get", "clusters"]);
    assert_eq!(clusters["items"].as_array().unwrap().len(), 3);

    // 1. Several resources (a ConfigMap and a Secret) for a Cluster with a matching label;
    //    the finalizer is added, the resources get an owner reference.
    env.apply(&holder(
        "s1-cm",
        false,
        &format!(
            "{}---\n{}",
            cm_object("s1-a", "default", "a"),
            cm_object("s1-b", "kube-system", "b")
        ),
    ));
    env.apply(&holder(
        "s1-secret",
        true,
        &cm_object("s1-c", "default", "c"),
    ));
    env.apply(&crs(
        "s1",
        "",
        "s1=yes",
        &[("ConfigMap", "s1-cm"), ("Secret", "s1-secret")],
    ));
    env.label("workload-1", "s1=yes");
    let entry = env.wait_applied("workload-1", "s1", 2);
    assert!(
        entry["resources"][0]["hash"]
            .as_str()
            .unwrap()
            .starts_with("sha256:"),
        "{entry}"
    );
    assert_eq!(
        value_in(&env, "workload-1", "default", "s1-a").as_deref(),
        Some("a")
    );
    assert_eq!(
        value_in(&env, "workload-1", "kube-system", "s1-b").as_deref(),
        Some("b")
    );
    assert_eq!(
        value_in(&env, "workload-1", "default", "s1-c").as_deref(),
        Some("c")
    );
    assert_eq!(
        value_in(&env, "workload-2", "default", "s1-a"),
        None,
        "not selected"
    );
    let set = env.crs("s1");
    assert_eq!(set["metadata"]["finalizers"][0], "addons.cluster.x-k8s.io");
    let applied = condition(&set, "/status/conditions", "ResourcesApplied").unwrap();
    assert_eq!(applied["status"], "True");
    assert_eq!(applied["reason"], "Applied");
    assert_eq!(set["status"]["observedGeneration"], 1);
    let cm = json(env.kc(), &["get", "configmap", "s1-cm"]);
    assert_eq!(
        cm["metadata"]["ownerReferences"][0]["kind"],
        "ClusterResourceSet"
    );
    assert_eq!(cm["metadata"]["ownerReferences"][0]["name"], "s1");
    let binding = env.binding("workload-1").unwrap();
    assert_eq!(binding["spec"]["clusterName"], "workload-1");
    assert_eq!(binding["metadata"]["ownerReferences"][0]["name"], "s1");

    // 2. A Cluster whose labels are changed to match.
    env.apply(&holder("s2-cm", false, &cm_object("s2", "default", "x")));
    env.apply(&crs("s2", "", "s2=yes", &[("ConfigMap", "s2-cm")]));
    std::thread::sleep(std::time::Duration::from_millis(800));
    assert!(
        env.entry("workload-2", "s2").is_none(),
        "no Cluster matches yet"
    );
    env.label("workload-2", "s2=yes");
    env.wait_applied("workload-2", "s2", 1);
    assert_eq!(
        value_in(&env, "workload-2", "default", "s2").as_deref(),
        Some("x")
    );

    // 3 and 4. A ConfigMap, then a Secret, created after the ClusterResourceSet.
    env.apply(&crs(
        "s3",
        "",
        "s3=yes",
        &[("ConfigMap", "s3-cm"), ("Secret", "s3-secret")],
    ));
    env.label("workload-3", "s3=yes");
    wait_until("an s3 entry with nothing applied", || {
        env.entry("workload-3", "s3")
            .is_some_and(|e| e["resources"].as_array().is_none_or(|r| r.is_empty()))
    });
    env.apply(&holder(
        "s3-cm",
        false,
        &cm_object("s3-a", "default", "later"),
    ));
    env.wait_applied("workload-3", "s3", 1);
    env.apply(&holder(
        "s3-secret",
        true,
        &cm_object("s3-b", "default", "later-too"),
    ));
    env.wait_applied("workload-3", "s3", 2);
    assert_eq!(
        value_in(&env, "workload-3", "default", "s3-b").as_deref(),
        Some("later-too")
    );

    // 5. Deleting a ClusterResourceSet removes its entry and owner reference; the last one
    //    removes the binding; the applied objects stay.
    env.delete_crs(&["s3"]);
    wait_until("the workload-3 binding removed", || {
        env.binding("workload-3").is_none()
    });
    assert_eq!(
        value_in(&env, "workload-3", "default", "s3-a").as_deref(),
        Some("later")
    );
    env.label("workload-2", "s1=yes");
    env.wait_applied("workload-2", "s1", 2);
    env.delete_crs(&["s2"]);
    wait_until("s2 leaves the workload-2 binding", || {
        env.binding("workload-2").is_some_and(|b| {
            b["spec"]["bindings"]
                .as_array()
                .is_some_and(|e| e.len() == 1)
                && b["metadata"]["ownerReferences"]
                    .as_array()
                    .is_some_and(|o| o.len() == 1)
        })
    });
    assert!(env.entry("workload-2", "s1").is_some());
    env.delete_crs(&["s1"]);
    wait_until("the s1 bindings removed", || {
        env.binding("workload-1").is_none() && env.binding("workload-2").is_none()
    });
    assert_eq!(
        value_in(&env, "workload-1", "default", "s1-a").as_deref(),
        Some("a")
    );

    // 7. Reconcile: objects are applied again when the data changes, every object of the
    //    changed resource, and only then.
    env.apply(&holder(
        "s7-cm",
        false,
        &format!(
            "{}---\n{}",
            cm_object("s7-a", "default", "one"),
            cm_object("s7-b", "default", "one")
        ),
    ));
    env.apply(&holder(
        "s7-secret",
        true,
        &cm_object("s7-c", "default", "one"),
    ));
    env.apply(&crs(
        "s7",
        "Reconcile",
        "s7=yes",
        &[("ConfigMap", "s7-cm"), ("Secret", "s7-secret")],
    ));
    env.label("workload-1", "s7=yes");
    let first = env.wait_applied("workload-1", "s7", 2);
    let wk = env.workload("workload-1");
    for n in ["s7-a", "s7-b", "s7-c"] {
        kubectl(
            &wk,
            &[
                "patch",
                "configmap",
                n,
                "--type=merge",
                "-p",
                r#"{"data":{"value":"edited"},"metadata":{"labels":{"by":"hand"}}}"#,
            ],
        );
    }
    // A resync that finds the same hashes changes nothing.
    let (code, _, err) = tidegate(
        env.kc(),
        &["reconcile", "clusterresourceset", "s7", "-n", "default"],
    );
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        value_in(&env, "workload-1", "default", "s7-a").as_deref(),
        Some("edited")
    );
    env.apply(&holder(
        "s7-cm",
        false,
        &format!(
            "{}---\n{}",
            cm_object("s7-a", "default", "two"),
            cm_object("s7-b", "default", "one")
        ),
    ));
    wait_until("s7-a updated", || {
        value_in(&env, "workload-1", "default", "s7-a").as_deref() == Some("two")
    });
    // Every object of the changed ConfigMap was applied again (a merge patch from the live
    // object: the hand-made label is gone too); the Secret's object was not touched.
    assert_eq!(
        value_in(&env, "workload-1", "default", "s7-b").as_deref(),
        Some("one")
    );
    let b = env
        .in_workload("workload-1", &["configmap", "s7-b"])
        .unwrap();
    assert!(b["metadata"]["labels"].get("by").is_none(), "{b}");
    assert_eq!(
        value_in(&env, "workload-1", "default", "s7-c").as_deref(),
        Some("edited")
    );
    let second = env.wait_applied("workload-1", "s7", 2);
    assert_ne!(
        first["resources"][0]["hash"],
        second["resources"][0]["hash"]
    );
    assert_eq!(
        first["resources"][1]["hash"],
        second["resources"][1]["hash"]
    );
    env.delete_crs(&["s7"]);

    // 8. ApplyOnce when an object already exists: counted as applied, never updated.
    let wk2 = env.workload("workload-2");
    kubectl_stdin(
        &wk2,
        &["apply", "-f", "-"],
        &cm_object("s8", "default", "mine"),
    );
    env.apply(&holder(
        "s8-cm",
        false,
        &cm_object("s8", "default", "theirs"),
    ));
    env.apply(&crs("s8", "ApplyOnce", "s8=yes", &[("ConfigMap", "s8-cm")]));
    env.label("workload-2", "s8=yes");
    env.wait_applied("workload-2", "s8", 1);
    assert_eq!(
        value_in(&env, "workload-2", "default", "s8").as_deref(),
        Some("mine")
    );
    env.delete_crs(&["s8"]);

    // 9. ApplyOnce after an error is corrected: an object in a missing namespace fails (the
    //    other resource is applied), then succeeds once the namespace exists.
    env.apply(&holder(
        "s9-cm",
        false,
        &cm_object("cm-missing-namespace", "missing-ns", "v"),
    ));
    env.apply(&holder("s9-secret", true, &cm_object("s9", "default", "v")));
    env.apply(&crs(
        "s9",
        "ApplyOnce",
        "s9=yes",
        &[("ConfigMap", "s9-cm"), ("Secret", "s9-secret")],
    ));
    env.label("workload-3", "s9=yes");
    wait_until("s9's ConfigMap recorded as failed", || {
        env.entry("workload-3", "s9").is_some_and(|e| {
            let r = e["resources"].as_array().cloned().unwrap_or_default();
            r.len() == 2
                && r.iter()
                    .any(|r| r["name"] == "s9-cm" && r["applied"] == false)
                && r.iter()
                    .any(|r| r["name"] == "s9-secret" && r["applied"] == true)
        })
    });
    let set = env.crs("s9");
    let c = condition(&set, "/status/conditions", "ResourcesApplied").unwrap();
    assert_eq!(c["status"], "False", "{set}");
    assert_eq!(c["reason"], "NotApplied");
    assert_eq!(
        c["message"],
        "Failed to apply ClusterResourceSet resources to Cluster"
    );
    let v1 = condition(
        &set,
        "/status/deprecated/v1beta1/conditions",
        "ResourcesApplied",
    )
    .unwrap();
    assert_eq!(v1["reason"], "ApplyFailed");
    let message = v1["message"].as_str().unwrap();
    assert!(
        message.contains("creating object /v1, Kind=ConfigMap missing-ns/cm-missing-namespace")
            && message.contains("ConfigMap default/s9-cm")
            && message.contains("Cluster default/workload-3"),
        "{message}"
    );
    kubectl(
        &env.workload("workload-3"),
        &["create", "namespace", "missing-ns"],
    );
    env.wait_applied("workload-3", "s9", 2);
    assert_eq!(
        value_in(&env, "workload-3", "missing-ns", "cm-missing-namespace").as_deref(),
        Some("v")
    );
    wait_until("s9 ResourcesApplied=True", || {
        condition(&env.crs("s9"), "/status/conditions", "ResourcesApplied")
            .is_some_and(|c| c["status"] == "True")
    });
    env.delete_crs(&["s9"]);

    // 10. Ten ClusterResourceSets on one Cluster at once: one binding with ten entries.
    env.apply(&holder(
        "s10-cm",
        false,
        &cm_object("s10-a", "default", "v"),
    ));
    env.apply(&holder(
        "s10-secret",
        true,
        &cm_object("s10-b", "default", "v"),
    ));
    let mut all = String::new();
    for i in 0..10 {
        all.push_str(&crs(
            &format!("s10-{i}"),
            "",
            "s10=yes",
            &[("ConfigMap", "s10-cm"), ("Secret", "s10-secret")],
        ));
        all.push_str("---\n");
    }
    env.apply(&all);
    env.label("workload-1", "s10=yes");
    wait_until("ten entries, all applied", || {
        // The binding may be read between its creation and its first entries.
        env.binding("workload-1").is_some_and(|b| {
            let Some(entries) = b["spec"]["bindings"].as_array() else {
                return false;
            };
            entries.len() == 10
                && entries.iter().all(|e| {
                    let r = e["resources"].as_array().cloned().unwrap_or_default();
                    r.len() == 2 && r.iter().all(|r| r["applied"] == true)
                })
                && b["metadata"]["ownerReferences"]
                    .as_array()
                    .is_some_and(|o| o.len() == 10)
        })
    });
    let names: Vec<String> = (0..10).map(|i| format!("s10-{i}")).collect();
    env.delete_crs(&names.iter().map(String::as_str).collect::<Vec<_>>());
    wait_until("the s10 binding removed", || {
        env.binding("workload-1").is_none()
    });

    // 11. A Secret of another type.
    kubectl_stdin(
        env.kc(),
        &["apply", "-f", "-"],
        "apiVersion: v1\nkind: Secret\nmetadata: {name: s11-opaque, namespace: default}\ntype: Opaque\nstringData: {objects.yaml: 'kind: ConfigMap'}\n",
    );
    env.apply(&crs("s11", "", "s11=yes", &[("Secret", "s11-opaque")]));
    env.label("workload-2", "s11=yes");
    wait_until("WrongSecretType", || {
        condition(&env.crs("s11"), "/status/conditions", "ResourcesApplied")
            .is_some_and(|c| c["reason"] == "WrongSecretType")
    });
    let set = env.crs("s11");
    let c = condition(&set, "/status/conditions", "ResourcesApplied").unwrap();
    assert_eq!(
        c["message"],
        "Secret type of resource s11-opaque is not supported"
    );
    assert!(
        env.entry("workload-2", "s11").is_none(),
        "nothing is bound before the resources are read"
    );
}

#[test]
fn bad_input_is_named_and_other_clusters_are_unaffected() {
    let env = Env::start();
    // A Cluster whose kubeconfig points nowhere.
    kubectl_stdin(
        env.kc(),
        &["apply", "-f", "-"],
        "apiVersion: cluster.x-k8s.io/v1beta2\nkind: Cluster\nmetadata: {name: ghost, namespace: default, labels: {fleet: edge}}\nspec: {}\n",
    );
    kubectl(
        env.kc(),
        &[
            "patch",
            "cluster",
            "ghost",
            "--subresource=status",
            "--type=merge",
            "-p",
            r#"{"status":{"initialization":{"infrastructureProvisioned":true}}}"#,
        ],
    );
    let nowhere = "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"https://127.0.0.1:9\"}\ncontexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {token: x}\n";
    kubectl(
        env.kc(),
        &[
            "create",
            "secret",
            "generic",
            "ghost-kubeconfig",
            &format!("--from-literal=value={nowhere}"),
        ],
    );
    env.label("workload-1", "fleet=edge");
    env.apply(&holder(
        "edge-cm",
        false,
        &cm_object("edge", "default", "v"),
    ));
    env.apply(&crs("edge", "", "fleet=edge", &[("ConfigMap", "edge-cm")]));
    env.wait_applied("workload-1", "edge", 1);
    wait_until("the unreachable Cluster named", || {
        let set = env.crs("edge");
        condition(
            &set,
            "/status/deprecated/v1beta1/conditions",
            "ResourcesApplied",
        )
        .is_some_and(|c| {
            c["reason"] == "RemoteClusterClientFailed"
                && c["message"]
                    .as_str()
                    .unwrap_or("")
                    .contains("Cluster default/ghost")
        }) && condition(&set, "/status/conditions", "ResourcesApplied")
            .is_some_and(|c| c["reason"] == "InternalError")
    });

    // Invalid YAML in a value, and an object of a kind the workload cluster does not serve.
    env.apply(
        "apiVersion: v1\nkind: ConfigMap\nmetadata: {name: broken, namespace: default}\ndata:\n  objects.yaml: \"apiVersion: v1\\nkind: ConfigMap\\nmetadata: {name: x\\n  data: [unclosed\\n\"\n",
    );
    env.apply(&crs("broken", "", "broken=yes", &[("ConfigMap", "broken")]));
    env.apply(&holder(
        "unknown-cm",
        false,
        "apiVersion: example.com/v1\nkind: Frobnicator\nmetadata: {name: f, namespace: default}\n",
    ));
    env.apply(&crs(
        "unknown",
        "",
        "broken=yes",
        &[("ConfigMap", "unknown-cm")],
    ));
    env.apply(&holder(
        "fine-cm",
        false,
        &cm_object("fine", "default", "v"),
    ));
    env.apply(&crs("fine", "", "fine=yes", &[("ConfigMap", "fine-cm")]));
    env.label("workload-2", "broken=yes");
    env.label("workload-3", "fine=yes");
    env.wait_applied("workload-3", "fine", 1);
    for (name, wanted) in [
        ("broken", "failed to unmarshal the 1st yaml document"),
        (
            "unknown",
            "no matches for kind \"Frobnicator\" in version \"example.com/v1\"",
        ),
    ] {
        wait_until(&format!("{name} NotApplied"), || {
            let set = env.crs(name);
            condition(
                &set,
                "/status/deprecated/v1beta1/conditions",
                "ResourcesApplied",
            )
            .is_some_and(|c| {
                let m = c["message"].as_str().unwrap_or("");
                c["reason"] == "ApplyFailed"
                    && m.contains(wanted)
                    && m.contains("Cluster default/workload-2")
                    && m.contains(&format!("ConfigMap default/{name}"))
            })
        });
        let e = env.entry("workload-2", name).unwrap();
        assert_eq!(e["resources"][0]["applied"], false, "{e}");
    }
    assert_eq!(
        value_in(&env, "workload-3", "default", "fine").as_deref(),
        Some("v")
    );
    let fine = env.crs("fine");
    assert_eq!(
        condition(&fine, "/status/conditions", "ResourcesApplied").unwrap()["status"],
        "True"
    );
}

#[test]
fn the_cli_creates_lists_and_deletes_clusters_and_shows_sets() {
    let env = Env::start();
    let (code, _, err) = tidegate(
        env.kc(),
        &[
            "cluster",
            "create",
            "extra",
            "--labels",
            "tier=edge,region=eu",
        ],
    );
    assert_eq!(code, 0, "{err}");
    assert!(
        err.contains("workload cluster extra is running at https://127.0.0.1:"),
        "{err}"
    );
    let (code, out, err) = tidegate(env.kc(), &["cluster", "list"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("NAME"), "{out}");
    assert_eq!(out.lines().count(), 5, "{out}");
    assert!(
        out.contains("Provisioned") && out.contains("region=eu,tier=edge"),
        "{out}"
    );

    env.apply(&holder(
        "edge-cm",
        false,
        &cm_object("edge", "default", "v"),
    ));
    env.apply(&crs(
        "edge",
        "Reconcile",
        "tier=edge",
        &[("ConfigMap", "edge-cm")],
    ));
    env.wait_applied("extra", "edge", 1);
    assert_eq!(
        value_in(&env, "extra", "default", "edge").as_deref(),
        Some("v")
    );
    let (code, out, err) = tidegate(env.kc(), &["get", "clusterresourcesets"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("NAME") && out.contains("STRATEGY"), "{out}");
    let row = out.lines().find(|l| l.starts_with("edge")).unwrap();
    assert!(row.contains("Reconcile") && row.contains("True"), "{out}");
    let (code, out, err) = tidegate(env.kc(), &["tree", "clusterresourceset", "edge"]);
    assert_eq!(code, 0, "{err}");
    assert!(
        out.starts_with("ClusterResourceSet/default/edge (Reconcile)\n"),
        "{out}"
    );
    assert!(out.contains("Cluster/default/extra"), "{out}");
    assert!(
        out.contains("ConfigMap/default/edge-cm (applied sha256:"),
        "{out}"
    );
    assert!(out.contains("ConfigMap/default/edge (present)"), "{out}");
    kubectl(&env.workload("extra"), &["delete", "configmap", "edge"]);
    let (_, out, _) = tidegate(env.kc(), &["tree", "clusterresourceset", "edge"]);
    assert!(out.contains("ConfigMap/default/edge (missing)"), "{out}");
    let (code, _, err) = tidegate(env.kc(), &["get", "clusterresourcesetbindings"]);
    assert_eq!(code, 0, "{err}");

    let (code, _, err) = tidegate(env.kc(), &["cluster", "delete", "extra"]);
    assert_eq!(code, 0, "{err}");
    assert!(!env.dir.path().join("data/clusters/default/extra").exists());
    wait_until("the binding of the deleted Cluster removed", || {
        env.binding("extra").is_none()
    });
    let (_, out, _) = tidegate(env.kc(), &["cluster", "list"]);
    assert_eq!(out.lines().count(), 4, "{out}");
}

/// An operator in one ConfigMap: its CRD, a custom resource, its Namespace, its Deployment and
/// a settings ConfigMap (`level`), optionally without the settings.
fn operator(level: Option<&str>) -> String {
    let mut objects = String::from(
        "apiVersion: apiextensions.k8s.io/v1\nkind: CustomResourceDefinition\nmetadata: {name: widgets.example.com}\nspec:\n  group: example.com\n  names: {kind: Widget, plural: widgets, singular: widget, listKind: WidgetList}\n  scope: Namespaced\n  versions:\n  - name: v1\n    served: true\n    storage: true\n    schema:\n      openAPIV3Schema: {type: object, x-kubernetes-preserve-unknown-fields: true}\n---\napiVersion: example.com/v1\nkind: Widget\nmetadata: {name: w1, namespace: operators}\nspec: {size: 1}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata: {name: operator, namespace: operators}\nspec:\n  replicas: 1\n  selector: {matchLabels: {app: op}}\n  template:\n    metadata: {labels: {app: op}}\n    spec:\n      containers: [{name: op, image: example/op:1}]\n---\napiVersion: v1\nkind: Namespace\nmetadata: {name: operators}\n",
    );
    if let Some(level) = level {
        objects.push_str(&format!(
            "---\n{}",
            cm_object("settings", "operators", level)
        ));
    }
    holder("operator", false, &objects)
}

fn inventory_len(env: &Env, cluster: &str, crs: &str) -> usize {
    env.entry(cluster, crs)
        .and_then(|e| e["inventory"]["entries"].as_array().map(Vec::len))
        .unwrap_or(0)
}

#[test]
fn continuous_apply_keeps_workload_clusters_equal_to_their_source() {
    let env = Env::start();
    for c in ["workload-1", "workload-2", "workload-3"] {
        env.label(c, "fleet=all");
    }
    env.apply(&operator(Some("info")));
    env.apply(&crs(
        "operator",
        "ContinuousApply",
        "fleet=all",
        &[("ConfigMap", "operator")],
    ));
    // The CRD and its custom resource, with the Namespace, in one pass; healthy.
    for c in ["workload-1", "workload-2", "workload-3"] {
        env.wait_applied(c, "operator", 1);
        assert_eq!(inventory_len(&env, c, "operator"), 5, "{c}");
        assert!(
            env.in_workload(c, &["widget", "-n", "operators", "w1"])
                .is_some(),
            "{c}"
        );
        assert_eq!(
            value_in(&env, c, "operators", "settings").as_deref(),
            Some("info")
        );
        let d = env
            .in_workload(c, &["deployment", "-n", "operators", "operator"])
            .unwrap();
        assert_eq!(
            d["metadata"]["labels"]["clusterresourceset.addons.cluster.x-k8s.io/name"],
            "operator"
        );
    }
    wait_until("Healthy", || {
        condition(&env.crs("operator"), "/status/conditions", "Healthy")
            .is_some_and(|c| c["status"] == "True")
    });
    // Something made by hand, in a kind the set also applies, is never pruned.
    kubectl_stdin(
        &env.workload("workload-1"),
        &["apply", "-f", "-"],
        &cm_object("handmade", "default", "mine"),
    );

    // A value changed in the source reaches every cluster.
    env.apply(&operator(Some("debug")));
    for c in ["workload-1", "workload-2", "workload-3"] {
        wait_until(&format!("debug in {c}"), || {
            value_in(&env, c, "operators", "settings").as_deref() == Some("debug")
        });
    }
    // An object removed from the source is deleted from every cluster.
    env.apply(&operator(None));
    for c in ["workload-1", "workload-2", "workload-3"] {
        wait_until(&format!("settings pruned from {c}"), || {
            value_in(&env, c, "operators", "settings").is_none()
        });
        wait_until("the inventory follows", || {
            inventory_len(&env, c, "operator") == 4
        });
    }
    env.apply(&operator(Some("info")));
    wait_until("settings back", || {
        value_in(&env, "workload-2", "operators", "settings").as_deref() == Some("info")
    });
    // Drift in a workload cluster is corrected (no interval is set: the watch does it).
    let wk2 = env.workload("workload-2");
    kubectl(
        &wk2,
        &[
            "patch",
            "configmap",
            "settings",
            "-n",
            "operators",
            "--type=merge",
            "-p",
            r#"{"data":{"value":"edited"}}"#,
        ],
    );
    wait_until("the edit reverted", || {
        value_in(&env, "workload-2", "operators", "settings").as_deref() == Some("info")
    });
    kubectl(
        &env.workload("workload-3"),
        &["delete", "deployment", "operator", "-n", "operators"],
    );
    wait_until("the deleted Deployment recreated", || {
        env.in_workload("workload-3", &["deployment", "-n", "operators", "operator"])
            .is_some()
    });

    // A cluster whose label is removed loses the set's objects (and its entry).
    kubectl(env.kc(), &["label", "cluster", "workload-1", "fleet-"]);
    wait_until("workload-1 pruned", || {
        env.in_workload("workload-1", &["deployment", "-n", "operators", "operator"])
            .is_none()
            && env
                .in_workload("workload-1", &["crd", "widgets.example.com"])
                .is_none()
            && env.entry("workload-1", "operator").is_none()
    });
    assert_eq!(
        value_in(&env, "workload-1", "default", "handmade").as_deref(),
        Some("mine")
    );

    // A workload cluster down, then back up, converges.
    let (code, _, err) = tidegate(env.kc(), &["cluster", "stop", "workload-2"]);
    assert_eq!(code, 0, "{err}");
    env.apply(&operator(Some("warn")));
    wait_until("warn in workload-3", || {
        value_in(&env, "workload-3", "operators", "settings").as_deref() == Some("warn")
    });
    wait_until("the unreachable cluster named", || {
        condition(
            &env.crs("operator"),
            "/status/deprecated/v1beta1/conditions",
            "ResourcesApplied",
        )
        .is_some_and(|c| {
            c["message"]
                .as_str()
                .unwrap_or("")
                .contains("Cluster default/workload-2")
        })
    });
    let (code, _, err) = tidegate(env.kc(), &["cluster", "start", "workload-2"]);
    assert_eq!(code, 0, "{err}");
    wait_until("warn in workload-2", || {
        value_in(&env, "workload-2", "operators", "settings").as_deref() == Some("warn")
    });
    wait_until("ResourcesApplied again", || {
        condition(
            &env.crs("operator"),
            "/status/conditions",
            "ResourcesApplied",
        )
        .is_some_and(|c| c["status"] == "True")
    });

    // Deleting the set prunes its objects from every cluster it applied to, except those the
    // source marks `prune: disabled` (the way back to Cluster API's strategies).
    let kept = operator(Some("warn"))
        .replace(
            "  name: settings\n",
            "  name: settings\n      annotations: {kustomize.toolkit.fluxcd.io/prune: disabled}\n",
        )
        .replace(
            "metadata: {name: operators}",
            "metadata: {name: operators, annotations: {kustomize.toolkit.fluxcd.io/prune: disabled}}",
        );
    env.apply(&kept);
    for c in ["workload-2", "workload-3"] {
        wait_until("the annotation applied", || {
            env.in_workload(c, &["configmap", "-n", "operators", "settings"])
                .is_some_and(|o| {
                    o["metadata"]["annotations"]["kustomize.toolkit.fluxcd.io/prune"] == "disabled"
                })
        });
    }
    env.delete_crs(&["operator"]);
    for c in ["workload-2", "workload-3"] {
        assert!(
            env.in_workload(c, &["deployment", "-n", "operators", "operator"])
                .is_none(),
            "{c}"
        );
        assert!(
            env.in_workload(c, &["widget", "-n", "operators", "w1"])
                .is_none(),
            "{c}"
        );
        assert_eq!(
            value_in(&env, c, "operators", "settings").as_deref(),
            Some("warn"),
            "{c}: prune: disabled keeps it"
        );
        assert!(env.binding(c).is_none(), "{c}");
    }
}

#[test]
fn kustomizations_reach_workload_clusters_through_their_kubeconfig_secrets() {
    let env = Env::start();
    let repo = git_support::Repo::new();
    repo.write(
        "edge/app.yaml",
        &cm_object("edge-app", "default", "from-git"),
    );
    repo.commit("edge app");
    let fleet = format!(
        "apiVersion: source.toolkit.fluxcd.io/v1\nkind: GitRepository\nmetadata: {{name: fleet, namespace: default}}\nspec:\n  interval: 1m\n  url: {}\n  ref: {{branch: main}}\n",
        repo.file_url()
    );
    env.apply(&fleet);
    let mut kustomizations = String::new();
    for c in ["workload-2", "workload-3"] {
        kustomizations.push_str(&format!(
            "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata: {{name: edge-{c}, namespace: default}}\nspec:\n  interval: 5m\n  path: ./edge\n  prune: true\n  sourceRef: {{kind: GitRepository, name: fleet}}\n  kubeConfig:\n    secretRef: {{name: {c}-kubeconfig}}\n"
        ));
    }
    env.apply(&kustomizations);
    for c in ["workload-2", "workload-3"] {
        wait_until(&format!("the app in {c}"), || {
            value_in(&env, c, "default", "edge-app").as_deref() == Some("from-git")
        });
    }
    assert_eq!(value_in(&env, "workload-1", "default", "edge-app"), None);
    assert!(
        std::process::Command::new("kubectl")
            .arg("--kubeconfig")
            .arg(env.kc())
            .args(["get", "configmap", "edge-app"])
            .output()
            .map(|o| !o.status.success())
            .unwrap(),
        "nothing lands in the management cluster"
    );
}
