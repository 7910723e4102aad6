#!/usr/bin/env bash
# The Secret Service at 5,000 items, kc's provider beside gnome-keyring (issue 31; method:
# docs/performance.md, "At 5,000 items"). kc's default keychain and gnome-keyring's `session`
# collection each hold the same SS5K_N items (5,000; kc's imported with kc import, gnome-keyring's
# stored over D-Bus), each provider on its own private dbus-daemon with Debian's session bus
# limits. Rows, each measured on kc then on gnome-keyring: Python keyring's get_password,
# `secret-tool search --all` of every item, SecretStorage's create_item of the next items into
# the full collection; the client's own CPU time; then the time in each provider per get and
# per create_item, and how long secret-tool waits on each provider, from dbus-monitor. Prints
# one Markdown table. Run by bench/bench.sh after bench/scale.sh with KC and PROVIDER set;
# alone it builds both first.
# Touches nothing outside a temporary folder; stops the agent, buses and daemons it started.
set -euo pipefail
cd "$(dirname "$0")/.."

N=${SS5K_N:-5000}
if [ -n "${BENCH_QUICK:-}" ]; then GETS=20; CREATES=20; SEARCHES=1; PROFILED=10; else GETS=100; CREATES=100; SEARCHES=3; PROFILED=20; fi
source bench/private_providers.sh

start_kc "$N"
start_gnome_keyring "$N"
collection_kc=/org/freedesktop/secrets/collection/login
collection_gk=/org/freedesktop/secrets/collection/session
bus_kc=$kcbus
bus_gk=$gkbus
# on SIDE COMMAND...: secret_service.py COMMAND on SIDE's bus, with that side's collection for
# the word `COLLECTION`.
on() {
  local bus=bus_$1 collection=collection_$1 args=()
  shift
  for a in "$@"; do if [ "$a" = COLLECTION ]; then args+=("${!collection}"); else args+=("$a"); fi; done
  DBUS_SESSION_BUS_ADDRESS=${!bus} "${SS[@]}" "${args[@]}"
}
# profiled SIDE NAME OPERATIONS COMMAND...: COMMAND under dbus-monitor --profile on SIDE's bus;
# its output into $results/SIDE-NAME-profiled.json, the provider's time per operation into
# $results/SIDE-NAME-provider.json.
profiled() {
  local side=$1 name=$2 operations=$3 bus=bus_$1
  shift 3
  stdbuf -oL dbus-monitor --address "${!bus}" --profile > "$work/monitor-$side-$name.txt" 2>/dev/null &
  local monitor=$!
  sleep 0.5
  on "$side" "$@" > "$results/$side-$name-profiled.json"
  sleep 0.2
  kill "$monitor"; wait "$monitor" 2>/dev/null || true
  "${SS[@]}" provider-time "$work/monitor-$side-$name.txt" "$operations" > "$results/$side-$name-provider.json"
}

echo "$bench_name: keyring get_password, secret-tool search --all, create_item" >&2
for side in kc gk; do on "$side" keyring-get COLLECTION $((N / 2)) "$GETS" > "$results/$side-keyring.json"; done
for side in kc gk; do on "$side" search-all "$N" "$SEARCHES" > "$results/$side-search-all.json"; done
# secret-tool search --all once more each under dbus-monitor, while both still hold N items.
for side in kc gk; do profiled "$side" search 1 search-all "$N" 1; done
for side in kc gk; do on "$side" create-item COLLECTION "$N" "$CREATES" > "$results/$side-create.json"; done
# Where the time goes: more of the same under dbus-monitor (each get is its own connection,
# one client; the create_items are one client, so its time is divided by their count).
for side in kc gk; do
  profiled "$side" keyring "1" keyring-get COLLECTION $((N / 2)) "$PROFILED"
  profiled "$side" create "$PROFILED" create-item COLLECTION $((N + CREATES)) "$PROFILED"
done

gk_version=$(dpkg-query -W -f '${Version}' gnome-keyring 2>/dev/null || echo "?")
/usr/bin/python3 - "$results" "$N" "$gk_version" <<'PY'
import json, os, sys
results, n, gk_version = sys.argv[1], int(sys.argv[2]), sys.argv[3]
load = lambda name: json.load(open(os.path.join(results, name)))
rows = []
def row(measure, value, ratio="", target="", met=None):
    rows.append((measure, value, ratio, target, "" if met is None else ("met" if met else "**missed**")))
