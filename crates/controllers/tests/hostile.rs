//! Bad input and hostile sources never stop the Kustomization controller: an artifact server
//! that never answers holds no worker for long, and every bad tree in Git gets a clear message
//! while nothing is applied or pruned.

mod support;

use std::time::Duration;

use serde_json::{Value, json};
use support::*;
use tidegate_source::archive::ArchiveWriter;
use tidegate_source::storage::Storage;

/// A GitRepository whose status carries `artifact`, as the source controller would write it.
fn fake_source(env: &Env, name: &str, artifact: Value) {
    env.server.ok_stdin(
        &["apply", "-f", "-"],
        &source(name, "https://example.invalid/repo"),
    );
    let status = json!({"status": {"artifact": artifact, "conditions": [{
        "type": "Ready", "status": "True", "reason": "Succeeded", "message": "stored",
        "lastTransitionTime": "2026-01-01T00:00:00Z"}]}});
    env.server.ok(&[
        "patch",
        &format!("gitrepository/{name}"),
        "--subresource=status",
        "--type=merge",
        "-p",
        &status.to_string(),
    ]);
}

/// Packs `files` into the storage as `name`'s artifact; returns the status artifact.
fn store_artifact(storage: &Storage, name: &str, revision: &str, files: &[(&str, &str)]) -> Value {
    let path = Storage::artifact_path("GitRepository", "default", name, "a.tar.gz");
    let written = storage
        .write_atomic(&path, |out| {
            let mut w = ArchiveWriter::new(out);
            for (file, content) in files {
                w.add_file(file, false, content.as_bytes())?;
            }
            w.finish()
        })
        .expect("artifact stored");
    json!({"path": path, "url": storage.url(&path), "revision": revision,
           "digest": written.digest, "lastUpdateTime": "2026-01-01T00:00:00Z"})
}

fn ks_on(name: &str, source: &str) -> String {
    format!(
        "apiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {name}\n  namespace: default\nspec:\n  interval: 1h\n  path: ./\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: {source}\n"
    )
}

/// Four Kustomizations read an artifact from a server that accepts connections and never
/// answers; with four workers (the default `--concurrent`), a fifth Kustomization on a healthy
/// source is applied all the same, and the stuck ones say what they wait for.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_source_that_never_answers_does_not_starve_the_others() {
    let env = start_without_source_controller().await;
    let hole = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let hole_addr = hole.local_addr().expect("addr");
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = hole.accept().await {
            held.push(conn);
        }
    });
    fake_source(
        &env,
        "stuck",
        json!({"path": "x", "url": format!("http://{hole_addr}/artifact.tar.gz"),
               "revision": "main@sha1:1111111111111111111111111111111111111111",
               "digest": "sha256:00", "lastUpdateTime": "2026-01-01T00:00:00Z"}),
    );
    for i in 0..4 {
        env.server.ok_stdin(
            &["apply", "-f", "-"],
            &ks_on(&format!("stuck-{i}"), "stuck"),
        );
    }
    // Let the stuck ones take the workers first.
    tokio::time::sleep(Duration::from_secs(2)).await;
    let good = store_artifact(
        &env.storage,
        "good",
        "main@sha1:2222222222222222222222222222222222222222",
        &[(
            "cm.yaml",
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: healthy\n  namespace: default\ndata:\n  key: ok\n",
        )],
    );
    fake_source(&env, "good", good);
    env.server
        .ok_stdin(&["apply", "-f", "-"], &ks_on("healthy", "good"));
    ks_until(
        &env,
        "healthy",
        "the healthy source applied",
        applied("main@sha1:2222222222222222222222222222222222222222"),
    )
    .await;
    assert_eq!(data_of(&env, "configmap/healthy").as_deref(), Some("ok"));
    let stuck = ks_until(&env, "stuck-0", "the stuck one says why", |k| {
        condition(k, "Reconciling").is_some_and(|c| {
            c["message"]
                .as_str()
                .is_some_and(|m| m.contains("still in progress"))
        })
    })
    .await;
    assert!(!is(&stuck, "Ready", "True"), "{stuck:#}");
}

