#!/usr/bin/env bash
# make stress: the long reliability suite (docs/reliability.md): stress/stress.py on the
# release binaries (load, kill -9 of writers and of the agent, disk full, read-only), then
# make fuzz. STRESS_QUICK=1 for a short run (about 2 minutes). Prints the summary tables.
set -euo pipefail
cd "$(dirname "$0")/.."
FLAGS=(-c release --static-swift-stdlib -Xswiftc -static-executable)
echo "stress: building the release binaries" >&2
swift build "${FLAGS[@]}" --product kc >/dev/null
swift build "${FLAGS[@]}" --product kc-loadgen >/dev/null
BIN="$(swift build "${FLAGS[@]}" --show-bin-path)"
status=0
if [ -n "${STRESS_QUICK:-}" ]; then
  python3 stress/stress.py "$BIN/kc" "$BIN/kc-loadgen" --quick || status=1
  FUZZ_SECONDS=${FUZZ_SECONDS:-10} bash fuzz/fuzz.sh || status=1
else
  python3 stress/stress.py "$BIN/kc" "$BIN/kc-loadgen" || status=1
  FUZZ_SECONDS=${FUZZ_SECONDS:-60} bash fuzz/fuzz.sh || status=1
fi
echo
echo "$(date -u +%F), $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
exit $status
