/// The blind indexes of one item's attributes (`docs/format.md` §5): what its row stores
/// beside the ciphertexts, and what a lookup compares.
package struct Fingerprints: Equatable {
    /// The primary-key fingerprint (32 bytes), which carries the UNIQUE constraint.
    var pk: [UInt8]
    /// One 16-byte fingerprint per index column the item has a value for.
    var indexes: [IndexColumn: [UInt8]]
    /// The 16-byte fingerprints of its Secret Service map's pairs, sorted by bytes; empty
    /// for an item without a map.
    var pairs: [[UInt8]]
}
