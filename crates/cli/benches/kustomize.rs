//! `tidegate kustomize` against `kubectl kustomize` (kustomize v5.5): wall time and peak memory
//! of one process per build on (a) a small app, (b) a generated overlay of 2,000 objects with
//! generators, patches, a prefix and labels, (c) 50 independent overlays built at once, and
//! (d) one root including 300 kustomization directories.
//! Run with `cargo bench -p tidegate --bench kustomize`; figures go to docs/benchmarks.md.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tidegate() -> &'static str {
    env!("CARGO_BIN_EXE_tidegate")
}

/// Runs a command on `dir` under /usr/bin/time and returns (wall, peak RSS in KiB).
fn measure(cmd: &[&str], dir: &Path) -> (Duration, u64) {
    let dir = dir.to_str().expect("utf-8 path");
    let mut full: Vec<&str> = cmd.to_vec();
    full.push(dir);
    support::time_process(&full)
}

fn best_of(n: usize, cmd: &[&str], dir: &Path) -> (Duration, u64) {
    (0..n)
        .map(|_| measure(cmd, dir))
        .min_by_key(|m| m.0)
        .expect("runs")
}

fn write(path: &Path, text: &str) {
    std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
    std::fs::write(path, text).expect("write");
}

/// A base of 1,950 objects (Deployments, Services, ConfigMaps) and an overlay adding 50
/// generated ConfigMaps, a prefix, labels, annotations and patches over every Deployment.
fn big_overlay(root: &Path) -> PathBuf {
    let mut deploy = String::new();
    let mut svc = String::new();
    let mut cms = String::new();
    for i in 0..650 {
        deploy.push_str(&format!(
            "---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app{i}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: app{i}}}\n  template:\n    metadata:\n      labels: {{app: app{i}}}\n    spec:\n      containers:\n      - name: main\n        image: nginx:1.25\n        envFrom:\n        - configMapRef: {{name: gen{}}}\n        env:\n        - {{name: A, value: \"1\"}}\n",
            i % 50
        ));
        svc.push_str(&format!(
            "---\napiVersion: v1\nkind: Service\nmetadata:\n  name: app{i}\nspec:\n  selector: {{app: app{i}}}\n  ports:\n  - {{port: 80, targetPort: 8080}}\n"
        ));
        cms.push_str(&format!(
            "---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cfg{i}\ndata:\n  key: value{i}\n"
        ));
    }
    write(&root.join("base/deployments.yaml"), &deploy);
    write(&root.join("base/services.yaml"), &svc);
    write(&root.join("base/configmaps.yaml"), &cms);
    write(
        &root.join("base/kustomization.yaml"),
        "resources:\n- deployments.yaml\n- services.yaml\n- configmaps.yaml\n",
    );
    let mut k = String::from(
        "resources:\n- ../base\nnamePrefix: prod-\nnamespace: prod\nlabels:\n- pairs: {team: web}\n  includeSelectors: false\n  includeTemplates: true\ncommonAnnotations: {owner: platform}\nimages:\n- name: nginx\n  newTag: \"1.27\"\npatches:\n- target: {kind: Deployment}\n  patch: |\n    apiVersion: apps/v1\n    kind: Deployment\n    metadata:\n      name: any\n    spec:\n      template:\n        spec:\n          containers:\n          - name: main\n            env:\n            - {name: B, value: \"2\"}\n- target: {kind: Service}\n  patch: |\n    - op: replace\n      path: /spec/ports/0/targetPort\n      value: 9090\nconfigMapGenerator:\n",
    );
    for i in 0..50 {
        k.push_str(&format!("- name: gen{i}\n  literals: [A={i}, B=b{i}]\n"));
    }
    write(&root.join("overlay/kustomization.yaml"), &k);
    root.join("overlay")
}

/// (d) 300 kustomization directories `a0`…`a299`, each `resources: [cm.yaml]`, included by
/// one root: every directory's configuration is merged into its parent's.
fn many_directories(root: &Path) -> PathBuf {
    let mut k = String::from("resources:\n");
    for i in 0..300 {
        write(
            &root.join(format!("dirs/a{i}/cm.yaml")),
            &format!("apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\ndata: {{k: v}}\n"),
        );
        write(
            &root.join(format!("dirs/a{i}/kustomization.yaml")),
            "resources: [cm.yaml]\n",
        );
        k.push_str(&format!("- a{i}\n"));
    }
    write(&root.join("dirs/kustomization.yaml"), &k);
    root.join("dirs")
}

