import ArgumentParser
import KeychainCore
import KeychainClient
import TeamStore
#if canImport(Glibc)
import Glibc
#endif

extension KDFProfile: ExpressibleByArgument {}

/// Where a `kc team` command takes this device's team password: --password-file,
/// --password-stdin, $KC_PASSWORD (taken out of the environment once), else the terminal.
struct TeamPassword: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Read the team password from the first line of FILE.", valueName: "FILE"))
    var passwordFile: String?

    @Flag(name: .long, help: "Read the team password from the first line of standard input.")
    var passwordStdin = false

    /// The password, asked for with `prompt` on the terminal when no other source gives it;
    /// a new one (`confirm`) is asked twice.
    func read(prompt: String, confirm: Bool = false) throws -> SecureBytes {
        if let passwordFile {
            let fd = open(passwordFile, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw KeychainError(errSecIO, "cannot read \(passwordFile): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            return try Self.firstLine(fd)
        }
        if passwordStdin { return try Self.firstLine(0) }
        if var kept = Self.environmentPassword {
            Self.environmentPassword = nil
            defer { Sodium.wipe(&kept) }
            return try SecureBytes(copying: kept)
        }
        guard TerminalPrompt.isAvailable else {
            throw KeychainError(
                errSecInteractionNotAllowed, "no terminal to ask for the team password on",
                hint: "set KC_PASSWORD, or pass --password-file FILE or --password-stdin")
        }
        let first = try TerminalPrompt.readSecret(prompt: prompt)
        if confirm {
            let again = try TerminalPrompt.readSecret(prompt: "Again: ")
            guard first.constantTimeEquals(again) else { throw KeychainError(errSecParam, "the two passwords differ") }
        }
        guard first.count > 0 else { throw KeychainError(errSecParam, "the team password is empty") }
        return first
    }

    /// $KC_PASSWORD, taken out of the environment at start-up (`takeEnvironment`).
    nonisolated(unsafe) static var environmentPassword: [UInt8]?

    /// Takes $KC_PASSWORD and wipes it, $KC_NEW_PASSWORD and $KC_TEAM_TOKEN out of the
    /// environment, as kc does at start-up: `kc team` execs this program with kc's
    /// environment as it was given.
    static func takeEnvironment() {
        for name in ["KC_PASSWORD", "KC_NEW_PASSWORD", "KC_TEAM_TOKEN"] {
            guard let raw = getenv(name) else { continue }
            let count = strlen(raw)
            if name == "KC_PASSWORD" { environmentPassword = Array(UnsafeRawBufferPointer(start: raw, count: count)) }
            memset(raw, 0, count)
            unsetenv(name)
        }
    }

    /// The first line of `fd` (at most 64 KiB), without its newline.
    private static func firstLine(_ fd: Int32) throws -> SecureBytes {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        defer { Sodium.wipe(&buffer) }
        var n = 0
        while n < buffer.count {
            let r = buffer.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + n, 1) }
            if r < 0 && errno == EINTR { continue }
            guard r > 0, buffer[n] != 0x0a else { break }
            n += 1
        }
        guard n > 0 else { throw KeychainError(errSecParam, "the team password is empty") }
        var line = Array(buffer[0..<n])
        defer { Sodium.wipe(&line) }
        return try SecureBytes(copying: line)
    }
}

/// Opens the team keychain `name` in this process as its member (admin commands).
func openTeam(_ name: String, _ password: TeamPassword) throws -> TeamKeychains.Opened {
    let secret = try password.read(prompt: "Password for team keychain team:\(name): ")
    return try TeamKeychains.openMember(name: name, secret: secret)
}
