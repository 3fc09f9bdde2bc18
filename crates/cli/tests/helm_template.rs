//! `tidegate helm template` against `helm template` (helm v4.1.4) with helm's flags, on charts
//! of the Helm corpus: standard output, standard error and, with `--output-dir`, the files
//! written must be the same. Random names and keys differ between any two runs, so two lines
//! that differ count as equal when they have the same shape (letters, digits, `+` and `/` read
//! as `x`). helm is found at `$TIDEGATE_HELM4` or in the test tools' cache; without it the test
//! fails.

use std::path::{Path, PathBuf};
use std::process::Command;

/// helm v4.1.4, which must be installed.
fn helm() -> PathBuf {
    let helm = match std::env::var("TIDEGATE_HELM4") {
        Ok(p) => PathBuf::from(p),
        Err(_) => std::env::var("TIDEGATE_TOOLS")
            .map(PathBuf::from)
            .unwrap_or_else(|_| {
                PathBuf::from(std::env::var("HOME").unwrap_or_default())
                    .join(".cache/tidegate-tools")
            })
            .join("helm-v4.1.4/helm"),
    };
    assert!(
        helm.exists(),
        "helm v4.1.4 is missing at {} (scripts/install-test-tools.sh installs it)",
        helm.display()
    );
    helm
}

/// `helm` (with its caches under `scratch`) or `tidegate helm`.
fn command(who: &str, helm: &Path, scratch: &Path) -> Command {
    if who == "helm" {
        let mut c = Command::new(helm);
        c.env("HELM_CACHE_HOME", scratch.join("cache"))
            .env("HELM_CONFIG_HOME", scratch.join("config"))
            .env("HELM_DATA_HOME", scratch.join("data"));
        c
    } else {
        let mut c = Command::new(env!("CARGO_BIN_EXE_tidegate"));
        c.arg("helm");
        c
    }
}

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../helm/tests/corpus/charts")
}

/// Standard output, then standard error, then the files under `out_dir` (in name order).
fn run(cmd: &mut Command, out_dir: &Path) -> String {
    let out = cmd.output().expect("runs");
    let mut text = format!(
        "{}|stderr|{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    let mut files = Vec::new();
    collect(out_dir, &mut files);
    files.sort();
    for f in files {
        text.push_str(&format!(
            "|file {}|{}",
            f.strip_prefix(out_dir).unwrap_or(&f).display(),
            std::fs::read_to_string(&f).unwrap_or_default()
        ));
    }
    let _ = std::fs::remove_dir_all(out_dir);
    text.replace(&out_dir.display().to_string(), "OUT")
}

fn collect(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for e in entries.flatten() {
        let p = e.path();
        if p.is_dir() {
            collect(&p, out);
        } else {
            out.push(p);
        }
    }
}

fn shape(line: &str) -> String {
    line.chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '+' || c == '/' {
                'x'
            } else {
                c
            }
        })
        .collect()
}

fn same(a: &str, b: &str) -> bool {
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    la.len() == lb.len()
        && la
            .iter()
            .zip(&lb)
            .all(|(x, y)| x == y || shape(x) == shape(y))
}

#[test]
fn flags_as_helm() {
    let helm = helm();
    let charts = [
        "podinfo-podinfo",
        "ingress-nginx-ingress-nginx",
        "cert-manager-cert-manager",
        "bitnami-postgresql",
        "helm-chart-with-lib-dep",
        "bjw-s-app-template",
    ];
    let flags: &[&[&str]] = &[
        &["--include-crds"],
        &["--skip-crds"],
        &["--skip-tests"],
        &["--no-hooks"],
        &["--is-upgrade"],
        &["--kube-version", "1.25.0"],
        &["--kube-version", "v1.30"],
        &["--kube-version", "bad"],
        &[
            "-a",
            "monitoring.coreos.com/v1",
            "-a",
            "networking.k8s.io/v1/Ingress",
        ],
        &["-n", "other-ns"],
        &["--name-template", "foo-bar"],
        &["--set", "replicaCount=3,image.tag=x"],
        &["--set-string", "a.b=1", "--set-json", r#"c={"d":[1,2]}"#],
        &["--set", "a[0]=1", "--set", "a[2]=3"],
        &["--set-literal", "x=a,b"],
        &["-s", "templates/deployment.yaml"],
        &["-s", "templates/nope.yaml"],
        &["--output-dir", "OUT"],
        &["--output-dir", "OUT", "--release-name"],
        &["--skip-schema-validation", "--set", "replicaCount=abc"],
    ];
    let scratch = std::env::temp_dir().join(format!("tidegate-helm-flags-{}", std::process::id()));
    let mut problems = Vec::new();
    let mut cases = 0;
    for chart in charts {
        let path = corpus().join(chart);
        for f in flags {
            for with_name in [true, false] {
                cases += 1;
                let mut results = Vec::new();
                for (who, dir) in [("helm", "h"), ("tidegate", "t")] {
                    let out_dir = scratch.join(dir);
                    let args: Vec<String> = f
                        .iter()
                        .map(|a| a.replace("OUT", &out_dir.display().to_string()))
                        .collect();
                    let mut cmd = command(who, &helm, &scratch);
                    cmd.arg("template");
                    if with_name {
                        cmd.arg("rel");
                    }
                    cmd.arg(&path).args(&args);
                    results.push(run(&mut cmd, &out_dir));
                }
                if results[0] != results[1] && !same(&results[0], &results[1]) {
                    let first = results[0]
                        .lines()
                        .zip(results[1].lines())
                        .find(|(x, y)| x != y && shape(x) != shape(y))
                        .map(|(x, y)| format!("helm {x:?} / ours {y:?}"))
                        .unwrap_or_else(|| "different lengths".into());
                    problems.push(format!(
                        "{chart} {f:?}{}: {first}",
                        if with_name { " (named)" } else { "" }
                    ));
                }
            }
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(cases, charts.len() * flags.len() * 2);
    assert!(
        problems.is_empty(),
        "{} of {cases} differ:\n{}",
        problems.len(),
        problems.join("\n")
    );
}

/// What helm logs while rendering (`level=WARN msg="this chart is deprecated"`, values that do
/// not coalesce, conditions and tags that are not booleans, missing import tables) is written
/// on standard error as helm writes it, before the output or the error.
#[test]
fn warnings_on_standard_error_as_helm() {
    let helm = helm();
    let charts = [
        "helm-deprecated",
        "grafana-loki-stack",
        "bitnami-keycloak",
        "quirk-dependency-warnings",
    ];
    let scratch = std::env::temp_dir().join(format!("tidegate-helm-warn-{}", std::process::id()));
    let mut problems = Vec::new();
    let mut warned = 0;
    for chart in charts {
        let path = corpus().join(chart);
        let mut results = Vec::new();
        for who in ["helm", "tidegate"] {
            let mut cmd = command(who, &helm, &scratch);
            cmd.args(["template", "rel"]).arg(&path);
            results.push(run(&mut cmd, &scratch.join("none")));
        }
        if results[0].contains("level=") {
            warned += 1;
        }
        if results[0] != results[1] && !same(&results[0], &results[1]) {
            let stderr = |r: &str| r.split("|stderr|").nth(1).unwrap_or_default().to_string();
            problems.push(format!(
                "{chart}:\n  helm: {:?}\n  ours: {:?}",
                stderr(&results[0]),
                stderr(&results[1])
            ));
        }
    }
    let _ = std::fs::remove_dir_all(&scratch);
    assert_eq!(warned, charts.len(), "every chart makes helm log something");
    assert!(problems.is_empty(), "{}", problems.join("\n"));
}
