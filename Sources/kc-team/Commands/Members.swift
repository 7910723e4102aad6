import ArgumentParser
import KeychainCore
import TeamCore
import TeamStore

/// `kc team members`: the verified roster.
struct Members: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the members of a team keychain, as the signed roster has them.",
        discussion: """
            One line per member: name, role, fingerprint, and runner/expiry.

            Examples:
              kc team members -k team:infra
            """
    )

    @Option(name: .shortAndLong, help: "The team keychain, team:NAME.")
    var keychain: String
    @OptionGroup var password: TeamPassword

    func run() throws {
        let opened = try openTeam(try teamName(keychain), password)
        for m in opened.authority.roster.members.sorted(by: { $0.name < $1.name }) {
            let extra = m.isRunner ? "  runner" + (m.expires == 0 ? "" : " until \(m.expires)") : ""
            TeamReport.line("\(m.name)  \(m.role.name)  \(m.fingerprint)\(extra)", to: 1)
        }
    }
}

/// `kc team head`: the verified head, `generation:hash`.
struct Head: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the verified head of the log, GENERATION:HASH.",
        discussion: """
            Compare it across machines: two members who see the same generation with
            different hashes are being shown a fork by the server.
            """
    )

    @Option(name: .shortAndLong, help: "The team keychain, team:NAME.")
    var keychain: String
    @OptionGroup var password: TeamPassword

    func run() throws {
        let opened = try openTeam(try teamName(keychain), password)
        TeamReport.line(opened.authority.headText, to: 1)
    }
}

/// `kc team verify`: a full check of the team keychain.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check the whole team keychain: rosters, head, every row.",
        discussion: """
            Checks the chain of rosters from the genesis the join string pinned, the
            signed head, this device's master key against its commitment, every row
            against the signed set hash, and that every item opens.
            """
    )

    @Option(name: .shortAndLong, help: "The team keychain, team:NAME.")
    var keychain: String
    @OptionGroup var password: TeamPassword

    func run() throws {
        let opened = try openTeam(try teamName(keychain), password)
        let count = try opened.keychain.check()
        TeamReport.line(
            "\(opened.keychain.path): \(count) items, \(opened.authority.roster.members.count) members, head \(opened.authority.headText): verified", to: 1)
    }
}

/// `kc team heartbeat`: a writer's signed "the head is still the head", for readers that
/// limit staleness (KC_TEAM_MAX_STALENESS).
struct Heartbeat: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Append a signed heartbeat (writers), for readers that limit staleness.",
        discussion: """
            Readers with KC_TEAM_MAX_STALENESS refuse a head older than that: a server
            that freezes the keychain at an old head cannot forge a newer entry. Run
            this from a writer's cron job more often than the readers' limit.

            Examples:
              kc team heartbeat -k team:infra --password-file /etc/kc/team-password
            """
    )

    @Option(name: .shortAndLong, help: "The team keychain, team:NAME.")
    var keychain: String
    @OptionGroup var password: TeamPassword

    func run() throws {
        let opened = try openTeam(try teamName(keychain), password)
        try opened.keychain.withTeamKeys { keys, adopt in try opened.authority.heartbeat(keys: keys, adopt: adopt) }
        TeamReport.line(opened.authority.headText, to: 1)
    }
}
