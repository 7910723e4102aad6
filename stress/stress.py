#!/usr/bin/env python3
"""make stress: kc under load, crashes and faults, through the real binaries.

Usage: stress.py KC KC_LOADGEN [--quick]

Every phase works in its own temporary home with its own agent, checks what it claims
(counts, every acknowledged item readable with the right secret, PRAGMA integrity_check,
the header's count and accumulator through `kc-loadgen verify`) and adds a row to the
summary table. Exit status 1 when any phase lost an item, saw a crash or an unexpected
exit code. docs/reliability.md has the method and the latest figures.
"""
import base64
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import threading
import time

os.umask(0o077)  # files this script makes (sqlite3's -wal, -shm) must be as private as kc's

PASSWORD = "stress password"
# Exit codes: the low byte of the status.
OK, LOCKED, NOT_FOUND, DUPLICATE = 0, 36, 44, 45
DISK_FULL = (-34) & 0xFF       # errSecDiskFull
READ_ONLY = (-25292) & 0xFF    # errSecReadOnly
NOT_AVAILABLE = (-25291) & 0xFF  # errSecNotAvailable
IO_ERROR = (-36) & 0xFF        # errSecIO


class Home:
    """A private HOME, data folder and agent folder; stops its agent when closed."""

    def __init__(self, kc, base=None, owner=None):
        self.kc_path = kc
        self.dir = tempfile.mkdtemp(prefix="kc-stress-", dir=base)
        self.owner = owner
        self.env = {"HOME": self.dir, "XDG_DATA_HOME": self.dir + "/data", "KC_AGENT_DIR": self.dir + "/agent",
                    "KC_AGENT_GRACE": "30", "PATH": "/usr/bin:/bin"}
        self.keychain = self.dir + "/stress.keychain-db"

    def run(self, args, password=None, stdin=None, timeout=120, extra=None, program=None):
        env = dict(self.env)
        if password is not None:
            env["KC_PASSWORD"] = password
        env.update(extra or {})
        argv = [program or self.kc_path] + args
        if self.owner is not None:
            argv = ["setpriv", f"--reuid={self.owner}", f"--regid={self.owner}", "--clear-groups"] + argv
        p = subprocess.run(argv, env=env, input=stdin, capture_output=True, timeout=timeout, start_new_session=True)
        return p.returncode, p.stdout, p.stderr.decode(errors="replace")

    def spawn(self, args, password=None, extra=None, program=None):
        env = dict(self.env)
        if password is not None:
            env["KC_PASSWORD"] = password
        env.update(extra or {})
        return subprocess.Popen([program or self.kc_path] + args, env=env, stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE, start_new_session=True)

    def create(self, path=None):
        rc, _, err = self.run(["create", path or self.keychain, "--kdf", "interactive"], password=PASSWORD)
        assert rc == 0, err

    def agent_pid(self):
        with open(self.env["KC_AGENT_DIR"] + "/agent.lock") as f:
            return int(f.readline().strip() or 0)

    def close(self):
        self.run(["agent", "--stop"])
        shutil.rmtree(self.dir, ignore_errors=True)


class Phase:
    def __init__(self, name):
        self.name, self.operations, self.faults, self.checked, self.lost = name, 0, 0, 0, 0
        self.crashes, self.unexpected, self.notes, self.start = 0, 0, [], time.time()

    def exit(self, rc, expected, err=""):
        """Counts an exit code: a signal we did not send is a crash; anything else not expected is unexpected."""
        self.operations += 1
        if rc in expected:
            return
        if rc < 0:
            self.crashes += 1
            self.notes.append(f"killed by signal {-rc}: {err.strip()[:200]}")
        else:
            self.unexpected += 1
            if len(self.notes) < 5:
                self.notes.append(f"exit {rc}: {err.strip()[:200]}")

    def row(self):
        return [self.name, self.operations, self.faults, self.checked, self.lost, self.crashes, self.unexpected,
                f"{time.time() - self.start:.0f} s"]


