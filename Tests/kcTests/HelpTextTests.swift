import Foundation
import Testing
import KCTestSupport

/// Issue 21: `--help` and the man page re-wrapped sentences mid-line and merged lines (the
/// exit-code table ran into the next paragraph), and neither showed `kc agent` or how to
/// get the shell completion scripts. Every discussion is now written in lines of at most
/// 75 columns, which `--help` shows as written at 80 columns, and which the man page
/// (docs/man/layout.awk) shows in literal displays at its 5-column indent.
@Suite struct HelpTextTests {
    /// ArgumentParser's model of kc's commands (`kc --experimental-dump-help`).
    struct Dump: Decodable {
        struct Command: Decodable {
            var commandName: String
            var abstract: String?
            var discussion: String?
            var subcommands: [Command]?
            var arguments: [Argument]?
        }
        struct Argument: Decodable {
            var names: [Name]?
            var abstract: String?
            var shouldDisplay: Bool?
        }
        struct Name: Decodable { var kind: String; var name: String }
        var command: Command
    }

    /// The root command and its subcommands (none is nested deeper), with the words that
    /// run each (`[]` for the root).
    static func commands() throws -> [(words: [String], command: Dump.Command)] {
        let out = try KCBinary.run(["--experimental-dump-help"])
        #expect(out.status == 0, "\(out.stderr)")
        let root = try JSONDecoder().decode(Dump.self, from: Data(out.stdout.utf8)).command
        return [([], root)] + (root.subcommands ?? []).map { ([$0.commandName], $0) }
    }

    /// The help of `kc WORDS --help` at an 80-column width.
    static func help(_ words: [String]) throws -> String {
        let out = try KCBinary.run(words + ["--help"], environment: ["COLUMNS": "80"])
        #expect(out.status == 0, "\(out.stderr)")
        return out.stdout
    }

    /// docs/man/kc.1, as committed.
    static var manPage: String {
        get throws {
            let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            return try String(contentsOf: root.appendingPathComponent("docs/man/kc.1"), encoding: .utf8)
        }
    }