fn main() {
    let fixtures = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../kustomize/tests/fixtures/features/app-podinfo-production");
    let small = fixtures.join("overlays/production");
    let tmp = tempfile::tempdir().expect("tempdir");
    let big = big_overlay(tmp.path());
    let dirs = many_directories(tmp.path());
    let rounds = 5;
    println!(
        "case                         tidegate         kubectl          ratio (kubectl/tidegate)"
    );
    for (name, dir) in [
        ("(a) small app", &small),
        ("(b) 2,000-object overlay", &big),
        ("(d) 300 directories", &dirs),
    ] {
        let root = if name.starts_with("(a)") {
            fixtures.clone()
        } else {
            tmp.path().to_path_buf()
        };
        let root_s = root.display().to_string();
        let ours = best_of(rounds, &[tidegate(), "kustomize", "--root", &root_s], dir);
        let theirs = best_of(rounds, &["kubectl", "kustomize"], dir);
        println!(
            "{name:28} {:>7.1} ms {:>6} KiB  {:>7.1} ms {:>6} KiB  wall {:.1}x, memory {:.1}x",
            ours.0.as_secs_f64() * 1e3,
            ours.1,
            theirs.0.as_secs_f64() * 1e3,
            theirs.1,
            theirs.0.as_secs_f64() / ours.0.as_secs_f64(),
            theirs.1 as f64 / ours.1.max(1) as f64
        );
    }
    // (c) 50 independent overlays of the small app, all started at once.
    let many: Vec<PathBuf> = (0..50)
        .map(|i| {
            let d = tmp.path().join(format!("many/o{i}"));
            write(
                &d.join("kustomization.yaml"),
                &format!("resources:\n- ../../big-base\nnamePrefix: t{i}-\nnamespace: tenant{i}\n"),
            );
            d
        })
        .collect();
    // A shared 200-object base for the 50 overlays.
    let mut base = String::new();
    for i in 0..100 {
        base.push_str(&format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: c{i}\ndata: {{k: v}}\n---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: d{i}\nspec:\n  template:\n    spec:\n      containers:\n      - name: c\n        image: busybox\n        envFrom:\n        - configMapRef: {{name: c{i}}}\n"));
    }
    write(&tmp.path().join("big-base/all.yaml"), &base);
    write(
        &tmp.path().join("big-base/kustomization.yaml"),
        "resources: [all.yaml]\n",
    );
    let root_s = tmp.path().display().to_string();
    let run_all = |cmd: &[&str]| -> Duration {
        let start = Instant::now();
        let children: Vec<_> = many
            .iter()
            .map(|d| {
                Command::new(cmd[0])
                    .args(&cmd[1..])
                    .arg(d)
                    .stdout(Stdio::null())
                    .spawn()
                    .expect("spawns")
            })
            .collect();
        for mut c in children {
            assert!(c.wait().expect("waits").success());
        }
        start.elapsed()
    };
    let ours = (0..3)
        .map(|_| run_all(&[tidegate(), "kustomize", "--root", &root_s]))
        .min()
        .expect("runs");
    let theirs = (0..3)
        .map(|_| run_all(&["kubectl", "kustomize"]))
        .min()
        .expect("runs");
    // In-process: 50 builds on threads of one process (how the controller builds).
    let start = Instant::now();
    std::thread::scope(|s| {
        for d in &many {
            let root = tmp.path();
            s.spawn(move || {
                tidegate_kustomize::Builder::new(root, tidegate_kustomize::Options::default())
                    .and_then(|b| b.build(d))
                    .expect("builds")
            });
        }
    });
    let threads = start.elapsed();
    println!(
        "(c) 50 overlays at once      {:>7.1} ms (processes), {:.1} ms (threads, one process)   kubectl {:.1} ms   wall {:.1}x (processes), {:.1}x (threads)",
        ours.as_secs_f64() * 1e3,
        threads.as_secs_f64() * 1e3,
        theirs.as_secs_f64() * 1e3,
        theirs.as_secs_f64() / ours.as_secs_f64(),
        theirs.as_secs_f64() / threads.as_secs_f64()
    );
}