def items(home, path, service_prefix=""):
    """Every generic password of the keychain: {service: secret bytes}, through the agent or KC_PASSWORD."""
    rc, out, err = home.run(["find", "-k", path, "--all", "--json", "-g"], password=PASSWORD, timeout=600)
    if rc == NOT_FOUND:
        return {}
    assert rc == 0, f"find --all failed ({rc}): {err}"
    found = {}
    for item in json.loads(out):
        service = item["attributes"].get("service", "")
        if service.startswith(service_prefix):
            found[service] = base64.b64decode(item.get("data", ""))
    return found


def integrity(path):
    db = sqlite3.connect(f"file:{path}?mode=ro", uri=True)
    try:
        return db.execute("PRAGMA integrity_check").fetchone()[0]
    finally:
        db.close()


def verify(home, loadgen, path, phase):
    """PRAGMA integrity_check and the header's count and accumulator; returns the item count."""
    result = integrity(path)
    if result != "ok":
        phase.lost += 1
        phase.notes.append(f"integrity_check: {result}")
    rc, out, err = home.run(["verify", path], password=PASSWORD, program=loadgen)
    if rc != 0:
        phase.lost += 1
        phase.notes.append(f"verify failed ({rc}): {err.strip()}")
        return -1
    return int(out.decode().strip())


