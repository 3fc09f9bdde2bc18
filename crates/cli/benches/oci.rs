//! Pulling an OCI artifact of 10,000 files: `tidegate pull artifact` (download, digest check,
//! safe extraction) against `skopeo copy` of the same artifact to a local directory (download
//! only), and against `skopeo copy` followed by `tar xzf` of the layer (the same work as ours),
//! all from Debian's docker-registry on loopback. Wall time and peak RSS of each process tree,
//! median of five alternating runs; each pulled tree is checked to hold the 10,000 files.
//! Run with `cargo bench -p tidegate --bench oci`; figures go to docs/benchmarks.md.

#[path = "../../source/tests/registry_support/mod.rs"]
mod registry_support;
mod support;

use std::path::Path;
use std::process::Command;
use std::time::Duration;

const DIRS: usize = 100;
const FILES_PER_DIR: usize = 100;

fn make_tree(root: &Path) {
    for d in 0..DIRS {
        let dir = root.join(format!("apps/app-{d:03}"));
        std::fs::create_dir_all(&dir).unwrap();
        for f in 0..FILES_PER_DIR {
            let body = format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: app-{d}-cm-{f}\n  namespace: app-{d}\ndata:\n  index: \"{f}\"\n  settings.yaml: |\n    replicas: {}\n    image: registry.example/app-{d}:1.{f}.0\n    peers: [a, b, c, d]\n",
                f % 5 + 1
            );
            std::fs::write(dir.join(format!("cm-{f:03}.yaml")), body).unwrap();
        }
    }
}

fn yaml_files(dir: &Path) -> usize {
    let out = Command::new("find")
        .arg(dir)
        .args(["-name", "*.yaml"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout).lines().count()
}

fn median(mut v: Vec<(Duration, u64)>) -> (Duration, u64) {
    v.sort_by_key(|x| x.0);
    let t = v[v.len() / 2].0;
    let mut rss: Vec<u64> = v.iter().map(|x| x.1).collect();
    rss.sort();
    (t, rss[rss.len() / 2])
}

fn main() {
    let tmp = tempfile::tempdir().unwrap();
    let src = tmp.path().join("src");
    make_tree(&src);
    let reg = registry_support::Registry::start(registry_support::Mode::Plain);
    let url = reg.url("bench/manifests:v1");
    let tidegate = env!("CARGO_BIN_EXE_tidegate");
    let out = Command::new(tidegate)
        .args([
            "push",
            "artifact",
            &url,
            "--path",
            src.to_str().unwrap(),
            "--source",
            "bench",
            "--revision",
            "v1",
        ])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let docker = format!("docker://{}/bench/manifests:v1", reg.host);
    let (mut ours, mut copy, mut copy_untar) = (Vec::new(), Vec::new(), Vec::new());
    for i in 0..5 {
        let dir = tmp.path().join(format!("ours-{i}"));
        std::fs::create_dir_all(&dir).unwrap();
        ours.push(support::time_process(&[
            tidegate,
            "pull",
            "artifact",
            &url,
            "-o",
            dir.to_str().unwrap(),
        ]));
        assert_eq!(yaml_files(&dir), DIRS * FILES_PER_DIR);
        let dir = tmp.path().join(format!("skopeo-{i}"));
        copy.push(support::time_process(&[
            "skopeo",
            "copy",
            "-q",
            "--src-tls-verify=false",
            &docker,
            &format!("dir:{}", dir.display()),
        ]));
        let dir = tmp.path().join(format!("skopeo-tar-{i}"));
        let script = format!(
            "skopeo copy -q --src-tls-verify=false {docker} dir:{d} && mkdir {d}/x && for b in {d}/*; do if gzip -t \"$b\" 2>/dev/null; then tar xzf \"$b\" -C {d}/x; fi; done",
            d = dir.display()
        );
        copy_untar.push(support::time_process(&["sh", "-c", &script]));
        assert_eq!(yaml_files(&dir.join("x")), DIRS * FILES_PER_DIR);
    }
    let (ot, orss) = median(ours);
    println!(
        "pull a {}-file artifact from docker-registry (median of 5)",
        DIRS * FILES_PER_DIR
    );
    println!(
        "  tidegate pull artifact         : {:>8.3} s  peak RSS {:>7} KiB",
        ot.as_secs_f64(),
        orss
    );
    for (label, runs) in [
        ("skopeo copy (no extraction)    ", copy),
        ("skopeo copy + tar xzf          ", copy_untar),
    ] {
        let (pt, prss) = median(runs);
        println!(
            "  {label}: {:>8.3} s  peak RSS {:>7} KiB  (tidegate/peer: {:.2}x time, {:.2}x RSS)",
            pt.as_secs_f64(),
            prss,
            ot.as_secs_f64() / pt.as_secs_f64(),
            orss as f64 / prss as f64
        );
    }
}
