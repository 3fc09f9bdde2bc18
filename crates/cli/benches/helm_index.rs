//! A HelmChart from a repository index of 10,000 chart versions (100 charts × 100 versions,
//! entries shaped like a real repository's): `tidegate controllers` (source-controller
//! component, as its own process against `tidegate apiserver`) taking a new HelmRepository and
//! HelmChart to Ready, against `helm pull --repo` (helm v4.1.4) of the same chart from the same
//! server. Wall time and the peak RSS of the controllers process (which also holds its
//! Kubernetes clients and watches) and of helm, median of three.
//! Run with `cargo bench -p tidegate --bench helm_index`; figures go to docs/benchmarks.md.

mod support;

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

struct Running(Child);

impl Drop for Running {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn helm() -> PathBuf {
    let tools = std::env::var("TIDEGATE_TOOLS")
        .map(PathBuf::from)
        .unwrap_or_else(|_| {
            PathBuf::from(std::env::var("HOME").unwrap_or_default()).join(".cache/tidegate-tools")
        });
    tools.join("helm-v4.1.4/helm")
}

/// Serves `dir` over HTTP/1.0 on a thread; returns its base URL.
fn serve(dir: PathBuf) -> String {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let url = format!("http://{}", listener.local_addr().unwrap());
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut s) = stream else { continue };
            let dir = dir.clone();
            std::thread::spawn(move || {
                let mut buf = [0u8; 4096];
                let n = s.read(&mut buf).unwrap_or(0);
                let req = String::from_utf8_lossy(&buf[..n]);
                let path = req
                    .split_whitespace()
                    .nth(1)
                    .unwrap_or("/")
                    .trim_start_matches('/');
                let path = path.split('?').next().unwrap_or("");
                match std::fs::read(dir.join(path)) {
                    Ok(body) => {
                        let _ = write!(
                            s,
                            "HTTP/1.0 200 OK\r\nContent-Length: {}\r\n\r\n",
                            body.len()
                        );
                        let _ = s.write_all(&body);
                    }
                    Err(_) => {
                        let _ = s.write_all(b"HTTP/1.0 404 Not Found\r\nContent-Length: 0\r\n\r\n");
                    }
                }
            });
        }
    });
    url
}

fn write_index(dir: &Path, url: &str) {
    let mut out = String::from("apiVersion: v1\nentries:\n");
    for c in 0..100 {
        let name = if c == 0 {
            "podinfo".to_string()
        } else {
            format!("chart-{c:03}")
        };
        out.push_str(&format!("  {name}:\n"));
        for v in (0..100).rev() {
            let version = format!("6.{}.{}", v / 10, v % 10);
            out.push_str(&format!(
                "  - apiVersion: v2\n    appVersion: {version}\n    created: \"2024-01-{:02}T10:00:00.000000000Z\"\n    description: A chart for Kubernetes, version {version} of {name}\n    digest: {:064x}\n    home: https://github.com/example/{name}\n    keywords:\n    - kubernetes\n    - example\n    maintainers:\n    - email: team@example.com\n      name: team\n    name: {name}\n    sources:\n    - https://github.com/example/{name}\n    urls:\n    - {url}/{name}-{version}.tgz\n    version: {version}\n",
                v % 28 + 1,
                c * 1000 + v
            ));
        }
    }
    out.push_str("generated: \"2024-02-01T00:00:00Z\"\n");
    std::fs::write(dir.join("index.yaml"), out).unwrap();
}

fn kubectl(kc: &str, args: &[&str], stdin: Option<&str>) -> String {
    let mut child = Command::new("kubectl")
        .arg("--kubeconfig")
        .arg(kc)
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    if let Some(s) = stdin {
        child.stdin.take().unwrap().write_all(s.as_bytes()).unwrap();
    } else {
        drop(child.stdin.take());
    }
    let out = child.wait_with_output().unwrap();
    String::from_utf8_lossy(&out.stdout).into_owned()
}

fn peak_rss_kib(pid: u32) -> u64 {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .unwrap_or_default()
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next().and_then(|n| n.parse().ok()))
        .unwrap_or(0)
}

