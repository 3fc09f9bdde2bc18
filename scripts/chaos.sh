#!/usr/bin/env bash
# The long chaos run for the benchmarks page: `tidegate up` killed with SIGKILL at random
# moments of reconciles that add, remove and move objects between three Kustomizations, for
# TRIALS trials (default 100). Prints the test's summary line (trials survived, where the kills
# landed, acknowledged writes kept, the seed to replay a run with TIDEGATE_CHAOS_SEED).
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$HOME/.cache/tidegate-target}"
TIDEGATE_CHAOS_TRIALS="${1:-100}" cargo test -p tidegate --test chaos -- --nocapture 2>&1 \
  | grep -E -A4 '^(chaos|chaos seed|test result|thread .* panicked)' || true
