#!/usr/bin/env bash
# The Python keyring backend's tests: a venv with keyring and pytest from PyPI and this
# package, a throwaway home with a kc keychain unlocked through the agent, then pytest
# (keyring's BackendBasicTests and pip's / uv's ways of asking).
# usage: run-tests.sh KC_BINARY VENV_DIR
set -euo pipefail
kc_binary=$1
venv=$2
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -x "$venv/bin/pytest" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q keyring pytest
fi
"$venv/bin/pip" install -q --force-reinstall --no-deps "$here"
home=$(mktemp -d)
trap 'HOME=$home KC_AGENT_DIR=$home/agent "$kc_binary" agent --stop >/dev/null 2>&1 || true; rm -rf "$home"' EXIT
mkdir -p "$home/bin"
ln -s "$kc_binary" "$home/bin/kc"
export HOME=$home XDG_DATA_HOME=$home/data KC_AGENT_DIR=$home/agent PATH="$home/bin:$PATH"
unset KC_KEYCHAIN KC_PASSWORD DBUS_SESSION_BUS_ADDRESS
KC_PASSWORD=python-tests kc create --kdf interactive 2>/dev/null
KC_PASSWORD=python-tests kc unlock
cd "$home"
# In a session of its own: no terminal, so a locked keychain fails instead of prompting.
setsid -w "$venv/bin/python" -m pytest -q -p no:cacheprovider "$here/tests"
