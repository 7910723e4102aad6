#!/usr/bin/python3
"""make bench's Secret Service client (bench/bench.sh, docs/performance.md).

Runs with Debian's python3 and its jeepney and secretstorage, on the bus that
DBUS_SESSION_BUS_ADDRESS names.

  secret_service.py wait                 until some program owns org.freedesktop.secrets (10 s)
  secret_service.py store FIRST COUNT    stores items FIRST.. in the default collection, over D-Bus
  secret_service.py export FIRST COUNT   prints the same items as a kc-export JSON file (for kc import)
  secret_service.py search COUNT CALLS   times SearchItems on one connection against Peer.Ping
  secret_service.py pid                  the pid of org.freedesktop.secrets' owner
  secret_service.py store-in COLLECTION FIRST COUNT
                                         stores items FIRST.. in COLLECTION (a path), replace=False
  secret_service.py property COLLECTION CALLS
                                         times Get of the collection's Locked and Label against Peer.Ping
  secret_service.py items COLLECTION CALLS
                                         times Get of the collection's Items (every item's path)
  secret_service.py keyring-get COLLECTION ITEM CALLS
                                         times Python keyring's get_password of item ITEM (its
                                         SecretService backend, COLLECTION preferred)
  secret_service.py create-item COLLECTION FIRST COUNT
                                         times SecretStorage's create_item of items FIRST..
                                         into COLLECTION, one connection, as an application calls it
  secret_service.py search-all ITEMS CALLS
                                         times `secret-tool search --all application bench`,
                                         which must print ITEMS items with their secrets
  secret_service.py provider-time FILE [OPERATIONS]
                                         the time the provider took per client, from a
                                         `dbus-monitor --profile` log of that bus (divided
                                         by OPERATIONS, each client's count of operations)

Item i has the attributes application=bench, service=svc-i, username=user-i (what
keyring and secret-tool store: a service and a user, plus the application's own
attribute), the label "bench i" and the secret "pw-i".
"""
import base64
import json
import random
import statistics
import sys
import time

from jeepney import DBusAddress, new_method_call
from jeepney.io.blocking import open_dbus_connection

NAME = "org.freedesktop.secrets"
SERVICE = DBusAddress("/org/freedesktop/secrets", bus_name=NAME, interface="org.freedesktop.Secret.Service")
PEER = DBusAddress("/org/freedesktop/secrets", bus_name=NAME, interface="org.freedesktop.DBus.Peer")
BUS = DBusAddress("/org/freedesktop/DBus", bus_name="org.freedesktop.DBus", interface="org.freedesktop.DBus")


def attributes(i):
    return {"application": "bench", "service": f"svc-{i}", "username": f"user-{i}"}


def call(conn, address, method, signature=None, body=()):
    reply = conn.send_and_get_reply(new_method_call(address, method, signature, body), timeout=30)
    if reply.header.message_type.name != "method_return":
        sys.exit(f"secret_service.py: {method}: {reply.header.fields.get(4, '')} {reply.body}")
    return reply.body


def wait():
    conn = open_dbus_connection("SESSION")
    deadline = time.monotonic() + 10
    while not call(conn, BUS, "NameHasOwner", "s", (NAME,))[0]:
        if time.monotonic() > deadline:
            sys.exit(f"secret_service.py: nobody took {NAME} within 10 s")
        time.sleep(0.05)


def pid():
    conn = open_dbus_connection("SESSION")
    print(call(conn, BUS, "GetConnectionUnixProcessID", "s", (NAME,))[0])


def store(first, count):
    import secretstorage
    conn = secretstorage.dbus_init()
    collection = secretstorage.get_default_collection(conn)
    for i in range(first, first + count):
        collection.create_item(f"bench {i}", attributes(i), f"pw-{i}".encode(), replace=True)


def store_in(collection_path, first, count):
    """Items FIRST.. in one collection, one CreateItem each (plain session), replace=False."""
    conn = open_dbus_connection("SESSION")
    session = call(conn, SERVICE, "OpenSession", "sv", ("plain", ("s", "")))[1]
    collection = DBusAddress(collection_path, bus_name=NAME, interface="org.freedesktop.Secret.Collection")
    for i in range(first, first + count):
        props = {"org.freedesktop.Secret.Item.Label": ("s", f"bench {i}"),
                 "org.freedesktop.Secret.Item.Attributes": ("a{ss}", attributes(i))}
        call(conn, collection, "CreateItem", "a{sv}(oayays)b", (props, (session, b"", f"pw-{i}".encode(), "text/plain"), False))


def median_ms(values):
    return statistics.median(values) / 1e6


