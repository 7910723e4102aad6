import ArgumentParser
import KeychainCore
import TeamCore
import TeamStore

/// `kc team add NAME --key FINGERPRINT`: an admin adds a device that asked to join.
struct Add: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Add a device that asked to join (admins).",
        discussion: """
            The fingerprint is the one the device printed, compared out of band: the
            server cannot substitute its keys. The device gets the master key sealed
            to it and signed by you.

            Examples:
              kc team add bob-laptop --key 7f3a-91c2-… -k team:infra --role writer
            """
    )

    @Argument(help: "The member's name in the team.")
    var member: String
    @Option(help: "The fingerprint the device printed.")
    var key: String
    @Option(help: "admin, writer or reader.")
    var role: String = "writer"
    @OptionGroup var team: TeamChoice
    @OptionGroup var password: TeamPassword

    func run() throws {
        let role = try MemberRole(name: role)
        try MemberName.check(member)
        let name = try team.name()
        let opened = try openTeam(name, password)
        let record = try TeamAdmin.add(opened, memberName: member, fingerprint: key, role: role)
        note("added \(record.name) (\(record.role.name), \(record.fingerprint)) to team:\(name)")
    }
}

/// The NAME of `-k team:NAME` (or of a bare NAME). - Throws: errSecParam.
func teamName(_ location: String) throws -> String {
    switch try KeychainAddress(location) {
    case .team(let name): return name
    case .file:
        try TeamName.validate(location)
        return location
    }
}
