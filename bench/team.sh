#!/usr/bin/env bash
# make bench, team keychains (issue 20): on a throwaway PostgreSQL cluster on 127.0.0.1,
# release binaries (kc, kc-team and kc-team-bench built as the Makefile builds kc-team).
#   - reads through the team agent: 50 reader threads of one process (kc-team-bench load,
#     each request one agent round trip as `kc find -w` makes) while 2 other members add
#     and update items, every latency recorded;
#   - the real `kc find -w -k team:NAME` (hyperfine, one client) beside the same kc's
#     `kc find -w` on a file keychain of as many items;
#   - 8 writers (8 members, each its own connection): adds per second;
#   - removing a member (re-key) with a reader asking the team agent throughout: at exactly
#     N items before the load rows, and again after them;
#   - the first unlock of an ephemeral runner (fresh HOME each run: full verify scan), at N
#     items right after the populate, and again after the rows above added theirs.
# BENCH_QUICK=1: 10,000 items and 10 s of load. Prints one Markdown table
# (bench/team_report.py). Touches nothing outside a temporary folder; stops the agents and
# the cluster it started. Method and figures: docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
command -v hyperfine >/dev/null || { $SUDO apt-get update -qq; DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq hyperfine >/dev/null; }
pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n1)
if [ -z "$pg_bin" ] || [ ! -x "$pg_bin/initdb" ]; then
  $SUDO apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq postgresql >/dev/null
  pg_bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -n1)
fi

# kc must sit beside kc-team (kc team execs it, kc unlock starts its agent): both as the
# Makefile builds kc-team (static Swift runtime, libpq shared), in one folder.
SCRATCH=${TEAM_SCRATCH:-.build/provider}
FLAGS=(-c release --static-swift-stdlib --scratch-path "$SCRATCH")
echo "bench: building kc, kc-team, kc-team-bench and kc-bench (release)" >&2
for p in kc kc-team kc-team-bench kc-bench; do swift build "${FLAGS[@]}" --product "$p" >/dev/null 2>&1; done
BIN="$(swift build "${FLAGS[@]}" --show-bin-path)"
KC=$BIN/kc TB=$BIN/kc-team-bench KCB=$BIN/kc-bench

if [ -n "${BENCH_QUICK:-}" ]; then N=10000; LOAD_S=10; WRITE_S=5; RUNS=50; UNLOCK_RUNS=5; else N=100000; LOAD_S=60; WRITE_S=10; RUNS=100; UNLOCK_RUNS=10; fi
READERS=${TEAM_READERS:-50}

work=$(mktemp -d)
chmod 755 "$work"
results=$work/results
mkdir -p "$results"
export KC_AGENT_GRACE=600
unset XDG_RUNTIME_DIR KC_KEYCHAIN KC_PASSWORD KC_NEW_PASSWORD KC_TEAM_TOKEN
# A private HOME per device: its agent folder, team files and checkpoints.
in_home() { local h=$work/$1; shift; mkdir -p "$h"; env HOME="$h" XDG_DATA_HOME="$h/data" XDG_STATE_HOME="$h/state" KC_AGENT_DIR="$h/agent" "$@"; }
stop_agents() { for h in "$work"/home-*; do [ -d "$h" ] && in_home "${h##*/}" "$KC" agent --stop >/dev/null 2>&1 || true; done; }

