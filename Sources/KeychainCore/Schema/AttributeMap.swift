/// A Secret Service attribute map (`kcAttrSecretServiceAttributes`): pairs of UTF-8 names
/// and values, kept sorted by the bytes of their names, compared by bytes (no Unicode
/// normalisation, as every other attribute; `docs/format.md` §4).
///
///     let map = try AttributeMap(parsing: ["service": "github.com", "username": "alice"], key: "kcsa")
///     map.contains(try AttributeMap(parsing: ["service": "github.com"], key: "kcsa"))   // true
package struct AttributeMap: Hashable, Sendable {
    /// One (name, value) pair, as UTF-8 bytes.
    package struct Pair: Hashable, Sendable {
        package let name: [UInt8]
        package let value: [UInt8]
    }

    /// The pairs, sorted by name bytes; no two share a name.
    package let pairs: [Pair]

    /// The most pairs a map holds (errSecParam above).
    static let maxPairs = 64

    /// A map of pairs already checked: sorted, distinct names, within the limits.
    private init(checked pairs: [Pair]) { self.pairs = pairs }

    /// The map with no pair.
    static let empty = AttributeMap(checked: [])

    /// Whether the map holds no pair.
    var isEmpty: Bool { pairs.isEmpty }

    /// The pair name kc's Secret Service provider adds, with a random value, to the second
    /// item (and the third, …) whose attributes are those of another (docs/secret-service.md,
    /// "Items with the same attributes"): a copy, which `copyMatching` returns after the
    /// items without it.
    package static let copyMark = "kc:copy"

    /// Whether the map holds `copyMark`.
    var isCopy: Bool { pairs.contains { $0.name.elementsEqual(Self.copyMark.utf8) } }

    /// A map from a query value: `[String: String]`, or a `[String: Any]` whose values are
    /// all strings (what the agent's value codec decodes).
    /// - Throws: errSecParam for another type or more than 64 pairs; errSecDataTooLarge for
    ///   a name or value over 64 KiB.
    package init(parsing value: Any, key: String) throws {
        guard let dictionary = value as? [String: String] else {
            throw KeychainError(errSecParam, "the value of \"\(key)\" must be a dictionary of strings to strings")
        }
        guard dictionary.count <= Self.maxPairs else {
            throw KeychainError(errSecParam, "\"\(key)\" has \(dictionary.count) pairs; at most \(Self.maxPairs) are allowed")
        }
        var pairs: [Pair] = []
        pairs.reserveCapacity(dictionary.count)
        for (name, value) in dictionary {
            let pair = Pair(name: Array(name.utf8), value: Array(value.utf8))
            for part in [pair.name, pair.value] where part.count > ItemQuery.maxAttributeBytes {
                throw KeychainError(
                    errSecDataTooLarge, "a name or value of \"\(key)\" is \(part.count) bytes; at most \(ItemQuery.maxAttributeBytes) are allowed")
            }
            pairs.append(pair)
        }
        self.pairs = pairs.sorted { $0.name.lexicographicallyPrecedes($1.name) }
    }

    /// Whether every pair of `other` is in this map (same name and value, byte for byte).
    func contains(_ other: AttributeMap) -> Bool {
        other.pairs.allSatisfy { wanted in
            pairs.contains { $0.name == wanted.name && $0.value == wanted.value }
        }
    }

    /// The map as Apple-style results carry it. Names are distinct as bytes, and as Swift
    /// strings too: `decode` refuses a stored map where they are not.
    var dictionary: [String: String] {
        var out: [String: String] = [:]
        for pair in pairs { out[String(decoding: pair.name, as: UTF8.self)] = String(decoding: pair.value, as: UTF8.self) }
        return out
    }

    /// The canonical encoding, in the metadata (§4) and the primary key (§5):
    /// `u32 count ‖ per pair, sorted by name: lp(name) ‖ lp(value)`.
    func encode(into w: inout ByteWriter) {
        w.u32(UInt32(pairs.count))
        for pair in pairs {
            w.lengthPrefixed(pair.name)
            w.lengthPrefixed(pair.value)
        }
    }

    /// The input of a pair's blind index (§5): `lp(name) ‖ lp(value)`.
    static func pairEncoding(_ pair: Pair) -> [UInt8] {
        var w = ByteWriter(capacity: 8 + pair.name.count + pair.value.count)
        w.lengthPrefixed(pair.name)
        w.lengthPrefixed(pair.value)
        return w.bytes
    }

    /// Reads a map written by `encode`. - Returns: nil when malformed: over the limits,
    /// names not strictly ascending, not UTF-8, or two names equal as Swift strings.
    static func decode(_ r: inout ByteReader) -> AttributeMap? {
        guard let count = r.u32(), count <= maxPairs else { return nil }
        var pairs: [Pair] = []
        var names = Set<String>()
        for _ in 0..<count {
            guard let name = r.lengthPrefixed(max: ItemQuery.maxAttributeBytes),
                let value = r.lengthPrefixed(max: ItemQuery.maxAttributeBytes),
                let nameText = String(validating: name, as: UTF8.self), String(validating: value, as: UTF8.self) != nil,
                names.insert(nameText).inserted
            else { return nil }
            if let last = pairs.last, !last.name.lexicographicallyPrecedes(name) { return nil }
            pairs.append(Pair(name: name, value: value))
        }
        return AttributeMap(checked: pairs)
    }
}
