/// What `ssh-add -t`, `-c` and `-h` attach to a key (draft-miller-ssh-agent §4.2.6.1,
/// OpenSSH PROTOCOL.agent §2).
public struct KeyConstraints: Sendable, Equatable {
    /// Seconds the key lives (`-t`), nil for as long as the agent runs.
    public var lifetime: UInt32?
    /// Whether each signature is confirmed first (`-c`).
    public var confirm = false
    /// Where the key may be used (`-h`); empty for anywhere.
    public var destinations: [DestinationConstraint] = []

    /// No constraint.
    public init() {}

    /// Decodes constraints until the end of the message. A repeated or unknown constraint
    /// is an error, so the key is not added (OpenSSH does the same).
    init(reading reader: inout SSHReader) throws {
        var seenDestinations = false
        while !reader.isAtEnd {
            switch try reader.byte() {
            case SSHAgentMessage.constrainLifetime:
                guard lifetime == nil else { throw SSHWireError("lifetime given twice") }
                lifetime = try reader.uint32()
            case SSHAgentMessage.constrainConfirm:
                guard !confirm else { throw SSHWireError("confirm given twice") }
                confirm = true
            case SSHAgentMessage.constrainExtension:
                let name = try reader.text()
                guard name == SSHAgentMessage.restrictDestination, !seenDestinations else {
                    throw SSHWireError("an unsupported or repeated constraint extension")
                }
                seenDestinations = true
                destinations = try DestinationConstraint.decodeList(&reader)
            default:
                throw SSHWireError("an unknown constraint")
            }
        }
    }
}

/// One request from an agent client, decoded and checked (draft-miller-ssh-agent §4).
/// Decoding never traps: a malformed message throws `SSHWireError` and is answered
/// SSH_AGENT_FAILURE; a type the agent does not serve decodes as `unsupported`.
public enum SSHAgentRequest {
    /// SSH2_AGENTC_REQUEST_IDENTITIES.
    case requestIdentities
    /// SSH2_AGENTC_SIGN_REQUEST: the key's public blob, the data, the flags.
    case sign(key: [UInt8], data: [UInt8], flags: UInt32)
    /// SSH2_AGENTC_ADD_IDENTITY or ADD_ID_CONSTRAINED.
    case add(key: SigningKey, comment: String, constraints: KeyConstraints)
    /// SSH2_AGENTC_REMOVE_IDENTITY: the key's public blob.
    case remove(key: [UInt8])
    /// SSH2_AGENTC_REMOVE_ALL_IDENTITIES.
    case removeAll
    /// SSH_AGENTC_LOCK with its passphrase (the caller wipes it).
    case lock(passphrase: [UInt8])
    /// SSH_AGENTC_UNLOCK with its passphrase (the caller wipes it).
    case unlock(passphrase: [UInt8])
    /// The `query` extension: which extensions this agent serves.
    case query
    /// `session-bind@openssh.com` (PROTOCOL.agent §1).
    case sessionBind(hostKey: [UInt8], sessionID: [UInt8], signature: [UInt8], forwarding: Bool)
    /// Another extension, answered SSH_AGENT_EXTENSION_FAILURE.
    case unknownExtension(String)
    /// A message type this agent does not serve (smartcards, protocol 1), answered
    /// SSH_AGENT_FAILURE.
    case unsupported(UInt8)

    /// Decodes one message (its payload, without the length).
    /// - Throws: `SSHWireError` when it is empty, truncated or malformed.
    public static func decode(_ payload: [UInt8]) throws -> SSHAgentRequest {
        var reader = SSHReader(payload)
        let type = try reader.byte()
        let request: SSHAgentRequest
        switch type {
        case SSHAgentMessage.requestIdentities:
            request = .requestIdentities
        case SSHAgentMessage.signRequest:
            request = .sign(key: try reader.string(), data: try reader.string(), flags: try reader.uint32())
        case SSHAgentMessage.addIdentity, SSHAgentMessage.addIDConstrained:
            let key = try SigningKey(reading: &reader)
            let comment = String(decoding: try reader.string(), as: UTF8.self)
            let constraints = type == SSHAgentMessage.addIDConstrained ? try KeyConstraints(reading: &reader) : KeyConstraints()
            request = .add(key: key, comment: comment, constraints: constraints)
        case SSHAgentMessage.removeIdentity:
            request = .remove(key: try reader.string())
        case SSHAgentMessage.removeAllIdentities:
            request = .removeAll
        case SSHAgentMessage.lock, SSHAgentMessage.unlock:
            let passphrase = try reader.string()
            request = type == SSHAgentMessage.lock ? .lock(passphrase: passphrase) : .unlock(passphrase: passphrase)
        case SSHAgentMessage.extension:
            let name = try reader.text()
            switch name {
            case "query":
                request = .query
            case "session-bind@openssh.com":
                request = .sessionBind(
                    hostKey: try reader.string(), sessionID: try reader.string(), signature: try reader.string(),
                    forwarding: try reader.bool())
            default:
                return .unknownExtension(name)
            }
        default:
            return .unsupported(type)
        }
        guard reader.isAtEnd else { throw SSHWireError("bytes after the request") }
        return request
    }
}
