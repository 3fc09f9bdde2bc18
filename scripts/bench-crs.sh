#!/usr/bin/env bash
# ClusterResourceSets at fleet scale, in one run of `tidegate up --clusters 20`: one set of 3
# ConfigMaps holding 30 objects selects 20 workload clusters (each an embedded API server in
# the same process). Measured, for `Reconcile` and for `ContinuousApply`:
#   (a) first apply: from creating the set until all 20 bindings record every resource applied;
#   (b) propagation: from a changed value in a source ConfigMap until every workload cluster
#       holds it (polled over HTTPS in all 20 clusters at once, every 5 ms);
#   (c) ContinuousApply only: from a `kubectl edit`-style patch in one workload cluster until
#       it is corrected (Cluster API's strategies never correct drift);
# and the peak RSS of the whole process (VmHWM). Each figure is the median of 5 rounds.
#
#   cargo build --release -p tidegate && scripts/bench-crs.sh [clusters]
set -euo pipefail
n=${1:-20}
bin=${TIDEGATE_BIN:-${CARGO_TARGET_DIR:-target}/release/tidegate}
[ -x "$bin" ] || { echo "build first: cargo build --release -p tidegate" >&2; exit 2; }
command -v kubectl >/dev/null || { echo "kubectl is required" >&2; exit 2; }
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" up --data-dir "$work/data" --listen "127.0.0.1:$port" --clusters "$n" \
  --cluster-labels bench=yes >"$work/up.log" 2>&1 &
up=$!
trap 'kill $up 2>/dev/null; wait $up 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 600); do grep -q '^kubeconfig:' "$work/up.log" 2>/dev/null && break; sleep 0.1; done
grep -q '^kubeconfig:' "$work/up.log" || { cat "$work/up.log" >&2; exit 1; }
export KUBECONFIG="$work/data/kubeconfig"
python3 - "$n" "$work" "$up" <<'PY'
import base64, json, ssl, statistics, subprocess, sys, tempfile, threading, time, urllib.request
import yaml

n, work, pid = int(sys.argv[1]), sys.argv[2], sys.argv[3]

def kubectl(*args, stdin=None, kc=None):
    cmd = ["kubectl"] + (["--kubeconfig", kc] if kc else []) + list(args)
    return subprocess.run(cmd, input=stdin, capture_output=True, text=True, check=True).stdout

clusters = [f"workload-{i}" for i in range(1, n + 1)]

