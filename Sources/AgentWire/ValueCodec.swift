import KeychainCore
import POSIXSupport
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The binary encoding of query dictionaries and results between kc and its agent
/// (`docs/protocol.md` §3): a type tag, then the value. Strict and bounded: the decoder
/// never trusts a length, a count or a depth it has not checked.
package enum ValueCodec {
    enum Tag: UInt8 { case null = 0, string = 1, data = 2, int = 3, bool = 4, date = 5, array = 6, dictionary = 7 }

    /// The deepest nesting kc sends: a copyMany reply (a list of results) holding a list
    /// of items whose Secret Service map holds strings is 5 (`docs/protocol.md` §3).
    static let maxDepth = 5
    static let maxCount = 1 << 20

    /// Encodes a value; unsupported types are errSecParam.
    package static func encode(_ value: Any?, into w: inout ByteWriter, depth: Int = 0) throws {
        guard depth <= maxDepth else { throw KeychainError(errSecParam, "value nested too deeply") }
        switch value {
        case nil: w.u8(Tag.null.rawValue)
        case let s as String: w.u8(Tag.string.rawValue); w.lengthPrefixed(Array(s.utf8))
        case let d as Data: w.u8(Tag.data.rawValue); w.lengthPrefixed(Array(d))
        // Only a real [UInt8]: an empty [Any] also casts to [UInt8], and must stay a list.
        case let a as [UInt8] where type(of: value!) == [UInt8].self: w.u8(Tag.data.rawValue); w.lengthPrefixed(a)
        case let b as Bool: w.u8(Tag.bool.rawValue); w.u8(b ? 1 : 0)
        case let n as Int: w.u8(Tag.int.rawValue); w.u64(UInt64(bitPattern: Int64(n)))
        case let n as Int64: w.u8(Tag.int.rawValue); w.u64(UInt64(bitPattern: n))
        case let n as Int32: w.u8(Tag.int.rawValue); w.u64(UInt64(bitPattern: Int64(n)))
        case let n as UInt32: w.u8(Tag.int.rawValue); w.u64(UInt64(n))
        case let date as Date: w.u8(Tag.date.rawValue); w.u64(date.timeIntervalSinceReferenceDate.bitPattern)
        case let array as [Any]:
            w.u8(Tag.array.rawValue); w.u32(UInt32(array.count))
            for element in array { try encode(element, into: &w, depth: depth + 1) }
        case let dict as [String: Any]:
            w.u8(Tag.dictionary.rawValue); w.u32(UInt32(dict.count))
            for key in dict.keys.sorted() {
                w.lengthPrefixed(Array(key.utf8))
                try encode(dict[key], into: &w, depth: depth + 1)
            }
        default:
            throw KeychainError(errSecParam, "a value of type \(type(of: value!)) cannot be sent to the agent")
        }
    }

    /// Decodes one value. - Throws: errSecParam on anything malformed.
    package static func decode(_ r: inout ByteReader, depth: Int = 0) throws -> Any? {
        let bad = KeychainError(errSecParam, "malformed value in an agent message")
        guard depth <= maxDepth, let raw = r.u8(), let tag = Tag(rawValue: raw) else { throw bad }
        switch tag {
        case .null: return nil
        case .string:
            guard let b = r.lengthPrefixed(max: 64 << 20), let s = String(validating: b, as: UTF8.self) else { throw bad }
            return s
        case .data:
            guard let b = r.lengthPrefixed(max: 64 << 20) else { throw bad }
            return Data(b)
        case .int:
            guard let v = r.u64() else { throw bad }
            return Int(Int64(bitPattern: v))
        case .bool:
            guard let v = r.u8(), v <= 1 else { throw bad }
            return v == 1
        case .date:
            guard let v = r.u64() else { throw bad }
            return Date(timeIntervalSinceReferenceDate: Double(bitPattern: v))
        case .array:
            guard let n = r.u32(), n <= maxCount, Int(n) <= r.remaining else { throw bad }
            var out: [Any] = []
            for _ in 0..<n {
                guard let element = try decode(&r, depth: depth + 1) else { throw bad }
                out.append(element)
            }
            return out
        case .dictionary:
            guard let n = r.u32(), n <= maxCount, Int(n) <= r.remaining else { throw bad }
            var out: [String: Any] = [:]
            for _ in 0..<n {
                guard let k = r.lengthPrefixed(max: 4096), let key = String(validating: k, as: UTF8.self) else { throw bad }
                out[key] = try decode(&r, depth: depth + 1)
            }
            return out
        }
    }
}
