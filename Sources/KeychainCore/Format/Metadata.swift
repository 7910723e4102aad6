/// The plaintext encoding of an item's attributes before sealing (`docs/format.md` §4):
/// version 1 ‖ u32 count ‖ per attribute (sorted by key): key label ‖ type ‖ value, with
/// type 1 string, 2 data, 3 integer, 4 date, 5 map (format 3).
package enum Metadata {
    static let version: UInt8 = 1
    /// Refuse to decode absurd metadata (a damaged row must not exhaust memory).
    static let maxAttributes = 256

    static func encode(_ attributes: [String: AttributeValue]) -> [UInt8] {
        var w = ByteWriter(capacity: 256)
        w.u8(version)
        w.u32(UInt32(attributes.count))
        for key in attributes.keys.sorted() {
            w.label(key)
            switch attributes[key] {
            case .string(let s)?: w.u8(1); w.lengthPrefixed(Array(s.utf8))
            case .data(let d)?: w.u8(2); w.lengthPrefixed(d)
            case .int(let v)?: w.u8(3); w.u64(UInt64(bitPattern: v))
            case .date(let t)?: w.u8(4); w.u64(t.bitPattern)
            case .map(let m)?: w.u8(5); m.encode(into: &w)
            case nil: break
            }
        }
        return w.bytes
    }

    /// - Throws: errSecDecode on anything malformed.
    package static func decode(_ bytes: [UInt8]) throws -> [String: AttributeValue] {
        var r = ByteReader(bytes)
        let bad = KeychainError(errSecDecode, "an item's metadata is malformed")
        guard r.u8() == version, let count = r.u32(), count <= maxAttributes else { throw bad }
        var attributes: [String: AttributeValue] = [:]
        for _ in 0..<count {
            guard let n = r.u8(), let keyBytes = r.raw(Int(n)), let type = r.u8() else { throw bad }
            let key = String(decoding: keyBytes, as: UTF8.self)
            switch type {
            case 1:
                guard let b = r.lengthPrefixed(max: ItemQuery.maxAttributeBytes), let s = String(validating: b, as: UTF8.self) else { throw bad }
                attributes[key] = .string(s)
            case 2:
                guard let b = r.lengthPrefixed(max: ItemQuery.maxAttributeBytes) else { throw bad }
                attributes[key] = .data(b)
            case 3:
                guard let v = r.u64() else { throw bad }
                attributes[key] = .int(Int64(bitPattern: v))
            case 4:
                guard let v = r.u64() else { throw bad }
                attributes[key] = .date(Double(bitPattern: v))
            case 5:
                guard let m = AttributeMap.decode(&r) else { throw bad }
                attributes[key] = .map(m)
            default:
                throw bad
            }
        }
        guard r.isAtEnd else { throw bad }
        return attributes
    }
}
