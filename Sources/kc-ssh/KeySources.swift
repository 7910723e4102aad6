import KeychainCore
import KeychainClient
import POSIXSupport
import SSHAgent

/// Where the SSH agent finds keys beyond those `ssh-add` gives it: the SSH key items of
/// the keychains kc's agents hold unlocked (docs/ssh.md, "Keys in the keychain").
enum KeySources {
    /// Every source the agent asks, in order. `presence` gives the proof a `--user-presence`
    /// key's private half needs (the keychain's password: a pinentry the agent shows);
    /// without one such a key is listed but its `privateKey` fails with
    /// errSecInteractionNotAllowed.
    static func all(presence: (@Sendable (PresencePrompt) throws -> SecureBytes)? = nil) -> [any SSHIdentitySource] {
        [KeychainIdentities(presence: presence)]
    }

    /// The proof of presence the SSH agent gets for a `--user-presence` key: the keychain's
    /// password typed into the askpass program on the user's display (`asker`), the prompt
    /// naming the key and the keychain. Where nobody can be asked it fails at once
    /// (errSecInteractionNotAllowed), so the signature is refused at once.
    static func askpass(_ asker: SignatureConfirmation) -> @Sendable (PresencePrompt) throws -> SecureBytes {
        { prompt in
            // Each name comes quoted (`"laptop"`).
            let names = prompt.distinctItems.prefix(3).map { TerminalSafe.escaped(String($0.prefix(200))) }.joined(separator: ", ")
            let text =
                "kc's SSH agent: sign with the SSH key \(names) of the keychain \(TerminalSafe.escaped(prompt.path))?\n"
                + "Type the keychain's password to allow it (the key requires your presence)."
            return try asker.password(prompt: text)
        }
    }
}

/// The SSH keys (`SSHKeyItems`) of every keychain the kc agent and the team agent hold
/// unlocked right now. It never prompts and never opens a keychain itself: it asks each
/// agent which keychains it holds (the `status` request, docs/protocol.md), then lists or
/// reads through that agent only, so a keychain that locks stops serving its keys at once
/// and a locked one serves none. One `status` round trip per agent, and one listing per
/// held keychain: cheap enough for every SSH agent request. Safe from several threads at
/// once (the SSH agent asks from each client's thread): it holds nothing mutable, and each
/// call makes its own sessions; askpass questions are shown one at a time.
struct KeychainIdentities: SSHIdentitySource {
    /// The kc agent's client (the team agent's is derived from it).
    let agent: AgentClient
    /// Who gives the proof a `--user-presence` key's private half needs (the keychain's
    /// password, as for `kc find -w` of such an item); nil: such a key's `privateKey`
    /// fails with errSecInteractionNotAllowed. The SSH agent asks the user before each
    /// signature anyway (`requiresPresence`).
    let presence: (@Sendable (PresencePrompt) throws -> SecureBytes)?

    /// The source over the agents of this user's agent folder.
    init(agent: AgentClient = KeychainIdentities.defaultAgent, presence: (@Sendable (PresencePrompt) throws -> SecureBytes)? = nil) {
        self.agent = agent
        self.presence = presence
    }

    /// The kc agent's client as kc-ssh makes it: requests are checked against `kc`
    /// installed beside kc-ssh.
    static var defaultAgent: AgentClient {
        var agent = AgentClient()
        agent.agentProgram = AgentClient.besideOwnExecutable("kc")
        return agent
    }

    /// A session on each keychain an agent holds now, through that agent only.
    func heldSessions() throws -> [KeychainSession] {
        var paths = (try agent.status() ?? []).map(\.path)
        paths += (try? agent.teamAgent.status() ?? []).map { $0.map(\.path) } ?? []
        return paths.compactMap { path in
            guard
                let session = try? KeychainSession(
                    path: path, agent: agent,
                    password: { path in
                        throw KeychainError(errSecInteractionNotAllowed, "the keychain \(path) is locked")
                    })
            else { return nil }
            session.presence = presence
            return session
        }
    }

    /// The SSH keys of the held keychains, each held keychain's in the order they were
    /// added; a keychain that locked since `status` answered is left out.
    func stored() throws -> [StoredSSHKey] {
        var keys: [StoredSSHKey] = []
        for session in try heldSessions() {
            do {
                keys += try SSHKeyItems.list(session)
            } catch let error as KeychainError where error.status == errSecInteractionNotAllowed || error.status == errSecNoSuchKeychain {
                continue
            }
        }
        return keys
    }

    func identities() throws -> [SSHPublicIdentity] {
        var seen = Set<[UInt8]>()
        return try stored().compactMap { key in
            guard seen.insert(key.publicBlob).inserted else { return nil }
            return SSHPublicIdentity(blob: key.publicBlob, comment: key.name)
        }
    }

    func privateKey(for blob: [UInt8]) throws -> [UInt8]? {
        for session in try heldSessions() {
            do {
                if let wire = try SSHKeyItems.privateKey(for: blob, in: session) { return wire }
            } catch let error as KeychainError where error.status == errSecNoSuchKeychain {
                continue
            }
        }
        return nil
    }

    /// Whether the agent must confirm before signing: for a `--user-presence` key only when
    /// this source has no `presence` provider. With one, reading the private half asks for
    /// the keychain's password, and that question is the confirmation: the agent does not
    /// ask a second one.
    func requiresPresence(for blob: [UInt8]) throws -> Bool {
        guard presence == nil else { return false }
        return try stored().first { $0.publicBlob == blob }?.requiresPresence ?? false
    }
}
