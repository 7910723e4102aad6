#!/usr/bin/env bash
# make bench: kc's speed and memory on a release build (method: docs/performance.md).
# Whole commands are timed with hyperfine, peak memory read with /usr/bin/time -v and from
# /proc, library figures come from kc-bench (in-process); the Secret Service rows compare
# kc's provider with gnome-keyring, each on a private dbus-daemon (bench/secret_service.py
# is their D-Bus client). Prints one Markdown table.
# BENCH_QUICK=1: fewer runs and no 100,000-item keychain but bench/scale.sh's (about a minute and a half).
# BENCH_BASELINE_KC=/path/to/kc: kc find -w with that kc too, side by side (alternating rounds).
# Touches nothing outside a temporary folder; stops the agent, buses and providers it started.
set -euo pipefail
cd "$(dirname "$0")/.."

# Missing Debian packages are installed as the Makefile installs them (sudo when not root).
if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
updated=""
apt_install() {
  echo "bench: installing $*" >&2
  [ -n "$updated" ] || { $SUDO apt-get update -qq; updated=1; }
  DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq "$@" >/dev/null
}
need() { command -v "$1" >/dev/null || apt_install "$2"; }
need hyperfine hyperfine
[ -x /usr/bin/time ] || apt_install time
# The Secret Service rows: both providers, each on a private dbus-daemon, and their clients.
need dbus-daemon dbus-daemon
need gnome-keyring-daemon gnome-keyring
need secret-tool libsecret-tools
need dbus-monitor dbus-bin
for p in python3-jeepney python3-secretstorage python3-keyring; do dpkg -s "$p" >/dev/null 2>&1 || apt_install "$p"; done

RELEASE_FLAGS=(-c release --static-swift-stdlib -Xswiftc -static-executable)
echo "bench: building the release binaries" >&2
swift build "${RELEASE_FLAGS[@]}" --product kc >/dev/null 2>&1
swift build "${RELEASE_FLAGS[@]}" --product kc-bench >/dev/null 2>&1
# The provider as the Makefile builds it: libsystemd is only shared, so not -static-executable.
PROVIDER_FLAGS=(-c release --static-swift-stdlib --scratch-path .build/provider)
swift build "${PROVIDER_FLAGS[@]}" --product kc-secret-service >/dev/null 2>&1
BIN="$(swift build "${RELEASE_FLAGS[@]}" --show-bin-path)"
KC="$BIN/kc"
KCB="$BIN/kc-bench"
PROVIDER="$(swift build "${PROVIDER_FLAGS[@]}" --show-bin-path)/kc-secret-service"

if [ -n "${BENCH_QUICK:-}" ]; then RUNS=50; SIZES="100 10000"; SLOW_RUNS=3; SS_N=10000; else RUNS=300; SIZES="100 10000 100000"; SLOW_RUNS=10; SS_N=100000; fi

work=$(mktemp -d)
cleanup() {
  # The Secret Service rows' processes (providers, dbus-daemons), then the agent.
  if [ -f "$work/pids" ]; then while read -r pid; do kill "$pid" 2>/dev/null || true; done < "$work/pids"; fi
  KC_AGENT_DIR=$work/agent "$KC" agent --stop >/dev/null 2>&1 || true
  if [ -n "${BENCH_BASELINE_KC:-}" ]; then KC_AGENT_DIR=$work/agent-baseline "$BENCH_BASELINE_KC" agent --stop >/dev/null 2>&1 || true; fi
  rm -rf "$work"
}
trap cleanup EXIT
export HOME=$work XDG_DATA_HOME=$work/data KC_AGENT_DIR=$work/agent KC_AGENT_GRACE=30
unset XDG_RUNTIME_DIR KC_KEYCHAIN KC_PASSWORD KC_NEW_PASSWORD DBUS_SESSION_BUS_ADDRESS
results=$work/results
mkdir -p "$results"

