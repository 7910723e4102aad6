import ArgumentParser
import KeychainCore
import KeychainFormats
import TeamCore
import TeamStore
#if canImport(Glibc)
import Glibc
#endif

/// `kc team add-runner NAME --role reader --expires 90d`: a CI runner's membership and the
/// one token that carries its key.
struct AddRunner: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "add-runner",
        abstract: "Add a CI runner and print its token (admins).",
        discussion: """
            Prints one token (kcr1:…) to store in the CI system's secret store. In
            the job: kc unlock --team-token-file FILE (or KC_TEAM_TOKEN), then any
            command with -k team:NAME. The token holds the runner's key: whoever
            has it reads the team keychain until the runner is removed or expires.
            It also holds the DSN the runner connects with: give the runner its own
            (SELECT-only) role with --dsn-file FILE or --dsn-stdin (--dsn puts its
            password where every local user can read it); without, the team's DSN
            goes in with only where the server is and how to check it, never a
            password or key.

            Examples:
              kc team add-runner ci-prod -k team:infra --role reader --expires 90d
              printf '%s\\n' 'postgresql://ci_prod:PW@db.internal/kc?sslmode=verify-full' \\
                | kc team add-runner ci-prod -k team:infra --dsn-stdin
            """
    )

    @Argument(help: "The runner's name in the team.")
    var member: String
    @Option(help: "reader (default) or writer.")
    var role: String = "reader"
    @Option(help: "How long the token is valid: Nd, Nh or Nm (default: no end).")
    var expires: String?
    @OptionGroup var team: TeamChoice
    @OptionGroup(title: "The runner's connection string (default: this device's, not its credentials)")
    var connection: DSNSource
    @OptionGroup var password: TeamPassword

    func run() throws {
        let role = try MemberRole(name: role)
        try MemberName.check(member)
        guard role != .admin else { throw KeychainError(errSecParam, "a runner cannot be an admin", hint: "use --role reader or --role writer") }
        let until = try expires.map { try TeamAuthority.now + Self.seconds($0) } ?? 0
        let name = try team.name()
        guard !(connection.readsStandardInput && password.passwordStdin) else {
            throw KeychainError(errSecParam, "standard input can give the DSN or the team password, not both")
        }
        let dsn = try connection.read()
        let opened = try openTeam(name, password)
        let file = try TeamFile.read(at: TeamFile.path(name: name))
        // Never what authenticates this device (its database password, its client key's
        // passphrase): a leaked token would carry its role. Only the shareable keywords.
        let runnerDSN = try dsn ?? PostgresConnection.shareable(file.dsn)
        try PostgresConnection.checkTransport(dsn: runnerDSN, insecureAllowed: false)
        let token = try TeamAdmin.addRunner(opened, teamName: name, memberName: member, role: role, expires: until, dsn: runnerDSN)
        var text: [UInt8] = token.withUnsafeBytes { Array($0) } + [0x0a]
        defer { Sodium.wipe(&text) }
        _ = text.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
        note(
            "added runner \(member) (\(role.name)\(until == 0 ? "" : ", expires at " + ISO8601.string(secondsSince1970: until))) to team:\(name); store the token in your CI's secret store"
        )
    }

    /// Seconds in `90d`, `12h` or `30m`. - Throws: errSecParam.
    static func seconds(_ text: String) throws -> UInt64 {
        let unit = text.last
        guard let n = UInt64(text.dropLast()), n > 0, let factor: UInt64 = (unit == "d" ? 86_400 : unit == "h" ? 3_600 : unit == "m" ? 60 : nil),
            n <= 3_650 * 86_400 / factor
        else {
            throw KeychainError(errSecParam, "--expires takes a number and d, h or m, like 90d")
        }
        return n * factor
    }
}
