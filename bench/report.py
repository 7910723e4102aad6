#!/usr/bin/env python3
"""Prints bench/bench.sh's results as one Markdown table, with each target and whether it is met."""
import glob
import json
import os
import re
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from table import machine, ms, print_table  # noqa: E402

results = sys.argv[1]
rows = []  # (measure, value text, p95 text, ratio text, target text, met or None)


def timings(name):
    out = []
    for r in json.load(open(os.path.join(results, name)))["results"]:
        t = sorted(r["times"])
        out.append((r["command"], statistics.median(t) * 1000, t[min(len(t) - 1, int(len(t) * 0.95))] * 1000))
    return out


floor = timings("01-floor.json")
floor_ms = floor[0][1]
for name, med, p95 in floor:
    rows.append((name, ms(med), ms(p95), f"{med / floor_ms:.1f}×", "", None))

finds = sorted(glob.glob(os.path.join(results, "10-find-*.json")), key=lambda p: int(re.findall(r"\d+", os.path.basename(p))[-1]))
first_find = None
for path in finds:
    for name, med, p95 in timings(os.path.basename(path)):
        if first_find is None:
            first_find = med
            target, met = "≤ 5 ms and ≤ 2× floor", med <= 5 and med <= 2 * floor_ms
        else:
            target, met = f"≤ 1.2× the 100-item find ({1.2 * first_find:.2f} ms)", med <= 1.2 * first_find
        rows.append((name, ms(med), ms(p95), f"{med / floor_ms:.1f}×", target, met))

# BENCH_BASELINE_KC: this kc and another, side by side, two rounds pooled.
pooled = {}
for path in sorted(glob.glob(os.path.join(results, "11-baseline-*.json"))):
    for r in json.load(open(path))["results"]:
        pooled.setdefault(r["command"], []).extend(r["times"])
if pooled:
    ours = next(k for k in pooled if "this kc" in k)
    base = next(k for k in pooled if "baseline" in k)
    med = {k: statistics.median(v) * 1000 for k, v in pooled.items()}
    p95 = {k: sorted(v)[min(len(v) - 1, int(len(v) * 0.95))] * 1000 for k, v in pooled.items()}
    rows.append((base, ms(med[base]), ms(p95[base]), f"{med[base] / floor_ms:.1f}×", "", None))
    rows.append((ours, ms(med[ours]), ms(p95[ours]), f"{med[ours] / med[base]:.2f}× baseline", "unchanged within noise", None))

for name, med, p95 in timings("20-add.json"):
    rows.append((name, ms(med), ms(p95), f"{med / floor_ms:.1f}×", "≤ 15 ms", med <= 15))

for prefix in ("30-inproc", "40-unlock"):
    for path in sorted(glob.glob(os.path.join(results, prefix + "-*.json")), key=lambda p: ["interactive", "moderate", "sensitive"].index(p.rsplit("-", 1)[1][:-5])):
        for name, med, p95 in timings(os.path.basename(path)):
            rows.append((name, ms(med), ms(p95), f"{med / floor_ms:.0f}×", "", None))

time_find = open(os.path.join(results, "time-find.txt")).read()
rss_find = int(re.search(r"Maximum resident set size \(kbytes\): (\d+)", time_find).group(1)) / 1024
status = open(os.path.join(results, "agent-status.txt")).read()
agent_hwm = int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024
largest = max(int(re.findall(r"\d+", os.path.basename(p))[-1]) for p in finds)
rows.append((f"peak RSS of kc find, {largest} items", f"{rss_find:.1f} MB", "", "", "≤ 15 MB", rss_find <= 15))
rows.append((f"peak RSS of the agent after unlock (finds and scans), {largest} items", f"{agent_hwm:.1f} MB", "", "", "≤ 60 MB", agent_hwm <= 60))

for path in sorted(glob.glob(os.path.join(results, "populate-*.jsonl")), key=lambda p: int(re.findall(r"\d+", p)[-1])):
    p = json.loads(open(path).read())
    rows.append((f"library: build a {int(p['populate_items'])}-item keychain, one transaction", f"{p['populate_items_per_s']:,.0f} items/s", "", "", "", None))

