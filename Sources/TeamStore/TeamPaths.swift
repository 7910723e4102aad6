import KeychainCore

/// Where a device keeps its team files: `$XDG_DATA_HOME/kc/teams/NAME.team`, beside its
/// keychains (`KeychainLocation.directory`).
package enum TeamPaths {
    /// The team file of `name`.
    package static func teamFile(_ name: String) -> String {
        KeychainLocation.directory + "/teams/" + name + ".team"
    }
}
