import KeychainCore

/// An answer from the agent (`docs/protocol.md` §2): a value, an error, or "not held".
package enum AgentReply {
    /// Success; the result as one value (`ValueCodec`).
    case ok(Any?)
    /// Failure, with the error's status, message and hint.
    case error(KeychainError)
    /// The agent does not hold that keychain unlocked.
    case notHeld
    /// The operation needs a proof of user presence for the item named.
    case presenceRequired(item: String)

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
        case .presenceRequired(let item):
            w.lengthPrefixed(Array(item.utf8))
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
            throw KeychainError(errSecNotAvailable, "the running kc agent speaks another protocol version (\(version))",
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
            return .error(KeychainError(OSStatus(bitPattern: status), String(decoding: message, as: UTF8.self),
                                        hint: hint.isEmpty ? nil : String(decoding: hint, as: UTF8.self)))
        case .notHeld:
            guard r.isAtEnd else { throw malformed }
            return .notHeld
        case .presenceRequired:
            guard let item = r.lengthPrefixed(max: 1 << 16), r.isAtEnd else { throw malformed }
            return .presenceRequired(item: String(decoding: item, as: UTF8.self))
        }
    }
}
