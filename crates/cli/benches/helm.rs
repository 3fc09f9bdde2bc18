//! `tidegate helm template` against `helm template` (helm v4.1.4): wall time and peak memory of
//! one process per render on (a) a small chart (podinfo), (b) the largest chart of the corpus
//! (kube-prometheus-stack with its subcharts, default values), (c) 50 charts of the corpus
//! rendered at once, and (d) 50 charts that generate no keys rendered at once. Run with
//! `cargo bench -p tidegate --bench helm`; figures go to docs/benchmarks.md. helm comes from
//! `$TIDEGATE_HELM4` or the test tools' cache.

mod support;

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn tidegate() -> &'static str {
    env!("CARGO_BIN_EXE_tidegate")
}

fn helm() -> String {
    std::env::var("TIDEGATE_HELM4").unwrap_or_else(|_| {
        let tools = std::env::var("TIDEGATE_TOOLS").unwrap_or_else(|_| {
            format!(
                "{}/.cache/tidegate-tools",
                std::env::var("HOME").unwrap_or_default()
            )
        });
        format!("{tools}/helm-v4.1.4/helm")
    })
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../helm/tests/corpus/charts")
}

fn best_of(n: usize, cmd: &[&str]) -> (Duration, u64) {
    (0..n)
        .map(|_| support::time_process(cmd))
        .min_by_key(|m| m.0)
        .expect("runs")
}

fn main() {
    let helm = helm();
    assert!(
        Path::new(&helm).exists(),
        "helm v4.1.4 is missing at {helm}"
    );
    let corpus = corpus();
    let podinfo = corpus.join("podinfo-podinfo");
    let kps = corpus.join("prometheus-kube-prometheus-stack");
    let (podinfo, kps) = (podinfo.display().to_string(), kps.display().to_string());
    println!(
        "case                              tidegate             helm                ratio (helm/tidegate)"
    );
    let cases: [(&str, Vec<&str>); 2] = [
        ("(a) podinfo", vec!["template", &podinfo]),
        ("(b) kube-prometheus-stack", vec!["template", &kps]),
    ];
    for (name, args) in &cases {
        let mut ours_cmd = vec![tidegate(), "helm"];
        ours_cmd.extend(args.iter().copied());
        let mut theirs_cmd = vec![helm.as_str()];
        theirs_cmd.extend(args.iter().copied());
        let ours = best_of(5, &ours_cmd);
        let theirs = best_of(5, &theirs_cmd);
        println!(
            "{name:33} {:>7.1} ms {:>7} KiB  {:>7.1} ms {:>7} KiB  wall {:.2}x, memory {:.2}x",
            ours.0.as_secs_f64() * 1e3,
            ours.1,
            theirs.0.as_secs_f64() * 1e3,
            theirs.1,
            theirs.0.as_secs_f64() / ours.0.as_secs_f64(),
            theirs.1 as f64 / ours.1.max(1) as f64
        );
    }
    // (c) 50 charts of the corpus (those helm renders with their defaults), all at once;
    // (d) the same for 50 charts whose templates generate no keys (RSA key generation, as
    // fast in AWS-LC as in Go, bounds (c): bitnami etcd makes a 4096-bit key).
    let mut renderable: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .expect("corpus")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.is_dir()
                && !p
                    .file_name()
                    .is_some_and(|n| n.to_string_lossy().starts_with("helm-"))
        })
        .filter(|p| {
            Command::new(&helm)
                .arg("template")
                .arg(p)
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .status()
                .is_ok_and(|s| s.success())
        })
        .collect();
    renderable.sort();
    let first_50 = |charts: Vec<PathBuf>| -> Vec<PathBuf> {
        let charts: Vec<PathBuf> = charts.into_iter().take(50).collect();
        assert_eq!(charts.len(), 50, "fewer than 50 renderable charts");
        charts
    };
    let keyless: Vec<PathBuf> = renderable
        .iter()
        .filter(|c| !generates_keys(c))
        .cloned()
        .collect();
    at_once("(c) 50 charts at once", &first_50(renderable), &helm);
    at_once(
        "(d) 50 charts without key generation",
        &first_50(keyless),
        &helm,
    );
}

/// Whether any template of the chart (its subcharts' included) calls a key-generating
/// function.
fn generates_keys(dir: &Path) -> bool {
    const KEYS: [&str; 4] = [
        "genPrivateKey",
        "genCA",
        "genSelfSignedCert",
        "genSignedCert",
    ];
    let Ok(entries) = std::fs::read_dir(dir) else {
        return false;
    };
    entries.filter_map(|e| e.ok()).any(|e| {
        let p = e.path();
        if p.is_dir() {
            return generates_keys(&p);
        }
        std::fs::read_to_string(&p).is_ok_and(|t| KEYS.iter().any(|k| t.contains(k)))
    })
}

/// Renders `charts` all at once: one process each (tidegate, then helm), and threads of
/// this process (how a controller renders); best of three.
fn at_once(name: &str, charts: &[PathBuf], helm: &str) {
    let run_all = |cmd: &[&str]| -> Duration {
        let start = Instant::now();
        let children: Vec<_> = charts
            .iter()
            .map(|c| {
                Command::new(cmd[0])
                    .args(&cmd[1..])
                    .arg(c)
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
        .map(|_| run_all(&[tidegate(), "helm", "template"]))
        .min()
        .expect("runs");
    let theirs = (0..3)
        .map(|_| run_all(&[helm, "template"]))
        .min()
        .expect("runs");
    let threads = (0..3)
        .map(|_| {
            let start = Instant::now();
            std::thread::scope(|s| {
                for c in charts {
                    s.spawn(move || {
                        tidegate_helm::action::template(
                            c,
                            &tidegate_helm::action::TemplateOptions::default(),
                        )
                        .expect("renders")
                    });
                }
            });
            start.elapsed()
        })
        .min()
        .expect("runs");
    println!(
        "{name:33} {:>7.1} ms (processes), {:.1} ms (threads, one process)   helm {:.1} ms   wall {:.2}x (processes), {:.2}x (threads)",
        ours.as_secs_f64() * 1e3,
        threads.as_secs_f64() * 1e3,
        theirs.as_secs_f64() * 1e3,
        theirs.as_secs_f64() / ours.as_secs_f64(),
        theirs.as_secs_f64() / threads.as_secs_f64()
    );
}
