//! Chaos: `tidegate up` reconciles three Kustomizations with prune while commits add, remove
//! and move objects between them, and is killed (`kill -9`) at random moments, sometimes with
//! another commit landing while it is down. After each restart the cluster must equal exactly
//! what the last commit says (nothing orphaned, nothing missing, every inventory exact, every
//! object owned by the Kustomization the commit gives it to), and every write the API server
//! acknowledged before a kill must still be there.
//!
//! `TIDEGATE_CHAOS_TRIALS` sets the number of trials (CI runs a few; the benchmarks page
//! reports a longer run, `scripts/chaos.sh`), `TIDEGATE_CHAOS_SEED` replays a run.

#[path = "../../source/tests/support/mod.rs"]
mod git_support;
mod up_support;

use std::collections::{BTreeMap, BTreeSet};
use std::path::Path;
use std::process::Command;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use up_support::*;

const PARTS: [&str; 3] = ["part-a", "part-b", "part-c"];
const CONFIG_MAPS: usize = 150;
const ROLES: usize = 4;

/// A small deterministic generator (xorshift64*), so a failing run can be replayed by seed.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
    fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
}

/// Which part each object belongs to in one commit (`None`: not in the commit).
type Assignment = BTreeMap<String, Option<&'static str>>;

fn objects() -> Vec<String> {
    let mut v: Vec<String> = (0..CONFIG_MAPS).map(|i| format!("cm-{i:02}")).collect();
    v.extend((0..ROLES).map(|i| format!("chaos-role-{i}")));
    v
}

fn random_assignment(rng: &mut Rng) -> Assignment {
    objects()
        .into_iter()
        .map(|o| {
            let pick = rng.below(5);
            (o, PARTS.get(pick as usize).copied())
        })
        .collect()
}

fn manifest(name: &str, commit: u64) -> String {
    if name.starts_with("chaos-role-") {
        format!(
            "apiVersion: rbac.authorization.k8s.io/v1\nkind: ClusterRole\nmetadata:\n  name: {name}\nrules:\n- apiGroups: [\"\"]\n  resources: [\"configmaps\"]\n  verbs: [\"get\"]\n"
        )
    } else {
        format!(
            "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: {name}\n  namespace: chaos\ndata:\n  commit: \"{commit}\"\n"
        )
    }
}

/// Writes the assignment as the parts' directories and commits it; returns the revision.
fn commit(repo: &git_support::Repo, assignment: &Assignment, n: u64) -> String {
    for part in PARTS {
        let dir = repo.work().join("parts").join(part);
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // An empty directory is not in Git: every part keeps a marker object.
        repo.write(
            &format!("parts/{part}/marker.yaml"),
            &format!(
                "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: marker-{part}\n  namespace: chaos\n"
            ),
        );
    }
    for (name, part) in assignment {
        if let Some(part) = part {
            repo.write(&format!("parts/{part}/{name}.yaml"), &manifest(name, n));
        }
    }
    format!("main@sha1:{}", repo.commit(&format!("commit {n}")))
}

fn cluster_layout(repo: &git_support::Repo) {
    repo.write(
        "clusters/namespace.yaml",
        "apiVersion: v1\nkind: Namespace\nmetadata:\n  name: chaos\n",
    );
    let mut ks = String::new();
    for part in PARTS {
        ks.push_str(&format!(
            "---\napiVersion: kustomize.toolkit.fluxcd.io/v1\nkind: Kustomization\nmetadata:\n  name: {part}\n  namespace: flux-system\nspec:\n  interval: 1h\n  retryInterval: 2s\n  path: ./parts/{part}\n  prune: true\n  sourceRef:\n    kind: GitRepository\n    name: flux-system\n"
        ));
    }
    repo.write("clusters/parts.yaml", &ks);
}

/// What the cluster holds of the test's objects: name → owning Kustomization.
fn owners(kc: &Path) -> BTreeMap<String, String> {
    let label = "kustomize.toolkit.fluxcd.io/name";
    let mut out = BTreeMap::new();
    for (args, prefix) in [
        (vec!["-n", "chaos", "get", "configmaps"], "cm-"),
        (vec!["get", "clusterroles"], "chaos-role-"),
    ] {
        for o in json(kc, &args)["items"].as_array().unwrap() {
            let name = o["metadata"]["name"].as_str().unwrap_or("");
            if !name.starts_with(prefix) {
                continue;
            }
            let owner = o["metadata"]["labels"][label]
                .as_str()
                .unwrap_or("<no owner>");
            out.insert(name.to_string(), owner.to_string());
        }
    }
    out
}

/// The test's objects in each part's inventory.
fn inventories(kc: &Path) -> BTreeMap<String, BTreeSet<String>> {
    let mut out = BTreeMap::new();
    for part in PARTS {
        let k = json(kc, &["-n", "flux-system", "get", "kustomization", part]);
        let ids: BTreeSet<String> = k["status"]["inventory"]["entries"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(|e| e["id"].as_str())
                    .filter_map(|id| {
                        let name = id.split('_').nth(1)?;
                        (name.starts_with("cm-") || name.starts_with("chaos-role-"))
                            .then(|| name.to_string())
                    })
                    .collect()
            })
            .unwrap_or_default();
        out.insert(part.to_string(), ids);
    }
    out
}

