import KeychainCore

/// How it travels (`docs/protocol.md` §2).
extension BackupRequest {
    /// `{destination: String, replacing: Bool}`.
    package var dictionary: [String: Any] { ["destination": destination, "replacing": replacing] }

    /// - Throws: errSecParam without an absolute destination or with a non-Bool `replacing`.
    package init(dictionary d: [String: Any]) throws {
        guard let destination = d["destination"] as? String, destination.hasPrefix("/") else {
            throw KeychainError(errSecParam, "a backup through the agent needs an absolute destination path")
        }
        guard d["replacing"] == nil || d["replacing"] is Bool, d.count <= 2 else {
            throw KeychainError(errSecParam, "malformed backup request")
        }
        self.init(destination: destination, replacing: d["replacing"] as? Bool ?? false)
    }
}
