"""keyring's own backend test suite, and pip's and uv's ways of asking, against a real kc
keychain through the kc agent (run by integrations/python/run-tests.sh)."""

import os
import subprocess
import sys

import keyring
from keyring.testing.backend import BackendBasicTests

from keyrings.kc import KcKeyring


class TestKcKeyring(BackendBasicTests):
    def init_keyring(self):
        return KcKeyring()


def kc(*arguments, secret=b""):
    return subprocess.run(["kc", *arguments], input=secret, capture_output=True)


def keyring_cli():
    return os.path.join(os.path.dirname(sys.executable), "keyring")


def unlock():
    assert subprocess.run(["kc", "unlock"], env={**os.environ, "KC_PASSWORD": "python-tests"}).returncode == 0


def test_it_is_the_default_backend_when_kc_is_on_path():
    assert isinstance(keyring.get_keyring(), KcKeyring)
    assert KcKeyring.priority >= 1


def test_keyring_command_line_reads_what_kc_stored():
    assert kc("add", "-s", "pypi.example.com", "-a", "__token__", secret=b"pypi-tok").returncode == 0
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "keyring"), "get", "pypi.example.com", "__token__"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "pypi-tok\n"


def test_credential_without_user_name_is_the_oldest_item():
    # pip / uv: `keyring --mode=creds get URL`, then `get HOST:PORT`, with no user name.
    assert kc("add", "-s", "index.example.com:8443", "-a", "first", secret=b"one").returncode == 0
    assert kc("add", "-s", "index.example.com:8443", "-a", "second", secret=b"two").returncode == 0
    cred = KcKeyring().get_credential("index.example.com:8443", None)
    assert (cred.username, cred.password) == ("first", "one")
    out = subprocess.run([os.path.join(os.path.dirname(sys.executable), "keyring"), "--mode=creds", "get", "index.example.com:8443"],
                         capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    assert out.stdout == "first\none\n"
    assert KcKeyring().get_credential("nothing.example.com", None) is None


def test_what_keyring_stores_is_a_kc_generic_password():
    KcKeyring().set_password("svc-from-python", "me", "p@ss")
    out = kc("find", "-s", "svc-from-python", "-a", "me", "-w")
    assert out.stdout == b"p@ss"


def test_a_locked_keychain_fails_at_once():
    # run-tests.sh runs pytest in a session with no terminal: no prompt, an error at once.
    import pytest
    from keyring import errors
    assert kc("lock").returncode == 0
    try:
        with pytest.raises(errors.KeyringLocked) as raised:
            KcKeyring().get_password("pypi.example.com", "__token__")
    finally:
        unlock()
    # One line: which keychain, and `kc unlock` (not kc's --password-stdin, which a backend cannot use).
    message = str(raised.value)
    assert "\n" not in message and "is locked" in message and message.endswith("; run `kc unlock`"), message
    assert "--password-stdin" not in message
    assert raised.value.__cause__ is None and raised.value.__context__ is None


def test_a_locked_keychain_is_one_line_from_keyrings_command_line():
    # What pip and uv show: `keyring get` with kc locked prints one line, no traceback.
    assert kc("lock").returncode == 0
    try:
        out = subprocess.run([keyring_cli(), "get", "pypi.example.com", "__token__"], capture_output=True, text=True)
        # In an application the error is an ordinary exception, traceback and all.
        app = subprocess.run([sys.executable, "-c", "import keyring; keyring.get_password('pypi.example.com', '__token__')"],
                             capture_output=True, text=True)
    finally:
        unlock()
    assert out.returncode == 1 and out.stdout == "", out
    assert len(out.stderr.splitlines()) == 1, out.stderr
    assert out.stderr.startswith("kc: the keychain ") and out.stderr.endswith("is locked and there is no terminal to ask for its password; run `kc unlock`\n"), out.stderr
    assert app.returncode == 1 and "Traceback" in app.stderr and "keyring.errors.KeyringLocked: kc: the keychain" in app.stderr, app.stderr


def test_an_empty_password_is_stored_on_purpose():
    # kc refuses an empty secret unless asked for it; keyring may store one, so the backend asks.
    assert kc("add", "-s", "svc-empty", "-a", "me").returncode == 206
    KcKeyring().set_password("svc-empty", "me", "")
    out = kc("find", "-s", "svc-empty", "-a", "me", "-w")
    assert out.returncode == 0 and out.stdout == b""
    assert KcKeyring().get_password("svc-empty", "me") == ""