def property_time(collection_path, calls):
    """Properties.Get of the collection's Locked and Label, interleaved with Peer.Ping on
    the same connection (the bus round trip and this client's own cost)."""
    conn = open_dbus_connection("SESSION")
    props = DBusAddress(collection_path, bus_name=NAME, interface="org.freedesktop.DBus.Properties")
    times = {"ping": [], "Locked": [], "Label": []}
    for n in range(calls + 20):
        for name in times:
            start = time.perf_counter_ns()
            if name == "ping":
                call(conn, PEER, "Ping")
            else:
                call(conn, props, "Get", "ss", ("org.freedesktop.Secret.Collection", name))
            if n >= 20:  # after warm-up
                times[name].append(time.perf_counter_ns() - start)
    print(json.dumps({"calls": calls, **{k: median_ms(v) for k, v in times.items()}}))


def items_time(collection_path, calls):
    """Properties.Get of the collection's Items: the whole listing in one D-Bus reply."""
    conn = open_dbus_connection("SESSION")
    props = DBusAddress(collection_path, bus_name=NAME, interface="org.freedesktop.DBus.Properties")
    times, count = [], 0
    for _ in range(calls):
        start = time.perf_counter_ns()
        count = len(call(conn, props, "Get", "ss", ("org.freedesktop.Secret.Collection", "Items"))[0][1])
        times.append(time.perf_counter_ns() - start)
    print(json.dumps({"calls": calls, "items": count, "median_ms": median_ms(times)}))


def keyring_get(collection_path, item, calls):
    """keyring.get_password through its SecretService backend, as an application calls it
    (each call finds the collection, checks it is unlocked, searches, reads the secret);
    the first call (connecting, the session's key exchange) apart. cpu_ms: the median CPU
    time of this process per call, the client's own cost (its waits left out)."""
    from keyring.backends import SecretService
    kr = SecretService.Keyring()
    kr.preferred_collection = collection_path
    times, cpu = [], []
    for n in range(calls + 1):
        start, start_cpu = time.perf_counter_ns(), time.process_time_ns()
        got = kr.get_password(f"svc-{item}", f"user-{item}")
        times.append(time.perf_counter_ns() - start)
        cpu.append(time.process_time_ns() - start_cpu)
        if got != f"pw-{item}":
            sys.exit(f"secret_service.py: keyring got {got!r} for item {item}")
    print(json.dumps({"calls": calls, "first_ms": times[0] / 1e6, "median_ms": median_ms(times[1:]),
                      "p95_ms": sorted(times[1:])[int(calls * 0.95)] / 1e6, "cpu_ms": median_ms(cpu[1:])}))


def create_item(collection_path, first, count):
    """SecretStorage's Collection.create_item (replace=False, its default) of items FIRST..,
    on one connection: each call checks the collection is unlocked (Get Locked), creates the
    item and reads its Label (secretstorage.Item). Opening the collection (its Label) and the
    session (the key exchange) come before and are not timed. cpu_ms as in keyring_get."""
    import secretstorage
    from secretstorage.util import open_session
    conn = secretstorage.dbus_init()
    collection = secretstorage.Collection(conn, collection_path)
    collection.session = open_session(conn)
    times, cpu = [], []
    started = time.perf_counter_ns()
    for i in range(first, first + count):
        start, start_cpu = time.perf_counter_ns(), time.process_time_ns()
        collection.create_item(f"bench {i}", attributes(i), f"pw-{i}".encode())
        times.append(time.perf_counter_ns() - start)
        cpu.append(time.process_time_ns() - start_cpu)
    total = (time.perf_counter_ns() - started) / 1e9
    print(json.dumps({"items": count, "median_ms": median_ms(times), "first_ms": times[0] / 1e6,
                      "p95_ms": sorted(times)[int(count * 0.95)] / 1e6, "items_per_s": count / total,
                      "cpu_ms": median_ms(cpu)}))


def search_all(items, calls):
    """`secret-tool search --all application bench` (every item has it): libsecret's search
    with SECRET_SEARCH_ALL | UNLOCK | LOAD_SECRETS, as Chromium's and VS Code's is. Each run
    must exit 0 and print ITEMS items, each with its secret."""
    import subprocess
    times = []
    for _ in range(calls):
        start = time.perf_counter_ns()
        run = subprocess.run(["secret-tool", "search", "--all", "application", "bench"], capture_output=True, text=True)
        times.append(time.perf_counter_ns() - start)
        paths = sum(line.startswith("[/") for line in run.stdout.splitlines())
        secrets = sum(line.startswith("secret = pw-") for line in run.stdout.splitlines())
        if run.returncode != 0 or paths != items or secrets != items:
            print(json.dumps({"works": False, "status": run.returncode, "paths": paths, "secrets": secrets,
                              "error": run.stderr.strip()[-300:], "seconds": times[-1] / 1e9}))
            return
    print(json.dumps({"works": True, "status": 0, "paths": items, "calls": calls, "median_s": statistics.median(times) / 1e9}))


