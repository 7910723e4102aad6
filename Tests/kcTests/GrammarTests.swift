import Foundation
import Testing
import KCTestSupport
@testable import kc

/// The one grammar (`Options`, `OptionSpec`): each subcommand's list in the table is exactly
/// what its ArgumentParser declarations give; the argument normaliser and the fast parsers
/// (`FindFastPath`, `RunFastPath`, `Read.fast`), which read the same table, take what
/// ArgumentParser takes and give what it gives.
@Suite struct GrammarTests {
    /// One name ArgumentParser declares and its kind for it: option, flag or positional.
    private struct Declared: Equatable, CustomStringConvertible {
        var name: String
        var kind: String
        var description: String { kind == "positional" ? "a positional argument" : "\(kind) \(name)" }
    }

    /// ArgumentParser's help model of kc (`kc --experimental-dump-help`): each command's name
    /// and the names it declares, without its built-in `-h`, `--help` and `--version`.
    private static func dump() throws -> [(command: String, declared: [Declared])] {
        struct Dump: Decodable {
            struct Command: Decodable { var commandName: String; var subcommands: [Command]?; var arguments: [Argument]? }
            struct Argument: Decodable { var kind: String; var names: [Name]? }
            struct Name: Decodable { var kind: String; var name: String }
            var command: Dump.Command
        }
        func declared(_ command: Dump.Command) -> [Declared] {
            var out: [Declared] = []
            for argument in command.arguments ?? [] {
                for name in argument.names ?? [] {
                    let spelled = (name.kind == "short" ? "-" : "--") + name.name
                    if ["-h", "--help", "--version"].contains(spelled) { continue }
                    out.append(Declared(name: spelled, kind: argument.kind))
                }
                if argument.kind == "positional" { out.append(Declared(name: "", kind: "positional")) }
            }
            return out
        }
        let root = try JSONDecoder().decode(Dump.self, from: Data(KC._dumpHelp().utf8)).command
        return [("kc", declared(root))] + (root.subcommands ?? []).map { ($0.commandName, declared($0)) }
    }

    /// The table's names for `command`'s options, with ArgumentParser's kind for each.
    private static func table(_ command: String) -> [Declared] {
        Options.of(command).flatMap { option in
            option.spellings.map { Declared(name: $0, kind: option.takesValue ? "option" : "flag") }
        }
    }

    /// ArgumentParser's reading of `kc COMMAND ARGS`, as `KC.main` gives it the arguments.
    private func slow<Command, Request>(
        _ command: String, _ arguments: [String], _ as: Command.Type,
        _ request: (Command) -> Request
    ) -> Request? {
        guard let normalised = try? ArgumentNormaliser.normalised(["kc", command] + arguments),
            let parsed = try? KC.parseAsRoot(Array(normalised.dropFirst())) as? Command
        else { return nil }
        return request(parsed)
    }

    private func slowFind(_ arguments: [String]) -> FindRequest? { slow("find", arguments, Find.self) { $0.request } }
    private func slowRun(_ arguments: [String]) -> RunRequest? { slow("run", arguments, Run.self) { $0.request } }

    /// `FindFastPath` on what the normaliser gives it, as in `KC.main`.
    private func fastFind(_ arguments: [String]) -> FindRequest? {
        (try? ArgumentNormaliser.normalised(["kc", "find"] + arguments)).flatMap { FindFastPath.parse($0.dropFirst(2)) }
    }

    /// `RunFastPath` on what the normaliser gives it, as in `KC.main`.
    private func fastRun(_ arguments: [String]) -> RunRequest? {
        (try? ArgumentNormaliser.normalised(["kc", "run"] + arguments)).flatMap { RunFastPath.parse($0.dropFirst(2)) }
    }

    @Test func everySubcommandDeclaresExactlyTheOptionsOfTheTable() throws {
        let commands = try Self.dump()
        #expect(commands.count > 20)
        // ArgumentParser's own `help` subcommand aside.
        #expect(commands.map(\.command).dropFirst().filter { $0 != "help" }.sorted() == Options.subcommands.sorted(), "Options.subcommands")
        var checked = 0
        for (command, declared) in commands {
            let options = declared.filter { $0.kind != "positional" }
            let table = Self.table(command)
            for d in options where !table.contains(d) {
                Issue.record("kc \(command) declares the \(d), which is not in its list in Options.of(\"\(command)\")")
            }
            for t in table where !options.contains(t) {
                Issue.record("Options.of(\"\(command)\") lists the \(t), which kc \(command) does not declare")
            }
            checked += options.count
        }
        #expect(checked > 200)
    }

