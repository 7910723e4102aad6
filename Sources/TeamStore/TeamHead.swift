/// A team keychain's row in `kc_keychains`: where its log ends and what it requires.
package struct TeamHead: Sendable, Equatable {
    /// The generation of the newest log entry (1 for a new keychain).
    package var generation: UInt64
    /// The current key generation (which MK seals the rows).
    package var keyGeneration: UInt32
    /// The hash of the newest log entry, as the writer stored it.
    package var head: [UInt8]
    /// The schema version the keychain was written with.
    package var schemaVersion: UInt32
    /// The oldest kc that may write to it.
    package var minWriterVersion: UInt32

    /// A head of these values.
    package init(generation: UInt64, keyGeneration: UInt32, head: [UInt8], schemaVersion: UInt32, minWriterVersion: UInt32) {
        self.generation = generation
        self.keyGeneration = keyGeneration
        self.head = head
        self.schemaVersion = schemaVersion
        self.minWriterVersion = minWriterVersion
    }
}
