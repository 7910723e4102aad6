#!/usr/bin/env python3
"""Byte vectors for kc's agent protocol (docs/protocol.md §2-3), written from the
document alone, without kc's code: one file per message, NAME.hex, holding the whole
frame (u32 length || u16 version || u8 type || body) in hex. AgentVectorTests decodes
each with kc's decoders and encodes what it got back to the same bytes.

Run: python3 make_agent_vectors.py   (writes the .hex files beside this script)
"""
import os, struct

VERSION = 7
# 7 was operationWithProof (version 4); version 5 refuses it as an unknown request.
# Version 6 adds operation 10, copyPage. Version 7 adds request 8, unlockWithSlot.
REQ = {"unlock": 1, "lock": 2, "status": 3, "operation": 4, "stop": 5, "unlockWithKept": 6, "unlockWithSlot": 8}
RESP = {"ok": 0x80, "error": 0x81, "notHeld": 0x82, "presenceRequired": 0x83}
OP = {"add": 1, "copyMatching": 2, "update": 3, "delete": 4, "count": 5,
      "backup": 6, "importItems": 7, "copyMany": 8, "verify": 9, "copyPage": 10}

def lp(b):
    if isinstance(b, str):
        b = b.encode()
    return struct.pack(">I", len(b)) + b

class Date(float):
    """Seconds since 2001-01-01 (the value codec's date)."""

def value(v):
    if v is None:
        return b"\x00"
    if isinstance(v, bool):
        return b"\x04" + (b"\x01" if v else b"\x00")
    if isinstance(v, Date):
        return b"\x05" + struct.pack(">d", float(v))
    if isinstance(v, str):
        return b"\x01" + lp(v)
    if isinstance(v, bytes):
        return b"\x02" + lp(v)
    if isinstance(v, int):
        return b"\x03" + struct.pack(">q", v)
    if isinstance(v, list):
        return b"\x06" + struct.pack(">I", len(v)) + b"".join(value(e) for e in v)
    if isinstance(v, dict):
        out = b"\x07" + struct.pack(">I", len(v))
        for k in sorted(v, key=lambda s: s.encode()):
            out += lp(k) + value(v[k])
        return out
    raise TypeError(v)

def frame(kind, body):
    payload = struct.pack(">H", VERSION) + bytes([kind]) + body
    return struct.pack(">I", len(payload)) + payload

PATH = "/home/alice/.local/share/kc/login.keychain-db"
GENP = {"class": "genp", "svce": "github.com", "acct": "alice"}

def op(name, query, attributes=None):
    return frame(REQ["operation"], lp(PATH) + bytes([OP[name]]) + value(query) + value(attributes))

