//! Differential test against real helm v4.1.4: every chart of `tests/corpus/charts` (public
//! charts assembled by `scripts/helm-corpus.py`, and Helm's own test charts) and of
//! `tests/corpus/broken` (a catalogue of broken charts, each failing in its own way), rendered
//! with its default values, with `values-enabled.yaml` and with each values file under
//! `tests/corpus/values-cases/<chart>/` (HelmRelease values from public repositories), by
//! `helm template` and by `tidegate_helm::action::template`; standard output (or the error
//! message) compared byte for byte.
//!
//! Masking: in charts whose templates call a function with a random or time-dependent result
//! (`randAlphaNum`, `genCA`, `uuidv4`, `now`, …), PEM blocks, bcrypt hashes (version and cost
//! kept) and base64 runs of 40 or more characters are masked in both outputs, and two lines that still differ count as equal when
//! they have the same shape (every letter, digit, `+` and `/` read as `x`). Other charts are compared
//! unmasked. In charts that range over Sprig's `keys` unsorted (Go's random map order), helm's
//! output varies from run to run: there ours must hold the same documents, in any order, as
//! one of up to four helm runs.
//!
//! `tests/corpus/KNOWN_DIFFERENCES` lists the cases that differ and why; the test fails when a
//! listed case matches or an unlisted one differs, and when fewer than 95% of the cases match.
//! helm is found at `$TIDEGATE_HELM4` or `~/.cache/tidegate-tools/helm-v4.1.4/helm`
//! (`scripts/install-test-tools.sh` puts it there); without it the test fails. A second lane
//! runs the corpus against helm v3.17.2 (`$TIDEGATE_HELM3`) with its own list of differences,
//! `tests/corpus/KNOWN_DIFFERENCES_V3`: the changes between Helm 3 and Helm 4.

mod common;

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Command;

use tidegate_helm::action::{TemplateOptions, ValueOptions, template};

const RANDOM_FUNCS: &[&str] = &[
    "randAlphaNum",
    "randAlpha",
    "randAscii",
    "randNumeric",
    "randBytes",
    "randInt",
    "uuidv4",
    "genCA",
    "genPrivateKey",
    "genSelfSignedCert",
    "genSignedCert",
    "bcrypt",
    "htpasswd",
    "encryptAES",
    "now",
    "shuffle",
    "ago",
    "dateInZone",
    "date ",
];

fn corpus() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/corpus")
}

fn helm(version: &str, env: &str) -> PathBuf {
    common::helm_binary(version, env)
}

#[derive(Clone)]
struct Case {
    id: String,
    chart: PathBuf,
    values: Option<PathBuf>,
}

fn cases() -> Vec<Case> {
    let mut out = Vec::new();
    let mut entries: Vec<PathBuf> = ["charts", "broken"]
        .iter()
        .flat_map(|dir| {
            std::fs::read_dir(corpus().join(dir))
                .expect("corpus")
                .filter_map(|e| e.ok().map(|e| e.path()))
        })
        .collect();
    entries.sort();
    for chart in entries {
        let folder = chart
            .parent()
            .and_then(|p| p.file_name())
            .unwrap()
            .to_string_lossy()
            .into_owned();
        let base = chart.file_name().unwrap().to_string_lossy().into_owned();
        let name = if folder == "broken" {
            format!("broken-{base}")
        } else {
            base.clone()
        };
        out.push(Case {
            id: name.clone(),
            chart: chart.clone(),
            values: None,
        });
        let enabled = chart.join("values-enabled.yaml");
        if enabled.exists() {
            out.push(Case {
                id: format!("{name}:enabled"),
                chart: chart.clone(),
                values: Some(enabled),
            });
        }
        // Real values files for the chart (from public repositories' HelmReleases).
        if let Ok(files) = std::fs::read_dir(corpus().join("values-cases").join(&base)) {
            let mut files: Vec<PathBuf> = files.filter_map(|e| e.ok().map(|e| e.path())).collect();
            files.sort();
            for f in files {
                let stem = f.file_stem().unwrap().to_string_lossy().into_owned();
                out.push(Case {
                    id: format!("{name}:{stem}"),
                    chart: chart.clone(),
                    values: Some(f),
                });
            }
        }
    }
    out
}

/// helm's result: standard output, or the error message (`Error: ` taken off).
fn run_helm(helm: &Path, case: &Case) -> Result<String, String> {
    let mut cmd = Command::new(helm);
    cmd.arg("template").arg(&case.chart);
    if let Some(v) = &case.values {
        cmd.arg("-f").arg(v);
    }
    cmd.env("HELM_CACHE_HOME", "/tmp/tidegate-helm-cache")
        .env("HELM_CONFIG_HOME", "/tmp/tidegate-helm-config")
        .env("HELM_DATA_HOME", "/tmp/tidegate-helm-data");
    let out = cmd
        .output()
        .unwrap_or_else(|e| panic!("running {}: {e}", helm.display()));
    if out.status.success() {
        return Ok(String::from_utf8_lossy(&out.stdout).into_owned());
    }
    let stderr = String::from_utf8_lossy(&out.stderr).into_owned();
    let at = stderr
        .find("Error: ")
        .map(|i| i + "Error: ".len())
        .unwrap_or(0);
    Err(stderr[at..].trim_end_matches('\n').to_string())
}

