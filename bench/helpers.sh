#!/usr/bin/env bash
# make bench, the credential helpers (issue 33): each helper's call, as its client makes it,
# beside `kc find -w`, through a warm agent with the keychain unlocked, every secret 40 bytes:
#   kc find -w                              the item by service and account
#   kc aws-credentials P                    AWS's credential_process (an item `kc add -s aws:P -a KEYID`)
#   kc-vault-token-helper get               Vault's token helper, VAULT_ADDR set (the link's name)
#   terraform-credentials-kc get HOST       Terraform's credentials helper (the link's name)
#   kc kube-credential NAME                 kubectl's exec plugin, KUBERNETES_EXEC_INFO set
#   git-credential-kc get                   for reference: stdin is its request, so it and a
#                                           `kc find -w` beside it go through sh (hyperfine
#                                           1.15, Debian 12's, has no --input)
# Every command gets the same environment (KC_KEYCHAIN, VAULT_ADDR, KUBERNETES_EXEC_INFO), so
# each pays the same exec. Prints one Markdown table with each row's ratio to `kc find -w`.
# Run by bench/bench.sh with KC set; alone it builds the release kc first.
# BENCH_QUICK=1: 50 runs a command (else 300), in two rounds of opposite order. Touches
# nothing outside a temporary folder; stops the agent it started. Method and figures:
# docs/performance.md, "Credential helpers".
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" = 0 ]; then SUDO=; else SUDO=sudo; fi
command -v hyperfine >/dev/null || { $SUDO apt-get update -qq; DEBIAN_FRONTEND=noninteractive $SUDO apt-get install -y -qq hyperfine >/dev/null; }
if [ -z "${KC:-}" ]; then
  RELEASE_FLAGS=(-c release --static-swift-stdlib -Xswiftc -static-executable)
  echo "bench: building the release kc" >&2
  swift build "${RELEASE_FLAGS[@]}" --product kc >/dev/null 2>&1
  KC="$(swift build "${RELEASE_FLAGS[@]}" --show-bin-path)/kc"
fi
if [ -n "${BENCH_QUICK:-}" ]; then RUNS=50; else RUNS=300; fi

