#!/usr/bin/env bash
# Push-to-applied latency through a GitHub Receiver, in one run of `tidegate up`: a local Git
# repository (one ConfigMap) bootstrapped with a one-hour interval; each round commits a new
# value, pushes it, POSTs a signed GitHub push webhook to the receiver server and measures until
# the API server serves the new value (polled over HTTPS every 5 ms). Median and p99 over N
# pushes (default 50). Then the same path without the webhook, the GitRepository's interval set
# to 1m: a few pushes (default 3), each waited for.
#
#   cargo build --release -p tidegate && scripts/bench-receiver.sh [pushes] [interval-pushes]
set -euo pipefail
n=${1:-50}
m=${2:-3}
bin=${TIDEGATE_BIN:-${CARGO_TARGET_DIR:-target}/release/tidegate}
[ -x "$bin" ] || { echo "build first: cargo build --release -p tidegate" >&2; exit 2; }
work=$(mktemp -d)
git init -q --bare -b main "$work/repo.git"
git init -q -b main "$work/src"
git -C "$work/src" remote add origin "$work/repo.git"
mkdir -p "$work/src/deploy"
printf 'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pushed\n  namespace: default\ndata:\n  value: "0"\n' \
  >"$work/src/deploy/cm.yaml"
git -C "$work/src" add -A
git -C "$work/src" -c user.name=bench -c user.email=bench@tidegate.invalid commit -qm 0
git -C "$work/src" push -q origin main
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" up --data-dir "$work/data" --listen "127.0.0.1:$port" --git "$work/repo.git" --path ./deploy \
  --interval 1h >"$work/up.log" 2>&1 &
up=$!
trap 'kill $up 2>/dev/null; wait $up 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 600); do grep -q '^kubeconfig:' "$work/up.log" 2>/dev/null && break; sleep 0.1; done
grep -q '^kubeconfig:' "$work/up.log" || { cat "$work/up.log" >&2; exit 1; }
export KUBECONFIG="$work/data/kubeconfig"
kubectl -n flux-system create secret generic github-webhook --from-literal=token=bench-token >/dev/null
kubectl apply -f - >/dev/null <<'EOF'
apiVersion: notification.toolkit.fluxcd.io/v1
kind: Receiver
metadata: {name: github, namespace: flux-system}
spec:
  type: github
  events: [push]
  secretRef: {name: github-webhook}
  resources:
  - {kind: GitRepository, name: flux-system}
  - {apiVersion: kustomize.toolkit.fluxcd.io/v1, kind: Kustomization, name: flux-system}
EOF
export WORK="$work" PUSHES="$n" INTERVAL_PUSHES="$m"
python3 - <<'PY'
import base64, hashlib, hmac, json, os, ssl, statistics, subprocess, time, urllib.request
import yaml

work, n, m = os.environ["WORK"], int(os.environ["PUSHES"]), int(os.environ["INTERVAL_PUSHES"])
kc = yaml.safe_load(open(os.environ["KUBECONFIG"]))
server = kc["clusters"][0]["cluster"]["server"]
ca = base64.b64decode(kc["clusters"][0]["cluster"]["certificate-authority-data"]).decode()
ctx = ssl.create_default_context(cadata=ca)
token = kc["users"][0]["user"]["token"]

def value():
    req = urllib.request.Request(f"{server}/api/v1/namespaces/default/configmaps/pushed",
                                 headers={"Authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, context=ctx, timeout=5) as r:
            return json.load(r)["data"]["value"]
    except Exception:
        return None

def wait_for(v, start, timeout):
    while time.monotonic() - start < timeout:
        if value() == v:
            return time.monotonic() - start
        time.sleep(0.005)
    raise SystemExit(f"value {v} not applied within {timeout}s")

def commit(v):
    path = f"{work}/src/deploy/cm.yaml"
    open(path, "w").write(f'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: pushed\n  namespace: default\ndata:\n  value: "{v}"\n')
    git = ["git", "-C", f"{work}/src", "-c", "user.name=bench", "-c", "user.email=bench@tidegate.invalid"]
    subprocess.run(git + ["commit", "-qam", v], check=True)
    subprocess.run(git + ["push", "-q", "origin", "main"], check=True)

wait_for("0", time.monotonic(), 120)
path = ""
while not path:
    path = subprocess.run(["kubectl", "-n", "flux-system", "get", "receiver", "github", "-o",
                           "jsonpath={.status.webhookPath}"], capture_output=True, text=True).stdout
    time.sleep(0.05)
address = open(f"{work}/data/receiver-address").read().strip()
url = f"http://{address}{path}"
body = json.dumps({"ref": "refs/heads/main"}).encode()
sig = "sha256=" + hmac.new(b"bench-token", body, hashlib.sha256).hexdigest()

latencies = []
for i in range(1, n + 1):
    commit(str(i))
    t = time.monotonic()
    req = urllib.request.Request(url, data=body, method="POST", headers={
        "Content-Type": "application/json", "X-GitHub-Event": "push", "X-Hub-Signature-256": sig})
    with urllib.request.urlopen(req, timeout=10) as r:
        assert r.status == 200, r.status
    latencies.append(wait_for(str(i), t, 60))
latencies.sort()
p99 = latencies[min(len(latencies) - 1, int(round(0.99 * len(latencies))) - 1)]
print(f"webhook: {n} pushes, push-to-applied median {statistics.median(latencies)*1000:.0f} ms, "
      f"p99 {p99*1000:.0f} ms, max {latencies[-1]*1000:.0f} ms")

subprocess.run(["kubectl", "-n", "flux-system", "patch", "gitrepository", "flux-system", "--type=merge",
                "-p", '{"spec":{"interval":"1m"}}'], check=True, capture_output=True)
subprocess.run(["kubectl", "-n", "flux-system", "patch", "kustomization", "flux-system", "--type=merge",
                "-p", '{"spec":{"interval":"1m"}}'], check=True, capture_output=True)
waits = []
for j in range(m):
    v = f"interval-{j}"
    t = time.monotonic()
    commit(v)
    waits.append(wait_for(v, t, 180))
print(f"interval 1m, no webhook: {m} pushes, push-to-applied " +
      ", ".join(f"{w:.1f} s" for w in waits) + f" (mean {statistics.mean(waits):.1f} s)")
PY
