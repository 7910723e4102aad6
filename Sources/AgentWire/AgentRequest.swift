import KeychainCore
import POSIXSupport
/// A decoded request to the agent (`docs/protocol.md`): the bytes after the frame header,
/// checked field by field before the agent acts on any of them. A pure function of the
/// bytes, so the fuzzer can drive it (`make fuzz`).
package enum AgentRequest: ~Copyable {
    case unlock(path: String, password: SecureBytes, idle: UInt64, maximum: UInt64)
    case lock(all: Bool, path: String)
    case status
    case stop
    case operation(path: String, KeychainRequest)

    /// - Throws: errSecParam for an unknown type or a malformed body.
    package static func decode(type: UInt8, body: [UInt8]) throws -> AgentRequest {
        var r = ByteReader(body)
        let bad = KeychainError(errSecParam, "malformed agent request")
        guard let request = AgentProtocol.Request(rawValue: type) else { throw KeychainError(errSecParam, "unknown agent request \(type)") }
        switch request {
        case .unlock:
            guard let pathBytes = r.lengthPrefixed(max: 4096), let path = String(validating: pathBytes, as: UTF8.self),
                  var passwordBytes = r.lengthPrefixed(max: 1 << 16) else { throw bad }
            defer { Sodium.wipe(&passwordBytes) }
            guard let idle = r.u64(), let maximum = r.u64(), r.isAtEnd else { throw bad }
            return .unlock(path: path, password: try SecureBytes(copying: passwordBytes), idle: idle, maximum: maximum)
        case .lock:
            guard let all = r.u8(), let pathBytes = r.lengthPrefixed(max: 4096), let path = String(validating: pathBytes, as: UTF8.self), r.isAtEnd
            else { throw bad }
            return .lock(all: all == 1, path: path)
        case .status:
            return .status
        case .stop:
            return .stop
        case .operation:
            guard let pathBytes = r.lengthPrefixed(max: 4096), let path = String(validating: pathBytes, as: UTF8.self),
                  let opRaw = r.u8(), let op = AgentProtocol.Operation(rawValue: opRaw) else { throw bad }
            let query = try ValueCodec.decode(&r)
            let attributes = try ValueCodec.decode(&r)
            guard r.isAtEnd, let q = query as? [String: Any] else { throw bad }
            guard attributes == nil || attributes is [String: Any] else { throw bad }
            return .operation(path: path, try KeychainRequest(op, query: q, attributes: attributes as? [String: Any]))
        }
    }
}
