import Foundation
import Testing
import KCTestSupport

/// Issue 32, "one voice" and "usage lines run to 219 columns": a usage error reads as every
/// other kc error (`kc: MESSAGE`, `kc: hint: …`; kc-team's as `kc-team: …`), never
/// ArgumentParser's `Error:` / `Usage:` lines, and exits 2 (docs/errors.md); every line of
/// every `--help` fits 80 columns at COLUMNS=80, and a usage never passes 80 columns
/// whatever the width, broken only between whole options.
@Suite struct UsageVoiceTests {
    /// Likely mistakes, one or more per kind ArgumentParser reports: an unknown option, a
    /// value missing or invalid, an argument too many or missing, and kc's own validation.
    static let mistakes: [[String]] = [
        ["find", "--no-such-option"], ["find", "-k"], ["find", "-P", "abc"], ["add", "--class", "bogus"],
        ["find", "svc", "extra"], ["error"], ["move", "-s", "x"], ["generate", "--length"],
        ["unlock", "--timeout", "x"], ["list", "--nope"], ["run", "--env"], ["status", "extra"],
        ["lock", "--timeout", "5"], ["find", "-s", "a", "svc"], ["export", "--format", "yaml"]
    ]

    @Test(arguments: Self.mistakes)
    func aUsageErrorIsSaidInKcsVoice(_ arguments: [String]) throws {
        let h = try KCHome()
        let out = try h.kc(arguments)
        #expect(out.status == 2, "\(arguments): \(out.stderr)")
        #expect(out.stdout.isEmpty, "\(arguments): \(out.stdout)")
        let lines = out.stderr.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
        #expect(out.stderr.hasSuffix("\n") && lines.count >= 2, "\(arguments): a message and a hint: \(out.stderr)")
        #expect(lines.allSatisfy { $0.hasPrefix("kc: ") }, "\(arguments): every line in kc's voice: \(out.stderr)")
        #expect(!lines.contains { $0.contains("Error:") || $0.contains("Usage:") || $0.contains("Help:") }, "\(arguments): \(out.stderr)")
        #expect(!lines[0].hasPrefix("kc: hint:"), "\(arguments): the message comes first: \(out.stderr)")
        let first = try #require(lines[0].dropFirst("kc: ".count).first)
        #expect(!first.isUppercase, "\(arguments): kc's messages start in lower case: \(lines[0])")
        #expect(lines.last == "kc: hint: see 'kc \(arguments[0]) --help' for more information.", "\(arguments): \(out.stderr)")
    }