/// Where the kill caught the commit, read from the stopped server's data directory itself (so
/// the moment is judged exactly): whether the source had fetched `revision`, and how many
/// parts had applied it.
fn progress_in_store(data: &Path, revision: &str) -> (bool, usize) {
    use tidegate_apiserver::store::{Key, Store};
    let store = Store::open(Some(data)).expect("the store reopens");
    let at = |resource: &str, name: &str, pointer: &str| {
        store
            .get(&Key::new(resource, "flux-system", name))
            .is_some_and(|o| o.pointer(pointer).and_then(|v| v.as_str()) == Some(revision))
    };
    let fetched = at(
        "source.toolkit.fluxcd.io/gitrepositories",
        "flux-system",
        "/status/artifact/revision",
    );
    let parts = PARTS
        .iter()
        .filter(|p| {
            at(
                "kustomize.toolkit.fluxcd.io/kustomizations",
                p,
                "/status/lastAppliedRevision",
            )
        })
        .count();
    (fetched, parts)
}

fn request_fetch(kc: &Path, why: &str) {
    let _ = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args([
            "-n",
            "flux-system",
            "annotate",
            "--overwrite",
            "gitrepository/flux-system",
            &format!("reconcile.fluxcd.io/requestedAt={why}"),
        ])
        .output();
}

/// Creates ConfigMaps in `acks` one after another until stopped; records those the server
/// acknowledged.
fn ack_writer(kc: &Path, stop: Arc<AtomicBool>, acked: Arc<Mutex<Vec<String>>>, prefix: String) {
    let kubeconfig = std::fs::read_to_string(kc).unwrap();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap();
        rt.block_on(async move {
            let kc = kube::config::Kubeconfig::from_yaml(&kubeconfig).unwrap();
            let config = kube::Config::from_custom_kubeconfig(kc, &Default::default())
                .await
                .unwrap();
            let client = kube::Client::try_from(config).unwrap();
            let cms: kube::Api<k8s_openapi::api::core::v1::ConfigMap> =
                kube::Api::namespaced(client, "acks");
            let mut i = 0u64;
            while !stop.load(Ordering::Relaxed) {
                let name = format!("{prefix}-{i}");
                i += 1;
                let cm: k8s_openapi::api::core::v1::ConfigMap = serde_json::from_value(
                    serde_json::json!({"metadata": {"name": name}, "data": {"k": "v"}}),
                )
                .unwrap();
                let done = tokio::time::timeout(
                    Duration::from_secs(2),
                    cms.create(&Default::default(), &cm),
                )
                .await;
                match done {
                    Ok(Ok(_)) => acked.lock().unwrap().push(name),
                    _ => tokio::time::sleep(Duration::from_millis(50)).await,
                }
                tokio::time::sleep(Duration::from_millis(10)).await;
            }
        });
    });
}

/// Prints what led to a difference: each differing object's part in every commit, and the
/// events of the Kustomizations that name it.
fn diagnose(
    kc: &Path,
    history: &[(String, Assignment)],
    owned: &BTreeMap<String, String>,
    expected: &BTreeMap<String, String>,
) {
    let names: BTreeSet<&String> = owned.keys().chain(expected.keys()).collect();
    let events = json(kc, &["-n", "flux-system", "get", "events"]);
    for name in names {
        if owned.get(name) == expected.get(name) {
            continue;
        }
        eprintln!(
            "{name}: in the cluster {:?}, in the last commit {:?}",
            owned.get(name),
            expected.get(name)
        );
        for (rev, a) in history.iter().rev().take(6).rev() {
            eprintln!("  {rev}: {:?}", a.get(name).copied().flatten());
        }
        // Event names end with their creation time in hex nanoseconds: sort by it.
        let mut lines = Vec::new();
        for e in events["items"].as_array().into_iter().flatten() {
            let message = e["message"].as_str().unwrap_or("");
            let event = e["metadata"]["name"].as_str().unwrap_or("");
            let at = event
                .rsplit('.')
                .next()
                .and_then(|h| u128::from_str_radix(h, 16).ok())
                .unwrap_or(0);
            for line in message.lines().filter(|l| l.contains(name.as_str())) {
                lines.push((
                    at,
                    format!(
                        "  event {} (x{}) {}: {line}",
                        e["involvedObject"]["name"].as_str().unwrap_or(""),
                        e["count"],
                        e["metadata"]["annotations"]["kustomize.toolkit.fluxcd.io/revision"]
                            .as_str()
                            .unwrap_or("")
                    ),
                ));
            }
        }
        lines.sort();
        for (_, l) in lines {
            eprintln!("{l}");
        }
    }
}

