/// One identity the agent can sign with now: a key `ssh-add` gave it, or one of a source.
struct ServedIdentity {
    var blob: [UInt8]
    var comment: String
    var held: HeldKey?
    var source: (any SSHIdentitySource)?
}

extension SSHAgentServer {
    /// Answers one message (its payload): the reply's payload.
    func handle(_ payload: [UInt8], session: inout ConnectionSession) -> [UInt8] {
        let request: SSHAgentRequest
        do {
            request = try SSHAgentRequest.decode(payload)
        } catch {
            return [SSHAgentMessage.failure]
        }
        // Locked: nothing listed, nothing done but UNLOCK (as OpenSSH's agent).
        if lockState.isLocked {
            switch request {
            case .unlock(var passphrase):
                defer { SecretBytes.wipe(&passphrase) }
                return status(lockState.unlock(passphrase))
            case .requestIdentities:
                return identitiesAnswer([])
            default:
                return [SSHAgentMessage.failure]
            }
        }
        switch request {
        case .requestIdentities:
            return identitiesAnswer(identities(session).map { ($0.blob, $0.comment) })
        case .sign(let key, let data, let flags):
            return sign(key: key, data: data, flags: flags, session: session)
        case .add(let key, let comment, let constraints):
            if let existing = held.find(key.publicBlob), !session.bindings.permits(existing.constraints.destinations, user: nil) {
                return [SSHAgentMessage.failure]
            }
            held.add(key, comment: comment, constraints: constraints)
            return status(true)
        case .remove(let key):
            guard let existing = held.find(key), session.bindings.permits(existing.constraints.destinations, user: nil) else {
                return [SSHAgentMessage.failure]
            }
            return status(held.remove(key))
        case .removeAll:
            held.removeAll()
            return status(true)
        case .lock(var passphrase):
            defer { SecretBytes.wipe(&passphrase) }
            return status(lockState.lock(passphrase))
        case .unlock(var passphrase):
            SecretBytes.wipe(&passphrase)
            return [SSHAgentMessage.failure]   // not locked
        case .query:
            var reply = SSHWriter()
            reply.byte(SSHAgentMessage.extensionResponse)
            reply.text("query")
            for name in SSHAgentMessage.extensions { reply.text(name) }
            return reply.bytes
        case .sessionBind(let hostKey, let sessionID, let signature, let forwarding):
            return status(session.bindings.bind(hostKey: hostKey, sessionID: sessionID, signature: signature, forwarding: forwarding))
        case .unknownExtension:
            return [SSHAgentMessage.extensionFailure]
        case .unsupported:
            return [SSHAgentMessage.failure]
        }
    }

    private func status(_ ok: Bool) -> [UInt8] { [ok ? SSHAgentMessage.success : SSHAgentMessage.failure] }

    private func identitiesAnswer(_ list: [([UInt8], String)]) -> [UInt8] {
        var reply = SSHWriter()
        reply.byte(SSHAgentMessage.identitiesAnswer)
        reply.uint32(UInt32(list.count))
        for (blob, comment) in list {
            reply.string(blob)
            reply.text(comment)
        }
        return reply.bytes
    }

    /// The keys `ssh-add` gave (those the connection's bindings allow), then each source's.
    func identities(_ session: ConnectionSession) -> [ServedIdentity] {
        var served: [ServedIdentity] = []
        for key in held.all where session.bindings.permits(key.constraints.destinations, user: nil) {
            served.append(ServedIdentity(blob: key.key.publicBlob, comment: key.comment, held: key, source: nil))
        }
        var seen = Set(held.all.map(\.key.publicBlob))
        for source in sources() {
            // A source that fails (a keychain locking meanwhile) serves nothing this time.
            guard let list = try? source.identities() else { continue }
            for identity in list where seen.insert(identity.blob).inserted {
                served.append(ServedIdentity(blob: identity.blob, comment: identity.comment, held: nil, source: source))
            }
        }
        return served
    }

    /// SSH2_AGENTC_SIGN_REQUEST: a held key (its constraints checked, `-c` confirmed), else
    /// a source's (its presence confirmed); SSH_AGENT_FAILURE otherwise.
    private func sign(key blob: [UInt8], data: [UInt8], flags: UInt32, session: ConnectionSession) -> [UInt8] {
        let fingerprint = SignatureConfirmation.fingerprint(blob)
        if let key = held.find(blob) {
            guard session.bindings.permitsSignature(data, key: blob, keyType: key.key.type, constraints: key.constraints.destinations) else {
                return [SSHAgentMessage.failure]
            }
            if key.constraints.confirm && !confirmation.confirm(comment: key.comment, fingerprint: fingerprint) {
                return [SSHAgentMessage.failure]
            }
            return signatureReply { try key.key.sign(data, flags: flags) }
        }
        for identity in identities(session) where identity.blob == blob {
            guard let source = identity.source else { continue }
            guard let presence = try? source.requiresPresence(for: blob) else { return [SSHAgentMessage.failure] }
            if presence && !confirmation.confirm(comment: identity.comment, fingerprint: fingerprint) {
                return [SSHAgentMessage.failure]
            }
            guard var wire = try? source.privateKey(for: blob) else { return [SSHAgentMessage.failure] }
            defer { SecretBytes.wipe(&wire) }
            guard let key = try? SigningKey(wire: wire), key.publicBlob == blob else { return [SSHAgentMessage.failure] }
            return signatureReply { try key.sign(data, flags: flags) }
        }
        return [SSHAgentMessage.failure]
    }

    private func signatureReply(_ make: () throws -> [UInt8]) -> [UInt8] {
        guard let signature = try? make() else { return [SSHAgentMessage.failure] }
        var reply = SSHWriter()
        reply.byte(SSHAgentMessage.signResponse)
        reply.string(signature)
        return reply.bytes
    }
}