methods = lambda p: ", ".join(f"{m} {ms:.2f}" for m, ms in sorted(p["methods"].items()))
def where(name, unit):
    kp, gp = load(f"kc-{name}-provider.json"), load(f"gk-{name}-provider.json")
    row(f"  in gnome-keyring per {unit} (dbus-monitor; per call, ms: {methods(gp)})", f"{gp['per_client_ms']:.2f} ms")
    row(f"  in kc's provider per {unit} (dbus-monitor; per call, ms: {methods(kp)})", f"{kp['per_client_ms']:.2f} ms",
        f"{kp['per_client_ms'] / gp['per_client_ms']:.2f}× gnome-keyring")
kk, gk = load("kc-keyring.json"), load("gk-keyring.json")
row(f"keyring get_password through gnome-keyring {gk_version}, {n:,} items (median of {gk['calls']}; first call {gk['first_ms']:.1f} ms)", f"{gk['median_ms']:.2f} ms")
row(f"keyring get_password through kc's provider, {n:,} items (median of {kk['calls']}; first call {kk['first_ms']:.1f} ms)", f"{kk['median_ms']:.2f} ms",
    f"{kk['median_ms'] / gk['median_ms']:.3f}× gnome-keyring", "≤ 0.5× gnome-keyring", kk["median_ms"] <= 0.5 * gk["median_ms"])
row(f"  keyring's own CPU time per get (the client's cost; with gnome-keyring: {gk['cpu_ms']:.2f} ms)", f"{kk['cpu_ms']:.2f} ms",
    f"a provider taking no time: {kk['cpu_ms'] / gk['median_ms']:.2f}×")
where("keyring", "get")
kc_, gc = load("kc-create.json"), load("gk-create.json")
for who, c in (("gnome-keyring", gc), ("kc's provider", kc_)):
    label = (f"SecretStorage create_item through {who}, items {n + 1:,}–{n + c['items']:,} on one connection "
             f"(median; p95 {c['p95_ms']:.1f} ms; {c['items_per_s']:.1f} items/s)")
    if c is gc:
        row(label, f"{c['median_ms']:.2f} ms")
    else:
        row(label, f"{c['median_ms']:.2f} ms", f"{c['median_ms'] / gc['median_ms']:.2f}× gnome-keyring",
            "≤ 0.5× gnome-keyring", c["median_ms"] <= 0.5 * gc["median_ms"])
row(f"  SecretStorage's own CPU time per create_item (with gnome-keyring: {gc['cpu_ms']:.2f} ms)", f"{kc_['cpu_ms']:.2f} ms")
where("create", "create_item")
ks, gs = load("kc-search-all.json"), load("gk-search-all.json")
def search(s):
    return (f"works, {s['median_s']:.2f} s" if s["works"]
            else f"fails (exit {s['status']}, {s['paths']:,} items, {s['secrets']:,} secrets) after {s['seconds']:.2f} s: {s['error']}")
calls = f"median of {ks.get('calls', 1)}"
row(f"secret-tool search --all through gnome-keyring, {n:,} items, session bus limits ({calls})", search(gs))
ratio = f"{ks['median_s'] / gs['median_s']:.2f}× gnome-keyring" if ks["works"] and gs["works"] else ""
row(f"secret-tool search --all through kc's provider, {n:,} items, session bus limits ({calls})", search(ks), ratio, "works", ks["works"])
for who, side in (("gnome-keyring", "gk"), ("kc's provider", "kc")):
    p, run = load(f"{side}-search-provider.json"), load(f"{side}-search-profiled.json")
    wall = f" of its {run['median_s']:.2f} s" if run["works"] else " (the run failed)"
    row(f"  secret-tool waiting on {who}, one more run under dbus-monitor{wall} ({p['calls']:,} calls; "
        f"median per call, ms: {methods(p)})", f"{p['waiting_ms'] / 1000:.2f} s")
print("| measure | median | ratio | target | |")
print("|---|---:|---:|---|---|")
for r in rows:
    print("| " + " | ".join(r) + " |")
PY