fn run_ours(case: &Case) -> Result<String, String> {
    let opts = TemplateOptions {
        values: ValueOptions {
            value_files: case.values.iter().cloned().collect(),
            ..ValueOptions::default()
        },
        ..TemplateOptions::default()
    };
    let chart = case.chart.clone();
    // Charts nest templates deeply; render on a thread with room, as helm's goroutines have.
    std::thread::Builder::new()
        .stack_size(64 * 1024 * 1024)
        .spawn(move || {
            template(&chart, &opts).map_err(|e| e.to_string().trim_end_matches('\n').to_string())
        })
        .expect("thread")
        .join()
        .unwrap_or_else(|_| Err("panicked".into()))
}

/// Whether the chart's templates range over Sprig's `keys`, whose order is Go's random map
/// order: helm's documents then come out in a different order from run to run.
fn uses_map_order(chart: &Path) -> bool {
    let action = regex::Regex::new(r"\{\{[^}]*\}\}").unwrap();
    files_contain(chart, &|text| {
        action.find_iter(text).any(|m| {
            let a = m.as_str();
            a.contains("range") && a.contains("keys") && !a.contains("sortAlpha")
        })
    })
}

/// The same documents, in any order.
fn same_documents(a: &str, b: &str) -> bool {
    let docs = |t: &str| {
        let mut d: Vec<String> = t.split("\n---\n").map(str::to_string).collect();
        d.sort();
        d
    };
    docs(a) == docs(b)
}

fn files_contain(chart: &Path, test: &dyn Fn(&str) -> bool) -> bool {
    fn walk(dir: &Path, test: &dyn Fn(&str) -> bool, found: &mut bool) {
        let Ok(entries) = std::fs::read_dir(dir) else {
            return;
        };
        for e in entries.flatten() {
            let p = e.path();
            if p.is_dir() {
                walk(&p, test, found);
            } else if let Ok(text) = std::fs::read_to_string(&p)
                && test(&text)
            {
                *found = true;
            }
        }
    }
    let mut found = false;
    walk(chart, test, &mut found);
    found
}

fn uses_randomness(chart: &Path) -> bool {
    files_contain(chart, &|text| RANDOM_FUNCS.iter().any(|f| text.contains(f)))
}

fn mask(text: &str) -> String {
    let pem = regex::Regex::new(r"(?s)-----BEGIN ([A-Z ]+)-----.*?-----END [A-Z ]+-----").unwrap();
    let b64 = regex::Regex::new(r"[A-Za-z0-9+/]{40,}={0,2}").unwrap();
    // bcrypt's salt and hash (its own base64, with `.`): the version and the cost are kept.
    let bcrypt = regex::Regex::new(r"(\$2[aby]?\$[0-9]{2}\$)[./A-Za-z0-9]{53}").unwrap();
    let text = pem.replace_all(text, "<PEM $1>");
    let text = bcrypt.replace_all(&text, "$1<BCRYPT>");
    b64.replace_all(&text, "<B64>").into_owned()
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

fn same_masked(a: &str, b: &str) -> bool {
    let (a, b) = (mask(a), mask(b));
    let (la, lb): (Vec<&str>, Vec<&str>) = (a.lines().collect(), b.lines().collect());
    la.len() == lb.len()
        && la
            .iter()
            .zip(&lb)
            .all(|(x, y)| x == y || shape(x) == shape(y))
}

fn first_difference(a: &str, b: &str) -> String {
    for (i, (x, y)) in a.lines().zip(b.lines()).enumerate() {
        if x != y {
            return format!("line {}: helm {:?} / ours {:?}", i + 1, x, y);
        }
    }
    format!(
        "lengths: helm {} lines / ours {} lines",
        a.lines().count(),
        b.lines().count()
    )
}

fn known_differences(file: &str) -> BTreeMap<String, String> {
    let text = std::fs::read_to_string(corpus().join(file)).unwrap_or_default();
    text.lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with('#'))
        .map(|l| {
            let (id, reason) = l.split_once(char::is_whitespace).unwrap_or((l, ""));
            (id.to_string(), reason.trim().to_string())
        })
        .collect()
}