lib = json.loads(open(os.path.join(results, "library.jsonl")).read())
n = int(lib["items"])
rows.append((f"library: SecItemCopyMatching by primary key, {n} items", f"{lib['lookups_per_s']:,.0f} lookups/s", "", "", "≥ 20,000/s", lib["lookups_per_s"] >= 20000))
rows.append((f"library: case-insensitive query (scans the class), {n} items", ms(lib["ignore_case_ms"]), "", "", "", None))
rows.append((f"library: query on the comment (no index, scans the class), {n} items", ms(lib["unindexed_ms"]), "", "", "", None))
rows.append((f"library: SecItemAdd, one durable commit each, {n} items", f"{lib['adds_per_s']:,.0f} items/s", "", "", "", None))
if "verify_ms" in lib:
    rows.append((f"library: integrity scan of every row (each open; the agent after a foreign change), {n} items", ms(lib["verify_ms"]), "", "", "", None))
    rows.append((f"library: kc verify's whole check (integrity_check, every row decrypted), {n} items", ms(lib["check_ms"]), "", "", "", None))

integ = os.path.join(results, "60-integrations.json")
if os.path.exists(integ):
    t = {name: (med, p95) for name, med, p95 in timings("60-integrations.json")}
    find, read = t["kc find -w (agent)"], t["kc read kc://svc-1/acct-1 (agent)"]
    shfind, git = t["sh -c 'kc find -w'"], t["sh -c 'git-credential-kc get < request'"]
    true, run0, run = t["/bin/true"], t["kc run -- /bin/true"], t["kc run with 10 references -- /bin/true"]
    rows.append(("kc read kc://… (agent; both via env KC_KEYCHAIN=…)", ms(read[0]), ms(read[1]), f"{read[0] / find[0]:.2f}× find -w", "≤ 1.2× kc find -w", read[0] <= 1.2 * find[0]))
    rows.append(("git-credential-kc get, via sh (agent)", ms(git[0]), ms(git[1]), f"{git[0] / shfind[0]:.2f}× sh+find -w", "≤ 1.2× sh -c 'kc find -w'", git[0] <= 1.2 * shfind[0]))
    rows.append(("kc run -- /bin/true (kc's own cost, no reference)", ms(run0[0]), ms(run0[1]), f"/bin/true {ms(true[0])}", "", None))
    extra = run[0] - run0[0]
    rows.append(("kc run with 10 references: what the references add", ms(extra), "", f"{extra / find[0]:.2f}× find -w", "≤ one kc find -w (one round trip)", extra <= find[0]))