fn trials() -> u64 {
    std::env::var("TIDEGATE_CHAOS_TRIALS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(6)
}

#[test]
fn kill_9_at_random_moments_leaves_exactly_the_last_commit() {
    let seed = std::env::var("TIDEGATE_CHAOS_SEED")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| {
            std::time::SystemTime::now()
                .duration_since(std::time::UNIX_EPOCH)
                .map_or(1, |d| d.as_nanos() as u64)
                | 1
        });
    eprintln!("chaos seed {seed} (TIDEGATE_CHAOS_SEED replays it)");
    let mut rng = Rng(seed);
    let dir = tempfile::tempdir().unwrap();
    let data = dir.path().join("data");
    let repo = git_support::Repo::new();
    cluster_layout(&repo);
    let mut n = 0u64;
    let mut assignment = random_assignment(&mut rng);
    let mut revision = commit(&repo, &assignment, n);
    let mut history: Vec<(String, Assignment)> = vec![(revision.clone(), assignment.clone())];
    let port = git_support::free_port();
    let bare = repo.bare().display().to_string();
    let args = [
        "--git",
        bare.as_str(),
        "--path",
        "./clusters",
        "--interval",
        "1h",
    ];
    let mut up_now = up(&data, port, &args, false);
    let kc = up_now.kubeconfig.clone();
    wait_until("the first commit", || all_ready(&kc, &revision));
    kubectl(&kc, &["create", "namespace", "acks"]);

    let trials = trials();
    let started = Instant::now();
    let acked = Arc::new(Mutex::new(Vec::new()));
    // Kills before the fetch; after it with 0, 1, 2 or 3 parts applied.
    let mut moments = [0usize; 5];
    for trial in 0..trials {
        // A commit, then a kill at a random moment of its reconcile.
        n += 1;
        assignment = random_assignment(&mut rng);
        revision = commit(&repo, &assignment, n);
        history.push((revision.clone(), assignment.clone()));
        let stop = Arc::new(AtomicBool::new(false));
        ack_writer(&kc, stop.clone(), acked.clone(), format!("t{trial}"));
        request_fetch(&kc, &format!("trial-{trial}"));
        // Kill at a random moment: before the fetch, while the source packs, or while the
        // Kustomizations apply and prune.
        let delay = rng.below(350);
        std::thread::sleep(Duration::from_millis(delay));
        up_now.child.kill().unwrap(); // SIGKILL
        up_now.child.wait().unwrap();
        let (fetched, parts) = progress_in_store(&data, &revision);
        moments[if !fetched { 0 } else { 1 + parts }] += 1;
        stop.store(true, Ordering::Relaxed);
        std::thread::sleep(Duration::from_millis(100));
        drop(up_now);
        // Sometimes the next commit lands while it is down.
        if rng.below(2) == 0 {
            n += 1;
            assignment = random_assignment(&mut rng);
            revision = commit(&repo, &assignment, n);
            history.push((format!("{revision} (while down)"), assignment.clone()));
        }
        up_now = up(&data, port, &args, false);
        request_fetch(&kc, &format!("restart-{trial}"));
        wait_until(&format!("trial {trial} to converge at {revision}"), || {
            all_ready(&kc, &revision)
        });

        let expected: BTreeMap<String, String> = assignment
            .iter()
            .filter_map(|(o, p)| p.map(|p| (o.clone(), p.to_string())))
            .collect();
        // Prune may still be finishing on a Kustomization whose Ready was written first;
        // give the cluster a moment to settle before judging it.
        let mut owned = owners(&kc);
        let deadline = Instant::now() + Duration::from_secs(30);
        while owned != expected && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(300));
            owned = owners(&kc);
        }
        if owned != expected {
            diagnose(&kc, &history, &owned, &expected);
        }
        assert_eq!(
            owned, expected,
            "trial {trial} (seed {seed}): the cluster differs from the last commit"
        );
        let mut want_inventories: BTreeMap<String, BTreeSet<String>> = PARTS
            .iter()
            .map(|p| (p.to_string(), BTreeSet::new()))
            .collect();
        for (o, p) in &expected {
            want_inventories.get_mut(p).unwrap().insert(o.clone());
        }
        assert_eq!(
            inventories(&kc),
            want_inventories,
            "trial {trial} (seed {seed}): inventories"
        );
        let present: BTreeSet<String> = json(&kc, &["-n", "acks", "get", "configmaps"])["items"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|c| c["metadata"]["name"].as_str().map(str::to_string))
            .collect();
        let lost: Vec<String> = acked
            .lock()
            .unwrap()
            .iter()
            .filter(|a| !present.contains(*a))
            .cloned()
            .collect();
        assert!(
            lost.is_empty(),
            "trial {trial} (seed {seed}): acknowledged writes lost: {lost:?}"
        );
    }
    let acked = acked.lock().unwrap().len();
    eprintln!(
        "chaos: {trials} trials survived in {:.0?}; kills before the fetch: {}, after it with 0/1/2/3 parts applied: {}/{}/{}/{}; {acked} acknowledged writes kept; seed {seed}",
        started.elapsed(),
        moments[0],
        moments[1],
        moments[2],
        moments[3],
        moments[4]
    );
    drop(up_now);
}
