#!/usr/bin/env bash
# Bucket sync against `aws s3 sync` (PyPI awscli), in one run against the same S3 server on
# loopback (moto, PyPI moto[server]) holding N small objects (default 10,000):
#   (a) first sync: list and download everything (Tidegate also packs the artifact);
#   (b) no-op sync: the bucket unchanged, list again (Tidegate: same revision, nothing
#       fetched; aws: compares sizes and times, nothing fetched).
# Wall time (best of 3) and peak RSS. Tidegate runs the `bucket-sync` example of
# crates/source, which makes the library calls the Bucket controller makes.
#
#   cargo build --release -p tidegate-source --example bucket-sync && scripts/bench-bucket.sh [n]
set -euo pipefail
n=${1:-10000}
bin=${BUCKET_SYNC_BIN:-${CARGO_TARGET_DIR:-target}/release/examples/bucket-sync}
[ -x "$bin" ] || { echo "build first: cargo build --release -p tidegate-source --example bucket-sync" >&2; exit 2; }
command -v aws >/dev/null || { echo "aws (pip install awscli) is required" >&2; exit 2; }
python3 -c 'import moto, boto3' 2>/dev/null || { echo "moto[server] and boto3 are required" >&2; exit 2; }
work=$(mktemp -d)
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
python3 -m moto.server -H 127.0.0.1 -p "$port" >/dev/null 2>&1 &
moto=$!
trap 'kill $moto 2>/dev/null; rm -rf "$work"' EXIT
for _ in $(seq 100); do (echo >/dev/tcp/127.0.0.1/"$port") 2>/dev/null && break; sleep 0.1; done
export AWS_ACCESS_KEY_ID=bench AWS_SECRET_ACCESS_KEY=bench AWS_DEFAULT_REGION=us-east-1
endpoint="http://127.0.0.1:$port"
python3 - "$endpoint" "$n" <<'PY'
import sys, boto3
from concurrent.futures import ThreadPoolExecutor
ep, n = sys.argv[1], int(sys.argv[2])
s3 = boto3.client('s3', endpoint_url=ep)
s3.create_bucket(Bucket='bench')
def put(i):
    body = f'apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: cm-{i}\ndata:\n  index: "{i}"\n'.encode()
    s3.put_object(Bucket='bench', Key=f'apps/team-{i % 20}/cm-{i:05}.yaml', Body=body)
with ThreadPoolExecutor(16) as pool:
    list(pool.map(put, range(n)))
PY

run() { # best wall time in ms and peak RSS in MiB over 3 runs; $1: setup before each run
  local setup=$1; shift
  local best_ms=999999999 peak=0
  for _ in 1 2 3; do
    eval "$setup"
    local start=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$work/t" "$@" >"$work/out" 2>"$work/err" || {
      echo "failed: $*" >&2; cat "$work/err" >&2; exit 1; }
    local ms; ms=$(echo "($EPOCHREALTIME - $start) * 1000" | bc -l)
    best_ms=$(echo "if ($ms < $best_ms) $ms else $best_ms" | bc -l)
    local kib; kib=$(tail -1 "$work/t")
    [ "$kib" -gt "$peak" ] && peak=$kib
  done
  printf '%.0f %.1f\n' "$best_ms" "$(echo "$peak / 1024" | bc -l)"
}

first_tg=$(run 'rm -rf "$work/tg"' "$bin" "127.0.0.1:$port" bench "$work/tg")
grep -q "stored ($n objects fetched)" "$work/out" || { echo "tidegate did not fetch $n objects: $(cat "$work/out")" >&2; exit 1; }
noop_tg=$(run ':' "$bin" "127.0.0.1:$port" bench "$work/tg")
grep -q "up to date" "$work/out" || { echo "tidegate fetched again: $(cat "$work/out")" >&2; exit 1; }
first_aws=$(run 'rm -rf "$work/aws"' aws --endpoint-url "$endpoint" s3 sync --only-show-errors s3://bench "$work/aws")
[ "$(find "$work/aws" -type f | wc -l)" -eq "$n" ] || { echo "aws did not fetch $n objects" >&2; exit 1; }
noop_aws=$(run ':' aws --endpoint-url "$endpoint" s3 sync --only-show-errors s3://bench "$work/aws")

ratio() { echo "scale=2; $1 / $2" | bc -l; }
read -r ft fm <<<"$first_tg"; read -r fa fam <<<"$first_aws"
read -r nt nm <<<"$noop_tg"; read -r na nam <<<"$noop_aws"
echo "objects: $n"
printf '%-12s %14s %14s %10s %12s %12s %10s\n' case "tidegate ms" "aws ms" ratio "tidegate MiB" "aws MiB" ratio
printf '%-12s %14s %14s %10s %12s %12s %10s\n' "first sync" "$ft" "$fa" "$(ratio "$ft" "$fa")" "$fm" "$fam" "$(ratio "$fm" "$fam")"
printf '%-12s %14s %14s %10s %12s %12s %10s\n' "no-op sync" "$nt" "$na" "$(ratio "$nt" "$na")" "$nm" "$nam" "$(ratio "$nm" "$nam")"