class Workload:
    """A workload cluster reached over HTTPS with the admin token of its kubeconfig."""
    def __init__(self, name, text=None):
        if text is None:
            b64 = kubectl("get", "secret", f"{name}-kubeconfig", "-o", "jsonpath={.data.value}")
            text = base64.b64decode(b64).decode()
        self.kc_text = text
        kc = yaml.safe_load(self.kc_text)
        self.server = kc["clusters"][0]["cluster"]["server"]
        ca = base64.b64decode(kc["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
        self.ctx = ssl.create_default_context(cadata=ca)
        self.token = kc["users"][0]["user"]["token"]
        f = tempfile.NamedTemporaryFile("w", delete=False, dir=work, suffix=".kubeconfig")
        f.write(self.kc_text); f.close()
        self.kc = f.name
    def patch(self, path, body):
        req = urllib.request.Request(f"{self.server}{path}", data=json.dumps(body).encode(), method="PATCH",
                                     headers={"Authorization": f"Bearer {self.token}",
                                              "Content-Type": "application/merge-patch+json"})
        with urllib.request.urlopen(req, context=self.ctx, timeout=5) as r:
            r.read()
    def value(self, ns, name):
        req = urllib.request.Request(f"{self.server}/api/v1/namespaces/{ns}/configmaps/{name}",
                                     headers={"Authorization": f"Bearer {self.token}"})
        try:
            with urllib.request.urlopen(req, context=self.ctx, timeout=5) as r:
                return json.load(r).get("data", {}).get("value")
        except Exception:
            return None

workloads = [Workload(c) for c in clusters]
import os
management = Workload("management", open(os.environ["KUBECONFIG"]).read())

def wait_all(ns, name, value, subset=None, timeout=120, start=None):
    """Seconds from `start` until every cluster (of `subset`) serves `value`; polled in
    parallel."""
    targets = subset or workloads
    start = start or time.monotonic()
    done = [False] * len(targets)
    def poll(i):
        while time.monotonic() - start < timeout:
            if targets[i].value(ns, name) == value:
                done[i] = time.monotonic() - start
                return
            time.sleep(0.005)
    threads = [threading.Thread(target=poll, args=(i,)) for i in range(len(targets))]
    for t in threads: t.start()
    for t in threads: t.join()
    if not all(done):
        raise SystemExit(f"timed out waiting for {ns}/{name}={value}")
    return max(done)

def holder(name, values):
    objs = "".join(
        f"---\napiVersion: v1\nkind: ConfigMap\nmetadata: {{name: {name}-obj-{j}, namespace: default}}\ndata: {{value: \"{v}\"}}\n"
        for j, v in enumerate(values))
    return yaml.safe_dump({"apiVersion": "v1", "kind": "ConfigMap",
                           "metadata": {"name": name, "namespace": "default"},
                           "data": {"objects.yaml": objs}})

def crs(name, strategy, resources):
    return yaml.safe_dump({"apiVersion": "addons.cluster.x-k8s.io/v1beta2", "kind": "ClusterResourceSet",
        "metadata": {"name": name, "namespace": "default"},
        "spec": {"strategy": strategy, "clusterSelector": {"matchLabels": {"bench": "yes"}},
                 "resources": [{"kind": "ConfigMap", "name": r} for r in resources]}})

def all_bound(set_name, resources):
    out = json.loads(kubectl("get", "clusterresourcesetbindings", "-o", "json"))
    ok = 0
    for b in out["items"]:
        for e in b["spec"].get("bindings", []):
            if e["clusterResourceSetName"] == set_name:
                rs = e.get("resources", [])
                if len(rs) == len(resources) and all(r.get("applied") for r in rs):
                    ok += 1
    return ok == n

def median(xs):
    return statistics.median(xs)

results = {}
for strategy in ["Reconcile", "ContinuousApply"]:
    prefix = strategy.lower()
    resources = [f"{prefix}-{k}" for k in range(3)]
    for r in resources:
        kubectl("apply", "-f", "-", stdin=holder(r, ["v0"] * 10))
    start = time.monotonic()
    kubectl("apply", "-f", "-", stdin=crs(f"{prefix}-set", strategy, resources))
    while not all_bound(f"{prefix}-set", resources):
        time.sleep(0.02)
    first = time.monotonic() - start
    wait_all("default", f"{prefix}-0-obj-9", "v0")
    props, drifts = [], []
    for round in range(1, 6):
        value = f"v{round}"
        data = yaml.safe_load(holder(resources[0], [value] * 10))["data"]
        t = time.monotonic()
        management.patch(f"/api/v1/namespaces/default/configmaps/{resources[0]}", {"data": data})
        props.append(wait_all("default", f"{prefix}-0-obj-9", value, start=t))
        if strategy == "ContinuousApply":
            w = workloads[6]
            t = time.monotonic()
            w.patch(f"/api/v1/namespaces/default/configmaps/{prefix}-1-obj-3", {"data": {"value": "edited"}})
            drifts.append(wait_all("default", f"{prefix}-1-obj-3", "v0", subset=[w], start=t))
    results[strategy] = (first, median(props), median(drifts) if drifts else None)
    kubectl("delete", "clusterresourceset", f"{prefix}-set", "--wait=true")

hwm = 0
for line in open(f"/proc/{pid}/status"):
    if line.startswith("VmHWM:"):
        hwm = int(line.split()[1]) // 1024
print(f"clusters: {n}; objects per cluster: 30 (3 ConfigMaps x 10)")
print(f"{'strategy':<16} {'first apply':>12} {'change→all':>12} {'edit→fixed':>12}")
for s, (first, prop, drift) in results.items():
    d = f"{drift*1000:.0f} ms" if drift is not None else "never"
    print(f"{s:<16} {first*1000:>9.0f} ms {prop*1000:>9.0f} ms {d:>12}")
print(f"peak RSS of tidegate up --clusters {n}: {hwm} MiB")
PY
