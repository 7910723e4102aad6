import KeychainCore
import KeychainClient
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// The keychain a `kc ssh` key command works on, reached as kc reaches it: through the kc
/// agent (a team keychain: the team agent) while it holds it unlocked, else opened here
/// with its password from `KC_PASSWORD` or typed at the terminal; with neither it fails at
/// once (errSecInteractionNotAllowed, exit 36) naming `kc unlock`.
enum KeySession {
    /// The keychain `-k` names, else `KC_KEYCHAIN`, else the configuration file's
    /// `keychain`, else the default one (the rules of `kc -k`, docs/config.md).
    /// - Throws: errSecParam for a malformed team name or configuration file.
    static func address(_ word: String?) throws -> KeychainAddress {
        if let word { return try KeychainAddress(word) }
        if let chosen = getenv("KC_KEYCHAIN").map({ String(cString: $0) }), !chosen.isEmpty { return try KeychainAddress(chosen) }
        return try KeychainAddress(ConfigFile.load().keychain?.value)
    }

    /// A session on the existing keychain `word` names.
    /// - Throws: errSecNoSuchKeychain when there is none.
    static func open(_ word: String?) throws -> KeychainSession {
        let address = try address(word)
        var agent = AgentClient()
        agent.agentProgram = AgentClient.besideOwnExecutable("kc")
        let name = word.map { " -k \(ShellWord.quoted($0))" } ?? ""
        return try KeychainSession(address: address, agent: agent, missingHint: "create it with `kc create`, or choose another with -k") { path in
            if let password = try KeychainPassword.fromEnvironment() { return password }
            guard TerminalPrompt.isAvailable else {
                throw KeychainError(errSecInteractionNotAllowed, "the keychain \(path) is locked: unlock it with `kc unlock\(name)`")
            }
            return try TerminalPrompt.readSecret(prompt: "Password for keychain \(path): ")
        }
    }
}

/// `KC_PASSWORD`, as kc reads it: taken out of the environment at start (its bytes
/// overwritten), used once.
enum KeychainPassword {
    nonisolated(unsafe) private static var taken: [UInt8]?

    /// Takes `KC_PASSWORD` out of the environment.
    static func takeEnvironment() {
        guard let value = getenv("KC_PASSWORD") else { return }
        let length = strlen(value)
        taken = Array(UnsafeBufferPointer(start: UnsafeRawPointer(value).assumingMemoryBound(to: UInt8.self), count: length))
        memset(value, 0, length)
        unsetenv("KC_PASSWORD")
    }

    /// The password taken, once. - Throws: errSecParam when it is empty.
    static func fromEnvironment() throws -> SecureBytes? {
        guard var bytes = taken else { return nil }
        taken = nil
        defer { for i in bytes.indices { bytes[i] = 0 } }
        guard !bytes.isEmpty else { throw KeychainError(errSecParam, "the password from KC_PASSWORD is empty") }
        return try SecureBytes(copying: bytes)
    }
}