    @Test func noSubcommandHasTwoOptionsSpelledAlike() throws {
        for command in ["kc"] + Options.subcommands {
            let names = Self.table(command).map(\.name)
            for (i, name) in names.enumerated() where names[..<i].contains(name) {
                Issue.record("kc \(command) has two options spelled \(name) in the table")
            }
        }
    }

    /// The normaliser's value-taking rule is the table's, and ArgumentParser's.
    @Test func theNormaliserTakesValuesWhereArgumentParserDoes() throws {
        for (command, declared) in try Self.dump() where command != "kc" {
            for d in declared where d.kind != "positional" {
                #expect(Options.takesValue(d.name[...], in: command) == (d.kind == "option"), "kc \(command) \(d.name) is an \(d.kind)")
            }
        }
        func normalised(_ words: [String]) throws -> [String] { Array(try ArgumentNormaliser.normalised(["kc"] + words).dropFirst()) }
        #expect(try normalised(["add", "-s", "--", "-a", "-x"]) == ["add", "-s=--", "-a", "-x"])
        #expect(try normalised(["run", "--mask", "--", "-s", "--"]) == ["run", "--mask", "--", "-s", "--"])
        #expect(try normalised(["find", "-w", "--"]) == ["find", "-w", "--"], "-w is a flag in find")
        #expect(try normalised(["add", "-w", "--"]) == ["add", "-w=--"], "and the secret in add")
        #expect(try normalised(["-k", "work", "find", "-s", "--"]) == ["find", "-k", "work", "-s=--"], "and after the leading options move")
        #expect(try normalised(["find", "-s", "x", "-w"]) == ["find", "-s", "x", "-w"])
    }

    /// A value attached to a short option is split off as getopt does (`-sVALUE`), for every
    /// value-taking short option of every subcommand; grouped flags and `-s=x` stay
    /// ArgumentParser's, and a value is never split (issue 32).
    @Test func theNormaliserSplitsAValueAttachedToAShortOption() throws {
        func normalised(_ words: [String]) throws -> [String] { Array(try ArgumentNormaliser.normalised(["kc"] + words).dropFirst()) }
        var checked = 0
        // The credential helpers read -kNAME themselves (HelperInput.options).
        for command in Options.subcommands where !ArgumentNormaliser.helpers.contains(command) {
            for option in Options.of(command) where option.takesValue {
                guard let short = option.short else { continue }
                #expect(try normalised([command, short + "value"]) == [command, short, "value"], "kc \(command) \(short)value")
                #expect(try normalised([command, short + "-1"]) == [command, short, "-1"], "kc \(command) \(short)-1: a negative number is a value")
                #expect(try normalised([command, short + "=v"]) == [command, short + "=v"], "kc \(command) \(short)=v")
                checked += 1
            }
        }
        #expect(checked > 30)
        #expect(try normalised(["find", "-wkwork", "-sx"]) == ["find", "-w", "-k", "work", "-s", "x"], "flags first, then the option with its value")
        #expect(try normalised(["add", "-UwSECRET"]) == ["add", "-U", "-w", "SECRET"])
        #expect(try normalised(["find", "-wk", "work"]) == ["find", "-w", "-k", "work"], "grouped, ending with an option: written out")
        #expect(try normalised(["add", "-Uw", "-pX"]) == ["add", "-U", "-w", "-pX"], "its value is the next word as it is")
        #expect(try normalised(["add", "-Uw", "--"]) == ["add", "-U", "-w=--"])
        #expect(try normalised(["find", "-wg"]) == ["find", "-wg"])
        #expect(try normalised(["find", "-w-x"]) == ["find", "-w-x"], "-w is a flag in find, and - no option")
        #expect(try normalised(["add", "-w-x"]) == ["add", "-w", "-x"], "and the secret in add")
        #expect(try normalised(["find", "-s", "-kwork"]) == ["find", "-s", "-kwork"], "a value is never split")
        #expect(try normalised(["find", "-s--"]) == ["find", "-s=--"])
        #expect(try normalised(["find", "-1"]) == ["find", "-1"])
        #expect(try normalised(["run", "--", "cmd", "-sx"]) == ["run", "--", "cmd", "-sx"], "nothing after --")
        #expect(try normalised(["team", "-sx"]) == ["team", "-sx"], "a subcommand the table does not describe")
        #expect(try normalised(["-kwork", "find", "-w"]) == ["find", "-k", "work", "-w"], "-kNAME leads too")
        #expect(try normalised(["-kwork", "git-credential", "get"]) == ["git-credential", "-kwork", "get"])
        // -kNAME is a keychain choice: a second one is refused however either is spelled.
        for twice in [["-kwork", "find", "-kx"], ["find", "-kwork", "-k", "x"], ["find", "-wkwork", "--keychain=x"], ["-k", "a", "find", "-gkb"]] {
            #expect(throws: (any Error).self, "\(twice)") { try normalised(twice) }
        }
        #expect(try normalised(["find", "-kwork", "-s", "-kx"]) == ["find", "-k", "work", "-s", "-kx"], "the second is -s's value")
    }

