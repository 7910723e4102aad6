#!/usr/bin/env bash
# make bench: whole-command timings with hyperfine on a release build (docs/performance.md).
# BENCH_QUICK=1 for fewer runs. Prints a Markdown table; touches nothing outside a temp folder.
set -euo pipefail
cd "$(dirname "$0")/.."
command -v hyperfine >/dev/null || { echo "bench: installing hyperfine"; apt-get install -y -qq hyperfine >/dev/null; }
swift build -c release --static-swift-stdlib >/dev/null
KC="$(swift build -c release --static-swift-stdlib --show-bin-path)/kc"
RUNS=${BENCH_QUICK:+20}; RUNS=${RUNS:-200}
work=$(mktemp -d); trap 'KC_AGENT_DIR=$work/agent "$KC" agent --stop 2>/dev/null || true; rm -rf "$work"' EXIT
export HOME=$work XDG_DATA_HOME=$work/data KC_AGENT_DIR=$work/agent KC_AGENT_GRACE=30
unset XDG_RUNTIME_DIR KC_KEYCHAIN KC_PASSWORD
printf 'int main(void){return 0;}\n' > "$work/noop.c" && cc -O2 -static -o "$work/noop-c" "$work/noop.c"
printf '' > "$work/noop.swift" && swiftc -O -static-stdlib "$work/noop.swift" -o "$work/noop-swift" 2>/dev/null
for profile in interactive moderate; do
  KC_PASSWORD=bench "$KC" create "$work/$profile.keychain-db" --kdf $profile 2>/dev/null
  KC_PASSWORD=bench "$KC" add -k "$work/$profile.keychain-db" -s bench -a user -w s3cret
done
json=$work/results.json
hyperfine -N --runs "$RUNS" --warmup 10 --export-json "$json.1" \
  -n "trivial Swift executable (floor)" "$work/noop-swift" \
  -n "kc --version" "$KC --version" >/dev/null
KC_PASSWORD=bench "$KC" unlock -k "$work/interactive.keychain-db"
hyperfine -N --runs "$RUNS" --warmup 10 --export-json "$json.2" \
  -n "kc find -w (unlocked, through the agent)" "$KC find -k $work/interactive.keychain-db -s bench -a user -w" >/dev/null
"$KC" lock --all
hyperfine -N --runs 10 --warmup 1 --export-json "$json.3" \
  -n "kc find -w in-process, KC_PASSWORD, interactive KDF" "env KC_PASSWORD=bench $KC find -k $work/interactive.keychain-db -s bench -a user -w" \
  -n "kc find -w in-process, KC_PASSWORD, moderate KDF" "env KC_PASSWORD=bench $KC find -k $work/moderate.keychain-db -s bench -a user -w" \
  -n "kc unlock (interactive KDF)" "sh -c 'env KC_PASSWORD=bench $KC unlock -k $work/interactive.keychain-db && $KC lock --all'" \
  -n "kc unlock (moderate KDF)" "sh -c 'env KC_PASSWORD=bench $KC unlock -k $work/moderate.keychain-db && $KC lock --all'" >/dev/null
python3 - "$json" <<'PY'
import json, sys, statistics, platform, subprocess
rows = []
for i in (1, 2, 3):
    for r in json.load(open(f"{sys.argv[1]}.{i}"))["results"]:
        t = sorted(r["times"]); p95 = t[min(len(t) - 1, int(len(t) * 0.95))]
        rows.append((r["command"], statistics.median(t) * 1000, p95 * 1000))
floor = rows[0][1]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
cores = subprocess.run(["nproc"], capture_output=True, text=True).stdout.strip()
print(f"| command | median | p95 | × floor |\n|---|---:|---:|---:|")
for name, med, p95 in rows:
    print(f"| {name} | {med:.2f} ms | {p95:.2f} ms | {med / floor:.1f} |")
print(f"\n{cores} cores, {cpu}; release build, Swift runtime linked statically.")
PY
