import ArgumentParser
import KeychainCore
import TeamCore
import TeamStore

/// `kc team remove NAME`: removes a member and re-keys the team keychain.
struct Remove: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Remove a member and re-key (admins).",
        discussion: """
            A new master key goes to the members who remain (they need no password);
            every item is re-sealed under it, the secrets' ciphertexts unchanged. The
            removed member reads nothing written from now on, but may keep what it
            read before: rotate the real secrets it could read.

            Examples:
              kc team remove bob-laptop -k team:infra
            """
    )

    @Argument(help: "The member's name.")
    var member: String
    @OptionGroup var team: TeamChoice
    @OptionGroup var password: TeamPassword

    func run() throws {
        let name = try team.name()
        let opened = try openTeam(name, password)
        try TeamAdmin.remove(opened, memberName: member)
        note("removed \(member) from team:\(name) and re-keyed (\(opened.authority.itemCount) items re-sealed); rotate the secrets it could read")
    }
}
