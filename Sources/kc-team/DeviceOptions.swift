import ArgumentParser
import KeychainCore

/// What `create` and `join` ask about this device: its name in the team, how hard its team
/// password is stretched, and whether a server without verified TLS is allowed.
struct DeviceOptions: ParsableArguments {
    @Option(help: "This device's name in the team (default: USER@HOST).")
    var member: String?
    @Option(help: "How hard the team password is stretched: interactive, moderate or sensitive.")
    var kdf: KDFProfile = .moderate
    @Flag(help: "Allow a server that is not on this machine without verified TLS.")
    var insecureTransport = false

    /// The member name to use.
    var memberName: String { member ?? defaultMemberName() }
}