# The floor: a trivial Swift program built the same way (release, fully static).
printf '' > "$work/noop.swift"
swiftc -O -static-executable "$work/noop.swift" -o "$work/noop-swift" 2>/dev/null
hyperfine -N --runs "$RUNS" --warmup 20 --export-json "$results/01-floor.json" \
  -n "trivial Swift executable, fully static (the floor)" "$work/noop-swift" \
  -n "kc --version (ArgumentParser's path)" "$KC --version" >/dev/null

# kc find -w through the agent at each size; the keychains are built with the library.
for n in $SIZES; do
  k=$work/items-$n.keychain-db
  echo "bench: $n items" >&2
  KC_PASSWORD=bench "$KCB" populate "$k" "$n" interactive > "$results/populate-$n.jsonl"
  KC_PASSWORD=bench "$KC" unlock -k "$k"
  mid=$((n / 2))
  hyperfine -N --runs "$RUNS" --warmup 20 --export-json "$results/10-find-$n.json" \
    -n "kc find -w, unlocked (agent), $n items" "$KC find -k $k -s svc-$mid -a acct-$mid -w" >/dev/null
done

# Optional: kc find -w with another kc (BENCH_BASELINE_KC=/path/to/kc, e.g. main's release
# build) side by side on the 100-item keychain, each kc with its own agent, in two rounds that
# alternate which goes first (report.py pools them, as bench/team.sh's TEAM_BASELINE_KC):
# is the start-up of kc find -w unchanged? Both go through env, so both pay the same exec.
if [ -n "${BENCH_BASELINE_KC:-}" ]; then
  echo "bench: kc find -w, this kc and $BENCH_BASELINE_KC" >&2
  small=$work/items-100.keychain-db
  KC_AGENT_DIR=$work/agent-baseline KC_PASSWORD=bench "$BENCH_BASELINE_KC" unlock -k "$small"
  for round in 1 2; do
    if [ "$round" = 1 ]; then order="this baseline"; else order="baseline this"; fi
    args=()
    for who in $order; do
      if [ "$who" = this ]; then k=$KC; dir=$work/agent; label="this kc"; else k=$BENCH_BASELINE_KC; dir=$work/agent-baseline; label="baseline ($BENCH_BASELINE_KC)"; fi
      args+=(-n "kc find -w, unlocked (agent), 100 items, $label" "env KC_AGENT_DIR=$dir $k find -k $small -s svc-50 -a acct-50 -w")
    done
    hyperfine -N --runs "$RUNS" --warmup 20 --export-json "$results/11-baseline-$round.json" "${args[@]}" >/dev/null
  done
  KC_AGENT_DIR=$work/agent-baseline "$BENCH_BASELINE_KC" agent --stop >/dev/null 2>&1 || true
fi

