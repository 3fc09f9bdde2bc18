#!/usr/bin/env bash
# Memory under rewrites of a large object (issue 17): one `tidegate apiserver` (or each binary
# given), a 1 MiB ConfigMap replaced REWRITES times (default 1500) over HTTPS with the admin
# token, one watcher that never reads (a stalled client), and the server's peak RSS (VmHWM)
# before and after. With two binaries (old new) both run in the same invocation, for a ratio.
#
#   scripts/bench-rewrite-memory.sh [rewrites] BIN [BIN...]
set -euo pipefail
rewrites=${1:-1500}; shift
[ "$#" -ge 1 ] || { echo "usage: $0 [rewrites] BIN [BIN...]" >&2; exit 2; }
command -v curl >/dev/null || { echo "curl is required" >&2; exit 2; }
for bin in "$@"; do
  work=$(mktemp -d)
  port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
  "$bin" apiserver --data-dir "$work/data" --listen "127.0.0.1:$port" >"$work/log" 2>&1 &
  pid=$!
  for _ in $(seq 300); do [ -s "$work/data/kubeconfig" ] && break; sleep 0.1; done
  sleep 0.5
  token=$(grep -E '^\s+token: ' "$work/data/kubeconfig" | head -1 | awk '{print $2}')
  base="https://127.0.0.1:$port/api/v1/namespaces/default/configmaps"
  python3 - "$work/cm.json" <<'PY'
import json, sys
json.dump({"apiVersion": "v1", "kind": "ConfigMap", "metadata": {"name": "big"},
           "data": {"blob": "x" * (1 << 20)}}, open(sys.argv[1], "w"))
PY
  hwm() { awk '/VmHWM/ {printf "%.0f", $2/1024}' "/proc/$pid/status"; }
  start=$(hwm)
  curl -sk -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
    -X POST --data-binary "@$work/cm.json" "$base" -o /dev/null
  # A watcher that never reads: its connection stays open, its buffers full.
  (curl -sk -N -H "Authorization: Bearer $token" "$base?watch=true" | sleep 100000) &
  stall=$!
  began=$EPOCHREALTIME
  for i in $(seq "$rewrites"); do
    sed "s/\"name\": \"big\"}/\"name\": \"big\", \"labels\": {\"i\": \"$i\"}}/" "$work/cm.json" >"$work/cm-i.json"
    curl -sk -H "Authorization: Bearer $token" -H 'Content-Type: application/json' \
      -X PUT --data-binary "@$work/cm-i.json" "$base/big" -o /dev/null
  done
  took=$(echo "$EPOCHREALTIME - $began" | bc -l)
  printf '%s: %d rewrites of a 1 MiB ConfigMap in %.1f s; peak RSS %s MiB at start, %s MiB after\n' \
    "$bin" "$rewrites" "$took" "$start" "$(hwm)"
  pkill -P "$stall" 2>/dev/null || true; kill "$stall" 2>/dev/null || true
  kill "$pid"; wait "$pid" 2>/dev/null || true
  rm -rf "$work"
done
