#!/usr/bin/env python3
"""Known answers for kc's key hierarchy and blind indexes (docs/format.md §2, §5),
computed independently of kc with Python's hashlib:

  crypto_kdf_derive_from_key(len, id, ctx, key)
    = BLAKE2b(key=key, digest_size=len, salt=LE64(id) || 0^8, person=ctx || 0^8, data="")

Run: python3 make_key_vectors.py > key-hierarchy.txt
"""
import hashlib, struct

def kdf(key, sub_id, ctx, n=32):
    return hashlib.blake2b(b"", key=key, digest_size=n,
                           salt=struct.pack("<Q", sub_id) + b"\0" * 8,
                           person=ctx.encode() + b"\0" * 8).digest()

def fourcc(s):
    b = s.encode()[:4].ljust(4, b" ")
    return int.from_bytes(b, "big")

def index_encoding(value: bytes):
    return b"\x01" + struct.pack(">I", len(value)) + value

mk = bytes(range(32))
print("master =", mk.hex())
names = {1: "meta", 2: "index", 3: "wrap", 4: "header", 5: "set"}
subs = {}
for i, name in names.items():
    subs[name] = kdf(mk, i, "kckeys01")
    print(f"subkey.{name} =", subs[name].hex())
blind = kdf(subs["index"], fourcc("genp") << 32 | fourcc("svce"), "kcblind1")
print("blindkey.genp.svce =", blind.hex())
print("blind.genp.svce.github.com =", hashlib.blake2b(index_encoding(b"github.com"), key=blind, digest_size=16).hexdigest())
pk = kdf(subs["index"], fourcc("genp") << 32 | fourcc("#pk#"), "kcblind1")
print("blindkey.genp.pk =", pk.hex())
# The generic-password primary key tuple: agrp "", acct "alice", svce "github.com", sync 0.
def label(s):
    return bytes([len(s)]) + s.encode()
tuple_ = (label("agrp") + index_encoding(b"") + label("acct") + index_encoding(b"alice")
          + label("svce") + index_encoding(b"github.com") + label("sync") + b"\x02" + struct.pack(">q", 0))
print("blind.genp.pk.alice@github.com =", hashlib.blake2b(tuple_, key=pk, digest_size=32).hexdigest())
# Format 3: a generic password's Secret Service map (kcsa). Each pair is fingerprinted under
# the key of (genp, kcsa) over lp(name) || lp(value); the map joins the primary key, only
# when not empty, as label("kcsa") || 0x04 || u32 count || sorted lp(name) || lp(value).
def lp(b):
    return struct.pack(">I", len(b)) + b
pairs_key = kdf(subs["index"], fourcc("genp") << 32 | fourcc("kcsa"), "kcblind1")
print("blindkey.genp.kcsa =", pairs_key.hex())
print("blind.genp.kcsa.service:github.com =",
      hashlib.blake2b(lp(b"service") + lp(b"github.com"), key=pairs_key, digest_size=16).hexdigest())
secret_service = {b"username": b"alice", b"service": b"github.com"}
encoded_map = b"\x04" + struct.pack(">I", len(secret_service)) + b"".join(
    lp(name) + lp(secret_service[name]) for name in sorted(secret_service))
print("blind.genp.pk.alice@github.com+kcsa =",
      hashlib.blake2b(tuple_ + label("kcsa") + encoded_map, key=pk, digest_size=32).hexdigest())
# Format 4: the after-first-unlock class key K_afu (MK, id 6) and its two subkeys under the
# context "kcclass1": metadata (1) and data-key wrap (2). The when-unlocked class key is
# the pair (subkey.meta, subkey.wrap) above.
afu = kdf(mk, 6, "kckeys01")
print("subkey.afu =", afu.hex())
print("subkey.afu.meta =", kdf(afu, 1, "kcclass1").hex())
print("subkey.afu.wrap =", kdf(afu, 2, "kcclass1").hex())
# Format 5: the header MAC covers the whole password record (docs/format.md §6): the record
# is label("kc/v5/record") || u32 format || lp(keychain_id) || u32 key_generation || u32 slot
# count || each slot as lp(label(kind) || fields); the password slot's fields are u32
# kdf_algorithm || u64 opslimit || u64 memlimit || lp(salt) || lp(wrapped_master_key).
def u32(v):
    return struct.pack(">I", v)
def u64(v):
    return struct.pack(">Q", v)
salt, wrap = bytes(range(16)), bytes(range(100, 172))
slot = label("kc/v5/slot/password") + u32(2) + u64(2) + u64(67108864) + lp(salt) + lp(wrap)
record = label("kc/v5/record") + u32(5) + lp(b"\x07" * 16) + u32(1) + u32(1) + lp(slot)
header = (label("kc/v5/header") + lp(record) + u32(5) + u64(7) + u64(3) + lp(b"\xaa" * 32)
          + u64(900) + u64(43200))
print("header.v5.mac =", hashlib.blake2b(header, key=subs["header"], digest_size=32).hexdigest())
# Format 6: a recovery slot (docs/format.md §2.1, §2.2). In the record it follows the password
# slot as lp(label("kc/v6/slot/recovery") || u64 id || u64 created || fields), fields =
# lp(salt) || lp(wrapped_master_key). Its key is BLAKE2b-256 keyed with the recovery key over
# label("kc/v6/slot-key") || label(kind label) || lp(keychain_id) || u64 id || lp(salt); the
# wrap's associated data is label("kc/v6/slot-wrap") || label(kind label) || lp(keychain_id)
# || u32 key_generation || u64 id || u64 created || lp(salt).
recovery = bytes(range(200, 232))
slot_salt, slot_wrap = bytes(range(50, 66)), bytes(range(1, 73))
kind = "kc/v6/slot/recovery"
fields = lp(slot_salt) + lp(slot_wrap)
recovery_slot = label(kind) + u64(2) + u64(1764201600) + fields
record6 = label("kc/v5/record") + u32(6) + lp(b"\x07" * 16) + u32(1) + u32(2) + lp(slot) + lp(recovery_slot)
header6 = (label("kc/v5/header") + lp(record6) + u32(6) + u64(7) + u64(3) + lp(b"\xaa" * 32)
           + u64(900) + u64(43200))
print("header.v6.recovery.mac =", hashlib.blake2b(header6, key=subs["header"], digest_size=32).hexdigest())
slot_key_input = label("kc/v6/slot-key") + label(kind) + lp(b"\x07" * 16) + u64(2) + lp(slot_salt)
print("slot.recovery.secret =", recovery.hex())
print("slot.recovery.key =", hashlib.blake2b(slot_key_input, key=recovery, digest_size=32).hexdigest())
print("slot.recovery.ad =", (label("kc/v6/slot-wrap") + label(kind) + lp(b"\x07" * 16) + u32(1) + u64(2)
                             + u64(1764201600) + lp(slot_salt)).hex())
# The recovery key as printed: modhex (cbdefghijklnrtuv), high nibble first, 8 groups of 8.
modhex = "cbdefghijklnrtuv"
text = "".join(modhex[b >> 4] + modhex[b & 15] for b in recovery)
print("slot.recovery.text =", "-".join(text[i:i + 8] for i in range(0, 64, 8)).encode().hex())
