/// The message numbers and flags of the SSH agent protocol (draft-miller-ssh-agent §5.1,
/// OpenSSH's PROTOCOL.agent): the names the draft gives them.
public enum SSHAgentMessage {
    public static let failure: UInt8 = 5
    public static let success: UInt8 = 6
    public static let requestIdentities: UInt8 = 11
    public static let identitiesAnswer: UInt8 = 12
    public static let signRequest: UInt8 = 13
    public static let signResponse: UInt8 = 14
    public static let addIdentity: UInt8 = 17
    public static let removeIdentity: UInt8 = 18
    public static let removeAllIdentities: UInt8 = 19
    public static let lock: UInt8 = 22
    public static let unlock: UInt8 = 23
    public static let addIDConstrained: UInt8 = 25
    public static let `extension`: UInt8 = 27
    public static let extensionFailure: UInt8 = 28
    public static let extensionResponse: UInt8 = 29

    /// Constraint types in an ADD_ID_CONSTRAINED (§4.2.6.1).
    public static let constrainLifetime: UInt8 = 1
    public static let constrainConfirm: UInt8 = 2
    public static let constrainExtension: UInt8 = 255

    /// Sign request flags (§4.5.1): RSA with SHA-256 or SHA-512.
    public static let rsaSHA256: UInt32 = 2
    public static let rsaSHA512: UInt32 = 4

    /// The largest message, as OpenSSH's agent (AGENT_MAX_LEN): 256 KiB.
    public static let maximumLength = 256 * 1024

    /// The extensions this agent answers (`query`).
    public static let extensions = ["query", "session-bind@openssh.com"]
    /// OpenSSH's destination constraint (`ssh-add -h`).
    public static let restrictDestination = "restrict-destination-v00@openssh.com"
}
