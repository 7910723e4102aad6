/// One wrap of the master key in the password record (`docs/format.md` §2.1): today the
/// password slot (the wrap under the password's KEK and the KDF fields that make the KEK);
/// later slots (a TPM2-sealed wrap, a recovery key) are more of these. The header MAC of
/// format 5 covers every slot the record holds, each in this one layout, so no wrap and
/// no KDF field can be spliced in from an older copy of the file.
package struct KeySlot: Equatable, Sendable {
    /// What kind of slot this is: its domain-separation label, unique per kind.
    package let kind: String
    /// The slot's fields in their fixed, length-unambiguous layout (after the kind).
    package let body: [UInt8]

    /// The password slot's label.
    static let passwordKind = "kc/v5/slot/password"

    /// The password slot of `record`: u32 kdf_algorithm ‖ u64 opslimit ‖ u64 memlimit ‖
    /// lp(salt) ‖ lp(wrapped_master_key).
    static func password(_ record: KeychainRecord) -> KeySlot {
        var w = ByteWriter(capacity: 64 + record.kdfSalt.count + record.wrappedMasterKey.count)
        w.u32(record.kdfAlgorithm)
        w.u64(record.kdfOpslimit)
        w.u64(record.kdfMemlimit)
        w.lengthPrefixed(record.kdfSalt)
        w.lengthPrefixed(record.wrappedMasterKey)
        return KeySlot(kind: passwordKind, body: w.bytes)
    }

    /// A slot of `kc_keyslots` (format 6): u64 id ‖ u64 created ‖ the kind's fields, under
    /// the kind's own label (`docs/format.md` §2.1).
    static func stored(_ row: KeySlotRow) -> KeySlot {
        var w = ByteWriter(capacity: 16 + row.fields.count)
        w.u64(UInt64(bitPattern: row.id))
        w.u64(row.created)
        w.raw(row.fields)
        return KeySlot(kind: row.kind.label, body: w.bytes)
    }

    /// The slot as the header MAC reads it: lp(label(kind) ‖ body). The kind's label makes
    /// slots of different kinds distinct whatever their bodies; the length prefix ends one
    /// slot where the next begins.
    var encoded: [UInt8] {
        var inner = ByteWriter(capacity: 2 + kind.utf8.count + body.count)
        inner.label(kind)
        inner.raw(body)
        var w = ByteWriter(capacity: 4 + inner.bytes.count)
        w.lengthPrefixed(inner.bytes)
        return w.bytes
    }
}

extension KeychainRecord {
    /// Every wrap of the master key the record holds, in their fixed order: the password
    /// slot first, then those of `kc_keyslots` in id order (format 6), so the header MAC
    /// covers every one by the same rule (`Header.mac`).
    var keySlots: [KeySlot] { [KeySlot.password(self)] + slots.map(KeySlot.stored) }

    /// The whole password record as format 5's header MAC covers it (`docs/format.md` §6):
    /// label("kc/v5/record") ‖ u32 format ‖ lp(keychain_id) ‖ u32 key_generation ‖
    /// u32 slot count ‖ each slot (`KeySlot.encoded`).
    var authenticatedBytes: [UInt8] {
        let slots = keySlots
        var w = ByteWriter(capacity: 64 + slots.reduce(0) { $0 + $1.body.count + 40 })
        w.label(AssociatedData.recordLabel)
        w.u32(formatVersion)
        w.lengthPrefixed(keychainID)
        w.u32(keyGeneration)
        w.u32(UInt32(slots.count))
        for slot in slots { w.raw(slot.encoded) }
        return w.bytes
    }
}
