#!/usr/bin/env python3
"""Prints bench/team.sh's results as one Markdown table (bench/report.py's columns), with
issue 20's targets and whether each is met."""
import json
import os
import statistics
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from table import machine, ms, print_table  # noqa: E402

results = sys.argv[1]


def load(name):
    return json.load(open(os.path.join(results, name)))


rows = []  # (measure, value, p95 or other, ratio, target, met)
pop = load("team-populate.json")
n = int(pop["team_populate_items"])
rows.append((f"team: populate {n:,} items, one signed write (Keychain.addAll)", f"{pop['team_populate_items_per_s']:,.0f} items/s", "", "", "", None))

l = load("team-load.json")
readers, secs = int(l["readers"]), l["seconds"]
rows.append((f"team: read through the team agent, {readers} reader threads back to back + {int(l['writers'])} writers at full speed, {secs:.0f} s, {n:,} items: p50",
             ms(l["read_p50_ms"]), f"p99 {ms(l['read_p99_ms'])}", "", "p50 ≤ 5 ms", l["read_p50_ms"] <= 5))
rows.append(("team: the same reads: p99", ms(l["read_p99_ms"]), f"max {ms(l['read_max_ms'])}", "", "p99 ≤ 15 ms", l["read_p99_ms"] <= 15))
rows.append((f"team: the same reads: answered, errors ({l['reads_per_s']:,.0f} reads/s; writers: {l['writes_per_s']:,.1f} writes/s, {int(l['write_errors'])} failed)",
             f"{int(l['read_count']):,}", f"{int(l['read_errors'])} errors", "", "no errors", l["read_errors"] == 0 and l["write_errors"] == 0))

path = os.path.join(results, "team-load-paced-slow.json")
if os.path.exists(path):
    x = load("team-load-paced-slow.json")
    what = (f"{readers} reader threads each pausing 100 ms between reads + 2 writers each pausing 100 ms before an add and an update "
            f"({x['reads_per_s']:,.0f} reads/s, {x['writes_per_s']:,.1f} writes/s)")
    rows.append((f"team: read through the team agent, {what}, {x['seconds']:.0f} s, {n:,} items: p50",
                 ms(x["read_p50_ms"]), f"p99 {ms(x['read_p99_ms'])}", "", "p50 ≤ 5 ms", x["read_p50_ms"] <= 5))
    rows.append(("team: the same paced reads: p99", ms(x["read_p99_ms"]), f"max {ms(x['read_max_ms'])}", "", "p99 ≤ 15 ms", x["read_p99_ms"] <= 15))
    rows.append((f"team: the same paced reads: answered, errors ({int(x['write_errors'])} writes failed)",
                 f"{int(x['read_count']):,}", f"{int(x['read_errors'])} errors", "", "no errors", x["read_errors"] == 0 and x["write_errors"] == 0))

for name, what in (("team-load-1.json", "1 reader thread, no writer (one round trip)"),
                   ("team-load-nowriters.json", f"{readers} reader threads, no writer"),
                   ("team-load-slow.json", f"{readers} reader threads + 2 writers at 10 writes/s each"),
                   ("team-load-paced.json", f"{readers} reader threads, each pausing 100 ms between reads, + 2 writers at full speed")):
    path = os.path.join(results, name)
    if os.path.exists(path):
        x = load(name)
        rows.append((f"team: read through the team agent, {what}: p50 ({x['reads_per_s']:,.0f} reads/s, {int(x['read_errors'])} errors)",
                     ms(x["read_p50_ms"]), f"p99 {ms(x['read_p99_ms'])}", "", "", None))

finds = {}
for r in load("team-find.json")["results"]:
    t = sorted(r["times"])
    finds[r["command"]] = (statistics.median(t) * 1000, t[min(len(t) - 1, int(len(t) * 0.95))] * 1000)
names = list(finds)
team_find, file_find = finds[names[0]], finds[names[1]]
rows.append((names[1], ms(file_find[0]), ms(file_find[1]), "", "", None))
rows.append((names[0], ms(team_find[0]), ms(team_find[1]), f"{team_find[0] / file_find[0]:.2f}× file", "", None))

pooled = {}
for round in (1, 2):
    path = os.path.join(results, f"team-baseline-{round}.json")
    if os.path.exists(path):
        for r in load(os.path.basename(path))["results"]:
            pooled.setdefault(r["command"], []).extend(r["times"])
