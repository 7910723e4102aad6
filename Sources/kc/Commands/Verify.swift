import ArgumentParser
import KeychainCore
import KeychainFormats

/// `kc verify`: a whole-keychain check that names what is wrong.
struct Verify: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Check a whole keychain: storage, schema, header, and every item at its place.",
        discussion: """
            Checks that the file's storage and schema are the ones kc writes, that
            the header's MAC holds, that every item's key, attributes and secret
            decrypt at their place (an edited, swapped or replayed column fails
            here), and that the rows match the header's item count and accumulator
            (a deleted or re-inserted row fails here). Nothing is written and no
            secret is printed. Through the agent when it holds the keychain.

            Examples:
              kc verify
              kc verify -k ./ci.keychain-db && echo intact

            Exit 0 when the keychain is intact, 93 (errSecDecode) naming the first
            problem.
            """
    )

    @OptionGroup var keychain: KeychainOptions
    /// `--json`: the result as one JSON object on stdout; the exit code stays the same.
    @Flag(name: Options.verifyJSON.names, help: Options.verifyJSON.help)
    var json = false

    func run() throws {
        let handle = try Session.open(keychain.choice)
        guard json else {
            let count = try handle.verify()
            Report.note("verified \(handle.path): \(count) item\(count == 1 ? "" : "s"), storage, schema and header intact")
            return
        }
        do {
            let count = try handle.verify()
            Report.out(Self.report(path: handle.path, items: String(count), problems: []))
        } catch let error as KeychainError {
            // The problem is printed on stdout for the script, then thrown for the exit code.
            Report.out(Self.report(path: handle.path, items: "null", problems: [error.message]))
            throw error
        }
    }

    /// `{"path", "ok", "items", "problems"}`: items is null when the check failed.
    static func report(path: String, items: String, problems: [String]) -> String {
        JSON.object([
            ("path", JSON.string(path)), ("ok", problems.isEmpty ? "true" : "false"), ("items", items),
            ("problems", JSON.array(problems.map(JSON.string)))
        ]) + "\n"
    }
}
