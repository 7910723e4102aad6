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
    case unlockWithKept(KeptPassword)
    /// Unlock with the secret of a key slot of `kind` (`recovery`) instead of the password.
    case unlockWithSlot(path: String, kind: KeySlotKind, secret: SecureBytes, idle: UInt64, maximum: UInt64)

    /// - Throws: errSecParam for an unknown type or a malformed body.
    package static func decode(type: UInt8, body: [UInt8]) throws -> AgentRequest {
        var r = ByteReader(body)
        let bad = KeychainError(errSecParam, "malformed agent request")
        guard let request = AgentProtocol.Request(rawValue: type) else { throw KeychainError(errSecParam, "unknown agent request \(type)") }
        switch request {
        case .unlock:
            guard let pathBytes = r.lengthPrefixed(max: 4096), let path = String(validating: pathBytes, as: UTF8.self),
                var passwordBytes = r.lengthPrefixed(max: 1 << 16)
            else { throw bad }
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
            let (path, operation) = try decodeOperation(&r)
            return .operation(path: path, operation)
        case .unlockWithKept:
            func text(max: Int) throws -> String {
                guard let bytes = r.lengthPrefixed(max: max), let s = String(validating: bytes, as: UTF8.self) else { throw bad }
                return s
            }
            let path = try text(max: 4096), holder = try text(max: 4096)
            let service = try text(max: 4096), account = try text(max: 4096)
            guard let create = r.u8(), create <= 1, r.isAtEnd else { throw bad }
            return .unlockWithKept(KeptPassword(path: path, holder: holder, service: service, account: account, create: create == 1))
        case .unlockWithSlot:
            guard let pathBytes = r.lengthPrefixed(max: 4096), let path = String(validating: pathBytes, as: UTF8.self),
                let kindBytes = r.lengthPrefixed(max: 64), let name = String(validating: kindBytes, as: UTF8.self),
                let kind = KeySlotKind(rawValue: name), var secretBytes = r.lengthPrefixed(max: 1 << 10)
            else { throw bad }
            defer { Sodium.wipe(&secretBytes) }
            guard let idle = r.u64(), let maximum = r.u64(), r.isAtEnd else { throw bad }
            return .unlockWithSlot(path: path, kind: kind, secret: try SecureBytes(copying: secretBytes), idle: idle, maximum: maximum)
        }
    }

    /// An operation's body, `lp(path) ‖ u8 op ‖ value(query) ‖ value(attributes or null)`,
    /// read to its end.
    private static func decodeOperation(_ r: inout ByteReader) throws -> (String, KeychainRequest) {
        let bad = KeychainError(errSecParam, "malformed agent request")
        guard let pathBytes = r.lengthPrefixed(max: 4096), let path = String(validating: pathBytes, as: UTF8.self),
            let opRaw = r.u8(), let op = AgentProtocol.Operation(rawValue: opRaw)
        else { throw bad }
        let query = try ValueCodec.decode(&r)
        let attributes = try ValueCodec.decode(&r)
        guard r.isAtEnd, let q = query as? [String: Any] else { throw bad }
        guard attributes == nil || attributes is [String: Any] else { throw bad }
        return (path, try KeychainRequest(op, query: q, attributes: attributes as? [String: Any]))
    }

    /// An `unlockWithKept` body: `lp(path) ‖ lp(holder) ‖ lp(service) ‖ lp(account) ‖ u8 create`.
    package static func unlockWithKeptBody(_ kept: KeptPassword) -> [UInt8] {
        var w = ByteWriter(capacity: 256)
        for text in [kept.path, kept.holder, kept.service, kept.account] { w.lengthPrefixed(Array(text.utf8)) }
        w.u8(kept.create ? 1 : 0)
        return w.bytes
    }

    /// An `unlock` body: `lp(path) ‖ lp(password) ‖ u64 idle ‖ u64 maximum`. Wipe it after use.
    package static func unlockBody(path: String, password: borrowing SecureBytes, idle: UInt64, maximum: UInt64) -> ByteWriter {
        // The exact size up front, and the password copied straight from its buffer: no
        // growth that frees an unwiped copy, no temporary array holding it.
        let pathBytes = Array(path.utf8)
        var w = ByteWriter(capacity: 4 + pathBytes.count + 4 + password.count + 16)
        w.lengthPrefixed(pathBytes)
        w.u32(UInt32(password.count))
        password.withUnsafeBytes { w.raw($0) }
        w.u64(idle)
        w.u64(maximum)
        return w
    }

    /// An `unlockWithSlot` body: `lp(path) ‖ lp(kind) ‖ lp(secret) ‖ u64 idle ‖ u64 maximum`.
    /// Wipe it after use.
    package static func unlockWithSlotBody(path: String, kind: KeySlotKind, secret: borrowing SecureBytes, idle: UInt64, maximum: UInt64) -> ByteWriter {
        let pathBytes = Array(path.utf8), kindBytes = Array(kind.rawValue.utf8)
        var w = ByteWriter(capacity: 4 + pathBytes.count + 4 + kindBytes.count + 4 + secret.count + 16)
        w.lengthPrefixed(pathBytes)
        w.lengthPrefixed(kindBytes)
        w.u32(UInt32(secret.count))
        secret.withUnsafeBytes { w.raw($0) }
        w.u64(idle)
        w.u64(maximum)
        return w
    }

    /// A `lock` body: `u8 all ‖ lp(path)`; nil locks every keychain.
    package static func lockBody(path: String?) -> [UInt8] {
        var w = ByteWriter()
        w.u8(path == nil ? 1 : 0)
        w.lengthPrefixed(Array((path ?? "").utf8))
        return w.bytes
    }

    /// An `operation` body: `lp(path) ‖ u8 op ‖ value(query) ‖ value(attributes or null)`.
    /// Wipe it after use (an add or update holds a secret).
    package static func operationBody(path: String, _ request: KeychainRequest) throws -> ByteWriter {
        let (query, attributes) = request.wireValues
        var w = ByteWriter(capacity: 256)
        w.lengthPrefixed(Array(path.utf8))
        w.u8(request.operation.rawValue)
        do {
            try ValueCodec.encode(query, into: &w)
            try ValueCodec.encode(attributes, into: &w)
        } catch {
            w.wipe()
            throw error
        }
        return w
    }
}
