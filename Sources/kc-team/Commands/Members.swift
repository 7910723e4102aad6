import ArgumentParser
import KeychainCore
import KeychainFormats
import TeamCore
import TeamStore

/// `kc team members`: the verified roster.
struct Members: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "List the members of a team keychain, as the signed roster has them.",
        discussion: """
            One line per member: name, role, fingerprint, when it was added and by
            which admin, and for a runner its expiry (ISO 8601, UTC). --json prints a
            JSON array of objects: name, role, fingerprint, runner, added, added_by,
            expires (null when never), state (active or expired), this_device.

            Examples:
              kc team members -k team:infra
              kc team members --json | jq -r '.[] | select(.state == "expired") | .name'
            """
    )

    @OptionGroup var team: TeamChoice
    @Flag(help: "Print a JSON array of the members.")
    var json = false
    @OptionGroup var password: TeamPassword

    func run() throws {
        let opened = try openTeam(try team.name(), password)
        let authority = opened.authority
        let now = TeamAuthority.now
        let members = authority.roster.members.sorted { $0.name < $1.name }
        if json {
            let objects = members.map { m in
                let added = authority.history.added[m.memberID]
                return JSON.object([
                    ("name", JSON.string(m.name)), ("role", JSON.string(m.role.name)), ("fingerprint", JSON.string(m.fingerprint)),
                    ("runner", m.isRunner ? "true" : "false"),
                    ("added", added.map { JSON.string(ISO8601.string(secondsSince1970: $0.time)) } ?? "null"),
                    ("added_by", added.map { JSON.string($0.by) } ?? "null"),
                    ("expires", m.expires == 0 ? "null" : JSON.string(ISO8601.string(secondsSince1970: m.expires))),
                    ("state", JSON.string(m.isValid(at: now) ? "active" : "expired")),
                    ("this_device", m.memberID == authority.me?.memberID ? "true" : "false")
                ])
            }
            TeamReport.write(1, JSON.array(objects) + "\n")
            return
        }
        for m in members {
            let added = authority.history.added[m.memberID].map { "  added \(ISO8601.string(secondsSince1970: $0.time)) by \($0.by)" } ?? ""
            let ends = m.expires == 0 ? "" : (m.isValid(at: now) ? " until " : " expired at ") + ISO8601.string(secondsSince1970: m.expires)
            let extra = m.isRunner ? "  runner" + ends : ends.isEmpty ? "" : "  " + ends.dropFirst()
            TeamReport.line("\(m.name)  \(m.role.name)  \(m.fingerprint)\(added)\(extra)", to: 1)
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

    @OptionGroup var team: TeamChoice
    @OptionGroup var password: TeamPassword

    func run() throws {
        let opened = try openTeam(try team.name(), password)
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

    @OptionGroup var team: TeamChoice
    @OptionGroup var password: TeamPassword

    func run() throws {
        let opened = try openTeam(try team.name(), password)
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

    @OptionGroup var team: TeamChoice
    @OptionGroup var password: TeamPassword

    func run() throws {
        let opened = try openTeam(try team.name(), password)
        try opened.keychain.withTeamKeys { keys, adopt in try opened.authority.heartbeat(keys: keys, adopt: adopt) }
        TeamReport.line(opened.authority.headText, to: 1)
    }
}