    @Test func everyDiscussionShowsLineByLineAsWritten() throws {
        let commands = try Self.commands()
        #expect(commands.count > 15)
        for (words, command) in commands {
            guard let discussion = command.discussion else { continue }
            let name = (["kc"] + words).joined(separator: " ")
            for line in discussion.split(separator: "\n", omittingEmptySubsequences: false) {
                #expect(
                    line.count <= 75,
                    "\(name): a discussion line longer than 75 columns is re-wrapped (in --help at 80 columns, in the man page at its indent): \(line)")
                #expect(!line.hasPrefix(".") && !line.hasPrefix("'"), "\(name): the man page would read this line as a roff request: \(line)")
                #expect(line.allSatisfy { $0.isASCII }, "\(name): the man page generator drops characters that are not ASCII: \(line)")
            }
            // The whole discussion, blank lines included, unchanged in the help.
            #expect(try Self.help(words).contains("\n" + discussion + "\n"), "\(name) --help does not show its discussion as written")
        }
    }

    @Test func theExitCodeTableKeepsItsLinesAndEndsBeforeTheNextParagraph() throws {
        let lines = try Self.help([]).split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let head = try #require(lines.firstIndex { $0.hasPrefix("Exit codes: 0 success, 1 kc import skipped entries, 2 usage error") })
        // The sentence says the rows are the common ones, and where every one is.
        let start = try #require(lines[head...].firstIndex { $0.hasSuffix("docs/errors.md list every one):") })
        #expect(lines[head...start].joined(separator: " ").contains("(the common ones here; `man kc` and"))
        let rows = lines[(start + 1)...].prefix { $0.hasPrefix("  ") }
        #expect(
            rows.map { $0.split(separator: " ").first ?? "" } == [
                "22", "28", "36", "41", "42", "44", "45", "48", "49", "50", "51", "52", "53", "93", "128", "206"
            ])
        for row in rows { #expect(row.hasSuffix(")"), "each row ends with its status's name: \(row)") }
        let after = start + 1 + rows.count
        #expect(lines[after] == "", "a blank line ends the table")
        #expect(lines[after + 1].hasPrefix("`kc error CODE`"))

        // The man page shows the same rows in one literal display, then the next paragraph.
        let man = try Self.manPage.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let manStart = try #require(man.firstIndex { $0.hasSuffix("docs/errors.md list every one):") })
        #expect(Array(man[(manStart + 1)...].prefix(rows.count)) == Array(rows))
        #expect(man[manStart + 1 + rows.count] == "\\&", "an empty line of the display")
        #expect(man[manStart + 2 + rows.count].hasPrefix("`kc error CODE`"))
        #expect(man[..<manStart].last { $0.hasPrefix(".B") || $0.hasPrefix(".E") } == ".Bd -literal")
    }

    @Test func theAgentAndTheCompletionScriptsAreListed() throws {
        let help = try Self.help([])
        #expect(help.contains("\n  agent                   Run the kc agent"), "\(help)")
        #expect(help.contains("\n  --generate-completion-script <shell>\n"), "\(help)")
        #expect(try Self.help(["agent"]).contains("--stop"))
        let man = try Self.manPage
        #expect(man.contains("\n.Ss kc agent\n"))
        #expect(man.contains("\n.It Fl -generate-completion-script Ar shell\n"))
        // And the option does what it says.
        for shell in ["bash", "zsh", "fish"] {
            let out = try KCBinary.run(["--generate-completion-script", shell])
            #expect(out.status == 0 && out.stdout.contains("agent"), "\(shell): \(out.stderr)")
        }
    }

    /// docs/man/kc.1 says what the commands say: each command's section has its abstract,
    /// its discussion line by line in a literal display, and its options. A change to the
    /// help that was not followed by `make man` fails here.
    @Test func theManPageIsWhatTheCodeGenerates() throws {
        let man = try Self.manPage
        let sections = man.components(separatedBy: "\n.Ss kc ")
        for (words, command) in try Self.commands() {
            let name = (["kc"] + words).joined(separator: " ")
            let section: String
            if let word = words.first {
                let found = sections.dropFirst().first { $0.hasPrefix(word + "\n") }
                guard let found else {
                    Issue.record("docs/man/kc.1 has no section for \(name): run `make man`")
                    continue
                }
                section = found
                if let abstract = command.abstract {
                    let same = section.hasPrefix(word + "\n" + abstract + "\n")
                    #expect(same, "docs/man/kc.1: the abstract of \(name) differs; run `make man`")
                }
            } else {
                section = sections[0]
            }
            if let discussion = command.discussion {
                let display =
                    ".Bd -literal\n"
                    + discussion.split(separator: "\n", omittingEmptySubsequences: false)
                    .map { $0.isEmpty ? "\\&" : $0.replacingOccurrences(of: "\\", with: "\\e") }
                    .joined(separator: "\n") + "\n.Ed\n"
                // The generator escapes a leading blank of the first line with \&.
                let escaped = display.replacingOccurrences(of: ".Bd -literal\n ", with: ".Bd -literal\n\\& ")
                let same = section.contains(escaped)
                #expect(same, "docs/man/kc.1: the discussion of \(name) differs; run `make man`")
            }
            for argument in command.arguments ?? [] where argument.shouldDisplay ?? true {
                for long in (argument.names ?? []).filter({ $0.kind == "long" }) {
                    let listed = section.contains("-\(long.name)")
                    #expect(listed, "docs/man/kc.1: \(name) lacks --\(long.name); run `make man`")
                }
                if let abstract = argument.abstract, !abstract.isEmpty {
                    let same = section.contains("\n" + abstract)
                    #expect(same, "docs/man/kc.1: \(name)'s option help differs: \(abstract); run `make man`")
                }
            }
        }
    }

    /// The package's root folder (docs/, Sources/).
    static var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    /// The text of the man page's section `name` (`.Sh NAME` to the next `.Sh`).
    static func manSection(_ name: String) throws -> String {
        let parts = try manPage.components(separatedBy: "\n.Sh ")
        return try #require(parts.first { $0.hasPrefix(name + "\n") }, "docs/man/kc.1 has no \(name) section")
    }

    /// Issue 32: `man kc` had no ENVIRONMENT, FILES or SEE ALSO, and its EXIT STATUS was
    /// the plugin's "0 on success, >0 if an error occurs".
    @Test func theManPageHasItsSections() throws {
        for name in ["NAME", "SYNOPSIS", "DESCRIPTION", "COMMANDS", "ENVIRONMENT", "FILES", "\"EXIT STATUS\"", "\"SEE ALSO\""] {
            _ = try Self.manSection(name)
        }
        #expect(!(try Self.manPage.contains(".Ex -std")), "the plugin's generic exit status is replaced")
        #expect(try Self.manSection("FILES").contains(".It Pa ~/.local/share/kc/login.keychain-db"))
        #expect(try Self.manSection("\"SEE ALSO\"").contains(".Xr git-credential 1"))
    }

    /// Every exit code docs/errors.md lists (its table's exit column, and the codes its text
    /// names: 1 and 2) is an item of the man page's EXIT STATUS.
    @Test func everyExitCodeOfTheErrorsDocIsInExitStatus() throws {
        let doc = try String(contentsOf: Self.root.appendingPathComponent("docs/errors.md"), encoding: .utf8)
        var codes = Set<String>()
        for line in doc.split(separator: "\n") where line.hasPrefix("|") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            if cells.count > 4, Int(cells[4]) != nil { codes.insert(cells[4]) }
        }
        #expect(codes.count > 20, "the table of docs/errors.md was read: \(codes)")
        let intro = try #require(doc.components(separatedBy: "\n| status").first)
        for match in intro.matches(of: /exits? (\d+)/) { codes.insert(String(match.1)) }
        #expect(codes.isSuperset(of: ["1", "2"]), "the text's codes were read: \(codes)")
        let section = try Self.manSection("\"EXIT STATUS\"")
        for code in codes.sorted(by: { Int($0) ?? 0 < Int($1) ?? 0 }) {
            #expect(section.contains("\n.It \(code)\n"), "docs/man/kc.1's EXIT STATUS lacks \(code) (docs/man/sections.mdoc)")
        }
    }

    /// Every KC_ variable that kc, kc-team or the provider reads (a quoted "KC_..." in
    /// Sources, but the benchmark and load tools') is in the man page's ENVIRONMENT: a new
    /// variable fails here until docs/man/sections.mdoc says what it does.
    @Test func everyVariableReadInSourcesIsInEnvironment() throws {
        let sources = Self.root.appendingPathComponent("Sources")
        let tools: Set<String> = ["kc-bench", "kc-loadgen", "kc-team-bench", "BenchSupport"]
        var names = Set<String>()
        let files = try #require(FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil))
        for case let file as URL in files where file.pathExtension == "swift" {
            let module = file.path.dropFirst(sources.path.count + 1).split(separator: "/").first.map(String.init) ?? ""
            guard !tools.contains(module) else { continue }
            let text = try String(contentsOf: file, encoding: .utf8)
            for match in text.matches(of: /"(KC_[A-Z0-9_]+)"/) { names.insert(String(match.1)) }
        }
        #expect(names.isSuperset(of: ["KC_KEYCHAIN", "KC_PASSWORD", "KC_AGENT_DIR"]), "the sources were read: \(names)")
        let section = try Self.manSection("ENVIRONMENT")
        for name in names.sorted() {
            #expect(section.contains(".It Ev \(name)\n"), "docs/man/kc.1's ENVIRONMENT lacks \(name) (docs/man/sections.mdoc)")
        }
    }

    /// `kc` alone prints a short usage on stderr and exits 2, as git and pass do; `kc --help`
    /// and `kc help` print the full help on stdout and exit 0.
    @Test func kcAlonePrintsAShortUsageAndFails() throws {
        let bare = try KCBinary.run([], environment: ["COLUMNS": "80"])
        #expect(bare.status == 2, "\(bare.stderr)")
        #expect(bare.stdout.isEmpty, "\(bare.stdout)")
        #expect(bare.stderr.hasPrefix("usage: kc <command> [options]\n"), "\(bare.stderr)")
        #expect(bare.stderr.contains("\n  kc find -s SERVICE -a ACCOUNT -w  print a secret\n"), "\(bare.stderr)")
        #expect(bare.stderr.contains("kc --help lists every command"), "\(bare.stderr)")
        #expect(bare.stderr.split(separator: "\n").count < 12, "a short usage: \(bare.stderr)")
        for words in [["--help"], ["help"]] {
            let out = try KCBinary.run(words, environment: ["COLUMNS": "80"])
            #expect(out.status == 0, "\(words): \(out.stderr)")
            #expect(out.stdout.contains("SUBCOMMANDS:") && out.stdout.contains("Exit codes: 0 success"), "\(words): \(out.stdout)")
        }
    }
}