    /// Every option of find in the table takes the fast path and fills the same field as
    /// ArgumentParser's `Find`; no other name does.
    @Test func findFastPathTakesExactlyTheOptionsOfFind() throws {
        let values = ["x", "3", "aapl", "https", "basic", "internet"]
        for option in Options.of("find") {
            for name in option.spellings {
                let forms: [[String]] = option.takesValue ? values.map { [name, $0] } + values.map { [name + "=" + $0] } : [[name], [name, "-w"]]
                guard let arguments = forms.first(where: { slowFind($0) != nil }) else {
                    Issue.record("no form of \(name) that ArgumentParser accepts; add a sample value here")
                    continue
                }
                let quick = fastFind(arguments)
                #expect(quick != nil, "\(arguments) should take the fast path")
                #expect(quick == slowFind(arguments), "\(arguments)")
            }
        }
        // find's one argument is the service, as -s, on both paths (issue 32).
        let declared = try #require(try Self.dump().first { $0.command == "find" }).declared
        #expect(declared.filter { $0.kind == "positional" }.count == 1, "one argument, the service")
        #expect(fastFind(["github.com"]) != nil && fastFind(["github.com"]) == slowFind(["-s", "github.com"]))
        #expect(slowFind(["github.com"]) == slowFind(["-s", "github.com"]))
        #expect(fastFind(["github.com", "-s", "x"]) == nil && slowFind(["github.com", "-s", "x"]) == nil, "not both")
        let find = Self.table("find").map(\.name)
        for command in Options.subcommands {
            for other in Self.table(command) where !find.contains(other.name) {
                #expect(FindFastPath.parse([other.name, "x"]) == nil, "kc \(command)'s \(other.name) is not find's")
            }
        }
    }