/// The inventory ids of a Kustomization.
fn inventory(k: &Value) -> Vec<String> {
    k["status"]["inventory"]["entries"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|e| e["id"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

fn alias_bomb() -> String {
    common::alias_bomb(
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: bomb\n  namespace: apps\ndata:\n",
        "  ",
    )
}

/// A bad tree: what it is, its files, and the text its message must hold.
type BadTree = (&'static str, Vec<(&'static str, String)>, &'static str);

fn bad_trees() -> Vec<BadTree> {
    let cm = |name: &str, extra: &str| {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: apps\n{extra}"
        )
    };
    let extra = || ("extra.yaml", cm("extra", "data:\n  key: x\n"));
    let ks = |body: &str| ("kustomization.yaml", body.to_string());
    let big = format!("data:\n  key: \"{}\"\n", "x".repeat(4 << 20));
    let deep = format!("{}1{}", "[".repeat(300), "]".repeat(300));
    vec![
        ("duplicate key", vec![extra(), ("dup.yaml", cm("dup", "data:\n  a: \"1\"\ndata:\n  b: \"2\"\n"))], "mapping key \"data\" already defined"),
        ("invalid YAML", vec![extra(), ("bad.yaml", "apiVersion: v1\nkind: [\n".into())], "bad.yaml"),
        ("alias bomb", vec![extra(), ("bomb.yaml", alias_bomb())], "document contains excessive aliasing"),
        ("slash in a name", vec![extra(), ("slash.yaml", cm("a/b", ""))], "invalid resource name \"a/b\": may not contain '/'"),
        ("dot-dot name", vec![extra(), ("dots.yaml", cm("..", ""))], "invalid resource name \"..\": may not be '..'"),
        ("object over 3 MiB", vec![extra(), ("big.yaml", cm("big", &big))], "more than an API server accepts in one request"),
        ("no kind", vec![extra(), ("nokind.yaml", "apiVersion: v1\nmetadata:\n  name: x\n".into())], "kind"),
        ("nesting too deep", vec![extra(), ("deep.yaml", format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: deep\n  namespace: apps\ndata: {deep}\n"))], "recursion limit exceeded"),
        ("not UTF-8", vec![extra(), ("binary.yaml", String::from_utf8_lossy(b"\xff\xfe\x00garbage").into_owned() + "\u{0}\u{1}: [")], "binary.yaml"),
        ("missing resource", vec![extra(), ks("resources:\n- extra.yaml\n- missing.yaml\n")], "missing.yaml"),
        // Found by fuzzing: an anchor and an alias character with a syntax error made the
        // alias check loop forever.
        ("broken anchor in kustomization.yaml", vec![extra(), ks("resources:\n- extra.yaml\n&*:\n")], "kustomization.yaml"),
        ("unknown kustomization field", vec![extra(), ks("resources:\n- extra.yaml\nbogusField: 1\n")], "bogusField"),
        ("resource outside the artifact", vec![extra(), ks("resources:\n- extra.yaml\n- ../../../../../../etc/passwd\n")], "passwd"),
        ("exec plugin", vec![extra(), ks("resources:\n- extra.yaml\ngenerators:\n- gen.yaml\n"), ("gen.yaml", "apiVersion: someteam.example.com/v1\nkind: ChartInflator\nmetadata:\n  name: x\n  annotations:\n    config.kubernetes.io/function: |\n      exec:\n        path: /bin/sh\n".into())], "is a KRM function (container or exec); Tidegate runs only kustomize's builtin generators and transformers"),
        ("helm charts", vec![extra(), ks("resources:\n- extra.yaml\nhelmCharts:\n- name: x\n  repo: https://example.invalid\n"), ], "helm"),
        ("SOPS-encrypted Secret", vec![extra(), ("secret.yaml", "apiVersion: v1\nkind: Secret\nmetadata:\n  name: s\n  namespace: apps\ndata:\n  k: ENC[AES256_GCM,data:x,iv:y,tag:z,type:str]\nsops:\n  mac: x\n".into())], "is SOPS encrypted, configuring decryption is required"),
        ("missing namespace", vec![extra(), ("elsewhere.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n  namespace: nowhere\n".into())], "namespaces \"nowhere\" not found"),
        ("unknown kind", vec![extra(), ("gadget.yaml", "apiVersion: example.com/v1\nkind: Gadget\nmetadata:\n  name: x\n  namespace: apps\n".into())], "Gadget"),
        ("invalid name", vec![extra(), ("invalid.yaml", cm("Not_Valid", ""))], "metadata.name"),
        ("defined twice", vec![extra(), ("twice.yaml", cm("extra", "data:\n  key: y\n"))], "extra"),
        ("generator file missing", vec![extra(), ks("resources:\n- extra.yaml\nconfigMapGenerator:\n- name: gen\n  namespace: apps\n  files:\n  - nothere.txt\n")], "nothere.txt"),
        ("patch without target", vec![extra(), ks("resources:\n- extra.yaml\npatches:\n- path: p.yaml\n"), ("p.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: absent\n  namespace: apps\ndata:\n  k: v\n".into())], "absent"),
        ("empty name", vec![extra(), ("noname.yaml", "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: \"\"\n  namespace: apps\n".into())], "name"),
        ("remote resource", vec![extra(), ks("resources:\n- extra.yaml\n- https://example.invalid/base\n")], "example.invalid"),
        ("component that is not one", vec![extra(), ks("resources:\n- extra.yaml\ncomponents:\n- comp\n"), ("comp/kustomization.yaml", "resources: []\n".into())], "comp"),
        ("JSON with trailing garbage", vec![extra(), ("trailing.yaml", "{\"apiVersion\": \"v1\", \"kind\": \"ConfigMap\", \"metadata\": {\"name\": \"t\", \"namespace\": \"apps\"}} }}".into())], "trailing.yaml"),
    ]
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn bad_trees_in_git_apply_nothing_and_prune_nothing() {
    let env = start().await;
    let repo = Repo::new();
    repo.write("deploy/namespace.yaml", NAMESPACE);
    repo.write("deploy/keep.yaml", &config_map("keep", "kept"));
    let good = push(&env, &repo, "good");
    env.server
        .ok_stdin(&["apply", "-f", "-"], &source("repo", &repo.file_url()));
    env.server
        .ok_stdin(&["apply", "-f", "-"], &kustomization("app", "./deploy", ""));
    let k = ks_until(&env, "app", "the good tree applied", applied(&good)).await;
    let good_inventory = inventory(&k);
    assert_eq!(good_inventory.len(), 2);

    let mut wrong = Vec::new();
    let cases = bad_trees();
    let n = cases.len();
    for (what, files, expected) in cases {
        let deploy = repo.work().join("deploy");
        std::fs::remove_dir_all(&deploy).expect("clear deploy");
        std::fs::create_dir_all(&deploy).expect("deploy");
        repo.write("deploy/namespace.yaml", NAMESPACE);
        for (file, content) in &files {
            repo.write(&format!("deploy/{file}"), content);
        }
        let revision = push(&env, &repo, what);
        // Either outcome ends the wait; only a failure is right.
        let k = ks_until(&env, "app", what, |k| {
            k["status"]["lastAttemptedRevision"] == revision.as_str()
                && (is(k, "Ready", "False") || is(k, "Ready", "True"))
        })
        .await;
        if is(&k, "Ready", "True") {
            wrong.push(format!("{what}: reconciled as if nothing were wrong"));
        }
        let message = condition(&k, "Ready")
            .map(|c| c["message"].clone())
            .unwrap_or_default();
        let message = message.as_str().unwrap_or("");
        if !message.contains(expected) {
            wrong.push(format!("{what}: want {expected:?} in {message:?}"));
        }
        if message.len() > 4096 {
            wrong.push(format!("{what}: a {} byte message", message.len()));
        }
        if inventory(&k) != good_inventory {
            wrong.push(format!("{what}: inventory changed to {:?}", inventory(&k)));
        }
        if data_of(&env, "-napps configmap/keep").as_deref() != Some("kept") {
            wrong.push(format!("{what}: keep was pruned or changed"));
        }
        if get(&env, "-napps configmap/extra").is_some() {
            wrong.push(format!("{what}: extra was applied"));
            env.server.ok(&["delete", "-napps", "configmap/extra"]);
        }
    }
    assert!(wrong.is_empty(), "{}", wrong.join("\n"));
    assert!(n >= 25, "{n} cases");
}