    /// ArgumentParser's own wording stays, in kc's form: the message, the option's help, where
    /// the usage is.
    @Test func aMissingValueNamesTheOptionAndItsHelp() throws {
        let out = try KCBinary.run(["find", "-k"])
        #expect(out.status == 2)
        let lines = out.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count == 3, "\(out.stderr)")
        #expect(lines.first == "kc: missing value for '-k <path|name>'", "\(out.stderr)")
        #expect(lines.dropFirst().first?.hasPrefix("kc: hint: -k <path|name>  The keychain:") == true, "\(out.stderr)")
    }

    /// kc-team, behind `kc team`, speaks the same way under its own name.
    @Test(arguments: [["team", "create"], ["team", "join", "--bogus"], ["team", "add", "bob"]])
    func kcTeamsUsageErrorsAreSaidTheSameWay(_ arguments: [String]) throws {
        let out = try KCBinary.run(arguments)
        #expect(out.status == 2, "\(arguments): \(out.stderr)")
        let lines = out.stderr.split(separator: "\n").map(String.init)
        #expect(lines.count >= 2 && lines.allSatisfy { $0.hasPrefix("kc-team: ") }, "\(arguments): \(out.stderr)")
        #expect(!out.stderr.contains("Error:") && !out.stderr.contains("Usage:"), "\(arguments): \(out.stderr)")
        #expect(lines.last == "kc-team: hint: see 'kc-team \(arguments[1]) --help' for more information.", "\(arguments): \(out.stderr)")
    }

    /// Every command's words: kc's from its own description, kc-team's (`kc team WORD`)
    /// from kc-team's.
    static func everyCommand() throws -> [[String]] {
        let kc = try HelpTextTests.commands().map(\.words)
        let dump = try KCBinary.run(["team", "--experimental-dump-help"])
        #expect(dump.status == 0, "\(dump.stderr)")
        let team = try JSONDecoder().decode(HelpTextTests.Dump.self, from: Data(dump.stdout.utf8)).command
        let teamWords = (team.subcommands ?? []).map { ["team", $0.commandName] }
        #expect(teamWords.count >= 8, "kc-team's subcommands: \(teamWords)")
        return kc + teamWords
    }

    /// The usage paragraph of a help: the `USAGE:` line and its continuation lines.
    static func usage(_ help: String) throws -> [String] {
        let lines = help.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let start = try #require(lines.firstIndex { $0.hasPrefix("USAGE: ") }, "no usage in \(help)")
        return Array(lines[start...].prefix { !$0.isEmpty })
    }

    @Test func everyHelpLineFitsEightyColumns() throws {
        let commands = try Self.everyCommand()
        #expect(commands.count > 30)
        var wrapped = 0
        for words in commands {
            let name = (["kc"] + words).joined(separator: " ")
            let out = try KCBinary.run(words + ["--help"], environment: ["COLUMNS": "80"])
            #expect(out.status == 0 && out.stderr.isEmpty, "\(name): \(out.stderr)")
            for line in out.stdout.split(separator: "\n") {
                #expect(line.count <= 80, "\(name) --help: \(line.count) columns: \(line)")
            }
            let usage = try Self.usage(out.stdout)
            if usage.count > 1 { wrapped += 1 }
            for (i, line) in usage.enumerated() {
                // Broken between whole options only: every bracket closes on its line.
                for (open, close) in [("[", "]"), ("<", ">")] {
                    #expect(
                        line.filter { String($0) == open }.count == line.filter { String($0) == close }.count,
                        "\(name): a usage line broken inside \(open)…\(close): \(line)")
                }
                if i > 0 { #expect(line.hasPrefix("    ") && !line.hasSuffix(" "), "\(name): a continuation line is indented: \(line)") }
            }
        }
        #expect(wrapped >= 5, "the long usages (unlock, create, generate, kc-team's) take several lines")
    }

    /// The rule is 80 columns for a usage whatever the terminal says (a wide one included), and
    /// a narrower screen wraps it narrower; ArgumentParser wraps the rest to the width.
    @Test(arguments: ["200", "60"])
    func aUsageFitsEightyColumnsAtAnyWidth(_ columns: String) throws {
        let limit = min(80, Int(columns) ?? 80)
        for words in [["unlock"], ["inject"], ["generate"], ["team", "create"]] {
            let out = try KCBinary.run(words + ["--help"], environment: ["COLUMNS": columns])
            #expect(out.status == 0, "\(words): \(out.stderr)")
            let usage = try Self.usage(out.stdout)
            #expect(usage.count > 1, "\(words) at \(columns) columns: \(usage)")
            for line in usage { #expect(line.count <= limit, "\(words) at \(columns) columns: \(line)") }
        }
    }

    /// The help itself is still on stdout with exit 0, as `kc help WORD` gives it.
    @Test func helpByWordIsTheSameHelp() throws {
        let byFlag = try KCBinary.run(["unlock", "--help"], environment: ["COLUMNS": "80"])
        let byWord = try KCBinary.run(["help", "unlock"], environment: ["COLUMNS": "80"])
        #expect(byFlag.status == 0 && byWord.status == 0)
        #expect(byFlag.stdout == byWord.stdout, "\(byWord.stdout)")
        #expect(try Self.usage(byWord.stdout).count > 1, "wrapped as well: \(byWord.stdout)")
    }
}