    /// Every option of run in the table but the password sources takes the fast path and
    /// fills the same field as ArgumentParser's `Run`.
    @Test func runFastPathTakesTheOptionsOfRun() throws {
        for option in Options.of("run") {
            let left = RunFastPath.leftToArgumentParser.contains { $0 === option }
            for name in option.spellings {
                let arguments = (option.takesValue ? [name, option === Options.env ? "A=kc://s/a" : "x"] : [name]) + ["--", "cmd"]
                #expect(slowRun(arguments) != nil, "\(arguments)")
                let quick = fastRun(arguments)
                #expect((quick == nil) == left, "\(arguments) \(left ? "is left to ArgumentParser" : "should take the fast path")")
                if !left { #expect(quick == slowRun(arguments), "\(arguments)") }
            }
        }
    }

    /// `RunFastPath` gives what ArgumentParser's `Run` gives, on fixed and random argument lists.
    @Test func runFastPathAgreesWithArgumentParser() throws {
        let plain: [[String]] = [
            ["--", "/bin/true"],
            ["-k", "ci", "--env", "A=kc://s/a", "--", "make", "deploy", "--", "-x"],
            ["--keychain", "/tmp/k.keychain-db", "--allow-keychain", "login", "--allow-keychain", "work", "--", "cmd"],
            ["--env-file", ".env.kc", "--env-file", "-", "--env", "B=", "--resolve-env", "--mask", "--", "cmd"],
            ["--no-masking", "--env", "C=a=b", "--", "cmd", "arg"],
            ["-k", "-x", "--env-file", "--", "--", "cmd"],
            ["--keychain=x", "--", "cmd"], ["-k=x", "--env=A=b", "--", "cmd"]
        ]
        for arguments in plain {
            let quick = fastRun(arguments)
            #expect(quick != nil, "\(arguments) should take the fast path")
            #expect(quick == slowRun(arguments), "\(arguments)")
        }
        let unusual: [[String]] = [
            ["--help"], ["--"], ["cmd"], ["-k", "a", "-k", "b", "--", "cmd"], ["--mask", "--no-masking", "--", "cmd"],
            ["--env", "1A=x", "--", "cmd"], ["--env", "novalue", "--", "cmd"], ["-k", "", "--", "cmd"],
            ["--allow-keychain", "", "--", "cmd"], ["--password-stdin", "--", "cmd"], ["--keychain=", "--", "cmd"],
            ["--mask=x", "--", "cmd"]
        ]
        for arguments in unusual {
            #expect(fastRun(arguments) == nil, "\(arguments) should go to ArgumentParser")
        }
        let names = Self.table("run").map(\.name) + ["-x", "--bogus", "--keychain=k", "--env=A=b"]
        let values = ["x", "", "-", "-x", "A=kc://s/a", "A=", "=x", "1A=b", "B=c=d", "--", "login"]
        var rng = SplitMix64(seed: 0x6B63_2E2E)
        var agreed = 0
        for _ in 0..<1000 {
            var arguments: [String] = []
            for _ in 0..<Int(rng.next() % 6) {
                arguments.append(names[Int(rng.next() % UInt64(names.count))])
                if rng.next() % 4 != 0 { arguments.append(values[Int(rng.next() % UInt64(values.count))]) }
            }
            if rng.next() % 5 != 0 { arguments += ["--", "cmd"] }
            guard let quick = fastRun(arguments) else { continue }
            agreed += 1
            #expect(quick == slowRun(arguments), "\(arguments)")
        }
        #expect(agreed > 100)
    }

    /// `Read.fast` takes `kc read REF` alone and gives every option of `Read` its default:
    /// an option added to `Read` fails here until someone checks that its default is what
    /// `Read.fast` does, and adds it to this list.
    @Test func readFastPathAssumesEveryOptionOfReadAtItsDefault() throws {
        let assumed = [Options.keychain, Options.passwordStdin, Options.passwordFile, Options.allowKeychain, Options.clip, Options.readPrompt]
        #expect(
            Options.of("read").count == assumed.count && Options.of("read").allSatisfy { option in assumed.contains { $0 === option } },
            "kc read's options are \(Options.of("read").map(\.displayName))")
        let declared = try #require(try Self.dump().first { $0.command == "read" }).declared
        #expect(declared.filter { $0.kind == "positional" }.count == 1, "one argument, the reference")
        // What ArgumentParser gives `kc read REF` is what `Read.fast` passes on.
        let read = try #require(try KC.parseAsRoot(["read", "kc://s/a"]) as? Read)
        #expect(read.keychain.choice == KeychainChoice())
        #expect(read.references.allowedKeychains.isEmpty)
        #expect(read.clip.seconds == nil, "printed, not copied")
        #expect(read.reference == "kc://s/a")
        #expect(read.prompt == nil)
    }

    /// The names messages and hints give come from the table.
    @Test func hintsNameTheTablesFlags() {
        var fields = ItemFields(itemClass: .internet)
        fields.service = "example.com"
        fields.port = 443
        fields.tag = "a b"
        #expect(fields.arguments == ["--class", "internet", "-s", "example.com", "-P", "443", "--tag", "'a b'"])
        #expect(TextMatching(ignoreCase: true, contains: false, prefix: true).arguments == ["--ignore-case", "--prefix"])
        #expect(Options.securityDomain.displayName == "-d/--security-domain" && Options.tag.displayName == "--tag")
        #expect(Options.updateUserPresence.spellings == ["--user-presence", "--no-user-presence"])
    }
}
