import ArgumentParser
import KeychainCore
import POSIXSupport
import TeamCore
import TeamStore

/// `kc team join JOIN-STRING`: asks to join a team keychain; prints the fingerprint an admin
/// must compare before adding this device.
struct Join: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Ask to join a team keychain; print this device's fingerprint.",
        discussion: """
            Checks that the server holds the very keychain the join string names,
            leaves this device's public keys there, and prints its fingerprint.
            Tell it to an admin over another channel; they run the command it
            prints, `kc team add MEMBER --key FINGERPRINT -k team:NAME`. Then
            `kc unlock -k team:NAME`.

            Examples:
              kc team join 'kct1:3f9a…@postgresql://kc@db.internal/kc'
            """
    )

    @Argument(help: "The join string `kc team create` printed.")
    var joinString: String
    @Option(help: "The name to know the team by here (default: the team's own).")
    var name: String?
    @OptionGroup var device: DeviceOptions
    @OptionGroup var password: TeamPassword

    func run() throws {
        let join = try JoinString(parsing: joinString)
        let member = try MemberName.check(device.memberName)
        let secret = try password.read(prompt: "New password for this device's team key: ", confirm: true)
        let joined = try TeamAdmin.join(
            join, memberName: member, localName: name, password: secret,
            profile: device.kdf, insecureTransport: device.insecureTransport)
        TeamReport.line(joined.fingerprint, to: 1)
        note("asked to join team:\(joined.name); an admin of it adds this device with:")
        // The name last, after `--`: one starting with `-` is not read as an option.
        let add = ["kc", "team", "add", "--key", joined.fingerprint, "-k", TeamName.prefix + joined.teamName, "--", member]
        TeamReport.line("    " + add.map(ShellWord.quoted).joined(separator: " "))
        note("once added, unlock it here: kc unlock -k team:\(joined.name)")
    }
}
