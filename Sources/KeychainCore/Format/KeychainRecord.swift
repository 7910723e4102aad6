/// The fixed part of the header: identity, KDF parameters and the wrapped master key
/// (`kc_keychain`, `docs/format.md` §2). Kept in its own table, apart from the counters,
/// so that a counter update never rewrites the page holding the wrap.
package struct KeychainRecord: Equatable, Sendable {
    package var formatVersion: UInt32
    package var keychainID: [UInt8]
    package var keyGeneration: UInt32
    package var kdfAlgorithm: UInt32
    package var kdfOpslimit: UInt64
    package var kdfMemlimit: UInt64
    package var kdfSalt: [UInt8]
    package var wrappedMasterKey: [UInt8]
    /// The key slots beyond the password slot (format 6, `kc_keyslots`), in id order.
    package var slots: [KeySlotRow]

    /// A record of these values.
    package init(
        formatVersion: UInt32, keychainID: [UInt8], keyGeneration: UInt32, kdfAlgorithm: UInt32, kdfOpslimit: UInt64, kdfMemlimit: UInt64, kdfSalt: [UInt8],
        wrappedMasterKey: [UInt8], slots: [KeySlotRow] = []
    ) {
        self.formatVersion = formatVersion
        self.keychainID = keychainID
        self.keyGeneration = keyGeneration
        self.kdfAlgorithm = kdfAlgorithm
        self.kdfOpslimit = kdfOpslimit
        self.kdfMemlimit = kdfMemlimit
        self.kdfSalt = kdfSalt
        self.wrappedMasterKey = wrappedMasterKey
        self.slots = slots
    }
}
