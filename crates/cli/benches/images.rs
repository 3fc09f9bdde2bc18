//! Scanning a repository of 10,000 tags and choosing the latest by policy, as the
//! image-reflector-controller does (list every tag, drop excluded ones, sort, store crash-safe,
//! then a semver policy and a filtered numerical policy over the stored list), against
//! `skopeo list-tags` of the same repository, from Debian's docker-registry on loopback. Wall
//! time and peak RSS of each process, median of five alternating runs. Our side runs in a
//! child process of this benchmark (`images --scan HOST REPO DIR`), so its RSS is the scan's.
//! Run with `cargo bench -p tidegate --bench images`; figures go to docs/benchmarks.md.

#[path = "../../source/tests/registry_support/mod.rs"]
mod registry_support;
mod support;

use std::collections::BTreeMap;
use std::time::Duration;

use tidegate_source::image::policy::{Policy, RegexFilter, select};
use tidegate_source::image::tags::{TagStore, sort_descending};
use tidegate_source::oci;

/// Tags in the repository (`TIDEGATE_BENCH_TAGS`, default 10,000).
fn tag_count() -> usize {
    std::env::var("TIDEGATE_BENCH_TAGS")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(10_000)
}

fn tag_name(i: usize) -> String {
    // Semver tags, with every tenth a build tag the numerical policy reads.
    if i % 10 == 9 {
        format!("build-{i}")
    } else {
        format!("{}.{}.{}", i / 1000, (i / 10) % 100, i % 10)
    }
}

/// The scan and policy evaluation, in this process; prints what it found.
async fn scan(host: &str, repo: &str, dir: &str) {
    let repository = oci::Repository {
        registry: host.to_string(),
        repository: repo.to_string(),
    };
    let registry = oci::Registry::connect(&repository, &oci::Options::default())
        .await
        .expect("registry");
    let listed = registry.list_tags().await.expect("tags");
    let exclude = regex::Regex::new("^.*\\.sig$").expect("regex");
    let mut tags: Vec<String> = listed
        .into_iter()
        .filter(|t| !exclude.is_match(t))
        .collect();
    sort_descending(&mut tags);
    let store = TagStore::new(dir);
    let revision = store.set("bench", "app", &tags).expect("stored");
    let stored = store.get("bench", "app").expect("read back");
    let refs: Vec<&str> = stored.iter().map(String::as_str).collect();
    let semver = Policy::from_spec(Some(">=5.0.0 <9.0.0"), None, None).expect("policy");
    let latest = select(&semver, None, &refs).expect("semver");
    let numerical = Policy::from_spec(None, None, Some(Some("asc"))).expect("policy");
    let filter = RegexFilter::new("^build-(?P<n>[0-9]+)$", "$n").expect("filter");
    let build = select(&numerical, Some(&filter), &refs).expect("numerical");
    println!(
        "{} tags, revision {revision}, semver {latest}, numerical {build}",
        stored.len()
    );
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    if let Some(i) = args.iter().position(|a| a == "--scan") {
        let rt = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("runtime");
        rt.block_on(scan(&args[i + 1], &args[i + 2], &args[i + 3]));
        return;
    }
    let reg = registry_support::Registry::start(registry_support::Mode::Plain);
    let rt = tokio::runtime::Runtime::new().expect("runtime");
    let pushed = std::time::Instant::now();
    rt.block_on(async {
        let (repository, _) = oci::parse_artifact_url(&reg.url("bench/app")).expect("url");
        let registry = oci::Registry::connect(&repository, &oci::Options::default())
            .await
            .expect("registry");
        registry
            .push_artifact(
                "seed",
                b"seed".to_vec().into(),
                oci::registry::FLUX_CONTENT,
                &BTreeMap::new(),
            )
            .await
            .expect("seed");
        let seed = repository.tag("seed");
        for i in 0..tag_count() - 1 {
            registry.tag(&seed, &tag_name(i)).await.expect("tag");
        }
    });
    eprintln!(
        "pushed {} tags in {:.1}s",
        tag_count(),
        pushed.elapsed().as_secs_f64()
    );
    if std::env::var("TIDEGATE_BENCH_PROBE").is_ok() {
        for q in ["", "?n=100", "?n=100&last=0.0.5"] {
            let out = std::process::Command::new("curl")
                .arg("-s")
                .arg(format!("http://{}/v2/bench/app/tags/list{q}", reg.host))
                .output()
                .expect("curl");
            let body = String::from_utf8_lossy(&out.stdout);
            eprintln!(
                "{q}: {} tags, starts {}",
                body.matches(',').count() + 1,
                &body[..body.len().min(120)]
            );
        }
        return;
    }
    let me = std::env::current_exe().expect("self");
    let me = me.to_str().expect("utf-8");
    let tmp = tempfile::tempdir().expect("tempdir");
    let docker = format!("docker://{}/bench/app", reg.host);
    let (mut ours, mut theirs) = (Vec::new(), Vec::new());
    for i in 0..5 {
        let dir = tmp.path().join(format!("tags-{i}"));
        ours.push(support::time_process(&[
            me,
            "--scan",
            &reg.host,
            "bench/app",
            dir.to_str().expect("utf-8"),
        ]));
        theirs.push(support::time_process(&[
            "skopeo",
            "list-tags",
            "--tls-verify=false",
            &docker,
        ]));
    }
    let median = |mut v: Vec<(Duration, u64)>| {
        v.sort_by_key(|x| x.0);
        let t = v[v.len() / 2].0;
        let mut rss: Vec<u64> = v.iter().map(|x| x.1).collect();
        rss.sort();
        (t, rss[rss.len() / 2])
    };
    let (ot, orss) = median(ours);
    let (pt, prss) = median(theirs);
    println!(
        "scan of {} tags from docker-registry (median of 5)",
        tag_count()
    );
    println!(
        "  tidegate scan + store + 2 policies: {:>7.3} s  peak RSS {:>7} KiB",
        ot.as_secs_f64(),
        orss
    );
    println!(
        "  skopeo list-tags                  : {:>7.3} s  peak RSS {:>7} KiB  (tidegate/skopeo: {:.2}x time, {:.2}x RSS)",
        pt.as_secs_f64(),
        prss,
        ot.as_secs_f64() / pt.as_secs_f64(),
        orss as f64 / prss as f64
    );
}
