import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// The command-line conformance run on both backends: the same kc commands against a
/// keychain file and a team keychain give the same exit codes and the same output (with
/// the keychain's name written K). The real kc, the real agents, a real PostgreSQL.
@Suite struct CommandConformanceTests {
    /// The commands, each with `-k K` put in after the subcommand; stdin where given.
    static let script: [(args: [String], stdin: String?)] = [
        (["add", "-s", "deploy", "-a", "ci", "-w", "deploy-token"], nil),
        (["add", "-s", "deploy", "-a", "ci", "-w", "again"], nil),
        (["add", "-s", "db", "-a", "app", "-l", "Database", "-j", "primary", "-w", "db-pw"], nil),
        (["add", "--internet", "-s", "git.example.com", "-a", "alice", "-w", "git-pw"], nil),
        (["find", "-s", "deploy", "-a", "ci", "-w"], nil),
        (["find", "-s", "nothing-here", "-w"], nil),
        (["find", "-s", "db", "-a", "app"], nil),
        (["find", "--internet", "-s", "git.example.com", "-w"], nil),
        (["update", "-s", "deploy", "-a", "ci", "-w", "rotated"], nil),
        (["read", "kc://deploy/ci"], nil),
        (["read", "kc://missing/none"], nil),
        (["inject"], "token={{ kc://deploy/ci }}\n"),
        (["run", "--no-masking", "--env", "T=kc://db/app", "--", "/bin/sh", "-c", "echo \"$T\""], nil),
        (["list"], nil),
        (["delete", "-s", "db", "-a", "app"], nil),
        (["delete", "-s", "db", "-a", "app"], nil),
        (["list", "-s", "db"], nil),
        (["add", "-s", "x", "--accessible", "after-first-unlock", "-w", "afu"], nil),
        (["find", "-s", "x", "-w"], nil),
        (["add", "-s", "", "-w", "y"], nil),
        (["find", "--class", "nonsense", "-s", "x"], nil)
    ]

    @Test func bothBackendsGiveTheSameExitCodesAndOutput() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let home = try KCHome()
        try home.createKeychain()
        var out = try home.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        out = try home.kc(["team", "create", "conf", "--dsn", dsn, "--kdf", "interactive"], password: "team pw")
        #expect(out.status == 0, "\(out.stderr)")
        out = try home.kc(["unlock", "-k", "team:conf"], password: "team pw")
        #expect(out.status == 0, "\(out.stderr)")
        func run(_ keychain: String, _ name: String) throws -> [String] {
            try Self.script.map { step in
                var args = step.args
                args.insert(contentsOf: ["-k", keychain], at: 1)
                let r = try home.kc(args, stdin: step.stdin.map { Data($0.utf8) })
                // Dates differ by nature; the keychain's name is K.
                let text = (r.stdout + "|" + r.stderr).replacingOccurrences(of: name, with: "K")
                    .replacingOccurrences(of: #"\d{4}-\d\d-\d\d[ T]\d\d:\d\d(:\d\d)?Z?"#, with: "DATE", options: .regularExpression)
                return "exit \(r.status): \(text)"
            }
        }
        let onFile = try run("login", home.defaultKeychain)
        let onTeam = try run("team:conf", "team:conf")
        // The run did what it says (so that equal answers mean something).
        #expect(onFile[0].hasPrefix("exit 0") && onFile[1].hasPrefix("exit 45") && onFile[5].hasPrefix("exit 44"), "\(onFile.prefix(6))")
        #expect(onFile[4].contains("deploy-token") && onFile[9].contains("rotated") && onFile[12].contains("db-pw"), "\(onFile)")
        #expect(onFile[13].contains("deploy") && onFile[15].hasPrefix("exit 44") && onTeam.count == Self.script.count)
        for (i, (a, b)) in zip(onFile, onTeam).enumerated() {
            #expect(a == b, "kc \(Self.script[i].args.joined(separator: " ")): file gave \(a) — team gave \(b)")
        }
    }
}
