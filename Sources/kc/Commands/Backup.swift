import ArgumentParser
import KeychainCore
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// `kc backup`: a consistent, encrypted copy of a keychain, checked before it counts.
struct Backup: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write a checked, encrypted copy of a keychain while it is in use.",
        discussion: """
            The copy stays encrypted under the same password; nothing is decrypted.
            It is made with SQLite's online backup (one consistent snapshot, other
            processes go on), in a new 0600 file beside DEST, checked as a keychain
            (header MAC, item count and accumulator against every row), then moved
            to DEST. DEST is never overwritten without --force.

            Examples:
              kc backup ~/backups/login-$(date +%F).keychain-db
              kc -k work backup /mnt/usb/work.keychain-db --force

            Opening a backup in place of the live file is a rollback: see
            docs/security.md. Exit 48 when DEST exists (without --force).
            """
    )

    @OptionGroup var keychain: KeychainOptions

    @Argument(
        help: ArgumentHelp(
            "Where to write the backup: a path (with a / or ending in .keychain-db; its folder must be private), or a NAME for ~/.local/share/kc/NAME.keychain-db.",
            valueName: "dest"))
    var destination: String

    @Flag(name: Options.backupForce.names, help: Options.backupForce.help)
    var force = false

    func validate() throws {
        if destination.isEmpty { throw ValidationError("DEST is empty: give a path for the backup") }
    }

    func run() throws {
        let handle = try Session.open(keychain.choice)
        // Absolute: the agent, which may make the copy, has another working folder.
        let address = try KeychainAddress(destination)
        var target: String
        switch address {
        case .team:
            throw KeychainError(
                errSecParam, "DEST \(address) is a team keychain; a backup is a file",
                hint: "give a path (with a / or ending in .keychain-db), e.g. ./\(destination).keychain-db")
        case .file(let file): target = file
        }
        if !target.hasPrefix("/") {
            guard let cwd = getcwd(nil, 0) else { throw KeychainError(errSecIO, "cannot read the current folder") }
            target = String(cString: cwd) + "/" + target
            free(cwd)
        }
        let real = KeychainLocation.realPath(target)
        if real == handle.path {
            throw KeychainError(errSecParam, "DEST is the keychain itself", hint: "choose another path for the backup")
        }
        // A NAME is a keychain in the data folder: a backup never replaces one by name, even
        // with --force (`kc backup "$NAME" --force` in a script must not destroy a keychain).
        if !KeychainLocation.isPath(destination), KeychainSession.exists(real) {
            throw KeychainError(
                errSecDuplicateKeychain, "DEST names the keychain \(real); a backup never replaces a keychain by name",
                hint: "give a path (with a / or ending in .keychain-db) to replace a file, or another name")
        }
        let count = try handle.backup(to: real, replacing: force)
        Report.note("backed up \(count) item\(count == 1 ? "" : "s") of \(handle.path) to \(real)")
    }
}