fn main() {
    let tidegate = env!("CARGO_BIN_EXE_tidegate");
    let tmp = tempfile::tempdir().unwrap();
    let charts = tmp.path().join("charts");
    std::fs::create_dir_all(charts.join("src/podinfo/templates")).unwrap();
    std::fs::write(
        charts.join("src/podinfo/Chart.yaml"),
        "apiVersion: v2\nname: podinfo\nversion: 6.9.9\n",
    )
    .unwrap();
    std::fs::write(
        charts.join("src/podinfo/templates/cm.yaml"),
        "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: x\n",
    )
    .unwrap();
    let out = Command::new(helm())
        .args(["package"])
        .arg(charts.join("src/podinfo"))
        .arg("-d")
        .arg(&charts)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let url = serve(charts.clone());
    write_index(&charts, &url);
    let size = std::fs::metadata(charts.join("index.yaml")).unwrap().len();

    let mut ours = Vec::new();
    let mut peer = Vec::new();
    for i in 0..3 {
        // Ours: a fresh API server and controllers; time from applying the objects to Ready.
        let dir = tmp.path().join(format!("run-{i}"));
        let api_port = free_port();
        let _api = Running(
            Command::new(tidegate)
                .args([
                    "apiserver",
                    "--data-dir",
                    dir.join("api").to_str().unwrap(),
                    "--listen",
                    &format!("127.0.0.1:{api_port}"),
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        let kc = dir.join("api/kubeconfig").to_str().unwrap().to_string();
        let deadline = Instant::now() + Duration::from_secs(60);
        while !Path::new(&kc).exists()
            || kubectl(&kc, &["get", "ns", "-o", "name"], None).is_empty()
        {
            assert!(Instant::now() < deadline, "the API server starts");
            std::thread::sleep(Duration::from_millis(100));
        }
        let crds = Command::new(tidegate)
            .args(["install", "--export"])
            .output()
            .unwrap();
        kubectl(
            &kc,
            &["apply", "--server-side", "-f", "-"],
            Some(&String::from_utf8_lossy(&crds.stdout)),
        );
        kubectl(
            &kc,
            &[
                "wait",
                "--for=condition=Established",
                "crd/helmcharts.source.toolkit.fluxcd.io",
                "crd/helmrepositories.source.toolkit.fluxcd.io",
            ],
            None,
        );
        let free = || format!("127.0.0.1:{}", free_port());
        let controllers = Running(
            Command::new(tidegate)
                .args([
                    "controllers",
                    "--kubeconfig",
                    &kc,
                    "--components",
                    "source-controller",
                    "--storage-path",
                    dir.join("artifacts").to_str().unwrap(),
                    "--storage-addr",
                    &free(),
                    "--metrics-addr",
                    &free(),
                    "--health-addr",
                    &free(),
                ])
                .stdout(Stdio::null())
                .stderr(Stdio::null())
                .spawn()
                .unwrap(),
        );
        std::thread::sleep(Duration::from_millis(500));
        let objects = format!(
            "apiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmRepository\nmetadata: {{name: big, namespace: default}}\nspec:\n  interval: 1h\n  url: {url}\n---\napiVersion: source.toolkit.fluxcd.io/v1\nkind: HelmChart\nmetadata: {{name: podinfo, namespace: default}}\nspec:\n  interval: 1h\n  chart: podinfo\n  version: '6.9.x'\n  sourceRef: {{kind: HelmRepository, name: big}}\n"
        );
        let start = Instant::now();
        kubectl(&kc, &["apply", "-f", "-"], Some(&objects));
        loop {
            let s = kubectl(
                &kc,
                &[
                    "get",
                    "helmchart",
                    "podinfo",
                    "-o",
                    "jsonpath={.status.conditions[?(@.type==\"Ready\")].status} {.status.artifact.revision}",
                ],
                None,
            );
            if s.trim() == "True 6.9.9" {
                break;
            }
            assert!(
                start.elapsed() < Duration::from_secs(120),
                "HelmChart Ready: {s}"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        ours.push((start.elapsed(), peak_rss_kib(controllers.0.id())));
        // helm pull of the same chart from the same server.
        let dest = dir.join("pulled");
        std::fs::create_dir_all(&dest).unwrap();
        let home = dir.join("helm-home");
        std::fs::create_dir_all(&home).unwrap();
        let script = format!(
            "HOME={h} XDG_CACHE_HOME={h}/cache XDG_CONFIG_HOME={h}/config {helm} pull podinfo --repo {url} --version '6.9.x' -d {d}",
            h = home.display(),
            helm = helm().display(),
            d = dest.display()
        );
        peer.push(support::time_process(&["sh", "-c", &script]));
        assert!(dest.join("podinfo-6.9.9.tgz").exists());
    }
    let median = |mut v: Vec<(Duration, u64)>| {
        v.sort_by_key(|x| x.0);
        let t = v[v.len() / 2].0;
        let mut r: Vec<u64> = v.iter().map(|x| x.1).collect();
        r.sort();
        (t, r[r.len() / 2])
    };
    let (ot, orss) = median(ours);
    let (pt, prss) = median(peer);
    println!(
        "HelmChart from an index of 10,000 chart versions ({} KiB of YAML), median of 3",
        size / 1024
    );
    println!(
        "  tidegate: HelmRepository + HelmChart to Ready : {:>7.3} s  controllers peak RSS {:>7} KiB",
        ot.as_secs_f64(),
        orss
    );
    println!(
        "  helm pull --repo                             : {:>7.3} s  peak RSS {:>7} KiB",
        pt.as_secs_f64(),
        prss
    );
    println!(
        "  ratio (tidegate / helm)                      : {:>7.2}x time, {:.2}x RSS",
        ot.as_secs_f64() / pt.as_secs_f64(),
        orss as f64 / prss as f64
    );
}
