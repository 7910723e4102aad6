/// What `session-bind@openssh.com` recorded on one connection (PROTOCOL.agent §1): the
/// host key of each hop, its session identifier, and whether the hop forwards the agent or
/// authenticates. A connection's bindings decide where a destination-constrained key may
/// be used (`ConnectionBindings.permits`), as in OpenSSH's ssh-agent.
public struct SessionBinding: Sendable, Equatable {
    /// The host's public key blob.
    public var hostKey: [UInt8]
    /// The exchange hash of the session's first key exchange.
    public var sessionID: [UInt8]
    /// Whether the hop forwards the agent rather than authenticates.
    public var forwarded: Bool
}

/// The bindings of one client connection.
public struct ConnectionBindings: Sendable {
    /// In the order bound: the first hop from this machine first.
    public private(set) var bindings: [SessionBinding] = []
    /// Whether a bind was tried (a failed one leaves constrained keys unusable).
    public private(set) var attempted = false

    /// Most bindings one connection records (OpenSSH's AGENT_MAX_SESSION_IDS).
    static let maximum = 128

    /// No binding yet.
    public init() {}

    /// Records a binding after checking the host's signature of the session identifier.
    /// - Returns: false when the signature does not verify, the connection was bound for
    ///   authentication already, the identifier was bound to another key, or too many.
    public mutating func bind(hostKey: [UInt8], sessionID: [UInt8], signature: [UInt8], forwarding: Bool) -> Bool {
        attempted = true
        guard !sessionID.isEmpty, SSHSignatureCheck.verify(publicBlob: hostKey, signature: signature, data: sessionID) else { return false }
        for binding in bindings {
            guard binding.forwarded else { return false }   // bound for authentication already
            if binding.sessionID == sessionID { return binding.hostKey == hostKey }
        }
        guard bindings.count < Self.maximum else { return false }
        bindings.append(SessionBinding(hostKey: hostKey, sessionID: sessionID, forwarded: forwarding))
        return true
    }

    /// Whether a key with `constraints` may be listed or used on this connection; `user` is
    /// the user a signature authenticates as (nil for listing). OpenSSH's
    /// `identity_permitted`: every hop must be allowed by some constraint, in order.
    public func permits(_ constraints: [DestinationConstraint], user: String?) -> Bool {
        guard !constraints.isEmpty else { return true }
        if attempted && bindings.isEmpty { return false }
        guard let last = bindings.last else { return true }   // a local client
        var fromKey: [UInt8]?
        for (i, hop) in bindings.enumerated() {
            var testUser: String?
            if i == bindings.count - 1 {
                testUser = user
                if hop.forwarded && user != nil { return false }   // signing on a forwarding hop
            } else if !hop.forwarded {
                return false   // forwarding through a hop bound for signing
            }
            guard constraints.contains(where: { $0.permits(from: fromKey, to: hop.hostKey, user: testUser) }) else { return false }
            fromKey = hop.hostKey
        }
        if last.forwarded && user == nil {
            // Listed at a forwarding host only when it may go on from there.
            return constraints.contains { $0.permits(from: last.hostKey, to: nil, user: nil) }
        }
        return true
    }

    /// Whether a destination-constrained key may sign `data` on this connection: a bound
    /// connection, and data that is an SSH user authentication request (RFC 4252 §7) for
    /// this key, in the last bound session, to a permitted host and user.
    public func permitsSignature(_ data: [UInt8], key: [UInt8], keyType: AgentKeyType, constraints: [DestinationConstraint]) -> Bool {
        guard !constraints.isEmpty else { return true }
        guard let last = bindings.last else { return false }   // unbound: refused, as OpenSSH does
        guard let request = UserAuthRequest(data), request.key == key, request.algorithmMatches(keyType) else { return false }
        guard permits(constraints, user: request.user) else { return false }
        guard SecretCompare.equal(request.sessionID, last.sessionID) else { return false }
        if bindings.count > 1 && request.hostKey == nil { return false }
        if let hostKey = request.hostKey, hostKey != last.hostKey { return false }
        return true
    }
}

/// The fields of an SSH public-key user authentication request as signed (RFC 4252 §7,
/// OpenSSH's `publickey-hostbound-v00@openssh.com`).
struct UserAuthRequest {
    var sessionID: [UInt8]
    var user: String
    var algorithm: String
    var key: [UInt8]
    var hostKey: [UInt8]?

    init?(_ data: [UInt8]) {
        var reader = SSHReader(data)
        guard let sessionID = try? reader.string(), !sessionID.isEmpty,
            (try? reader.byte()) == 50,   // SSH_MSG_USERAUTH_REQUEST
            let user = try? reader.text(), (try? reader.text()) == "ssh-connection",
            let method = try? reader.text(), (try? reader.byte()) == 1,
            let algorithm = try? reader.text(), let key = try? reader.string()
        else { return nil }
        switch method {
        case "publickey": hostKey = nil
        case "publickey-hostbound-v00@openssh.com":
            guard let host = try? reader.string() else { return nil }
            hostKey = host
        default: return nil
        }
        guard reader.isAtEnd else { return nil }
        self.sessionID = sessionID
        self.user = user
        self.algorithm = algorithm
        self.key = key
    }

    /// Whether the signature algorithm named is one of the key's type.
    func algorithmMatches(_ type: AgentKeyType) -> Bool {
        type == .rsa ? ["ssh-rsa", "rsa-sha2-256", "rsa-sha2-512"].contains(algorithm) : algorithm == type.rawValue
    }
}
