#!/usr/bin/env bash
# The Secret Service at scale (issue 31; method: docs/performance.md, "At 100,000 items").
# kc's default keychain holds SCALE_N items with Secret Service attributes (100,000; imported
# with kc import, as Python's keyring would have stored them); gnome-keyring holds GK_N of
# the same items (5,000; 1,000 with BENCH_QUICK=1) in its in-memory `session` collection,
# stored over D-Bus (filling gnome-keyring to 100,000 over D-Bus takes hours). Each has its
# own private dbus-daemon. Rows: Properties.Get of a collection's Locked, Label and Items,
# Python keyring's get_password, and `kc list` with the agent's peak memory. Prints one Markdown
# table. Run by bench/bench.sh with KC and PROVIDER set; alone it builds both first.
# Touches nothing outside a temporary folder; stops the agent, buses and daemons it started.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${SCALE_N:-100000}
if [ -n "${BENCH_QUICK:-}" ]; then GK_N=${GK_N:-1000}; CALLS=200; GETS=20; else GK_N=${GK_N:-5000}; CALLS=1000; GETS=100; fi
source bench/private_providers.sh

start_kc "$N"
export DBUS_SESSION_BUS_ADDRESS=$kcbus
login=/org/freedesktop/secrets/collection/login
"${SS[@]}" property "$login" "$CALLS" > "$results/kc-property.json"
"${SS[@]}" keyring-get "$login" $((N / 2)) "$GETS" > "$results/kc-keyring.json"
"${SS[@]}" items "$login" 3 > "$results/kc-items.json"
/usr/bin/time -v "$SKC" list 2> "$results/kc-list-time.txt" | wc -l > "$results/kc-list-lines.txt"
grep -E '^(VmHWM|VmRSS)' "/proc/$agent/status" > "$results/kc-agent-status.txt"

start_gnome_keyring "$GK_N"
export DBUS_SESSION_BUS_ADDRESS=$gkbus
session=/org/freedesktop/secrets/collection/session
"${SS[@]}" property "$session" "$CALLS" > "$results/gk-property.json"
"${SS[@]}" keyring-get "$session" $((GK_N / 2)) "$GETS" > "$results/gk-keyring.json"
"${SS[@]}" items "$session" 3 > "$results/gk-items.json"

gk_version=$(dpkg-query -W -f '${Version}' gnome-keyring 2>/dev/null || echo "?")
/usr/bin/python3 - "$results" "$N" "$GK_N" "$gk_version" <<'PY'
import json, os, re, sys
results, n, gk_n, gk_version = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
load = lambda name: json.load(open(os.path.join(results, name)))
kp, gp, kk, gk = load("kc-property.json"), load("gk-property.json"), load("kc-keyring.json"), load("gk-keyring.json")
rows = []
def row(measure, value, ratio="", target="", met=None):
    rows.append((measure, value, ratio, target, "" if met is None else ("met" if met else "**missed**")))
for name in ("Locked", "Label"):
    inside_kc = kp[name] - kp["ping"]
    inside_gk = gp[name] - gp["ping"]
    row(f"Get Collection.{name} through gnome-keyring {gk_version}, {gk_n:,} items (client's time)", f"{gp[name]:.3f} ms")
    row(f"Get Collection.{name} through kc's provider, {n:,} items (client's time)", f"{kp[name]:.3f} ms",
        f"{kp[name] / gp[name]:.2f}× gnome-keyring", "≤ 1 ms" if name == "Locked" else "", kp[name] <= 1 if name == "Locked" else None)
    row(f"  of which in the provider (− Peer.Ping's {kp['ping']:.3f} ms); gnome-keyring's: {inside_gk:.3f} ms", f"{inside_kc:.3f} ms")
row(f"keyring get_password through gnome-keyring, {gk_n:,} items (median of {gk['calls']}; first call {gk['first_ms']:.1f} ms)", f"{gk['median_ms']:.2f} ms")
row(f"keyring get_password through kc's provider, {n:,} items (median of {kk['calls']}; first call {kk['first_ms']:.1f} ms)", f"{kk['median_ms']:.2f} ms",
    f"{kk['median_ms'] / gk['median_ms']:.2f}× gnome-keyring", "≤ 20 ms", kk["median_ms"] <= 20)
ki, gi = load("kc-items.json"), load("gk-items.json")
row(f"Get Collection.Items through gnome-keyring, {gk_n:,} items (median of 3; {gi['items']:,} paths)", f"{gi['median_ms']:.1f} ms")
row(f"Get Collection.Items through kc's provider, {n:,} items (median of 3; {ki['items']:,} paths, one D-Bus reply)", f"{ki['median_ms']:.1f} ms",
    "", f"{n:,} paths", ki["items"] == n)
t = open(os.path.join(results, "kc-list-time.txt")).read()
lines = int(open(os.path.join(results, "kc-list-lines.txt")).read())
status = int(re.search(r"Exit status: (\d+)", t).group(1))
wall = re.search(r"Elapsed \(wall clock\) time \(h:mm:ss or m:ss\): (\S+)", t).group(1)
seconds = sum(float(p) * 60 ** i for i, p in enumerate(reversed(wall.split(":"))))
client = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", t).group(1)) / 1024
row(f"kc list, {n:,} items with Secret Service attributes: exit status, lines", f"{status}, {lines:,}", "", f"works ({n:,} lines)", status == 0 and lines == n)
row(f"kc list, {n:,} items: wall time; kc's own peak RSS {client:.1f} MB", f"{seconds:.2f} s")
hwm = int(re.search(r"VmHWM:\s+(\d+)", open(os.path.join(results, "kc-agent-status.txt")).read()).group(1)) / 1024
row(f"peak RSS of the agent (VmHWM after unlock) through the property reads, keyring gets and kc list, {n:,} items", f"{hwm:.1f} MiB", "", "≤ 64 MiB", hwm <= 64)
print("| measure | median | ratio | target | |")
print("|---|---:|---:|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")
PY
