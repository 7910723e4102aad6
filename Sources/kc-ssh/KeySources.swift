import SSHAgent

/// Where the SSH agent finds keys beyond those `ssh-add` gives it (being built for issue 34).
enum KeySources {
    /// Every source the agent asks, in order.
    static func all() -> [any SSHIdentitySource] { [] }
}
