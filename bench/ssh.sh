#!/usr/bin/env bash
# make bench, the SSH agent (issue 34): kc's agent (kc-ssh ssh-agent) beside OpenSSH's
# ssh-agent, in one run, with the same Ed25519 key added to each by ssh-add:
#   - one signature: `ssh-keygen -Y sign` of a small file through each agent (hyperfine -N,
#     --prepare removes the last signature), alternating which agent goes first;
#   - one login: `ssh … true` to Debian's sshd on 127.0.0.1 (a throwaway host key), the
#     key in the agent only (IdentitiesOnly with the public half), alternating the same way.
# BENCH_QUICK=1: fewer runs. SSH_BENCH_BIN=DIR uses kc-ssh from DIR instead of building it
# (release, as `make install` builds it). Touches nothing outside a temporary folder; stops
# both agents and sshd. Prints one Markdown table. Method and figures: docs/performance.md.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
command -v hyperfine >/dev/null || { $SUDO apt-get update -qq; DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq hyperfine >/dev/null; }
[ -x /usr/sbin/sshd ] && command -v ssh-agent >/dev/null || {
  $SUDO apt-get update -qq; DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq openssh-client openssh-server >/dev/null; }

if [ -n "${SSH_BENCH_BIN:-}" ]; then
  BIN=$SSH_BENCH_BIN
else
  FLAGS=(-c release --static-swift-stdlib --scratch-path .build/provider)
  echo "bench: building kc-ssh (release)" >&2
  swift build "${FLAGS[@]}" --product kc-ssh >/dev/null 2>&1
  BIN="$(swift build "${FLAGS[@]}" --show-bin-path)"
fi
KCSSH=$BIN/kc-ssh
if [ -n "${BENCH_QUICK:-}" ]; then RUNS=20; LOGINS=5; ROUNDS=2; else RUNS=100; LOGINS=25; ROUNDS=4; fi

work=$(mktemp -d)
kc_pid= openssh_pid= sshd_pid=
cleanup() {
  for p in $kc_pid $openssh_pid $sshd_pid; do kill "$p" 2>/dev/null || true; done
  wait 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
mkdir -m 700 "$work/agent"
export HOME=$work
unset SSH_AUTH_SOCK SSH_AGENT_PID

# The two agents, each on its own socket.
KC_AGENT_DIR=$work/agent "$KCSSH" ssh-agent --foreground & kc_pid=$!
KC_SOCK=$work/agent/ssh-agent.sock
OPENSSH_SOCK=$work/openssh.sock
ssh-agent -D -a "$OPENSSH_SOCK" >/dev/null & openssh_pid=$!
for _ in $(seq 100); do [ -S "$KC_SOCK" ] && [ -S "$OPENSSH_SOCK" ] && break; sleep 0.1; done

ssh-keygen -q -t ed25519 -N '' -C bench -f "$work/id_ed25519"
SSH_AUTH_SOCK=$KC_SOCK ssh-add -q "$work/id_ed25519"
SSH_AUTH_SOCK=$OPENSSH_SOCK ssh-add -q "$work/id_ed25519"
rm -f "$work/id_ed25519"   # the agents hold the private key; only the public half is left
printf 'a commit to sign\n' > "$work/kc.msg"
cp "$work/kc.msg" "$work/openssh.msg"

# sshd on the loopback.
ssh-keygen -q -t ed25519 -N '' -f "$work/host_ed25519"
cp "$work/id_ed25519.pub" "$work/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])')
mkdir -p /run/sshd
cat > "$work/sshd_config" <<CONF
Port $port
ListenAddress 127.0.0.1
HostKey $work/host_ed25519
PidFile none
UsePAM no
StrictModes no
AuthorizedKeysFile $work/authorized_keys
PasswordAuthentication no
KbdInteractiveAuthentication no
PermitRootLogin prohibit-password
CONF
/usr/sbin/sshd -D -f "$work/sshd_config" & sshd_pid=$!
echo "bench-host $(cut -d' ' -f1,2 "$work/host_ed25519.pub")" > "$work/known_hosts"
for _ in $(seq 100); do python3 -c "import socket; socket.create_connection(('127.0.0.1',$port),1)" 2>/dev/null && break; sleep 0.1; done
user=$(id -un)
ssh_cmd="ssh -F /dev/null -p $port -o BatchMode=yes -o IdentitiesOnly=yes -o IdentityFile=$work/id_ed25519.pub \
-o UserKnownHostsFile=$work/known_hosts -o GlobalKnownHostsFile=/dev/null -o HostKeyAlias=bench-host $user@127.0.0.1 true"
for sock in "$KC_SOCK" "$OPENSSH_SOCK"; do env SSH_AUTH_SOCK="$sock" $ssh_cmd || { echo "bench: ssh through $sock failed" >&2; exit 1; }; done

results=$work/results
mkdir -p "$results"
echo "bench: $ROUNDS rounds, $RUNS signatures and $LOGINS logins per agent per round" >&2
for round in $(seq "$ROUNDS"); do
  if [ $((round % 2)) = 1 ]; then order="kc openssh"; else order="openssh kc"; fi
  for who in $order; do
    if [ "$who" = kc ]; then sock=$KC_SOCK; else sock=$OPENSSH_SOCK; fi
    hyperfine -N --warmup 3 --runs "$RUNS" --export-json "$results/sign-$who-$round.json" \
      --prepare "rm -f $work/$who.msg.sig" \
      "env SSH_AUTH_SOCK=$sock ssh-keygen -Y sign -n file -f $work/id_ed25519.pub $work/$who.msg" >/dev/null 2>&1
    hyperfine -N --warmup 1 --runs "$LOGINS" --export-json "$results/login-$who-$round.json" \
      "env SSH_AUTH_SOCK=$sock $ssh_cmd" >/dev/null 2>&1
  done
done

python3 - "$results" <<'PY'
import glob, json, statistics, sys
d = sys.argv[1]
def times(kind, who):
    t = []
    for f in sorted(glob.glob(f"{d}/{kind}-{who}-*.json")):
        t += json.load(open(f))["results"][0]["times"]
    return t
rows = [("one signature (`ssh-keygen -Y sign`, Ed25519)", "sign", 1.2), ("one `ssh` login to the loopback sshd", "login", 1.1)]
print("| what | kc's agent, median ms | OpenSSH's ssh-agent, median ms | ratio | target | met |")
print("|---|---:|---:|---:|---:|---|")
for name, kind, target in rows:
    k, o = statistics.median(times(kind, "kc")) * 1000, statistics.median(times(kind, "openssh")) * 1000
    r = k / o
    print(f"| {name} | {k:.2f} (n={len(times(kind, 'kc'))}) | {o:.2f} (n={len(times(kind, 'openssh'))}) | {r:.2f}× | ≤ {target}× | {'yes' if r <= target else 'no'} |")
PY