def export(first, count):
    items = [{"class": "generic",
              "attributes": {"service": f"svc-{i}", "account": f"user-{i}", "label": f"bench {i}",
                             "secret-service-attributes": attributes(i)},
              "data": base64.b64encode(f"pw-{i}".encode()).decode()}
             for i in range(first, first + count)]
    json.dump({"format": "kc-export", "version": 1, "items": items}, sys.stdout, separators=(",", ":"))


def search(count, calls):
    """Service.SearchItems with two attributes (a random item's service and username; then
    the application, which every item has, with a random service) and, interleaved with
    them, Peer.Ping to the same process: the bus round trip plus this client's own cost,
    which the difference of the medians leaves out. Each search must find exactly one item."""
    conn = open_dbus_connection("SESSION")
    rng = random.Random(17)

    def timed(address, method, signature=None, body=()):
        start = time.perf_counter_ns()
        result = call(conn, address, method, signature, body)
        return (time.perf_counter_ns() - start) / 1e6, result

    def one_search(query):
        ms, (unlocked, locked) = timed(SERVICE, "SearchItems", "a{ss}", (query,))
        if len(unlocked) != 1 or locked:
            sys.exit(f"secret_service.py: SearchItems {query} found {len(unlocked)} unlocked, {len(locked)} locked items")
        return ms

    for _ in range(50):  # warm-up
        i = rng.randrange(count)
        timed(PEER, "Ping")
        one_search({"service": f"svc-{i}", "username": f"user-{i}"})
    ping, pair, common = [], [], []
    for _ in range(calls):
        i = rng.randrange(count)
        ping.append(timed(PEER, "Ping")[0])
        pair.append(one_search({"service": f"svc-{i}", "username": f"user-{i}"}))
        common.append(one_search({"application": "bench", "service": f"svc-{rng.randrange(count)}"}))

    def stats(values):
        values = sorted(values)
        return {"median_ms": statistics.median(values), "p95_ms": values[min(len(values) - 1, int(len(values) * 0.95))]}

    print(json.dumps({"items": count, "calls": calls, "ping": stats(ping), "search": stats(pair), "search_common": stats(common)}))


def provider_time(log, operations=1):
    """From `dbus-monitor --profile`: for each client (one secret-tool run each), the time
    between each call to the provider and its reply, summed; the median over clients, and
    each method's median. The timestamps are the monitor's, so each includes the two hops
    between the bus and the provider; calls to the bus itself are left out. A client with
    many calls in flight at once (libsecret's search --all) counts their waits more than once
    in that sum; `waiting_ms` counts the time with at least one call in flight once, and
    `calls` is the median count of calls per client."""
    calls, per_client, per_method, spans = {}, {}, {}, {}
    for line in open(log):
        f = line.rstrip("\n").split("\t")
        if f[0] == "mc" and len(f) >= 8:
            calls[(f[3], f[2])] = (float(f[1]), f[4], f[7])
        elif f[0] in ("mr", "err") and len(f) >= 6 and (f[4], f[5]) in calls:
            start, destination, member = calls.pop((f[4], f[5]))
            if destination == "org.freedesktop.DBus" or f[3] == "org.freedesktop.DBus":
                continue
            ms = (float(f[1]) - start) * 1000
            per_client[f[4]] = per_client.get(f[4], 0) + ms
            per_method.setdefault(member, []).append(ms)
            spans.setdefault(f[4], []).append((start, float(f[1])))

    def waiting(intervals):
        total, end = 0.0, None
        for a, b in sorted(intervals):
            if end is None or a > end:
                total, end = total + (b - a), b
            elif b > end:
                total, end = total + (b - end), b
        return total * 1000

    print(json.dumps({"clients": len(per_client), "per_client_ms": statistics.median(per_client.values()) / operations,
                      "waiting_ms": statistics.median(waiting(v) for v in spans.values()) / operations,
                      "calls": statistics.median(len(v) for v in spans.values()),
                      "methods": {m: statistics.median(v) for m, v in per_method.items()}}))


if __name__ == "__main__":
    command = sys.argv[1]
    if command == "provider-time":
        provider_time(sys.argv[2], *[int(a) for a in sys.argv[3:]])
    elif command in ("store-in", "property", "items", "keyring-get", "create-item"):
        {"store-in": store_in, "property": property_time, "items": items_time,
         "keyring-get": keyring_get, "create-item": create_item}[command](sys.argv[2], *[int(a) for a in sys.argv[3:]])
    else:
        {"wait": wait, "pid": pid, "store": store, "export": export, "search": search,
         "search-all": search_all}[command](*[int(a) for a in sys.argv[2:]])