/// Renders every case with `helm` and with Tidegate and checks the differences against the
/// list in `known_file`; returns the share of cases that match.
fn lane(version: &str, env: &str, known_file: &str, reference: bool) -> f64 {
    let helm = helm(version, env);
    assert!(
        helm.exists(),
        "helm {version} is missing at {} (scripts/install-test-tools.sh installs it)",
        helm.display()
    );
    // The real values files check rendering, not Helm 3/4 changes: the reference lane only.
    let cases: Vec<Case> = cases()
        .into_iter()
        .filter(|c| reference || !c.id.contains(':') || c.id.ends_with(":enabled"))
        .collect();
    let charts = cases
        .iter()
        .filter(|c| c.values.is_none() && !c.id.starts_with("broken-"))
        .count();
    assert!(
        charts >= 150,
        "the corpus has {charts} charts, fewer than 150"
    );
    let masked = std::sync::atomic::AtomicUsize::new(0);
    let needed = std::sync::atomic::AtomicUsize::new(0);
    let reordered = std::sync::atomic::AtomicUsize::new(0);
    let threads = std::thread::available_parallelism()
        .map(|n| n.get())
        .unwrap_or(2);
    let chunks: Vec<Vec<Case>> = cases
        .chunks(cases.len().div_ceil(threads))
        .map(|c| c.to_vec())
        .collect();
    let results: Vec<(String, Option<String>, bool)> = std::thread::scope(|s| {
        let handles: Vec<_> = chunks
            .iter()
            .map(|chunk| {
                let helm = helm.clone();
                let masked = &masked;
                let needed = &needed;
                let reordered = &reordered;
                s.spawn(move || {
                    chunk
                        .iter()
                        .map(|case| {
                            let theirs = run_helm(&helm, case);
                            let ours = run_ours(case);
                            let random = uses_randomness(&case.chart);
                            let map_order = uses_map_order(&case.chart);
                            if random {
                                masked.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                            }
                            let diff = match (&theirs, &ours) {
                                (Ok(a), Ok(b)) if a == b => None,
                                (Ok(a), Ok(b)) if random && same_masked(a, b) => {
                                    needed.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                    None
                                }
                                // helm's own output varies from run to run here: ours must
                                // be one of its outputs (documents in any order).
                                (Ok(a), Ok(b))
                                    if map_order
                                        && (same_documents(a, b)
                                            || (0..3).any(|_| {
                                                run_helm(&helm, case)
                                                    .is_ok_and(|again| same_documents(&again, b))
                                            })) =>
                                {
                                    reordered.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                                    None
                                }
                                (Ok(a), Ok(b)) if random => {
                                    Some(first_difference(&mask(a), &mask(b)))
                                }
                                (Ok(a), Ok(b)) => Some(first_difference(a, b)),
                                (Err(a), Err(b)) if a == b => None,
                                (Err(a), Err(b)) => {
                                    Some(format!("errors differ: helm {a:?} / ours {b:?}"))
                                }
                                (Ok(_), Err(b)) => Some(format!("helm renders, ours fails: {b}")),
                                (Err(a), Ok(_)) => Some(format!("helm fails, ours renders: {a}")),
                            };
                            (case.id.clone(), diff, theirs.is_err())
                        })
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        handles
            .into_iter()
            .flat_map(|h| h.join().expect("worker"))
            .collect()
    });
    // The catalogue of broken charts: each must fail in the reference helm, and fail the same
    // way here.
    let broken: Vec<&(String, Option<String>, bool)> = results
        .iter()
        .filter(|r| r.0.starts_with("broken-"))
        .collect();
    assert!(broken.len() >= 20, "only {} broken charts", broken.len());
    for (id, _, helm_failed) in broken.iter().filter(|_| reference) {
        assert!(
            *helm_failed,
            "{id} is meant to be broken, but helm renders it"
        );
    }
    let known = known_differences(known_file);
    let mut problems = Vec::new();
    let mut same = 0;
    for (id, diff, _) in &results {
        match (diff, known.get(id)) {
            (None, None) => same += 1,
            (None, Some(_)) => problems.push(format!("{id}: listed as different but matches now")),
            (Some(d), None) => problems.push(format!("{id}: {d}")),
            (Some(_), Some(_)) => {}
        }
    }
    let share = same as f64 / results.len() as f64;
    eprintln!(
        "{same} of {} cases render as helm {version} does ({:.1}%); {} charts call random functions, \
         {} of those cases matched only with random values masked, {} only with documents \
         reordered (charts ranging over Go's random map order)",
        results.len(),
        share * 100.0,
        masked.load(std::sync::atomic::Ordering::Relaxed),
        needed.load(std::sync::atomic::Ordering::Relaxed),
        reordered.load(std::sync::atomic::Ordering::Relaxed)
    );
    assert!(
        problems.is_empty(),
        "helm {version}: {} unexpected (see tests/corpus/{known_file}):\n{}",
        problems.len(),
        problems.join("\n")
    );
    share
}

#[test]
fn renders_as_helm_v4() {
    let share = lane("v4.1.4", "TIDEGATE_HELM4", "KNOWN_DIFFERENCES", true);
    assert!(
        share >= 0.95,
        "only {:.1}% of the cases match helm v4.1.4",
        share * 100.0
    );
}

/// The compatibility lane: the same corpus against helm v3.17.2. Tidegate renders as Helm 4
/// does (Flux 2.9's helm-controller is built on Helm 4), so the cases where Helm 3 and Helm 4
/// differ are listed, with the difference, in `KNOWN_DIFFERENCES_V3`; an unlisted difference
/// would be a case where Tidegate departs from both.
#[test]
fn renders_as_helm_v3_except_listed_helm4_changes() {
    lane("v3.17.2", "TIDEGATE_HELM3", "KNOWN_DIFFERENCES_V3", false);
}
