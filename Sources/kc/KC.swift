import ArgumentParser
import KeychainCore

/// The `kc` command. This stub: `kc --version`.
@main
struct KC: ParsableCommand {
    static let version = "0.1.0"

    static let configuration = CommandConfiguration(
        commandName: "kc",
        abstract: "A command-line secrets manager: Apple's Keychain Services on an encrypted SQLite file.",
        version: "kc \(version) (libsodium \(LibraryVersions.sodium), SQLite \(LibraryVersions.sqlite))"
    )

    func run() throws {
        print(KC.helpMessage())
    }
}
