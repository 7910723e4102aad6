# Sourced by bench/scale.sh and bench/ss5k.sh (after `set -euo pipefail` and cd to the
# repository): kc's provider and gnome-keyring side by side, each on its own private
# dbus-daemon with the limits of Debian's session.conf, in a temporary folder ($work) with its
# own HOME and agent folder; everything started is stopped and the folder removed on exit.
# Uses KC and PROVIDER when both are set; builds them otherwise. Sets work, results (a folder
# for the results), SS (the D-Bus client, bench/secret_service.py), kcbus and gkbus; defines
# start_kc N and start_gnome_keyring N.
bench_name=$(basename "$0" .sh)

if [ -z "${KC:-}" ] || [ -z "${PROVIDER:-}" ]; then
  # Both as the Makefile builds the provider (libsystemd is only shared).
  FLAGS=(-c release --static-swift-stdlib --scratch-path .build/provider)
  echo "$bench_name: building the release binaries" >&2
  swift build "${FLAGS[@]}" --product kc-secret-service >/dev/null 2>&1
  swift build "${FLAGS[@]}" --product kc >/dev/null 2>&1
  BIN="$(swift build "${FLAGS[@]}" --show-bin-path)"
  KC=$BIN/kc
  PROVIDER=$BIN/kc-secret-service
fi
for program in dbus-daemon gnome-keyring-daemon; do
  command -v "$program" >/dev/null || { echo "$bench_name: $program is missing (make bench installs it)" >&2; exit 1; }
done
/usr/bin/python3 -c 'import jeepney, secretstorage, keyring' 2>/dev/null \
  || { echo "$bench_name: python3-jeepney, python3-secretstorage and python3-keyring are needed (make bench installs them)" >&2; exit 1; }
SS=(/usr/bin/python3 bench/secret_service.py)

work=$(mktemp -d)
cleanup() {
  if [ -f "$work/pids" ]; then while read -r pid; do kill "$pid" 2>/dev/null || true; done < "$work/pids"; fi
  KC_AGENT_DIR=$work/agent "$work/bin/kc" agent --stop >/dev/null 2>&1 || true
  rm -rf "$work"
}
trap cleanup EXIT
export HOME=$work XDG_DATA_HOME=$work/data KC_AGENT_DIR=$work/agent KC_AGENT_GRACE=30
unset XDG_RUNTIME_DIR KC_KEYCHAIN KC_PASSWORD KC_NEW_PASSWORD DBUS_SESSION_BUS_ADDRESS KC_PAGE_ITEMS
results=$work/results
mkdir -p "$results"

source bench/private_bus.sh
kcbus="unix:path=$work/kc-bus/socket"
gkbus="unix:path=$work/gk-bus/socket"
private_bus "$work/kc-bus"
private_bus "$work/gk-bus"

# start_kc N: kc's default keychain (login) with items 0..N-1 with Secret Service attributes
# (imported with kc import, as Python's keyring would have stored them), unlocked, the agent's
# peak memory reset after the unlock (in $agent), and the provider on kcbus. Agent and
# provider run from one folder ($SKC beside kc-secret-service), as `make install` puts them.
start_kc() {
  mkdir -p "$work/bin"
  cp "$KC" "$work/bin/kc"
  cp "$PROVIDER" "$work/bin/kc-secret-service"
  SKC=$work/bin/kc
  echo "$bench_name: $1 items in kc's keychain" >&2
  KC_PASSWORD=bench "$SKC" create --kdf interactive >/dev/null 2>&1
  "${SS[@]}" export 0 "$1" > "$work/items.json"
  KC_PASSWORD=bench "$SKC" import "$work/items.json" >/dev/null 2>&1
  KC_PASSWORD=bench "$SKC" unlock
  agent=$(head -n1 "$work/agent/agent.lock" | tr -cd 0-9)
  echo 5 > "/proc/$agent/clear_refs"   # the unlock's key derivation does not count
  "$work/bin/kc-secret-service" --address "$kcbus" &
  echo $! >> "$work/pids"
  DBUS_SESSION_BUS_ADDRESS=$kcbus timeout 20 "${SS[@]}" wait
}

# start_gnome_keyring N: gnome-keyring on gkbus, in its own home, its login keyring created
# unlocked from stdin (headless), and items 0..N-1 stored over D-Bus (CreateItem, one each)
# in its in-memory `session` collection.
start_gnome_keyring() {
  echo "$bench_name: $1 items in gnome-keyring's session collection" >&2
  mkdir -p "$work/gk/run" && chmod 700 "$work/gk/run"
  printf bench | env HOME="$work/gk" XDG_RUNTIME_DIR="$work/gk/run" XDG_DATA_HOME="$work/gk/data" XDG_CONFIG_HOME="$work/gk/config" \
    DBUS_SESSION_BUS_ADDRESS="$gkbus" gnome-keyring-daemon --foreground --components=secrets --unlock >/dev/null 2>&1 &
  echo $! >> "$work/pids"
  DBUS_SESSION_BUS_ADDRESS=$gkbus timeout 20 "${SS[@]}" wait
  DBUS_SESSION_BUS_ADDRESS=$gkbus "${SS[@]}" store-in /org/freedesktop/secrets/collection/session 0 "$1"
}