# Peak memory at the largest size: kc find, and the agent from after unlocking (its
# high-water mark reset, so the key derivation does not count) through finds and a scan.
big=$work/items-${SIZES##* }.keychain-db
mid=$((${SIZES##* } / 2))
agent_pid=$(head -n1 "$work/agent/agent.lock" | tr -cd 0-9)
echo 5 > "/proc/$agent_pid/clear_refs"
/usr/bin/time -v "$KC" find -k "$big" -s "svc-$mid" -a "acct-$mid" -w 2> "$results/time-find.txt" >/dev/null
for _ in 1 2 3; do "$KC" find -k "$big" -s "SVC-$mid" --ignore-case -w >/dev/null; done
"$KC" find -k "$big" -j "comment-$mid" >/dev/null
grep -E '^(VmHWM|VmRSS)' "/proc/$agent_pid/status" > "$results/agent-status.txt"
"$KC" lock --all

# kc add through the agent (one durable commit each); the item is deleted between runs.
small=$work/items-100.keychain-db
KC_PASSWORD=bench "$KC" unlock -k "$small"
hyperfine -N --runs "$((RUNS / 3))" --warmup 5 --export-json "$results/20-add.json" \
  --prepare "sh -c '$KC delete -k $small -s added -a bench >/dev/null 2>&1 || true'" \
  -n "kc add, unlocked (agent), durable" "$KC add -k $small -s added -a bench -w s3cret" >/dev/null
"$KC" lock --all

# kc find -w with KC_PASSWORD: one key derivation per call, for contrast; kc unlock per profile.
profiles="interactive moderate"
[ -z "${BENCH_QUICK:-}" ] && profiles="interactive moderate sensitive"
for p in $profiles; do
  KC_PASSWORD=bench "$KC" create "$work/$p.keychain-db" --kdf "$p" 2>/dev/null
  KC_PASSWORD=bench "$KC" add -k "$work/$p.keychain-db" -s bench -a user -w s3cret
done
runs_for() { if [ "$1" = sensitive ]; then echo 3; else echo "$SLOW_RUNS"; fi; }
for p in $profiles; do
  hyperfine -N --runs "$(runs_for "$p")" --warmup 1 --export-json "$results/30-inproc-$p.json" \
    -n "kc find -w in-process, KC_PASSWORD, $p KDF" "env KC_PASSWORD=bench $KC find -k $work/$p.keychain-db -s bench -a user -w" >/dev/null
done
for p in $profiles; do
  hyperfine -N --runs "$(runs_for "$p")" --warmup 1 --export-json "$results/40-unlock-$p.json" \
    --prepare "$KC lock --all" \
    -n "kc unlock, $p KDF" "env KC_PASSWORD=bench $KC unlock -k $work/$p.keychain-db" >/dev/null
done

# In-process library figures at the largest size.
echo "bench: library figures" >&2
KC_PASSWORD=bench "$KCB" library "$big" "${SIZES##* }" > "$results/library.jsonl"

# Integrations, through the agent on the 100-item keychain: git's helper and kc read against
# kc find -w (one process, one round trip each), and kc run with ten references against
# running the command directly. git's helper reads stdin, so those two go through sh.
echo "bench: integrations" >&2
KC_PASSWORD=bench "$KC" unlock -k "$small"
ln -sf "$KC" "$work/git-credential-kc"
"$KC" add -k "$small" --class internet -s git.example.com -a alice -r https -w token >/dev/null
printf 'protocol=https\nhost=git.example.com\n\n' > "$work/git-get.txt"
refs=""
for i in 1 2 3 4 5 6 7 8 9 10; do refs="$refs --env V$i=kc://svc-$i/acct-$i"; done
hyperfine -N --runs "$RUNS" --warmup 20 --export-json "$results/60-integrations.json" \
  -n "kc find -w (agent)" "env KC_KEYCHAIN=$small $KC find -s svc-1 -a acct-1 -w" \
  -n "kc read kc://svc-1/acct-1 (agent)" "env KC_KEYCHAIN=$small $KC read kc://svc-1/acct-1" \
  -n "sh -c 'kc find -w'" "sh -c '$KC find -k $small -s svc-1 -a acct-1 -w'" \
  -n "sh -c 'git-credential-kc get < request'" "sh -c 'KC_KEYCHAIN=$small $work/git-credential-kc get < $work/git-get.txt'" \
  -n "/bin/true" "/bin/true" \
  -n "kc run -- /bin/true" "$KC run -k $small -- /bin/true" \
  -n "kc run with 10 references -- /bin/true" "$KC run -k $small $refs -- /bin/true" >/dev/null
"$KC" lock --all

# The Secret Service (issue 17). kc's provider and gnome-keyring, each on its own private
# dbus-daemon, each with the same 100 items stored over D-Bus by the same client
# (bench/secret_service.py, secretstorage): secret-tool lookup through both, in alternating
# hyperfine rounds. Then kc's keychain grows to SS_N items (kc import of the same kind of items, each
# with its Secret Service attribute map) for SearchItems and the provider's peak memory.
echo "bench: Secret Service, kc's provider and gnome-keyring" >&2
SS=(/usr/bin/python3 bench/secret_service.py)
bench_name=bench
source bench/private_bus.sh
kcbus="unix:path=$work/kc-bus/socket"
gkbus="unix:path=$work/gk-bus/socket"
private_bus "$work/kc-bus"
private_bus "$work/gk-bus"
# kc: the provider gives a secret only to an agent that is the kc beside it, so both go
# into one folder, as `make install` puts them, and the agent is started from there. The
# default keychain (login) is unlocked in it, and the provider serves it.
mkdir -p "$work/bin"
cp "$KC" "$work/bin/kc"
cp "$PROVIDER" "$work/bin/kc-secret-service"
SKC=$work/bin/kc
"$KC" agent --stop >/dev/null 2>&1 || true
KC_PASSWORD=bench "$SKC" create --kdf interactive >/dev/null 2>&1
KC_PASSWORD=bench "$SKC" unlock
"$work/bin/kc-secret-service" --address "$kcbus" &
provider_pid=$!
echo "$provider_pid" >> "$work/pids"
DBUS_SESSION_BUS_ADDRESS=$kcbus timeout 20 "${SS[@]}" wait
# gnome-keyring: its own home; --unlock reads the password from stdin and creates the
# login keyring with it, unlocked, with no prompt (headless).
mkdir -p "$work/gk/run" && chmod 700 "$work/gk/run"
printf bench | env HOME="$work/gk" XDG_RUNTIME_DIR="$work/gk/run" XDG_DATA_HOME="$work/gk/data" XDG_CONFIG_HOME="$work/gk/config" \
  DBUS_SESSION_BUS_ADDRESS="$gkbus" gnome-keyring-daemon --foreground --components=secrets --unlock >/dev/null 2>&1 &
echo $! >> "$work/pids"
DBUS_SESSION_BUS_ADDRESS=$gkbus timeout 20 "${SS[@]}" wait
for bus in "$kcbus" "$gkbus"; do
  DBUS_SESSION_BUS_ADDRESS=$bus "${SS[@]}" store 0 100
  [ "$(env DBUS_SESSION_BUS_ADDRESS="$bus" secret-tool lookup service svc-50 username user-50)" = pw-50 ] \
    || { echo "bench: secret-tool lookup through $bus did not find the item" >&2; exit 1; }
done
# Four rounds that alternate which goes first (report.py pools them), so a change in the
# machine's load during the run falls on both.
gk_version=$(dpkg-query -W -f '${Version}' gnome-keyring 2>/dev/null || echo "?")
gk_lookup=(-n "secret-tool lookup through gnome-keyring $gk_version, 100 items"
           "env DBUS_SESSION_BUS_ADDRESS=$gkbus secret-tool lookup service svc-50 username user-50")
kc_lookup=(-n "secret-tool lookup through kc's provider, 100 items"
           "env DBUS_SESSION_BUS_ADDRESS=$kcbus secret-tool lookup service svc-50 username user-50")
for round in 1 2 3 4; do
  if [ $((round % 2)) = 1 ]; then order=("${gk_lookup[@]}" "${kc_lookup[@]}"); else order=("${kc_lookup[@]}" "${gk_lookup[@]}"); fi
  hyperfine -N --runs "$((RUNS / 4))" --warmup 10 --export-json "$results/70-ss-lookup-$round.json" "${order[@]}" >/dev/null
done
# Where a lookup's time goes: 50 more lookups through each, with dbus-monitor timing each
# call to the provider until its reply (the rest is secret-tool's own: process start, GLib,
# its half of the Diffie-Hellman exchange).
for side in kc gk; do
  if [ "$side" = kc ]; then bus=$kcbus; else bus=$gkbus; fi
  stdbuf -oL dbus-monitor --address "$bus" --profile > "$work/monitor-$side.txt" 2>/dev/null &
  monitor=$!
  sleep 0.5
  for _ in $(seq 50); do env DBUS_SESSION_BUS_ADDRESS="$bus" secret-tool lookup service svc-50 username user-50 >/dev/null; done
  sleep 0.2
  kill "$monitor"; wait "$monitor" 2>/dev/null || true
  "${SS[@]}" provider-time "$work/monitor-$side.txt" > "$results/ss-provider-$side.json"
done
# SS_N items in kc's keychain: the first 100 stored over D-Bus, the rest imported.
echo "bench: Secret Service, $SS_N items" >&2
"${SS[@]}" export 100 $((SS_N - 100)) > "$work/ss-items.json"
KC_PASSWORD=bench "$SKC" import "$work/ss-items.json" >/dev/null 2>&1
ss_mid=$((SS_N / 2))
hyperfine -N --runs "$RUNS" --warmup 20 --export-json "$results/71-ss-lookup-$SS_N.json" \
  -n "secret-tool lookup through kc's provider, $SS_N items" \
  "env DBUS_SESSION_BUS_ADDRESS=$kcbus secret-tool lookup service svc-$ss_mid username user-$ss_mid" >/dev/null
DBUS_SESSION_BUS_ADDRESS=$kcbus "${SS[@]}" search "$SS_N" 1000 > "$results/ss-search.json"
grep -E '^(VmHWM|VmRSS)' "/proc/$provider_pid/status" > "$results/provider-status.txt"
"$SKC" agent --stop >/dev/null

# Import: Keychain.importItems in one transaction, in-process (kc-bench), three rounds; then
# the whole command, `kc import` of a Chrome CSV into a new keychain (parsing included).
if [ -n "${BENCH_QUICK:-}" ]; then IMPORT_N=20000; else IMPORT_N=100000; fi
echo "bench: import of $IMPORT_N items" >&2
for round in 1 2 3; do
  rm -f "$work"/import-lib.keychain-db*
  KC_PASSWORD=bench "$KCB" import "$work/import-lib.keychain-db" "$IMPORT_N" >> "$results/import.jsonl"
done
python3 - "$IMPORT_N" > "$work/import.csv" <<'PY'
import sys
print("name,url,username,password,note")
for i in range(int(sys.argv[1])):
    print(f"site{i},https://site{i}.example.com/login,user{i},pw-{i:08x}-0123456789abcdef,note {i}")
PY
printf 'rm -f %s/import-cli.keychain-db*\nKC_PASSWORD=bench %s create --kdf interactive %s/import-cli.keychain-db 2>/dev/null\n' \
  "$work" "$KC" "$work" > "$work/fresh-keychain.sh"
hyperfine -N --runs 3 --export-json "$results/50-import-$IMPORT_N.json" --prepare "bash $work/fresh-keychain.sh" \
  -n "kc import of a $IMPORT_N-line Chrome CSV into a new keychain" \
  "env KC_PASSWORD=bench $KC import -k $work/import-cli.keychain-db $work/import.csv" >/dev/null

# Secret Service searches (issue 17): SecItemCopyMatching by kcAttrSecretServiceAttributes
# pairs, through the pair index, in-process (kc-bench).
if [ -n "${BENCH_QUICK:-}" ]; then PAIRS_N=20000; else PAIRS_N=100000; fi
echo "bench: Secret Service searches at $PAIRS_N items" >&2
rm -f "$work"/pairs.keychain-db*
KC_PASSWORD=bench "$KCB" pairs "$work/pairs.keychain-db" "$PAIRS_N" > "$results/pairs.jsonl"

python3 bench/report.py "$results"

# The Secret Service at 100,000 items (issue 31): property reads, Python keyring's get and
# kc list with the agent's peak memory, beside gnome-keyring; its own table.
echo
KC="$KC" PROVIDER="$PROVIDER" bash bench/scale.sh

# The Secret Service at 5,000 items in both (issue 31): keyring's get, SecretStorage's
# create_item and secret-tool search --all, kc's provider beside gnome-keyring; its own table.
echo
KC="$KC" PROVIDER="$PROVIDER" bash bench/ss5k.sh

# The credential helpers (issue 33): each helper's call beside kc find -w; its own table.
echo
KC="$KC" bash bench/helpers.sh

# Team keychains on PostgreSQL (issue 20): its own cluster, agents and table.
echo
bash bench/team.sh

# The SSH agent (issue 34): kc's agent beside OpenSSH's ssh-agent; its own table.
echo
bash bench/ssh.sh