def parallel(count, work):
    threads = [threading.Thread(target=work, args=(i,)) for i in range(count)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()


def load(kc, loadgen, per_process, through_agent):
    """8 processes adding distinct items at once; exactly 8 × N after, each readable."""
    phase = Phase(f"8 × {per_process} kc add, " + ("through the agent" if through_agent else "in-process (KC_PASSWORD each)"))
    home = Home(kc)
    try:
        home.create()
        if through_agent:
            assert home.run(["unlock", "-k", home.keychain], password=PASSWORD)[0] == 0
        lock = threading.Lock()

        def work(p):
            for i in range(per_process):
                rc, _, err = home.run(["add", "-k", home.keychain, "-s", f"load-{p}-{i}", "-a", "a", "-w", f"secret-{p}-{i}"],
                                      password=None if through_agent else PASSWORD)
                with lock:
                    phase.exit(rc, {OK}, err)
        parallel(8, work)
        found = items(home, home.keychain, "load-")
        for p in range(8):
            for i in range(per_process):
                phase.checked += 1
                if found.get(f"load-{p}-{i}") != f"secret-{p}-{i}".encode():
                    phase.lost += 1
        if len(found) != 8 * per_process:
            phase.notes.append(f"{len(found)} items, expected {8 * per_process}")
            phase.lost += abs(len(found) - 8 * per_process)
        count = verify(home, loadgen, home.keychain, phase)
        if count != 8 * per_process:
            phase.notes.append(f"header count {count}")
    finally:
        home.close()
    return phase


def mixed(kc, loadgen, per_process, item_count=20):
    """8 processes of add/update/delete/find on the same items. The final state of each item
    must be the effect of one of its last acknowledged writes (one not followed, in real
    time, by another acknowledged write), and every find returns a value some write stored."""
    phase = Phase(f"8 × {per_process} mixed add/update/delete/find on {item_count} shared items")
    home = Home(kc)
    log, lock = [], threading.Lock()
    try:
        home.create()
        assert home.run(["unlock", "-k", home.keychain], password=PASSWORD)[0] == 0
        expected = {"add": {OK, DUPLICATE}, "update": {OK, NOT_FOUND}, "delete": {OK, NOT_FOUND}, "find": {OK, NOT_FOUND}}

        def work(p):
            rng = random.Random(1000 + p)
            for n in range(per_process):
                item = f"mix-{rng.randrange(item_count)}"
                op = rng.choice(["add", "update", "delete", "find", "find"])
                value = f"{op}-{p}-{n}"
                args = {"add": ["add", "-s", item, "-a", "m", "-w", value],
                        "update": ["update", "-s", item, "-a", "m", "-w", value],
                        "delete": ["delete", "-s", item, "-a", "m"],
                        "find": ["find", "-s", item, "-a", "m", "-w"]}[op]
                start = time.monotonic()
                rc, out, err = home.run([args[0], "-k", home.keychain] + args[1:])
                end = time.monotonic()
                with lock:
                    phase.exit(rc, expected[op], err)
                    log.append((start, end, op, item, value, rc, out))
        parallel(8, work)
        written = {v for (_, _, op, _, v, rc, _) in log if op in ("add", "update") and rc == OK}
        for (_, _, op, item, _, rc, out) in log:
            if op == "find" and rc == OK:
                phase.checked += 1
                if out.decode() not in written:
                    phase.lost += 1
                    phase.notes.append(f"find of {item} returned a value nobody stored")
        found = items(home, home.keychain, "mix-")
        for k in range(item_count):
            item = f"mix-{k}"
            writes = [e for e in log if e[3] == item and e[2] in ("add", "update", "delete") and e[5] == OK]
            last = [w for w in writes if not any(o[0] > w[1] for o in writes)]
            phase.checked += 1
            final = found.get(item)
            if not writes:
                ok = final is None
            elif final is None:
                ok = any(w[2] == "delete" for w in last)
            else:
                ok = any(w[2] in ("add", "update") and w[4].encode() == final for w in last)
            if not ok:
                phase.lost += 1
                phase.notes.append(f"{item}: final {final!r} is not the effect of a last acknowledged write")
        verify(home, loadgen, home.keychain, phase)
    finally:
        home.close()
    return phase


def duplicates(kc, rounds):
    """Two kc add of the same new item at once: exactly one succeeds, the other exits 45."""
    phase = Phase(f"{rounds} races of two kc add of the same item")
    home = Home(kc)
    try:
        home.create()
        for r in range(rounds):
            # Even rounds through the agent, odd ones in-process with KC_PASSWORD.
            agent = r % 2 == 0
            if agent:
                assert home.run(["unlock", "-k", home.keychain], password=PASSWORD)[0] == 0
            else:
                home.run(["lock", "--all"])
            procs = [home.spawn(["add", "-k", home.keychain, "-s", f"dup-{r}", "-a", "a", "-w", f"v{j}"],
                                password=None if agent else PASSWORD) for j in range(2)]
            codes = []
            for p in procs:
                _, err = p.communicate(timeout=120)
                codes.append(p.returncode)
                phase.exit(p.returncode, {OK, DUPLICATE}, err.decode(errors="replace"))
            phase.checked += 1
            if sorted(codes) != [OK, DUPLICATE]:
                phase.lost += 1
                phase.notes.append(f"round {r}: exit codes {codes}")
    finally:
        home.close()
    return phase


def kill_writer(kc, loadgen, iterations):
    """kill -9 of a process adding items, at random moments: the keychain opens, passes
    integrity_check and verify, holds every acknowledged item with its data, and nothing half-written."""
    phase = Phase(f"kill -9 of a writer, {iterations} times")
    home = Home(kc)
    rng = random.Random(7)
    total = 0
    try:
        # A fresh keychain every 30 kills keeps each check's full listing small.
        for block in range(0, iterations, 30):
            path = f"{home.dir}/kill-{block}.keychain-db"
            home.create(path)
            acknowledged = set()
            for it in range(block, min(block + 30, iterations)):
                p = home.spawn([path, f"kill{it}", "100000"], password=PASSWORD,
                               extra={"KC_LOADGEN_ACK": "1"}, program=loadgen)
                time.sleep(rng.uniform(0.05, 0.5))
                p.send_signal(signal.SIGKILL)
                out, err = p.communicate()
                phase.faults += 1
                phase.exit(p.returncode, {-signal.SIGKILL, OK}, err.decode(errors="replace"))
                acknowledged.update(line for line in out.decode().split("\n") if line)
                if it % 10 == 9 or it == iterations - 1:
                    found = items(home, path, "kill")
                    for name in acknowledged:
                        phase.checked += 1
                        if found.get(name) != f"secret-{name}".encode():
                            phase.lost += 1
                            phase.notes.append(f"acknowledged {name} missing or wrong")
                    for name, secret in found.items():
                        if secret != f"secret-{name}".encode():
                            phase.lost += 1
                            phase.notes.append(f"{name} holds the wrong data")
                    verify(home, loadgen, path, phase)
            total += len(acknowledged)
        phase.notes.append(f"{total} acknowledged adds")
    finally:
        home.close()
    return phase


def kill_agent(kc, loadgen, iterations):
    """kill -9 of the agent while clients use it: clients get an error exit with a message, the
    next kc unlock works, the file is intact and every acknowledged add is there."""
    phase = Phase(f"kill -9 of the agent mid-request, {iterations} times")
    home = Home(kc)
    rng = random.Random(11)
    acknowledged, lock = set(), threading.Lock()
    try:
        home.create()
        for it in range(iterations):
            assert home.run(["unlock", "-k", home.keychain], password=PASSWORD)[0] == 0
            stop = threading.Event()

            def client(c):
                n = 0
                while not stop.is_set():
                    name = f"agent{it}-{c}-{n}"
                    rc, _, err = home.run(["add", "-k", home.keychain, "-s", name, "-a", "a", "-w", "secret-" + name])
                    with lock:
                        phase.exit(rc, {OK, LOCKED, NOT_AVAILABLE, IO_ERROR}, err)
                        if rc == OK:
                            acknowledged.add(name)
                        elif not err.startswith("kc: "):
                            phase.unexpected += 1
                            phase.notes.append(f"an error without a message: {err!r}")
                    n += 1
            threads = [threading.Thread(target=client, args=(c,)) for c in range(4)]
            for t in threads:
                t.start()
            time.sleep(rng.uniform(0.1, 0.6))
            os.kill(home.agent_pid(), signal.SIGKILL)
            phase.faults += 1
            time.sleep(0.2)
            stop.set()
            for t in threads:
                t.join()
        found = items(home, home.keychain, "agent")
        for name in acknowledged:
            phase.checked += 1
            if found.get(name) != f"secret-{name}".encode():
                phase.lost += 1
        verify(home, loadgen, home.keychain, phase)
    finally:
        home.close()
    return phase


def disk_full(kc, loadgen):
    """A keychain on a 2 MiB tmpfs filled through the agent: the add that does not fit fails
    with errSecDiskFull and a message; every item before it is intact."""
    phase = Phase("disk full (2 MiB tmpfs)")
    home = Home(kc)
    mount = home.dir + "/small"
    os.mkdir(mount, 0o700)
    if subprocess.run(["mount", "-t", "tmpfs", "-o", "size=2m,mode=0700", "tmpfs", mount], capture_output=True).returncode != 0:
        phase.notes.append("skipped: this machine does not let the test mount a tmpfs")
        home.close()
        return phase
    path = mount + "/full.keychain-db"
    acknowledged = []
    try:
        home.create(path)
        assert home.run(["unlock", "-k", path], password=PASSWORD)[0] == 0
        rng = random.Random(3)
        for i in range(400):
            secret = base64.b64encode(rng.randbytes(24 * 1024))
            rc, _, err = home.run(["add", "-k", path, "-s", f"full-{i}", "-a", "a"], stdin=secret)
            phase.exit(rc, {OK, DISK_FULL}, err)
            if rc == OK:
                acknowledged.append((f"full-{i}", secret))
                continue
            phase.faults += 1
            if rc == DISK_FULL and "disk is full" not in err:
                phase.unexpected += 1
                phase.notes.append(f"disk full without a clear message: {err.strip()}")
            break
        else:
            phase.notes.append("the disk never filled")
        found = items(home, path, "full-")
        for name, secret in acknowledged:
            phase.checked += 1
            if found.get(name) != secret:
                phase.lost += 1
        home.run(["lock", "--all"])
        verify(home, loadgen, path, phase)
        phase.notes.append(f"{len(acknowledged)} items fitted")
    finally:
        home.run(["agent", "--stop"])
        subprocess.run(["umount", mount], capture_output=True)
        home.close()
    return phase


def reachable_copy(program, folder):
    """A copy of `program` in `folder`, mode 0755: another uid can run it but not change it."""
    copy = os.path.join(folder, os.path.basename(program))
    shutil.copyfile(program, copy)
    os.chmod(copy, 0o755)
    return copy


def read_only(kc, loadgen):
    """A read-only keychain file, then a read-only folder, for a user who is not root: a clear
    error (errSecReadOnly), reads still work where they can, and nothing is lost."""
    phase = Phase("read-only file and folder (uid nobody)")
    nobody = 65534
    # Under /tmp, and with copies of the programs nobody runs, so that nobody reaches them
    # wherever the checkout (and TMPDIR) lives: a clone in a 0700 folder is out of its reach.
    base = tempfile.mkdtemp(prefix="kc-stress-ro-", dir="/tmp")
    os.chmod(base, 0o711)
    kc, loadgen = reachable_copy(kc, base), reachable_copy(loadgen, base)
    home = Home(kc, base=base, owner=nobody)
    try:
        os.chown(home.dir, nobody, nobody)
        home.create()
        for i in range(3):
            rc, _, err = home.run(["add", "-k", home.keychain, "-s", f"ro-{i}", "-a", "a", "-w", f"secret-{i}"], password=PASSWORD)
            phase.exit(rc, {OK}, err)
        for what, change, undo in [("file", lambda: os.chmod(home.keychain, 0o400), lambda: os.chmod(home.keychain, 0o600)),
                                   ("folder", lambda: os.chmod(home.dir, 0o500), lambda: os.chmod(home.dir, 0o700))]:
            change()
            phase.faults += 1
            rc, _, err = home.run(["add", "-k", home.keychain, "-s", "ro-new", "-a", "a", "-w", "x"], password=PASSWORD)
            phase.exit(rc, {READ_ONLY}, err)
            if "read-only" not in err:
                phase.unexpected += 1
                phase.notes.append(f"read-only {what}: unclear message {err.strip()!r}")
            rc, out, err = home.run(["find", "-k", home.keychain, "-s", "ro-1", "-a", "a", "-w"], password=PASSWORD)
            phase.notes.append(f"read-only {what}: add exit {READ_ONLY}, find exit {rc}")
            phase.exit(rc, {OK, READ_ONLY}, err)
            undo()
        for i in range(3):
            rc, out, err = home.run(["find", "-k", home.keychain, "-s", f"ro-{i}", "-a", "a", "-w"], password=PASSWORD)
            phase.checked += 1
            if rc != OK or out != f"secret-{i}".encode():
                phase.lost += 1
        rc, _, _ = home.run(["find", "-k", home.keychain, "-s", "ro-new", "-a", "a"], password=PASSWORD)
        if rc != NOT_FOUND:
            phase.lost += 1
            phase.notes.append("an add refused as read-only left an item")
        rc, out, err = home.run(["verify", home.keychain], password=PASSWORD, program=loadgen)
        if rc != 0:
            phase.lost += 1
            phase.notes.append(f"verify: {err.strip()}")
    finally:
        os.chmod(home.dir, 0o700)
        home.close()
        shutil.rmtree(base, ignore_errors=True)
    return phase


def main():
    kc, loadgen = os.path.abspath(sys.argv[1]), os.path.abspath(sys.argv[2])
    quick = "--quick" in sys.argv
    phases = [
        lambda: load(kc, loadgen, 100 if quick else 500, through_agent=True),
        lambda: load(kc, loadgen, 15 if quick else 500, through_agent=False),
        lambda: mixed(kc, loadgen, 60 if quick else 300),
        lambda: duplicates(kc, 20 if quick else 100),
        lambda: kill_writer(kc, loadgen, 30 if quick else 300),
        lambda: kill_agent(kc, loadgen, 5 if quick else 20),
        lambda: disk_full(kc, loadgen),
        lambda: read_only(kc, loadgen),
    ]
    rows, failed = [], False
    for make in phases:
        phase = make()
        print(f"stress: {phase.name}: {phase.row()[1:]} {'; '.join(phase.notes)}", file=sys.stderr, flush=True)
        rows.append(phase.row() + ["; ".join(phase.notes)])
        failed |= phase.lost > 0 or phase.crashes > 0 or phase.unexpected > 0
    print("| phase | operations | faults injected | items checked | lost items | crashes | unexpected exits | time | notes |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---|")
    for r in rows:
        print("| " + " | ".join(str(c) for c in r) + " |")
    totals = [sum(r[i] for r in rows) for i in range(1, 7)]
    print("| **total** | " + " | ".join(str(t) for t in totals) + " | | |")
    sys.exit(1 if failed else 0)


if __name__ == "__main__":
    main()
