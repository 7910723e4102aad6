import KeychainCore
internal import CSodium

/// The set hash of a team keychain (`docs/format.md` §9.3): an unkeyed, incrementally
/// updatable hash of a multiset of byte strings, so that every member (and no one without
/// the elements) can check the server's rows against the signed log.
///
/// This is the lattice hash of Bellare and Micciancio ("A New Paradigm for
/// Collision-free Hashing: Incrementality at Reduced Cost", EUROCRYPT 1997, the additive
/// "AdHash/LtHash" family) in the parameters Facebook uses for its databases
/// (Lewi, Kim, Maykov, Weis, "Securing Update Propagation with Homomorphic Hashing",
/// IACR ePrint 2019/227: LtHash with n = 1024 lanes of d = 16 bits, about 200 bits of
/// security, unlike an XOR or a single modular sum of hashes):
///
/// - the state is 1024 lanes of `UInt16` (2048 bytes), all zero for the empty set;
/// - an element `e` is expanded to 2048 bytes `h(e) = B_0 ‖ … ‖ B_31`, where
///   `B_i = BLAKE2b-512(e)` with the personalisation `"kc lthash v1" ‖ u32le(i)` (16 bytes:
///   `crypto_generichash_blake2b_salt_personal`, no key, zero salt), read as 1024
///   little-endian `UInt16`;
/// - adding `e` adds `h(e)` lane by lane modulo 2^16, removing it subtracts;
/// - the digest is `BLAKE2b-256` of the 2048 bytes (lanes little-endian).
///
/// Order does not matter, and removing an element undoes adding it:
///
///     var set = LtHash()
///     set.add(rowA); set.add(rowB); set.remove(rowA)
///     set == { var s = LtHash(); s.add(rowB); return s }()     // true
///
/// Speed: 32 BLAKE2b compressions per element of up to 128 bytes, about 2 µs (release
/// build, see `LtHashTests`).
/// - SeeAlso: https://eprint.iacr.org/2019/227 and
///   https://doc.libsodium.org/hashing/generic_hashing
package struct LtHash: Equatable, Sendable {
    /// The number of 16-bit lanes.
    package static let laneCount = 1024
    /// The state's size in bytes.
    package static let byteCount = laneCount * 2
    /// The personalisation's prefix; the last four bytes are the block counter.
    static let personalPrefix = Array("kc lthash v1".utf8)

    /// The lanes.
    private var lanes: [UInt16]

    /// The hash of the empty set (every lane zero).
    package init() {
        // libsodium picks its fastest BLAKE2b for this CPU in sodium_init.
        _ = try? Sodium.ensureReady()
        lanes = [UInt16](repeating: 0, count: Self.laneCount)
    }

    /// A state saved with `bytes` (1024 little-endian lanes).
    /// - Throws: `errSecDecode` when it is not 2048 bytes.
    package init(bytes: [UInt8]) throws {
        guard bytes.count == Self.byteCount else {
            throw KeychainError(errSecDecode, "a set hash state has \(Self.byteCount) bytes, not \(bytes.count)")
        }
        lanes = (0..<Self.laneCount).map { UInt16(bytes[2 * $0]) | UInt16(bytes[2 * $0 + 1]) << 8 }
    }

    /// The state as 2048 bytes, lanes little-endian (what `digest` hashes).
    package var bytes: [UInt8] {
        var out = [UInt8](repeating: 0, count: Self.byteCount)
        for (i, lane) in lanes.enumerated() {
            out[2 * i] = UInt8(truncatingIfNeeded: lane)
            out[2 * i + 1] = UInt8(truncatingIfNeeded: lane >> 8)
        }
        return out
    }

    /// `BLAKE2b-256` of `bytes`: the set hash that log entries and checkpoints carry.
    package var digest: [UInt8] {
        Hashing.blake2b(bytes, length: 32)
    }

    /// Whether the set is empty (every lane zero) as far as the hash can tell.
    package var isZero: Bool { lanes.allSatisfy { $0 == 0 } }

    /// Adds one element.
    package mutating func add(_ element: [UInt8]) {
        combine(element, subtract: false)
    }

    /// Removes one element (adding it back restores the state).
    package mutating func remove(_ element: [UInt8]) {
        combine(element, subtract: true)
    }

    /// Adds every element of another set hash (the union of the two multisets).
    package mutating func add(_ other: LtHash) {
        for i in 0..<Self.laneCount { lanes[i] &+= other.lanes[i] }
    }

    /// Removes every element of another set hash.
    package mutating func remove(_ other: LtHash) {
        for i in 0..<Self.laneCount { lanes[i] &-= other.lanes[i] }
    }

    /// Expands `element` block by block and adds or subtracts it lane-wise.
    private mutating func combine(_ element: [UInt8], subtract: Bool) {
        var personal = [UInt8](repeating: 0, count: 16)
        for i in 0..<Self.personalPrefix.count { personal[i] = Self.personalPrefix[i] }
        var block = [UInt8](repeating: 0, count: 64)
        lanes.withUnsafeMutableBufferPointer { lanes in
            element.withUnsafeBytes { e in
                let input = e.baseAddress?.assumingMemoryBound(to: UInt8.self)
                for counter in 0..<32 {
                    personal[12] = UInt8(truncatingIfNeeded: counter)
                    personal[13] = UInt8(truncatingIfNeeded: counter >> 8)
                    block.withUnsafeMutableBufferPointer { out in
                        personal.withUnsafeBufferPointer { p in
                            _ = crypto_generichash_blake2b_salt_personal(out.baseAddress!, 64, input, UInt64(e.count),
                                                                         nil, 0, nil, p.baseAddress!)
                        }
                    }
                    let base = counter * 32
                    for j in 0..<32 {
                        let value = UInt16(block[2 * j]) | UInt16(block[2 * j + 1]) << 8
                        if subtract { lanes[base + j] &-= value } else { lanes[base + j] &+= value }
                    }
                }
            }
        }
    }
}
