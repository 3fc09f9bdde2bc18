#!/usr/bin/env bash
# CLI verbs against kubectl, the tool the same users type next to them: wall time and peak RSS
# of `tidegate get kustomizations -A` and `kubectl get kustomizations -A`, interleaved in one
# run against one `tidegate up --example` (so the machine's noise hits both alike).
#
#   cargo build --release -p tidegate && scripts/bench-cli.sh [runs]   (TIDEGATE_BIN to override)
set -euo pipefail
runs=${1:-30}
bin=${TIDEGATE_BIN:-${CARGO_TARGET_DIR:-target}/release/tidegate}
[ -x "$bin" ] || { echo "build first: cargo build --release -p tidegate" >&2; exit 2; }
command -v kubectl >/dev/null || { echo "kubectl is required" >&2; exit 2; }
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
"$bin" up --example --data-dir "$work/data" --listen "127.0.0.1:$port" >"$work/up.log" 2>&1 &
up=$!
trap 'kill $up 2>/dev/null; wait $up 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 600); do grep -q '^kubeconfig: ' "$work/up.log" && break; sleep 0.1; done
kc="$work/data/kubeconfig"

measure() { # prints "seconds kib" for one run of "$@", which must succeed and print
  local start=$EPOCHREALTIME
  /usr/bin/time -f '%M' -o "$work/t" "$@" >"$work/out" 2>&1 || {
    echo "failed: $*" >&2; cat "$work/out" >&2; exit 1; }
  local end=$EPOCHREALTIME
  grep -q . "$work/out" || { echo "no output: $*" >&2; exit 1; }
  echo "$(echo "$end - $start" | bc -l) $(cat "$work/t")"
}
: >"$work/tidegate"; : >"$work/kubectl"
for _ in $(seq "$runs"); do
  measure "$bin" get kustomizations -A --kubeconfig "$kc" >>"$work/tidegate"
  measure kubectl get kustomizations.kustomize.toolkit.fluxcd.io -A --kubeconfig "$kc" >>"$work/kubectl"
done
summary() { sort -n -k1 "$1" | awk '{t[NR]=$1; if ($2>m) m=$2} END {printf "median %.1f ms, peak RSS %.1f MiB", 1000*t[int((NR+1)/2)], m/1024}'; }
echo "runs: $runs"
echo "tidegate get kustomizations -A: $(summary "$work/tidegate")"
echo "kubectl get kustomizations -A:  $(summary "$work/kubectl")"
