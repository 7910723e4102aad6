import ArgumentParser
import KeychainCore
import POSIXSupport
import TeamCore
import TeamStore
#if canImport(Glibc)
import Glibc
#endif

/// `kc team create NAME --dsn DSN`: a new team keychain with this device as its root admin.
struct Create: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Create a team keychain on PostgreSQL, with this device as its admin.",
        discussion: """
            Prints the join string (kct1:ID@DSN) other devices give `kc team join`,
            and this device's fingerprint. The team password protects this device's
            key file; it never leaves the device.

            The DSN comes from --dsn, --dsn-file FILE (- for standard input) or
            --dsn-stdin. Keep a database password out of the command line, which
            every local user can read: put it in ~/.pgpass, or pass the DSN with
            --dsn-file or --dsn-stdin. The join string carries only where the
            server is and how to check it, never a password or key.

            Examples:
              kc team create infra --dsn postgresql://kc@db.internal/kc
              kc team create infra --dsn-file ~/.config/kc/infra.dsn
            """
    )

    @Argument(help: "The team's name: -k team:NAME chooses it.")
    var name: String
    @OptionGroup var connection: DSNSource
    @OptionGroup var device: DeviceOptions
    @OptionGroup var password: TeamPassword

    func run() throws {
        try TeamName.validate(name)
        try MemberName.check(device.memberName)
        guard !(connection.readsStandardInput && password.passwordStdin) else {
            throw KeychainError(errSecParam, "standard input can give the DSN or the team password, not both")
        }
        guard let dsn = try connection.read() else {
            throw KeychainError(errSecParam, "give the team's PostgreSQL connection string: --dsn, --dsn-file or --dsn-stdin")
        }
        let secret = try password.read(prompt: "New password for team keychain team:\(name): ", confirm: true)
        let created = try TeamAdmin.create(
            name: name, dsn: dsn, memberName: device.memberName, password: secret,
            profile: device.kdf, insecureTransport: device.insecureTransport)
        TeamReport.line(created.join.text, to: 1)
        note("created team:\(name); this device is its admin, fingerprint \(created.fingerprint)")
        note("give the join string above to other devices; on each, run:")
        TeamReport.line("    " + ["kc", "team", "join", created.join.text].map(ShellWord.quoted).joined(separator: " "))
    }
}

/// USER@HOST, the default member name of a device.
func defaultMemberName() -> String {
    var host = [CChar](repeating: 0, count: 256)
    gethostname(&host, host.count - 1)
    let user = getenv("USER").map { String(cString: $0) } ?? "user"
    return user + "@" + String(decoding: host.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
}

/// A line on standard error, `kc-team: …`.
func note(_ line: String) {
    TeamReport.line("kc-team: " + line)
}
