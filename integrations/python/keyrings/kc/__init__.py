"""A keyring backend on kc (https://github.com/…/kc): passwords are kc generic passwords,
service = the keyring service, account = the user name. Every call runs the `kc` command,
which goes through the unlocked kc agent (about a millisecond), or uses KC_PASSWORD /
--password-file, or fails at once when neither is there.
"""

import json
import os
import shutil
import subprocess
import sys

from jaraco.classes import properties
from keyring import credentials, errors
from keyring.backend import KeyringBackend

__all__ = ["KcKeyring"]

# kc's exit codes (docs/errors.md).
NOT_FOUND = 44
LOCKED = 36


def _one_line_at_the_top(error):
    """Marks `error` so that, if it reaches the top of keyring's own command line (`keyring
    get …`, which catches nothing and would print a traceback of its own frames), it is
    printed as its one line of message, exit status 1 as before. Anywhere else (an
    application, a thread, a test) it is an ordinary exception with its traceback."""
    error.kc_one_line = True
    if not getattr(sys.excepthook, "kc_one_line", False):
        previous = sys.excepthook

        def hook(kind, value, traceback):
            if getattr(value, "kc_one_line", False) and _raised_under_keyring_cli(traceback):
                print(value, file=sys.stderr)
                return
            previous(kind, value, traceback)

        hook.kc_one_line = True
        sys.excepthook = hook
    return error


def _raised_under_keyring_cli(traceback):
    """Whether a frame of keyring's command-line module is on the traceback."""
    cli = getattr(sys.modules.get("keyring.cli"), "__file__", None)
    while cli and traceback is not None:
        if traceback.tb_frame.f_code.co_filename == cli:
            return True
        traceback = traceback.tb_next
    return False


def _kc_binary():
    """The kc command: $KC_BINARY, else `kc` on PATH; None when there is none."""
    explicit = os.environ.get("KC_BINARY")
    if explicit:
        return explicit if os.access(explicit, os.X_OK) else None
    return shutil.which("kc")


class KcKeyring(KeyringBackend):
    """Passwords in kc's keychain ($KC_KEYCHAIN or the default one)."""

    @properties.classproperty
    def priority(cls):
        if _kc_binary() is None:
            raise RuntimeError("kc is not on PATH")
        return 5

    def _run(self, arguments, secret=None):
        binary = _kc_binary()
        if binary is None:
            raise _one_line_at_the_top(errors.KeyringError("kc is not on PATH"))
        return subprocess.run(
            [binary, *arguments],
            input=secret if secret is not None else b"",
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )

    @staticmethod
    def _failure(result, kind=errors.KeyringError):
        """The keyring error for a failed kc call: kc's message, with no chained exception.
        A locked keychain is KeyringLocked in one line: kc's first line (which keychain),
        and `kc unlock`, the one remedy that reaches a backend (its other hints, such as
        --password-stdin, are options this backend does not pass)."""
        message = result.stderr.decode("utf-8", "replace").strip() or f"kc exited with {result.returncode}"
        if result.returncode == LOCKED:
            return _one_line_at_the_top(errors.KeyringLocked(f"{message.splitlines()[0]}; run `kc unlock`"))
        return _one_line_at_the_top(kind(message))

    @staticmethod
    def _option(name, value):
        # --name=value keeps a value that starts with "-" a value; an empty one goes apart.
        return [f"--{name}", ""] if value == "" else [f"--{name}={value}"]

    @classmethod
    def _names(cls, service, username):
        return cls._option("service", service) + cls._option("account", username)

    def get_password(self, service, username):
        result = self._run(["find", *self._names(service, username), "-w"])
        if result.returncode == NOT_FOUND:
            return None
        if result.returncode != 0:
            raise self._failure(result)
        return result.stdout.decode("utf-8")

    def set_password(self, service, username, password):
        self._validate_username(username)
        # kc refuses an empty secret as a mistake unless asked for it: keyring allows one.
        empty = ["--allow-empty"] if password == "" else []
        result = self._run(["add", "-U", *empty, *self._names(service, username)], secret=password.encode("utf-8"))
        if result.returncode != 0:
            raise self._failure(result, errors.PasswordSetError)

    def delete_password(self, service, username):
        result = self._run(["delete", *self._names(service, username)])
        if result.returncode == NOT_FOUND:
            raise _one_line_at_the_top(errors.PasswordDeleteError("no such password"))
        if result.returncode != 0:
            raise self._failure(result, errors.PasswordDeleteError)

    def get_credential(self, service, username):
        if username is not None:
            password = self.get_password(service, username)
            return None if password is None else credentials.SimpleCredential(username, password)
        # No user name: the oldest item for the service (kc lists in the order items were added).
        result = self._run(["find", *self._option("service", service), "--all", "--json"])
        if result.returncode == NOT_FOUND:
            return None
        if result.returncode != 0:
            raise self._failure(result)
        items = json.loads(result.stdout.decode("utf-8"))
        if not items:
            return None
        account = items[0].get("attributes", {}).get("account", "")
        password = self.get_password(service, account)
        return None if password is None else credentials.SimpleCredential(account, password)