imports = [json.loads(l) for l in open(os.path.join(results, "import.jsonl")) if l.strip()]
if imports:
    rate = sorted(i["import_items_per_s"] for i in imports)[len(imports) // 2]
    again = sorted(i["reimport_items_per_s"] for i in imports)[len(imports) // 2]
    n = int(imports[0]["import_items"])
    rows.append((f"library: import {n:,} logins, one transaction (Keychain.importItems)", f"{rate:,.0f} items/s", "", "", "≥ 20,000/s", rate >= 20000))
    rows.append((f"library: the same import again, every item unchanged", f"{again:,.0f} items/s", "", "", "", None))
for path in glob.glob(os.path.join(results, "50-import-*.json")):
    n = int(re.findall(r"\d+", os.path.basename(path))[-1])
    med = statistics.median(json.load(open(path))["results"][0]["times"])
    rows.append((f"kc import of a {n:,}-line Chrome CSV, whole command (parse, KDF, write)", f"{med:.2f} s", "", "", "", None))
    rows.append((f"kc import, whole command, items per second", f"{n / med:,.0f} items/s", "", "", "", None))

pairs_path = os.path.join(results, "pairs.jsonl")
if os.path.exists(pairs_path):
    p = json.loads(open(pairs_path).read())
    n = int(p["pairs_items"])
    rows.append((f"library: search by two Secret Service pairs, {n:,} items", f"{p['pairs_two_pairs_ms']:.3f} ms", "", "", "< 2 ms", p["pairs_two_pairs_ms"] < 2))
    rows.append((f"library: search by a pair every item has and a unique one", f"{p['pairs_shared_and_unique_ms']:.3f} ms", "", "", "< 2 ms", p["pairs_shared_and_unique_ms"] < 2))
    rows.append((f"library: the secret of the item two pairs name", f"{p['pairs_secret_ms']:.3f} ms", "", "", "", None))

# The Secret Service (issue 17): secret-tool lookup through kc's provider and gnome-keyring,
# where its time goes, SearchItems inside the provider, and the provider's peak memory.
rounds = sorted(glob.glob(os.path.join(results, "70-ss-lookup-*.json")))
if rounds:
    pooled = {}
    for path in rounds:
        for r in json.load(open(path))["results"]:
            pooled.setdefault(r["command"], []).extend(r["times"])

    def summary(name):
        t = sorted(pooled[name])
        return name, statistics.median(t) * 1000, t[min(len(t) - 1, int(len(t) * 0.95))] * 1000

    gk_name, gk, gk95 = summary(next(n for n in pooled if "gnome-keyring" in n))
    kc_name, kc, kc95 = summary(next(n for n in pooled if "kc's provider" in n))
    rows.append((gk_name, ms(gk), ms(gk95), f"{gk / floor_ms:.1f}×", "", None))
    rows.append((kc_name, ms(kc), ms(kc95), f"{kc / gk:.2f}× gnome-keyring", "≤ 0.5× gnome-keyring", kc <= 0.5 * gk))
    for path in glob.glob(os.path.join(results, "71-ss-lookup-*.json")):
        for name, med, p95 in timings(os.path.basename(path)):
            rows.append((name, ms(med), ms(p95), f"{med / gk:.2f}× gnome-keyring", "", None))
    spent = {side: json.load(open(os.path.join(results, f"ss-provider-{side}.json"))) for side in ("gk", "kc")}
    gk_in, kc_in = spent["gk"]["per_client_ms"], spent["kc"]["per_client_ms"]
    methods = lambda side: ", ".join(f"{m} {v:.2f}" for m, v in spent[side]["methods"].items())
    rows.append((f"time in gnome-keyring per lookup, call to reply (dbus-monitor; {methods('gk')})", ms(gk_in), "", "", "", None))
    rows.append((f"time in kc's provider per lookup, call to reply (dbus-monitor; {methods('kc')})", ms(kc_in), "",
                 f"{kc_in / gk_in:.2f}× gnome-keyring", "", None))
    own = gk - gk_in
    rows.append(("secret-tool's own cost (gnome-keyring's lookup − the time in gnome-keyring)", ms(own), "",
                 f"a provider taking no time: {own / gk:.2f}× gnome-keyring", "", None))
    search = json.load(open(os.path.join(results, "ss-search.json")))
    n, ping = search["items"], search["ping"]
    inside = search["search"]["median_ms"] - ping["median_ms"]
    rows.append((f"SearchItems, service and username, {n} items, in the provider (median − Peer.Ping's)", ms(inside), "", "", "< 2 ms", inside < 2))
    rows.append((f"SearchItems, service and username, {n} items, as the client sees it ({search['calls']} calls, one connection)",
                 ms(search["search"]["median_ms"]), ms(search["search"]["p95_ms"]), "", "", None))
    rows.append((f"SearchItems, application (every item has it) and service, {n} items, in the provider",
                 ms(search["search_common"]["median_ms"] - ping["median_ms"]), "", "", "", None))
    rows.append(("Peer.Ping to the provider: the bus round trip and the client's own cost", ms(ping["median_ms"]), ms(ping["p95_ms"]), "", "", None))
    status = open(os.path.join(results, "provider-status.txt")).read()
    hwm = int(re.search(r"VmHWM:\s+(\d+)", status).group(1)) / 1024
    rows.append((f"peak RSS of kc's provider (VmHWM) after the lookups and searches, {n} items", f"{hwm:.1f} MB", "", "", "< 30 MB", hwm < 30))

print_table(rows, "× floor")

print(f"\n{machine()}; release build, fully static "
      f"(`-static-executable`; the Secret Service provider `--static-swift-stdlib`, libsystemd and "
      f"libcrypto shared); keychains with the interactive KDF unless the row says otherwise.")
