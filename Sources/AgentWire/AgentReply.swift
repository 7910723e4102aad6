import KeychainCore

/// An answer from the agent (`docs/protocol.md` §2): a value, an error, or "not held".
package enum AgentReply {
    /// Success; the result as one value (`ValueCodec`).
    case ok(Any?)
    /// Failure, with the error's status, message and hint.
    case error(KeychainError)
    /// The agent does not hold that keychain unlocked.
    case notHeld
    /// The operation would release the secrets of these items, protected by user presence.
    case presenceRequired(items: [String])

    /// The reply's frame. An `ok` value that cannot be encoded becomes an internal error.
    package func frame() -> [UInt8] {
        var w = ByteWriter()
        defer { w.wipe() }
        let type: AgentProtocol.Response
        switch self {
        case .ok(let value):
            do { try ValueCodec.encode(value, into: &w) } catch { return AgentReply.error(KeychainError(errSecInternalError)).frame() }
            type = .ok
        case .error(let e):
            w.u32(UInt32(bitPattern: e.status))
            w.lengthPrefixed(Array(e.message.utf8))
            w.lengthPrefixed(Array((e.hint ?? "").utf8))
            type = .error
        case .notHeld:
            type = .notHeld
        case .presenceRequired(let items):
            // As many names as fit in one frame (the count says how many there are).
            w.u32(UInt32(clamping: items.count))
            var room = AgentProtocol.maxFrame - 64
            for item in items {
                let bytes = Array(item.utf8.prefix(Self.maxName))
                room -= bytes.count + 4
                guard room > 0 else { break }
                w.lengthPrefixed(bytes)
            }
            type = .presenceRequired
        }
        return AgentProtocol.frame(type: type.rawValue, body: w.bytes)
    }

    /// The reply a received frame's payload (version ‖ type ‖ body) holds.
    /// - Throws: errSecNotAvailable for another protocol version; errSecIO for an unknown
    ///   type or a malformed body.
    package static func decode(_ payload: [UInt8]) throws -> AgentReply {
        let (version, raw, body) = try AgentProtocol.parse(payload)
        guard version == AgentProtocol.version else {
            throw KeychainError(
                errSecNotAvailable, "the running kc agent speaks another protocol version (\(version))",
                hint: "restart it: kc agent --stop && kc unlock")
        }
        let malformed = KeychainError(errSecIO, "malformed answer from the kc agent")
        guard let kind = AgentProtocol.Response(rawValue: raw) else { throw malformed }
        var r = ByteReader(body)
        switch kind {
        case .ok:
            let value = try ValueCodec.decode(&r)
            guard r.isAtEnd else { throw malformed }
            return .ok(value)
        case .error:
            guard let status = r.u32(), let message = r.lengthPrefixed(), let hint = r.lengthPrefixed(), r.isAtEnd else { throw malformed }
            return .error(
                KeychainError(
                    OSStatus(bitPattern: status), String(decoding: message, as: UTF8.self),
                    hint: hint.isEmpty ? nil : String(decoding: hint, as: UTF8.self)))
        case .notHeld:
            guard r.isAtEnd else { throw malformed }
            return .notHeld
        case .presenceRequired:
            guard let count = r.u32(), count > 0, count <= 1 << 20 else { throw malformed }
            var items: [String] = []
            while !r.isAtEnd {
                guard items.count < count, let name = r.lengthPrefixed(max: maxName) else { throw malformed }
                items.append(String(decoding: name, as: UTF8.self))
            }
            guard !items.isEmpty else { throw malformed }
            // Names that did not fit are counted, not named.
            let unnamed = Int(count) - items.count
            if unnamed > 0 { items.append(contentsOf: repeatElement("(unnamed item)", count: unnamed)) }
            return .presenceRequired(items: items)
        }
    }

    /// The longest item name a "presence required" reply carries.
    static let maxName = 1 << 12
}
