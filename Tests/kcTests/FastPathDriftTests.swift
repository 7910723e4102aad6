import Foundation
import Testing
import KCTestSupport
@testable import kc

/// The hand parsers (`FindFastPath`, `RunRequest.parse`, `Read.fast`) know the options that
/// ArgumentParser's declarations give, no more and no fewer: adding an option to `Find`,
/// `Run`, `Read` or one of their option groups without teaching the hand parser (or the
/// reverse) fails here, naming the option.
@Suite struct FastPathDriftTests {
    /// ArgumentParser's own names for the options and flags of `kc SUBCOMMAND`, from its
    /// help model (`kc SUBCOMMAND --experimental-dump-help`), without its built-in `-h`,
    /// `--help` and `--version`; with whether each takes a value.
    private static func declared(_ subcommand: String) throws -> [Declared] {
        struct Dump: Decodable {
            struct Command: Decodable { var commandName: String; var subcommands: [Command]?; var arguments: [Argument]? }
            struct Argument: Decodable { var kind: String; var names: [Name]? }
            struct Name: Decodable { var kind: String; var name: String }
            var command: Dump.Command
        }
        let dump = try JSONDecoder().decode(Dump.self, from: Data(KC._dumpHelp().utf8))
        let command = try #require(dump.command.subcommands?.first { $0.commandName == subcommand })
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

    /// One declared name and ArgumentParser's kind for it: option, flag or positional.
    private struct Declared: Equatable, CustomStringConvertible {
        var name: String
        var kind: String
        var description: String { kind == "positional" ? "a positional argument" : "\(kind) \(name)" }
    }

    /// ArgumentParser's reading of `kc find ARGS`, as `KC.main` gives it the arguments.
    private func slowFind(_ arguments: [String]) -> FindRequest? {
        (try? KC.parseAsRoot(ValueOptions.attachingDashDash(["find"] + arguments)) as? Find)?.request
    }

    /// ArgumentParser's reading of `kc run ARGS`, as `KC.main` gives it the arguments.
    private func slowRun(_ arguments: [String]) -> RunRequest? {
        (try? KC.parseAsRoot(ValueOptions.attachingDashDash(["run"] + arguments)) as? Run)?.request
    }

    /// Compares two lists of names both ways, naming what one side has and the other lacks.
    private func expectSame(_ declared: [Declared], _ handled: [Declared], _ parser: String, _ command: String) {
        for d in declared where !handled.contains(d) {
            Issue.record("kc \(command) declares the \(d) in ArgumentParser, but \(parser) does not know it: teach \(parser), or list it as left to ArgumentParser")
        }
        for h in handled where !declared.contains(h) {
            Issue.record("\(parser) knows the \(h), which kc \(command) does not declare in ArgumentParser")
        }
        for (i, h) in handled.enumerated() where handled[..<i].contains(h) {
            Issue.record("\(parser) lists the \(h) twice")
        }
    }

    @Test func findFastPathKnowsExactlyTheOptionsOfFind() throws {
        let handled = FindFastPath.Value.allCases.flatMap { $0.spellings.map { Declared(name: $0, kind: "option") } }
            + FindFastPath.Switch.allCases.flatMap { $0.spellings.map { Declared(name: $0, kind: "flag") } }
        let declared = try Self.declared("find")
        #expect(declared.count > 30)
        expectSame(declared, handled, "FindFastPath", "find")
    }

    /// Each name ArgumentParser declares for `kc find` fills the same field on both paths.
    @Test func everyOptionOfFindMeansTheSameOnBothPaths() throws {
        let values = ["x", "3", "aapl", "https", "basic", "internet"]
        for d in try Self.declared("find") {
            let forms: [[String]] = d.kind == "option" ? values.map { [d.name, $0] } : [[d.name], [d.name, "-w"]]
            guard let arguments = forms.first(where: { slowFind($0) != nil }) else {
                Issue.record("no form of \(d) that ArgumentParser accepts; add a sample value here")
                continue
            }
            let quick = FindFastPath.parse(arguments[...])
            #expect(quick != nil, "\(arguments) should take the fast path")
            #expect(quick == slowFind(arguments), "\(arguments)")
        }
    }

    @Test func runFastPathKnowsExactlyTheOptionsOfRun() throws {
        let handled = RunRequest.Option.allCases.flatMap { option in
            option.spellings.map { Declared(name: $0, kind: option.takesValue ? "option" : "flag") }
        }
        let declared = try Self.declared("run")
        let positional = Declared(name: "", kind: "positional")
        let left = declared.filter { RunRequest.leftToArgumentParser.contains($0.name) }
        #expect(left.count == RunRequest.leftToArgumentParser.count, "\(RunRequest.leftToArgumentParser) are all options of kc run")
        // The command after `--` is the positional argument both take.
        expectSame(declared, handled + left + [positional], "RunRequest.parse", "run")
    }

    /// Each name `RunRequest.parse` takes fills the same field as ArgumentParser's `Run`, on
    /// fixed and random argument lists.
    @Test func runFastPathAgreesWithArgumentParser() throws {
        let plain: [[String]] = [
            ["--", "/bin/true"],
            ["-k", "ci", "--env", "A=kc://s/a", "--", "make", "deploy", "--", "-x"],
            ["--keychain", "/tmp/k.keychain-db", "--allow-keychain", "login", "--allow-keychain", "work", "--", "cmd"],
            ["--env-file", ".env.kc", "--env-file", "-", "--env", "B=", "--resolve-env", "--mask", "--", "cmd"],
            ["--no-masking", "--env", "C=a=b", "--", "cmd", "arg"],
            ["-k", "-x", "--env-file", "--", "--", "cmd"],
        ]
        for arguments in plain {
            let quick = RunRequest.parse(arguments[...])
            #expect(quick != nil, "\(arguments) should take the fast path")
            #expect(quick == slowRun(arguments), "\(arguments)")
        }
        let unusual: [[String]] = [
            ["--help"], ["--"], ["cmd"], ["-k", "a", "-k", "b", "--", "cmd"], ["--mask", "--no-masking", "--", "cmd"],
            ["--env", "1A=x", "--", "cmd"], ["--env", "novalue", "--", "cmd"], ["-k", "", "--", "cmd"],
            ["--allow-keychain", "", "--", "cmd"], ["--password-stdin", "--", "cmd"], ["--keychain=x", "--", "cmd"],
        ]
        for arguments in unusual {
            #expect(RunRequest.parse(arguments[...]) == nil, "\(arguments) should go to ArgumentParser")
        }
        let names = try Self.declared("run").map(\.name).filter { !$0.isEmpty } + ["-x", "--bogus"]
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
            guard let quick = RunRequest.parse(arguments[...]) else { continue }
            agreed += 1
            #expect(quick == slowRun(arguments), "\(arguments)")
        }
        #expect(agreed > 100)
    }

    /// `Read.fast` takes `kc read REF` alone and gives every option of `Read` its default:
    /// an option added to `Read` fails here until someone checks that its default is what
    /// `Read.fast` does, and adds it to this list.
    @Test func readFastPathAssumesEveryOptionOfReadAtItsDefault() throws {
        let assumed = [
            Declared(name: "-k", kind: "option"), Declared(name: "--keychain", kind: "option"),
            Declared(name: "--password-stdin", kind: "flag"), Declared(name: "--password-file", kind: "option"),
            Declared(name: "--allow-keychain", kind: "option"), Declared(name: "", kind: "positional"),
            Declared(name: "--prompt", kind: "option"),
            Declared(name: "--clip", kind: "option"),
        ]
        expectSame(try Self.declared("read"), assumed, "Read.fast", "read")
        // What ArgumentParser gives `kc read REF` is what `Read.fast` passes on.
        let read = try #require(try KC.parseAsRoot(["read", "kc://s/a"]) as? Read)
        #expect(read.keychain.choice == KeychainChoice())
        #expect(read.references.allowedKeychains.isEmpty)
        #expect(read.clip.seconds == nil, "printed, not copied")
        #expect(read.reference == "kc://s/a")
        #expect(read.prompt == nil)
    }
}
