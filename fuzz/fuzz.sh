#!/usr/bin/env bash
# make fuzz: libFuzzer with AddressSanitizer on the decoders of untrusted bytes
# (fuzz/Targets/FuzzTargets.swift): the query dictionary decoder, the agent protocol decoder, the
# database row decoder, the DER readers of items (distinguished names, key blobs) and the SSH
# agent's message decoder (SSHAgentRequest). FUZZ_SECONDS per target (default 60). The corpus in fuzz/corpus/
# starts from FuzzTargets.seeds and keeps, after a merge, only inputs that add coverage.
# Exits non-zero on any crash, hang (-timeout) or sanitizer report; the reproducer is left
# in fuzz/crashes/.
set -euo pipefail
cd "$(dirname "$0")/.."
SECONDS_PER_TARGET=${FUZZ_SECONDS:-60}
out=.build-fuzz
mkdir -p "$out" fuzz/crashes
echo "fuzz: building the harness (SecurityVocabulary, KeychainStatus, KeychainCore, POSIXSupport, AgentWire, SSHAgent, KeychainFuzz + fuzz/Harness.swift, -sanitize=fuzzer,address)" >&2
# Each module as SwiftPM builds it (one package name, so `package` access reaches the
# decoders), instrumented for libFuzzer and AddressSanitizer, then linked with the harness.
common=(-sanitize=fuzzer,address -parse-as-library -O -package-name kc -I Sources/CSodium -I Sources/CSQLite -I Sources/COpenSSL -I "$out")
: > "$out/build.log"
module() {   # module NAME SOURCE-DIR
  # shellcheck disable=SC2046
  swiftc "${common[@]}" -module-name "$1" -emit-module -emit-module-path "$out/$1.swiftmodule" -wmo -c -o "$out/$1.o" \
    $(find "$2" -name '*.swift' | sort) >> "$out/build.log" 2>&1 || { cat "$out/build.log" >&2; exit 1; }
}
# The floor first: KeychainCore and POSIXSupport import it (docs/design.md, "The floor").
module SecurityVocabulary Sources/SecurityVocabulary
module KeychainStatus Sources/KeychainStatus
module KeychainCore Sources/KeychainCore
module POSIXSupport Sources/POSIXSupport
module AgentWire Sources/AgentWire
module SSHAgent Sources/SSHAgent
module KeychainFuzz fuzz/Targets
swiftc "${common[@]}" -module-name KCFuzzHarness fuzz/Harness.swift "$out"/SecurityVocabulary.o "$out"/KeychainStatus.o "$out"/KeychainCore.o "$out"/POSIXSupport.o \
  "$out"/AgentWire.o "$out"/SSHAgent.o "$out"/KeychainFuzz.o -lsodium -lsqlite3 -lcrypto -o "$out/kc-fuzz" >> "$out/build.log" 2>&1 \
  || { cat "$out/build.log" >&2; exit 1; }

printf '| fuzz target | inputs run | corpus before | corpus after | crashes, hangs or sanitizer reports |\n|---|---:|---:|---:|---:|\n' > "$out/summary.md"
status=0
for target in query agent row der ssh; do
  corpus=fuzz/corpus/$target
  mkdir -p "$corpus"
  if [ -z "$(ls -A "$corpus" | grep -v '^\.keep$' || true)" ]; then
    KC_FUZZ_TARGET=$target KC_FUZZ_WRITE_SEEDS="$corpus" "$out/kc-fuzz" -runs=0 >/dev/null 2>&1 || true
  fi
  before=$(ls "$corpus" | grep -vc '^\.keep$' || true)
  work=$(mktemp -d)
  cp "$corpus"/* "$work"/ 2>/dev/null || true
  rm -f "$work/.keep"
  log=$out/$target.log
  echo "fuzz: $target for ${SECONDS_PER_TARGET}s" >&2
  if KC_FUZZ_TARGET=$target "$out/kc-fuzz" "$work" -max_total_time="$SECONDS_PER_TARGET" -timeout=5 \
       -rss_limit_mb=2048 -max_len=65536 -artifact_prefix="fuzz/crashes/$target-" -print_final_stats=1 > "$log" 2>&1; then
    crashes=0
  else
    crashes=1; status=1
    tail -40 "$log" >&2
  fi
  runs=$(grep -Eo 'stat::number_of_executed_units: *[0-9]+' "$log" | grep -Eo '[0-9]+$' || echo 0)
  # Keep only what adds coverage.
  KC_FUZZ_TARGET=$target "$out/kc-fuzz" -merge=1 "$corpus" "$work" >/dev/null 2>&1 || true
  after=$(ls "$corpus" | grep -vc '^\.keep$' || true)
  rm -rf "$work"
  printf '| %s | %s | %s | %s | %s |\n' "$target" "$runs" "$before" "$after" "$crashes" >> "$out/summary.md"
done
cat "$out/summary.md"
exit $status