if pooled:
    ours = next(k for k in pooled if "this branch" in k)
    base = next(k for k in pooled if "baseline" in k)
    med = {k: statistics.median(v) * 1000 for k, v in pooled.items()}
    p95 = {k: sorted(v)[min(len(v) - 1, int(len(v) * 0.95))] * 1000 for k, v in pooled.items()}
    rows.append((base, ms(med[base]), ms(p95[base]), "", "", None))
    rows.append((ours, ms(med[ours]), ms(p95[ours]), f"{med[ours] / med[base]:.2f}× baseline", "unchanged within noise", None))

w = load("team-writes.json")
rows.append((f"team: adds from {int(w['writers'])} writers (8 members, a connection each), {w['seconds']:.0f} s",
             f"{w['adds_per_s']:,.0f} adds/s", f"p50 {ms(w['add_p50_ms'])}, p99 {ms(w['add_p99_ms'])}", "",
             "≥ 1,000 writes/s, no errors", w["adds_per_s"] >= 1000 and w["add_errors"] == 0))

one_path = os.path.join(results, "team-writes-1.json")
if os.path.exists(one_path):
    w1 = load("team-writes-1.json")
    rows.append((f"team: adds from 1 writer alone (no lost race), {w1['seconds']:.0f} s", f"{w1['adds_per_s']:,.0f} adds/s",
                 f"p50 {ms(w1['add_p50_ms'])}, p99 {ms(w1['add_p99_ms'])}", "", "", None))

for tag in ("-first", "-second", ""):
    if not os.path.exists(os.path.join(results, f"team-rekey{tag}.json")):
        continue
    rk, rr = load(f"team-rekey{tag}.json"), load(f"team-rekey{tag}-reader.json")
    what = {"-first": "before the load rows, a reader asking every 10 ms",
            "-second": "before the load rows, a reader asking back to back"}.get(tag, f"the {n:,} and the benchmark's writes, a reader asking back to back")
    target = "≤ 10 s" if tag == "-first" else ""
    rows.append((f"team: remove a member (re-key), {rk['items']:,} items ({what}), `kc team remove` whole command", f"{rk['rekey_s']:.2f} s", "", "",
                 target, rk["rekey_s"] <= 10 if target else None))
    cpu_path = os.path.join(results, f"team-rekey{tag}-cpu.json")
    if os.path.exists(cpu_path):
        c = load(f"team-rekey{tag}-cpu.json")
        rows.append(("team: the re-key's CPU time in kc-team (user + system)", f"{c['rekey_user_s'] + c['rekey_sys_s']:.2f} s",
                     f"of {c['rekey_wall_s']:.2f} s wall", "", "", None))
    rows.append((f"team: a reader through the team agent during the re-key ({int(rr['read_count']):,} reads): max latency",
                 ms(rr["read_max_ms"]), f"p99 {ms(rr['read_p99_ms'])}, {int(rr['read_errors'])} errors", "", "answered throughout (no errors)", rr["read_errors"] == 0 and rr["read_count"] > 0))


def text(name):
    path = os.path.join(results, name)
    return open(path).read().strip() if os.path.exists(path) else ""


# The first unlock at exactly the populated items (a log of a few entries: the populate is
# one write), the target; then again as the rows above left the keychain.
if os.path.exists(os.path.join(results, "team-unlock-n.json")):
    t = sorted(load("team-unlock-n.json")["results"][0]["times"])
    med = statistics.median(t)
    rows.append((f"kc unlock --team-token-file, fresh HOME each run (team agent start, whole log, full verify scan), {n:,} items right after the populate",
                 f"{med:.2f} s", f"max {t[-1]:.2f} s", "", "≤ 1 s", med <= 1))
t = sorted(load("team-unlock.json")["results"][0]["times"])
med = statistics.median(t)
at = int(text("team-unlock-items.txt") or n)
entries = text("team-unlock-entries.txt")
log = f", a log of {int(entries):,} entries" if entries else ""
rows.append((f"kc unlock --team-token-file, fresh HOME each run, {at:,} items (the {n:,} and the benchmark's writes{log})",
             f"{med:.2f} s", f"max {t[-1]:.2f} s", "", "(≤ 1 s is at 100,000)", None))

print_table(rows)

pg = open(os.path.join(results, "postgres-version.txt")).read().strip()
loads = [open(os.path.join(results, f)).read().split()[:3] for f in ("loadavg-start.txt", "loadavg.txt") if os.path.exists(os.path.join(results, f))]
print(f"\nLoad average (1, 5, 15 min) at the start and the end: {' / '.join(', '.join(x) for x in loads)}.")
print(f"\n{machine()}; {pg} on 127.0.0.1 (fsync off); "
      f"release build (static Swift runtime, libpq shared, as the Makefile builds kc-team).")
