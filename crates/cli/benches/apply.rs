//! `tidegate apply` against `kubectl apply --server-side` on the same embedded API server:
//! 1,000 mixed objects (Namespaces, ConfigMaps, Secrets, Services, Deployments,
//! ServiceAccounts, Roles) — (a) fresh apply, (b) re-apply unchanged, (c) re-apply with 10
//! changed. Wall time and peak memory of each process, and the API requests each made, counted
//! at the server. The workload simulator is off, so nothing but the two tools writes.
//! Run with `cargo bench -p tidegate --bench apply`; figures go to docs/benchmarks.md.

mod support;

use std::path::Path;
use std::sync::atomic::Ordering;
use std::time::Duration;

const NAMESPACES: usize = 10;

fn objects(prefix: &str, version: &str) -> String {
    let mut out = String::new();
    for n in 0..NAMESPACES {
        out.push_str(&format!(
            "---\napiVersion: v1\nkind: Namespace\nmetadata:\n  name: {prefix}-{n}\n"
        ));
    }
    for n in 0..NAMESPACES {
        let ns = format!("{prefix}-{n}");
        for i in 0..30 {
            // The first ten ConfigMaps of the first namespace carry the version: (c) changes them.
            let v = if n == 0 && i < 10 { version } else { "1" };
            out.push_str(&format!("---\napiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm{i}\n  namespace: {ns}\ndata:\n  version: \"{v}\"\n  settings.yaml: |\n    level: info\n    peers: [a, b, c]\n"));
        }
        for i in 0..20 {
            out.push_str(&format!("---\napiVersion: v1\nkind: Secret\nmetadata:\n  name: secret{i}\n  namespace: {ns}\ntype: Opaque\ndata:\n  token: c2VjcmV0LXZhbHVl\n"));
        }
        for i in 0..20 {
            out.push_str(&format!("---\napiVersion: v1\nkind: Service\nmetadata:\n  name: svc{i}\n  namespace: {ns}\nspec:\n  selector: {{app: app{i}}}\n  ports:\n  - {{name: http, port: 80, targetPort: 8080, protocol: TCP}}\n"));
        }
        for i in 0..15 {
            out.push_str(&format!("---\napiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: app{i}\n  namespace: {ns}\nspec:\n  replicas: 1\n  selector:\n    matchLabels: {{app: app{i}}}\n  template:\n    metadata:\n      labels: {{app: app{i}}}\n    spec:\n      containers:\n      - name: main\n        image: nginx:1.27\n        ports:\n        - {{containerPort: 8080, protocol: TCP}}\n        env:\n        - {{name: MODE, value: production}}\n"));
        }
        for i in 0..7 {
            out.push_str(&format!("---\napiVersion: v1\nkind: ServiceAccount\nmetadata:\n  name: sa{i}\n  namespace: {ns}\n"));
            out.push_str(&format!("---\napiVersion: rbac.authorization.k8s.io/v1\nkind: Role\nmetadata:\n  name: role{i}\n  namespace: {ns}\nrules:\n- apiGroups: [\"\"]\n  resources: [configmaps]\n  verbs: [get, list]\n"));
        }
    }
    out
}

struct Run {
    wall: Duration,
    rss_kib: u64,
    requests: u64,
}

fn run(cmd: &[&str], counter: &std::sync::atomic::AtomicU64) -> Run {
    let before = counter.load(Ordering::SeqCst);
    let (wall, rss_kib) = support::time_process(cmd);
    Run {
        wall,
        rss_kib,
        requests: counter.load(Ordering::SeqCst) - before,
    }
}

fn write(dir: &Path, text: &str) {
    std::fs::create_dir_all(dir).expect("mkdir");
    std::fs::write(dir.join("all.yaml"), text).expect("write");
}

fn main() {
    let runtime = tokio::runtime::Runtime::new().expect("runtime");
    let server = runtime
        .block_on(tidegate_apiserver::ApiServer::start(
            tidegate_apiserver::Config::default(),
        ))
        .expect("server starts");
    let tmp = tempfile::tempdir().expect("tempdir");
    let kubeconfig = tmp.path().join("kubeconfig");
    std::fs::write(&kubeconfig, &server.kubeconfig).expect("kubeconfig");
    let kc = kubeconfig.to_str().expect("utf-8 path");
    let cache = tmp.path().join("kube-cache");
    let cache = cache.to_str().expect("utf-8 path");
    let counter = &server.state().requests;
    let tg_dir = tmp.path().join("tidegate");
    let kc_dir = tmp.path().join("kubectl");
    let tg_dir_s = tg_dir.to_str().expect("utf-8 path");
    let kc_dir_s = kc_dir.to_str().expect("utf-8 path");
    let tidegate = env!("CARGO_BIN_EXE_tidegate");
    let tg = [
        tidegate,
        "apply",
        tg_dir_s,
        "--kubeconfig",
        kc,
        "--inventory",
        "bench",
        "--log-level",
        "warn",
    ];
    let kubectl = [
        "/usr/bin/kubectl",
        "--kubeconfig",
        kc,
        "--cache-dir",
        cache,
        "apply",
        "--server-side",
        "--field-manager",
        "bench",
        "-f",
        kc_dir_s,
    ];
    // kubectl's discovery cache is warmed once, as on a workstation.
    run(
        &[
            "/usr/bin/kubectl",
            "--kubeconfig",
            kc,
            "--cache-dir",
            cache,
            "api-resources",
        ],
        counter,
    );
    let mut rows = Vec::new();
    for (label, version) in [
        ("(a) fresh apply", "1"),
        ("(b) re-apply, unchanged", "1"),
        ("(c) re-apply, 10 changed", "2"),
    ] {
        write(&tg_dir, &objects("tg", version));
        write(&kc_dir, &objects("kc", version));
        let t = run(&tg, counter);
        let k = run(&kubectl, counter);
        rows.push((label, t, k));
    }
    println!(
        "1,000 objects (10 Namespaces, 300 ConfigMaps, 200 Secrets, 200 Services, 150 Deployments, 70 ServiceAccounts, 70 Roles)"
    );
    println!(
        "| case | tidegate apply | kubectl apply --server-side | wall ratio | requests (tidegate / kubectl) | peak RSS (tidegate / kubectl) |"
    );
    println!("|---|---|---|---|---|---|");
    for (label, t, k) in rows {
        println!(
            "| {label} | {:.2} s | {:.2} s | {:.1}× | {} / {} | {:.1} / {:.1} MiB |",
            t.wall.as_secs_f64(),
            k.wall.as_secs_f64(),
            k.wall.as_secs_f64() / t.wall.as_secs_f64(),
            t.requests,
            k.requests,
            t.rss_kib as f64 / 1024.0,
            k.rss_kib as f64 / 1024.0,
        );
    }
    runtime.block_on(server.shutdown());
}
