import Foundation
import Testing
import KCTestSupport
@testable import kc

/// `kc find` has two parsers: `FindFastPath` for speed and ArgumentParser for everything.
/// Wherever the fast one answers, it must give exactly what ArgumentParser gives.
@Suite struct FastPathTests {
    /// ArgumentParser's reading of `kc find ARGS` as `KC.main` gives it the arguments (after
    /// `ArgumentNormaliser`), or nil when it refuses them.
    private func slow(_ arguments: [String]) -> FindRequest? {
        guard let normalised = try? ArgumentNormaliser.normalised(["kc", "find"] + arguments) else { return nil }
        return (try? KC.parseAsRoot(Array(normalised.dropFirst())) as? Find)?.request
    }

    /// The fast parser's reading of the same, as `KC.main` gives it the arguments.
    private func fast(_ arguments: [String]) -> FindRequest? {
        guard let normalised = try? ArgumentNormaliser.normalised(["kc", "find"] + arguments) else { return nil }
        return FindFastPath.parse(normalised.dropFirst(2))
    }

    @Test func theFormsScriptsUseTakeTheFastPathAndAgree() throws {
        let plain: [[String]] = [
            ["-s", "github.com", "-a", "alice", "-w"],
            ["-k", "/tmp/x.keychain-db", "-s", "ci", "-a", "bot", "-w"],
            ["--keychain", "work", "--service", "svc", "--account", "me", "-w", "--hex"],
            ["-w", "--base64", "-s", "s"],
            ["--class", "internet", "-s", "example.com", "-P", "443", "-r", "https", "-g"],
            ["--class=internet", "-s", "h", "-p", "/a", "-t", "basic"],
            ["--all", "--json"],
            ["--limit", "3", "--json", "-g", "--ignore-case", "-l", "Label"],
            ["--class", "key", "--tag", "t", "-C", "aapl", "-c", "1234"],
            ["-G", "g", "-D", "kind", "-j", "comment", "-w", "--password-stdin"],
            ["--password-file", "/tmp/pw", "-s", "", "-w"],
            ["--service=a=b", "--account=é ü", "-w"], ["-s=x", "-a=y", "-w"], ["-P=443", "--class=internet"],
            ["--class", "internet", "-d", "domain", "--auth-type", "dflt", "--protocol", "htps"],
            // Values that start with a dash are values (issue 15, item 13).
            ["-s", "-w"], ["-s", "-", "-a", "--", "-l", "-x", "-w"], ["-a", "-s", "-s", "-a"], ["--service", "--json", "-g"],
            // The service as the argument, as -s (issue 32).
            ["github.com"], ["github.com", "-w"], ["-w", "github.com", "-a", "alice"], ["-a", "alice", "github.com", "--json"],
            ["--class", "internet", "https://github.com/x", "-g"], ["-k", "work", "-a", "-x", "ci"],
            // Values attached to short options, as getopt reads them (issue 32).
            ["-sgithub.com", "-aalice", "-w"], ["-kwork", "-w", "-sx"], ["-wkwork", "x"], ["-gkwork", "-sx"],
            ["--class", "internet", "-sexample.com", "-P443", "-rhttps", "-p/a"], ["-s-", "-a-x", "-w"], ["-s--", "-w"],
            ["-sa=b", "-w"], ["-Gg", "-Dkind", "-jcomment", "-wkwork"],
            []
        ]
        for arguments in plain {
            let quick = fast(arguments)
            #expect(quick != nil, "\(arguments) should take the fast path")
            #expect(quick == slow(arguments), "\(arguments)")
        }
    }

    @Test func anythingUnusualIsLeftToArgumentParser() {
        let unusual: [[String]] = [
            ["--help"], ["-h"], ["--version"], ["-s"], ["-w", "-s"], ["-s", "a", "-s", "b"], ["-w", "-w"],
            ["-sw", "x"], ["-s", "x", "--unknown"], ["--class", "nope"], ["-P", "eighty"], ["-P", "70000"],
            ["--limit", "0"], ["--hex"], ["-w", "--all"], ["-w", "-g"], ["--hex", "--base64", "-w"],
            ["--password-stdin", "--password-file", "f"], ["-c", "toolong"], ["-r", "gopher"], ["-t", "kerberos"],
            ["--", "-s"], ["--service="], ["-s", "-", "-s", "x"], ["--all", "--limit", "2"],
            // The service given twice, or two arguments.
            ["github.com", "-s", "x"], ["-s", "x", "github.com"], ["a", "b"], ["-sx", "github.com"], ["github.com", "-w", "-"],
            // Grouped flags, an attached value ArgumentParser refuses.
            ["-wg"], ["-P80x"], ["-wx"]
        ]
        for arguments in unusual {
            #expect(fast(arguments) == nil, "\(arguments) should go to ArgumentParser")
        }
    }

    /// Random argument lists from the flags' names and awkward values: wherever the fast
    /// parser answers, ArgumentParser answers the same.
    @Test func randomArgumentListsNeverDisagree() {
        let names = [
            "-k", "--keychain", "--password-file", "--password-stdin", "--class", "-a", "--account", "-s",
            "--service", "-l", "-D", "-j", "-G", "-c", "-C", "-d", "-p", "-P", "--port", "-r", "-t", "--tag",
            "--limit", "-w", "-g", "--hex", "--base64", "--json", "--all", "--ignore-case", "--label=x",
            "--port=8", "--class=key", "--service=", "-x", "--bogus", "github.com", "-sx", "-P80", "-wk", "-kx", "-w-s"
        ]
        let values = [
            "x", "", "-", "-x", "80", "-1", "+5", "0", "internet", "generic", "key", "certificate", "htps",
            "https", "aapl", "12345", "a b", "--", "=", "é", "4294967296", "basic", "3"
        ]
        var rng = SplitMix64(seed: 0x6B63_FA57)
        var agreed = 0
        for _ in 0..<1000 {
            var arguments: [String] = []
            for _ in 0..<Int(rng.next() % 7) {
                arguments.append(names[Int(rng.next() % UInt64(names.count))])
                if rng.next() % 3 != 0 { arguments.append(values[Int(rng.next() % UInt64(values.count))]) }
            }
            guard let quick = fast(arguments) else { continue }
            agreed += 1
            #expect(quick == slow(arguments), "\(arguments)")
        }
        // The generator must reach the fast path often enough to mean something.
        #expect(agreed > 100)
    }
}
