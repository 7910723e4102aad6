import Foundation
import KCTestSupport
import Testing
@testable import KeychainCore

/// Key slots below the command line (`docs/format.md` §2.1, §2.2): a TPM2 slot, whose layout
/// format 6 fixes before the slot is built, is kept, listed and covered by the MAC like any
/// slot; a slot whose fields break its kind's layout is refused even under a valid MAC; the
/// recovery key's text reads back in every form `kc unlock --recovery` accepts, and nothing
/// else.
@Suite struct KeySlotCoreTests {
    /// A TPM2 slot's fields: SHA-256 bank, PCR 7, a PIN, kc-tpm's blob, salt and wrap.
    static func tpm2Fields(pin: UInt8 = 1, blob: [UInt8] = TestTPMBlob.make(pin: true, pcrMask: 1 << 7)) -> [UInt8] {
        var w = ByteWriter()
        w.raw([0x00, 0x0B])
        w.u32(1 << 7)
        w.u8(pin)
        w.lengthPrefixed(blob)
        w.lengthPrefixed(Array(repeating: 0x33, count: 16))
        w.lengthPrefixed(Array(repeating: 0x44, count: 72))
        return w.bytes
    }

    /// Writes `row` into the record as kc writes a slot (one write, the MAC over it).
    static func addSlot(_ k: Keychain, _ row: KeySlotRow) throws {
        try k.write(replacingRecord: { current in
            var r = current
            r.slots.append(row)
            return r
        }) { _, _ in }
    }

    @Test func aTPM2SlotIsKeptListedAndCoveredByTheMAC() throws {
        let t = try TempKeychain()
        try Self.addSlot(t.keychain, KeySlotRow(id: 2, kind: .tpm2, created: 1_764_201_600, fields: Self.tpm2Fields()))
        let again = try t.reopen()
        #expect(try again.keySlots().map(\.kind) == ["password", "tpm2"])
        // No recovery slot: a recovery key opens nothing.
        expectStatus(errSecAuthFailed) { _ = try Keychain.open(at: t.path, slot: .recovery, secret: try SecureBytes(copying: Array(repeating: 1, count: 32))) }
        _ = try t.sql("UPDATE kc_keyslots SET fields = substr(fields, 1, 6) || X'00' || substr(fields, 8)")
        expectStatus(errSecDecode, "the PIN flag flipped") { _ = try t.reopen() }
    }

    @Test func aTPM2SlotOpensWithItsSecretOnlyAndKeepsItsSealing() throws {
        let t = try TempKeychain()
        let sealing = try TPM2Sealing(blob: TestTPMBlob.make(pin: true, pcrMask: 1 << 7))
        var made: [UInt8] = []
        let id = try t.keychain.addTPM2Slot { secret in
            made = secret.withUnsafeBytes { Array($0) }
            return sealing
        }
        let secret = try SecureBytes(copying: made)
        #expect(try Keychain.tpm2Slots(at: t.path) == [TPM2SlotInfo(id: id, sealing: sealing)])
        let opened = try Keychain.open(at: t.path, slot: .tpm2, secret: secret)
        #expect(try opened.keySlots().map(\.kind) == ["password", "tpm2"])
        expectStatus(errSecAuthFailed, "another secret") {
            _ = try Keychain.open(at: t.path, slot: .tpm2, secret: try SecureBytes(copying: Array(repeating: 1, count: 32)))
        }
        // The wrap is kind-separated: the same secret as a recovery key opens nothing.
        expectStatus(errSecAuthFailed, "as a recovery key") { _ = try Keychain.open(at: t.path, slot: .recovery, secret: secret) }
    }

    @Test func aSlotThatBreaksItsKindsLayoutIsRefusedEvenUnderAValidMAC() throws {
        for fields in [
            Self.tpm2Fields(pin: 2), Array(Self.tpm2Fields().dropLast()), Self.tpm2Fields(pin: 0),
            Self.tpm2Fields(blob: TestTPMBlob.make(pin: true, pcrMask: 1 << 0)), Self.tpm2Fields(blob: Array(repeating: 0x6B, count: 300)),
            RecoverySlot(salt: [1], wrappedMasterKey: Array(repeating: 0, count: 72)).fields
        ] {
            let t = try TempKeychain()
            let kind: KeySlotKind = fields.count < 100 ? .recovery : .tpm2
            try Self.addSlot(t.keychain, KeySlotRow(id: 2, kind: kind, created: 1, fields: fields))
            expectStatus(errSecDecode, "\(kind) \(fields.count) bytes") { _ = try t.reopen() }
        }
    }

    @Test func theRecoveryKeyReadsBackInEveryFormAndNothingElse() throws {
        let bytes = (0..<32).map { UInt8($0 * 7 & 0xFF) }
        let text = String(decoding: try RecoveryKeyText.format(try SecureBytes(copying: bytes)).withUnsafeBytes { Array($0) }, as: UTF8.self)
        #expect(text.count == 71 && text.split(separator: "-").count == 8)
        for form in [text, text.uppercased(), text.replacingOccurrences(of: "-", with: ""), text.replacingOccurrences(of: "-", with: " ") + "\n"] {
            let back = try RecoveryKeyText.parse(try SecureBytes(copying: Array(form.utf8)))
            #expect(back.withUnsafeBytes { Array($0) } == bytes, "\(form)")
        }
        for bad in [String(text.dropLast()), text + "c", text.replacingOccurrences(of: "c", with: "a"), "", String(repeating: "0", count: 64)] {
            expectStatus(errSecParam, bad) { _ = try RecoveryKeyText.parse(try SecureBytes(copying: Array(bad.utf8))) }
        }
    }
}