vectors = {
    "request-unlock": frame(REQ["unlock"], lp(PATH) + lp(b"hunter2") + struct.pack(">QQ", 900, 43200)),
    # A recovery key's 32 bytes: lp(path) lp(kind) lp(secret) u64 idle u64 maximum.
    "request-unlock-with-slot": frame(REQ["unlockWithSlot"], lp(PATH) + lp("recovery") + lp(bytes(range(32))) + struct.pack(">QQ", 0, 0)),
    "request-lock-one": frame(REQ["lock"], b"\x00" + lp(PATH)),
    "request-lock-all": frame(REQ["lock"], b"\x01" + lp("")),
    "request-status": frame(REQ["status"], b""),
    "request-stop": frame(REQ["stop"], b""),
    # A keychain whose password a held keychain keeps: lp(path) lp(holder) lp(service) lp(account) u8 create.
    "request-unlock-with-kept": frame(REQ["unlockWithKept"], lp("/home/alice/.local/share/kc/awsvault.keychain-db") + lp(PATH)
                                      + lp("kc-secret-service") + lp("awsvault") + b"\x01"),
    "request-add": op("add", dict(GENP, v_Data=b"token")),
    # Format 3's Secret Service map (kcsa) is a dictionary of strings inside the query.
    "request-copy-matching": op("copyMatching", dict(GENP, r_Data=True, m_Limit="m_LimitAll", kcsa={"server": "github.com", "user": "alice"})),
    "request-update": op("update", GENP, {"v_Data": b"new token", "labl": "GitHub"}),
    "request-delete": op("delete", GENP),
    "request-count": op("count", {"class": "inet", "srvr": "example.com", "port": 443}),
    "request-backup": op("backup", {"destination": "/home/alice/backups/login.keychain-db", "replacing": False}),
    "request-import": op("importItems", {
        "items": [
            {"query": dict(GENP, v_Data=b"s3cret"), "source": "line 2", "created": Date(0.0), "modified": Date(86400.5)},
            {"query": {"class": "inet", "srvr": "example.com", "acct": "bob", "v_Data": b"pw"}, "source": "line 3"},
        ],
        "update": True, "dryRun": False, "skipInvalid": True}),
    "request-copy-many": op("copyMany", {"queries": [dict(GENP, r_Data=True), {"class": "genp", "svce": "npm", "r_Data": True, "kcsa": {}}]}),
    "request-verify": op("verify", {}),
    # Version 6: one page of a search, after place 1000, at most 500 items.
    "request-copy-page": op("copyPage", {"query": {"class": "genp", "r_Attributes": True, "r_PersistentRef": True},
                                         "after": 1000, "limit": 500}),
    "reply-ok-null": frame(RESP["ok"], value(None)),
    "reply-ok-count": frame(RESP["ok"], value(3)),
    "reply-ok-data": frame(RESP["ok"], value(b"token")),
    "reply-ok-attributes": frame(RESP["ok"], value([{"acct": "alice", "svce": "github.com", "cdat": Date(786297600.0), "v_Data": b"token",
                                                      "kcsa": {"server": "github.com", "user": "alice"}, "kcct": "text/plain"}])),
    "reply-error": frame(RESP["error"], struct.pack(">i", -25300) + lp("no item matches") + lp("list items with kc find --all")),
    "reply-error-no-hint": frame(RESP["error"], struct.pack(">i", -25293) + lp("wrong password") + lp("")),
    "reply-not-held": frame(RESP["notHeld"], b""),
    # Version 5: u32 count || lp(name) for every protected item the request would release.
    "reply-presence-required": frame(RESP["presenceRequired"], struct.pack(">I", 2) + lp('"github.com" (account "alice")') + lp('"npm"')),
    "reply-status": frame(RESP["ok"], value([{"path": PATH, "idle": 840, "maximum": 43000, "idleTimeout": 900}])),
    "reply-status-empty": frame(RESP["ok"], value([])),
    "reply-import": frame(RESP["ok"], value([
        {"outcome": "created"}, {"outcome": "updated", "of": -1}, {"outcome": "unchanged", "of": 0},
        {"outcome": "skipped", "of": -1}, {"outcome": "invalid", "status": -50, "message": "no class"}])),
    # A page: its items, and the place after which the next page starts.
    "reply-page": frame(RESP["ok"], value({"items": [{"svce": "npm", "kcsa": {"service": "npm", "username": "me"}, "v_PersistentRef": b"genp0123456789abcdef"}],
                                           "next": 1234})),
    "reply-copy-many": frame(RESP["ok"], value([
        {"result": b"token"}, {"status": -25300, "message": "no item matches", "hint": ""},
        # The deepest value kc sends (5): list, result, list of items, item, map, string.
        {"result": [{"svce": "npm", "kcsa": {"service": "npm", "username": "me"}}]}])),
}

here = os.path.dirname(os.path.abspath(__file__))
for name, data in sorted(vectors.items()):
    with open(os.path.join(here, name + ".hex"), "w") as f:
        f.write(data.hex() + "\n")
print(f"wrote {len(vectors)} vectors")