# The cluster: initdb as postgres when root (initdb refuses root), fsync off, 127.0.0.1 on a free port.
pg=$work/pg
mkdir -p "$pg"
runas=()
if [ "$(id -u)" = 0 ]; then chown postgres: "$pg"; runas=(/usr/sbin/runuser -u postgres --); fi
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
reader_pid=
cleanup() {
  # The re-key's reader, if the script stopped before it did.
  [ -z "$reader_pid" ] || kill "$reader_pid" 2>/dev/null || true
  stop_agents
  "${runas[@]}" "$pg_bin/pg_ctl" -D "$pg/data" -w -t 30 -m fast stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
"${runas[@]}" "$pg_bin/initdb" -D "$pg/data" -U postgres -A trust -E UTF8 >/dev/null
"${runas[@]}" "$pg_bin/pg_ctl" -D "$pg/data" -w -t 60 -l "$pg/server.log" \
  -o "-c fsync=off -c synchronous_commit=off -c full_page_writes=off -c listen_addresses=127.0.0.1 -p $port -c unix_socket_directories=$pg/data -c max_connections=200 ${TEAM_PG_OPTIONS:-}" start >/dev/null
"$pg_bin/psql" -X -q -h 127.0.0.1 -p "$port" -U postgres -d postgres -c "CREATE DATABASE kc" >/dev/null
DSN="postgresql://postgres@127.0.0.1:$port/kc"
"$pg_bin/postgres" --version > "$results/postgres-version.txt"
cat /proc/loadavg > "$results/loadavg-start.txt"

# The admin creates team:bench and adds the runners: a writer to populate, two writers for
# the load, eight for the write rate, a reader for the readers' agent, one to remove, and
# the ephemeral runner.
echo "bench: team:bench on PostgreSQL, $N items" >&2
admin() { in_home home-admin env KC_PASSWORD=bench "$KC" "$@"; }
admin team create bench --dsn "$DSN" --member admin --kdf interactive >/dev/null
admin unlock -k team:bench
tokens=$work/tokens
mkdir -m 700 "$tokens"
runner() { admin team add-runner "$1" -k team:bench --role "$2" > "$tokens/$1"; }
runner populate writer
for i in 1 2; do runner load-writer-$i writer; done
for i in 1 2 3 4 5 6 7 8; do runner rate-writer-$i writer; done
runner reader reader
runner ephemeral reader
runner removed-first reader
runner removed reader
runner removed-second reader
chmod 600 "$tokens"/*
"$TB" populate "$work/checkpoints" "$tokens/populate" "$N" > "$results/team-populate.json"

# The first unlock of an ephemeral runner at exactly N items (issue 20's target: 100,000),
# before the rows below add items: a fresh HOME each run (no checkpoint, so the whole log is
# walked and every row checked against the signed set hash), its team agent stopped after.
cat > "$work/fresh-runner.sh" <<EOF
HOME=$work/home-ephemeral KC_AGENT_DIR=$work/home-ephemeral/agent "$KC" agent --stop >/dev/null 2>&1
rm -rf "$work/home-ephemeral"; mkdir -p "$work/home-ephemeral"
EOF
unlock_runner() {
  hyperfine -N --runs "$UNLOCK_RUNS" --prepare "bash $work/fresh-runner.sh" --export-json "$results/$1" \
    -n "kc unlock --team-token-file, fresh runner, $2 items" \
    "env HOME=$work/home-ephemeral XDG_DATA_HOME=$work/home-ephemeral/data XDG_STATE_HOME=$work/home-ephemeral/state KC_AGENT_DIR=$work/home-ephemeral/agent $KC unlock --team-token-file $tokens/ephemeral" >/dev/null
  bash "$work/fresh-runner.sh"
}
echo "bench: first unlock of an ephemeral runner, $N items" >&2
cat /proc/loadavg > "$results/loadavg-unlock-n.txt"
unlock_runner team-unlock-n.json "$N"

# The readers' device: a CI runner holding team:bench in its team agent; a file keychain of
# as many items in its file agent, for the comparison.
reader() { in_home home-reader "$@"; }
reader "$KC" unlock --team-token-file "$tokens/reader"
KC_PASSWORD=bench "$KCB" populate "$work/file.keychain-db" "$N" interactive >/dev/null
reader env KC_PASSWORD=bench "$KC" unlock -k "$work/file.keychain-db"
mid=$((N / 2))

# Removes the member $1 (a re-key of every item) while a reader thread asks the reader's team
# agent, from 2 s before to 2 s after, pausing $3 ms between reads (0: back to back);
# results in team-rekey$2*.json.
rekey() {
  local items t0 t1
  items=$(admin team verify -k team:bench | grep -o '[0-9]* items' | head -n1 | tr -cd 0-9)
  rm -f "$work/stop"
  reader env KC_TEAM_BENCH_READ_PAUSE_MS="$3" "$TB" readers bench "$N" "$work/stop" > "$results/team-rekey$2-reader.json" &
  reader_pid=$!
  sleep 2
  t0=$(date +%s.%N)
  in_home home-admin env KC_PASSWORD=bench /usr/bin/time -f '{"rekey_user_s": %U, "rekey_sys_s": %S, "rekey_wall_s": %e}' -o "$results/team-rekey$2-cpu.json" "$KC" team remove "$1" -k team:bench >/dev/null
  t1=$(date +%s.%N)
  sleep 2
  touch "$work/stop"
  wait "$reader_pid"
  reader_pid=
  python3 -c "import json,sys; print(json.dumps({'rekey_s': float(sys.argv[2]) - float(sys.argv[1]), 'items': int(sys.argv[3] or 0)}))" "$t0" "$t1" "$items" > "$results/team-rekey$2.json"
}

# 0. Removing a member (re-key) at exactly $N items, before the load rows add theirs: with
# a reader asking every 10 ms (about 100 reads/s, CI runners reading as they work), then
# again with one asking back to back (which takes a core's worth of the agent, PostgreSQL
# and itself from the re-key on 2 cores).
echo "bench: removing a member (re-key) at $N items" >&2
rekey removed-first -first 10
rekey removed-second -second 0

# 1. Reads through the team agent under load.
echo "bench: $READERS readers and 2 writers for $LOAD_S s" >&2
reader "$TB" load bench "$LOAD_S" "$READERS" "$N" "$work/checkpoints" "$tokens/load-writer-1" "$tokens/load-writer-2" > "$results/team-load.json"
# Where that time goes: one reader alone (the round trip), the readers without writers (the
# agent answers one request at a time), and the two writers at 10 writes/s each.
echo "bench: the same reads: 1 reader; $READERS without writers; with 2 writers at 10/s each" >&2
reader "$TB" load bench "$LOAD_S" 1 "$N" "$work/checkpoints" > "$results/team-load-1.json"
reader "$TB" load bench "$LOAD_S" "$READERS" "$N" "$work/checkpoints" > "$results/team-load-nowriters.json"
# 50 readers that each pause 100 ms between reads (at most 500 reads/s offered, about what
# 50 `kc find -w` processes could ask of 2 cores), with the two writers at full speed.
reader env KC_TEAM_BENCH_READ_PAUSE_MS=100 "$TB" load bench "$LOAD_S" "$READERS" "$N" "$work/checkpoints" \
  "$tokens/load-writer-1" "$tokens/load-writer-2" > "$results/team-load-paced.json"
reader env KC_TEAM_BENCH_WRITE_PAUSE_MS=100 "$TB" load bench "$LOAD_S" "$READERS" "$N" "$work/checkpoints" \
  "$tokens/load-writer-1" "$tokens/load-writer-2" > "$results/team-load-slow.json"
# The target's reads as CI runners make them: 50 readers each pausing 100 ms between reads,
# 2 writers each pausing 100 ms before each add-and-update (the latency of a read, where the
# back-to-back rows above measure how many reads one agent answers: by Little's law 50
# readers that never pause wait 50 / (reads per second) each, whatever a read costs).
reader env KC_TEAM_BENCH_READ_PAUSE_MS=100 KC_TEAM_BENCH_WRITE_PAUSE_MS=100 "$TB" load bench "$LOAD_S" "$READERS" "$N" "$work/checkpoints" \
  "$tokens/load-writer-1" "$tokens/load-writer-2" > "$results/team-load-paced-slow.json"

# The real command, one client: team keychain against file keychain, same kc, same items.
echo "bench: kc find -w, team and file" >&2
reader hyperfine -N --runs "$RUNS" --warmup 20 --export-json "$results/team-find.json" \
  -n "kc find -w -k team:bench (team agent), $N items" "$KC find -k team:bench -s svc-$mid -a acct-$mid -w" \
  -n "kc find -w, file keychain (agent), $N items, the same kc" "$KC find -k $work/file.keychain-db -s svc-$mid -a acct-$mid -w" >/dev/null

# Optional: the same file-keychain find with another kc (TEAM_BASELINE_KC, e.g. main's
# release build), each kc with its own agent, alternating: is kc find -w's start-up unchanged?
if [ -n "${TEAM_BASELINE_KC:-}" ]; then
  echo "bench: kc find -w on a file keychain, this kc and $TEAM_BASELINE_KC" >&2
  in_home home-baseline env KC_PASSWORD=bench "$TEAM_BASELINE_KC" unlock -k "$work/file.keychain-db"
  for round in 1 2; do
    if [ "$round" = 1 ]; then first=reader second=baseline; else first=baseline second=reader; fi
    args=()
    for who in $first $second; do
      if [ "$who" = reader ]; then k=$KC; label="this branch"; else k=$TEAM_BASELINE_KC; label="baseline ($TEAM_BASELINE_KC)"; fi
      args+=(-n "kc find -w, file keychain (agent), $N items, $label"
             "env HOME=$work/home-$who KC_AGENT_DIR=$work/home-$who/agent $k find -k $work/file.keychain-db -s svc-$mid -a acct-$mid -w")
    done
    hyperfine -N --runs "$((RUNS / 2))" --warmup 20 --export-json "$results/team-baseline-$round.json" "${args[@]}" >/dev/null
  done
fi

# 2. Eight writers, each its own member and connection.
echo "bench: 8 writers for $WRITE_S s" >&2
"$TB" writes "$WRITE_S" "$work/checkpoints" "$tokens"/rate-writer-* > "$results/team-writes.json"
# One writer alone: the cost of one write, without lost races.
"$TB" writes "$WRITE_S" "$work/checkpoints" "$tokens"/rate-writer-1 > "$results/team-writes-1.json"

# 3. Removing a member again, on the keychain as the rows above left it (their writes added
# items), while a reader asks the team agent.
echo "bench: removing a member (re-key)" >&2
rekey removed "" 0

# 4. The first unlock again, on the keychain and log the rows above left (more items, and
# a log of about as many entries as items).
echo "bench: first unlock of an ephemeral runner, after the writes" >&2
admin team verify -k team:bench > "$work/verify.txt"
grep -o '[0-9]* items' "$work/verify.txt" | head -n1 | tr -cd 0-9 > "$results/team-unlock-items.txt"
grep -o 'head [0-9]*' "$work/verify.txt" | head -n1 | tr -cd 0-9 > "$results/team-unlock-entries.txt" || true
unlock_runner team-unlock.json "$(cat "$results/team-unlock-items.txt")"

cat /proc/loadavg > "$results/loadavg.txt"
python3 bench/team_report.py "$results"
