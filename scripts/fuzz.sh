#!/usr/bin/env bash
# Runs every cargo-fuzz target in fuzz/ for SECONDS each (default 300), starting from the
# committed seeds (fuzz/seeds/<target>) and what earlier runs found (fuzz/corpus, not committed),
# and prints, per target, the inputs tried and whether it crashed. Crashes are kept in fuzz/artifacts/<target>/.
# cargo-fuzz is installed when missing; the stable toolchain runs it without a sanitizer
# (coverage-guided libFuzzer; panics and aborts are what it finds).
set -uo pipefail
cd "$(dirname "$0")/../fuzz"
seconds="${1:-300}"
command -v cargo-fuzz >/dev/null 2>&1 || cargo install cargo-fuzz --locked
targets=$(cargo fuzz list)
status=0
for t in $targets; do
  mkdir -p "corpus/$t"
  log="$(mktemp)"
  cargo fuzz run --sanitizer none "$t" "corpus/$t" "seeds/$t" -- \
    -max_total_time="$seconds" -rss_limit_mb=4096 -timeout=30 >"$log" 2>&1
  code=$?
  runs=$(grep -Eo '^#[0-9]+' "$log" | tail -1 | tr -d '#')
  if [ "$code" -eq 0 ]; then
    echo "$t: ${runs:-?} inputs in ${seconds}s, no crash"
  else
    echo "$t: CRASHED after ${runs:-?} inputs (exit $code); see fuzz/artifacts/$t and:"
    grep -E 'panicked|ERROR|SUMMARY' "$log" | head -5
    status=1
  fi
  rm -f "$log"
done
exit $status