work=$(mktemp -d)
cleanup() {
  KC_AGENT_DIR=$work/agent "$KC" agent --stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export HOME=$work XDG_DATA_HOME=$work/data KC_AGENT_DIR=$work/agent KC_AGENT_GRACE=30
unset XDG_RUNTIME_DIR XDG_CONFIG_HOME KC_PASSWORD KC_NEW_PASSWORD DBUS_SESSION_BUS_ADDRESS
results=$work/results
mkdir -p "$results"

# One keychain, unlocked in the agent, holding one item per row, each secret 40 bytes.
echo "bench: the credential helpers" >&2
k=$work/helpers.keychain-db
secret=wJalrXUtnFEMI/K7MDENG/bPxRfiCYBENCHSECRE
[ ${#secret} = 40 ] || { echo "bench: the secret is not 40 bytes" >&2; exit 1; }
KC_PASSWORD=bench "$KC" create --kdf interactive "$k" 2>/dev/null
KC_PASSWORD=bench "$KC" unlock -k "$k"
export KC_KEYCHAIN=$k
export VAULT_ADDR=https://vault.example.com:8200
export KUBERNETES_EXEC_INFO='{"apiVersion":"client.authentication.k8s.io/v1beta1","kind":"ExecCredential","spec":{"interactive":false}}'
"$KC" add -s bench -a user -w "$secret"
"$KC" add -s aws:bench -a AKIAKCBENCH000000001 -w "$secret"
printf %s "$secret" | "$KC" kube-credential bench --store
"$KC" add -s vault:$VAULT_ADDR -a token -w "$secret"
"$KC" add -s terraform:tfe.example.com -w "$secret"
"$KC" add --class internet -s git.example.com -a alice -r https -w "$secret"
ln -s "$KC" "$work/kc-vault-token-helper"
ln -s "$KC" "$work/terraform-credentials-kc"
ln -s "$KC" "$work/git-credential-kc"
printf 'protocol=https\nhost=git.example.com\n\n' > "$work/git-get.txt"
# Each answers with the secret before it is timed.
for call in "$KC find -s bench -a user -w" "$KC aws-credentials bench" "$work/kc-vault-token-helper get" \
  "$work/terraform-credentials-kc get tfe.example.com" "$KC kube-credential bench"; do
  out=$($call) && [[ "$out" == *"$secret"* ]] || { echo "bench: $call did not give the secret" >&2; exit 1; }
done
out=$(sh -c "$work/git-credential-kc get < $work/git-get.txt") && [[ "$out" == *"password=$secret"* ]] \
  || { echo "bench: git-credential-kc get did not give the secret" >&2; exit 1; }

# Two rounds, the second in the reverse order, pooled: a change in the machine's load during
# the run falls on every row (as bench/bench.sh's Secret Service rounds).
rows=(
  "kc find -w" "$KC find -s bench -a user -w"
  "kc aws-credentials P (credential_process)" "$KC aws-credentials bench"
  "kc-vault-token-helper get" "$work/kc-vault-token-helper get"
  "terraform-credentials-kc get HOST" "$work/terraform-credentials-kc get tfe.example.com"
  "kc kube-credential NAME (KUBERNETES_EXEC_INFO set)" "$KC kube-credential bench"
  "sh -c 'kc find -w'" "sh -c '$KC find -s bench -a user -w'"
  "sh -c 'git-credential-kc get < request'" "sh -c '$work/git-credential-kc get < $work/git-get.txt'"
)
for round in 1 2; do
  args=()
  for ((i = 0; i < ${#rows[@]}; i += 2)); do
    if [ "$round" = 1 ]; then j=$i; else j=$((${#rows[@]} - 2 - i)); fi
    args+=(-n "${rows[j]}" "${rows[j + 1]}")
  done
  hyperfine -N --runs "$((RUNS / 2))" --warmup 10 --export-json "$results/helpers-$round.json" "${args[@]}" >/dev/null
done
"$KC" lock --all

/usr/bin/python3 - "$results" "$RUNS" <<'PY'
import json, os, statistics, sys
sys.path.insert(0, "bench")
from table import machine, ms
results, runs = sys.argv[1], int(sys.argv[2])
pooled, cpu = {}, {}
for round in (1, 2):
    for r in json.load(open(os.path.join(results, f"helpers-{round}.json")))["results"]:
        pooled.setdefault(r["command"], []).extend(r["times"])
        cpu.setdefault(r["command"], []).append((r["user"] + r["system"]) * 1000)
t = {}
for name, times in pooled.items():
    times = sorted(times)
    t[name] = (statistics.median(times) * 1000, times[min(len(times) - 1, int(len(times) * 0.95))] * 1000)
find, shfind = t["kc find -w"], t["sh -c 'kc find -w'"]
cpu = {name: statistics.mean(v) for name, v in cpu.items()}
# CPU time (user + system, hyperfine's means): what the process itself spends, which the
# machine's load changes less than the wall time.
print("| measure | median | p95 | ratio | CPU time (user+sys) | CPU ratio |")
print("|---|---:|---:|---:|---:|---:|")
order = ["kc find -w", "kc aws-credentials P (credential_process)", "kc-vault-token-helper get", "terraform-credentials-kc get HOST",
         "kc kube-credential NAME (KUBERNETES_EXEC_INFO set)"]
for name in order:
    med, p95 = t[name]
    print(f"| {name} | {ms(med)} | {ms(p95)} | {med / find[0]:.2f}× kc find -w | {ms(cpu[name])} | {cpu[name] / cpu['kc find -w']:.2f}× |")
git, shcpu = t["sh -c 'git-credential-kc get < request'"], cpu["sh -c 'kc find -w'"]
gitcpu = cpu["sh -c 'git-credential-kc get < request'"]
print(f"| git-credential-kc get, via sh (reference) | {ms(git[0])} | {ms(git[1])} | {git[0] / shfind[0]:.2f}× sh -c 'kc find -w' ({ms(shfind[0])}) "
      f"| {ms(gitcpu)} | {gitcpu / shcpu:.2f}× sh+find |")
print(f"\n{machine()}; {runs} runs a row (two rounds in opposite orders, pooled), through the agent, the keychain unlocked, every secret 40 bytes.")
PY
