import Foundation
import Testing
import KCTestSupport
@testable import kc

/// The synonym table (`CommandSynonyms`): every suggestion is a command line kc's own parser
/// takes, and no word of the table is a command or means two things.
@Suite struct CommandSuggestionTests {
    /// What stands for each placeholder when a suggestion is parsed.
    private static let placeholders = [
        "NAME": "github.com", "TEXT": "git", "KEYCHAIN": "work", "SERVER": "example.com", "NEW": "gitlab.com",
        "VAR": "TOKEN", "ACCOUNT": "alice", "COMMAND": "true", "TEMPLATE": "app.env.tpl"
    ]

    @Test func everySuggestionParsesAsAKcCommandLine() throws {
        var parsed = 0
        for entry in CommandSynonyms.entries {
            #expect(!entry.words.isEmpty && !entry.suggestions.isEmpty)
            for (command, _) in entry.suggestions {
                let words = command.split(separator: " ").map { word in
                    var word = String(word)
                    for (placeholder, value) in Self.placeholders { word = word.replacingOccurrences(of: placeholder, with: value) }
                    return word
                }
                #expect(words.allSatisfy { $0.uppercased() != $0 || $0 == "--" || $0.contains(where: \.isNumber) }, "\(command): a placeholder left")
                #expect(Options.subcommands.contains(words[0]), "\(command): no command \(words[0])")
                do {
                    _ = try KC.parseAsRoot(try Array(ArgumentNormaliser.normalised(["kc"] + words).dropFirst()))
                    parsed += 1
                } catch {
                    Issue.record("`kc \(command)` does not parse: \(KC.fullMessage(for: error))")
                }
            }
        }
        #expect(parsed > 20)
    }

    @Test func noWordOfTheTableIsACommandOrInTwoEntries() {
        var seen: [String] = []
        for entry in CommandSynonyms.entries {
            for word in entry.words {
                #expect(!CommandSuggestion.known.contains(word), "\(word) is a command: its entry would never be used")
                #expect(!seen.contains(word), "\(word) is in two entries")
                #expect(CommandSuggestion.message(for: word) != nil)
                seen.append(word)
            }
        }
        // The words issue 32 names.
        for word in [
            "rm", "remove", "del", "insert", "new", "put", "set", "store", "init", "new-keychain", "search", "grep", "edit", "change", "cp", "copy", "show",
            "get", "cat", "ls", "mv", "rename"
        ] {
            #expect(seen.contains(word), "\(word)")
        }
    }

    @Test func spellingStillCountsForWordsTheTableDoesNotHave() {
        #expect(CommandSuggestion.message(for: "ad") == "kc: unknown command 'ad'; did you mean 'add'? (kc --help lists the commands)")
        #expect(CommandSuggestion.message(for: "delte")?.contains("did you mean 'delete'?") == true)
        #expect(CommandSuggestion.message(for: "rm")?.contains("'run'") == false)
        #expect(CommandSuggestion.message(for: "find") == nil && CommandSuggestion.message(for: "-s") == nil)
    }
}
