#!/usr/bin/env bash
# Event server throughput, in one run of `tidegate up`: one generic Provider pointing at a local
# sink and 100 Alerts (Kustomization app-0 … app-99). Python clients (8 threads, keep-alive)
# POST N distinct Flux events (default 20000), each about one of the 100 Kustomizations;
# reported: events accepted per second (202s), then notifications delivered to the sink per
# second. A second round makes every Alert match every event (fan-out 100) with fewer events.
#
#   cargo build --release -p tidegate && scripts/bench-events.sh [events] [fanout-events]
set -euo pipefail
n=${1:-20000}
f=${2:-500}
bin=${TIDEGATE_BIN:-${CARGO_TARGET_DIR:-target}/release/tidegate}
[ -x "$bin" ] || { echo "build first: cargo build --release -p tidegate" >&2; exit 2; }
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" up --data-dir "$work/data" --listen "127.0.0.1:$port" >"$work/up.log" 2>&1 &
up=$!
trap 'kill $up 2>/dev/null; wait $up 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 600); do grep -q '^kubeconfig:' "$work/up.log" 2>/dev/null && break; sleep 0.1; done
grep -q '^kubeconfig:' "$work/up.log" || { cat "$work/up.log" >&2; exit 1; }
export KUBECONFIG="$work/data/kubeconfig"
export WORK="$work" EVENTS="$n" FANOUT_EVENTS="$f" EVENTS_ADDR="$(cat "$work/data/events-address")"
python3 - <<'PY'
import http.client, http.server, json, multiprocessing, os, subprocess, threading, time

work, n, fan = os.environ["WORK"], int(os.environ["EVENTS"]), int(os.environ["FANOUT_EVENTS"])
host, port = os.environ["EVENTS_ADDR"].split(":")
received = multiprocessing.Value("q", 0)

class Sink(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    def do_POST(self):
        self.rfile.read(int(self.headers.get("Content-Length", 0)))
        with received.get_lock():
            received.value += 1
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()
    def log_message(self, *a):
        pass

# The sink runs in its own process so that it does not share the clients' interpreter lock.
sink = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Sink)
multiprocessing.Process(target=sink.serve_forever, daemon=True).start()

def kubectl_apply(docs):
    items = [json.loads(d) for d in docs]
    subprocess.run(["kubectl", "apply", "-f", "-"],
                   input=json.dumps({"apiVersion": "v1", "kind": "List", "items": items}).encode(),
                   check=True, stdout=subprocess.DEVNULL)

def provider():
    return json.dumps({"apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Provider",
        "metadata": {"name": "sink", "namespace": "flux-system"},
        "spec": {"type": "generic", "address": f"http://127.0.0.1:{sink.server_port}/"}})

def alerts(fanout):
    return [json.dumps({"apiVersion": "notification.toolkit.fluxcd.io/v1beta3", "kind": "Alert",
        "metadata": {"name": f"alert-{i}", "namespace": "flux-system"},
        "spec": {"providerRef": {"name": "sink"},
                 "eventSources": [{"kind": "Kustomization", "name": "*" if fanout else f"app-{i}"}]}})
        for i in range(100)]

def run(count, tag):
    def worker(start, step, out):
        c = http.client.HTTPConnection(host, int(port))
        ok = 0
        for i in range(start, count, step):
            e = {"involvedObject": {"kind": "Kustomization", "namespace": "flux-system",
                 "name": f"app-{i % 100}", "apiVersion": "kustomize.toolkit.fluxcd.io/v1"},
                 "severity": "info", "timestamp": "2026-11-27T00:00:00Z",
                 "message": f"{tag} event {i}", "reason": "ReconciliationSucceeded",
                 "metadata": {"kustomize.toolkit.fluxcd.io/revision": f"main@sha1:{i:040x}"},
                 "reportingController": "kustomize-controller"}
            c.request("POST", "/", json.dumps(e), {"Content-Type": "application/json"})
            r = c.getresponse(); r.read()
            ok += r.status == 202
        out.append(ok)
    results, threads = [], []
    t0 = time.monotonic()
    for s in range(8):
        th = threading.Thread(target=worker, args=(s, 8, results)); th.start(); threads.append(th)
    for th in threads: th.join()
    return sum(results), time.monotonic() - t0

def wait_delivered(want, t0):
    while received.value < want and time.monotonic() - t0 < 300:
        time.sleep(0.01)
    return time.monotonic() - t0

kubectl_apply([provider()] + alerts(False))
time.sleep(2)
received.value = 0
t0 = time.monotonic()
accepted, secs = run(n, "one")
done = wait_delivered(accepted, t0)
print(f"100 Alerts, one match per event: {accepted}/{n} accepted in {secs:.2f} s = {accepted/secs:.0f} events/s; "
      f"{received.value} notifications delivered in {done:.2f} s = {received.value/done:.0f}/s")
kubectl_apply(alerts(True))
time.sleep(2)
received.value = 0
t0 = time.monotonic()
accepted, secs = run(fan, "fan")
done = wait_delivered(accepted * 100, t0)
print(f"100 Alerts, all matching (fan-out 100): {accepted}/{fan} accepted in {secs:.2f} s = {accepted/secs:.0f} events/s; "
      f"{received.value} notifications delivered in {done:.2f} s = {received.value/done:.0f}/s")
PY
rss=$(ps -o rss= -p $up)
echo "tidegate up RSS after the run: $((rss / 1024)) MiB"
