import KeychainCore

/// One key the SSH agent can offer: its public key blob in SSH wire form (the string a
/// `SSH2_AGENT_IDENTITIES_ANSWER` carries) and its comment.
public struct SSHPublicIdentity: Sendable, Equatable {
    /// The public key in SSH wire form (`string keytype` followed by the key's fields).
    public var blob: [UInt8]
    /// The comment `ssh-add -l` shows (for a kc key item, its label).
    public var comment: String

    /// An identity from its wire blob and comment.
    public init(blob: [UInt8], comment: String) {
        self.blob = blob
        self.comment = comment
    }
}

/// Where the SSH agent finds keys beyond those `ssh-add` gave it for this session: the key
/// items of the keychains kc holds unlocked. The agent asks on every request, so a keychain
/// that locks stops serving its keys at once.
public protocol SSHIdentitySource: Sendable {
    /// The identities this source can sign with now (none while their keychain is locked).
    func identities() throws -> [SSHPublicIdentity]

    /// The private key (SSH wire form, as in `SSH2_AGENTC_ADD_IDENTITY`, without the
    /// comment) of the identity whose public blob is `blob`, or nil when this source has none.
    /// The caller wipes the bytes when it has signed.
    func privateKey(for blob: [UInt8]) throws -> [UInt8]?

    /// Whether the agent must ask the user before every signature with the identity whose
    /// public blob is `blob`, as for `ssh-add -c`: a key stored with `--user-presence`
    /// whose source does not ask for its own proof when `privateKey(for:)` reads it.
    func requiresPresence(for blob: [UInt8]) throws -> Bool
}
