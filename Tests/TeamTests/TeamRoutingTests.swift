import Foundation
import Testing
import KeychainCore
import TeamCore
import KCTestSupport

/// How kc reaches team keychains (`-k team:NAME`): only through the team agent, `kc-team
/// agent` on `team-agent.sock`; never opened in kc, never a password prompt but `kc unlock`'s.
/// No PostgreSQL here: `TeamKeychains.open` is not written yet, and these tests need only
/// that the requests get to it.
@Suite struct TeamRoutingTests {
    /// A runner token for `name` (its seed and DSN made up), as its text.
    static func token(_ name: String = "infra") throws -> String {
        let token = try RunnerToken(
            keychainID: [UInt8](repeating: 7, count: 32),
            seed: SecureBytes(copying: [UInt8](repeating: 9, count: 32)), name: name,
            dsn: SecureBytes(copying: Array("postgresql://ci:runner-db-pw@127.0.0.1:1/kc".utf8)))
        return try token.encoded().withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }

    /// No team file and no agent holding it: exit 50, and the hint says how a device gets one.
    @Test func aTeamKeychainThisDeviceHasNotJoinedIsNoSuchKeychain() throws {
        let t = try TeamHome()
        for out in [
            try t.kc(["find", "-k", "team:nope", "-s", "x"]),
            try t.kc(["list"], extra: ["KC_KEYCHAIN": "team:nope"]),
            try t.kc(["unlock", "-k", "team:nope"], password: KCHome.password),
            try t.kc(["lock", "-k", "team:nope"])
        ] {
            #expect(out.status == 50, "\(out.stderr)")
            #expect(out.stderr.contains("no team keychain team:nope on this device"), "\(out.stderr)")
            #expect(out.stderr.contains("kc team join") && out.stderr.contains("kc team create"), "\(out.stderr)")
        }
        // Nothing was started for it.
        #expect(!FileManager.default.fileExists(atPath: t.teamSocket) && !FileManager.default.fileExists(atPath: t.fileSocket))
    }

    /// A malformed team name is a bad parameter, not a file named `team:…`.
    @Test func aMalformedTeamNameIsRefused() throws {
        let t = try TeamHome()
        let out = try t.kc(["find", "-k", "team:Infra", "-s", "x"])
        #expect(out.status == 206 && out.stderr.contains("\"Infra\" is not a team name"), "\(out.stderr)")
        let create = try t.kc(["create", "team:infra"], password: KCHome.password)
        #expect(create.status == 206 && create.stderr.contains("kc team create"), "\(create.stderr)")
        #expect(!FileManager.default.fileExists(atPath: t.home.directory + "/data/kc/team:infra.keychain-db"))
    }

    /// With a team file but no team agent holding it: "locked", exit 36, at once, whatever
    /// password kc could have had: a team keychain is never opened in kc.
    @Test func aTeamKeychainTheAgentDoesNotHoldIsLockedWithoutAPrompt() throws {
        let t = try TeamHome()
        try t.makeTeamFile("infra")
        for (args, extra) in [
            (["find", "-k", "team:infra", "-s", "deploy", "-w"], [:]),   // the fast path
            (["find", "-k", "team:infra", "-s", "deploy", "--json"], [:]),
            (["list"], ["KC_KEYCHAIN": "team:infra"]),   // ArgumentParser's path
            (["read", "kc://deploy/ci?keychain=team:infra"], ["KC_KEYCHAIN": "team:infra"])
        ] as [([String], [String: String])] {
            let out = try t.kc(args, password: KCHome.password, extra: extra)
            #expect(out.status == 36, "\(args): \(out.stderr)")
            #expect(out.stderr.contains("the team keychain team:infra is locked"), "\(args): \(out.stderr)")
            #expect(out.stderr.contains("kc unlock -k team:infra"), "\(args): \(out.stderr)")
        }
        // On a terminal too: no prompt, the same answer.
        let s = try t.onTerminal(["find", "-k", "team:infra", "-s", "deploy", "-w"], answers: [["Password", "typed\n"]])
        #expect(s.status == 36, "\(s.screen)")
        #expect(!s.screen.contains("Password") && s.echo_off.isEmpty, "nothing was asked: \(s.screen)")
        #expect(s.screen.contains("the team keychain team:infra is locked"), "\(s.screen)")
        #expect(!FileManager.default.fileExists(atPath: t.teamSocket), "no agent was started for a read")
    }

    /// `kc-team agent` is the team agent: `kc status` shows it running, `kc agent --stop`
    /// stops it (as it stops the file agent), and neither agent is the other.
    @Test func theTeamAgentRunsOnItsOwnSocketAndStopsWithTheFileAgent() throws {
        let t = try TeamHome()
        let start = try t.home.sh("nohup kc-team agent >/dev/null 2>&1 &", password: nil)
        #expect(start.status == 0)
        #expect(t.wait { t.teamAgentPID() != nil }, "kc-team agent made no socket")
        let pid = try #require(t.teamAgentPID())
        let exe = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe")
        #expect(exe == TeamHome.teamProgram, "the team agent is kc-team: \(exe)")
        #expect(!FileManager.default.fileExists(atPath: t.fileSocket), "the file agent was not started")
        var out = try t.kc(["status"])
        #expect(out.status == 0 && out.stdout == "no keychain is unlocked\nthe team agent (kc-team agent) runs and holds no team keychain\n", "\(out.stdout)")
        // A team keychain it does not hold: locked, with or without a team file.
        try t.makeTeamFile("infra")
        out = try t.kc(["status", "-k", "team:infra"])
        #expect(out.status == 0 && out.stdout == "team:infra: locked\n", "\(out.stdout) \(out.stderr)")
        out = try t.kc(["lock", "--all"])
        #expect(out.status == 0, "\(out.stderr)")
        out = try t.kc(["agent", "--stop"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(t.wait { kill(pid, 0) != 0 }, "the team agent stopped")
        #expect(!FileManager.default.fileExists(atPath: t.teamSocket))
        out = try t.kc(["status"])
        #expect(out.stdout == "no keychain is unlocked\n", "\(out.stdout)")
    }

    /// `kc unlock -k team:NAME` starts `kc-team agent` and hands it the password; the team
    /// agent's opener answers: here it reads the device's team file, which is not one
    /// (exit 93, errSecDecode), proof that the request went all the way to `TeamKeychains.open`.
    @Test func unlockReachesTheTeamAgentWhoseOpenerReadsTheTeamFile() throws {
        let t = try TeamHome()
        try t.makeTeamFile("infra")
        let out = try t.kc(["unlock", "-k", "team:infra"], password: KCHome.password)
        #expect(out.status == 93, "\(out.stderr)")
        #expect(out.stderr.contains("team file"), "the team agent's answer: \(out.stderr)")
        let pid = try #require(t.teamAgentPID(), "kc unlock started the team agent")
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/exe") == TeamHome.teamProgram)
        #expect(!FileManager.default.fileExists(atPath: t.fileSocket), "the file agent was not involved")
        // On a terminal: the prompt names the team keychain, the typing is not echoed.
        let s = try t.onTerminal(["unlock", "-k", "team:infra"], answers: [["Password for team keychain team:infra: ", "typed-team-pw\n"]])
        #expect(s.status == 93, "\(s.screen)")
        #expect(s.echo_off == [true] && !s.screen.contains("typed-team-pw"), "\(s.screen)")
        #expect(s.screen.contains("team file"), "\(s.screen)")
    }

    /// A runner token (`--team-token-file`, `KC_TEAM_TOKEN`) unlocks the team it names:
    /// no team file, no -k, no terminal needed; the request reaches the team agent.
    @Test func aRunnerTokenUnlocksTheTeamItNames() throws {
        let t = try TeamHome()
        let token = try Self.token("infra")
        let file = t.home.directory + "/token"
        try Data((token + "\n").utf8).write(to: URL(fileURLWithPath: file))
        chmod(file, 0o600)
        var out = try t.kc(["unlock", "--team-token-file", file])
        #expect(out.status == 53 && out.stderr.contains("cannot reach the PostgreSQL server"), "\(out.stderr)")
        #expect(t.teamAgentPID() != nil, "the team agent was started")
        out = try t.kc(["unlock"], extra: ["KC_TEAM_TOKEN": token])
        #expect(out.status == 53 && out.stderr.contains("cannot reach the PostgreSQL server"), "\(out.stderr)")
        out = try t.kc(["unlock", "-k", "team:infra"], extra: ["KC_TEAM_TOKEN": token])
        #expect(out.status == 53 && out.stderr.contains("cannot reach the PostgreSQL server"), "\(out.stderr)")
        // A token for another team than -k names; a token with a keychain file's -k.
        out = try t.kc(["unlock", "-k", "team:other", "--team-token-file", file])
        #expect(out.status == 206 && out.stderr.contains("the runner token is for team:infra, not team:other"), "\(out.stderr)")
        out = try t.kc(["unlock", "-k", "work", "--team-token-file", file])
        #expect(out.status == 206 && out.stderr.contains("--team-token-file unlocks a team keychain"), "\(out.stderr)")
        // A malformed token is a bad parameter, and the message does not quote it.
        out = try t.kc(["unlock"], extra: ["KC_TEAM_TOKEN": "kcr1:" + String(token.dropFirst(5).reversed())])
        #expect(out.status == 206 && out.stderr.contains("the runner token is malformed"), "\(out.stderr)")
        #expect(!out.stderr.contains(String(token.dropFirst(5).prefix(12))) && !out.stderr.contains("runner-db-pw"), "\(out.stderr)")
        // KC_TEAM_TOKEN with a keychain file chosen is left alone: that is a file unlock.
        out = try t.kc(["unlock", "-k", "work"], extra: ["KC_TEAM_TOKEN": token])
        #expect(out.status == 50 && out.stderr.contains("work.keychain-db"), "\(out.stderr)")
    }

    /// KC_TEAM_TOKEN is read once and wiped: no child of kc sees it, nor its value under
    /// another name, and kc's own environment block no longer holds it.
    @Test func theRunnerTokenNeverReachesAChild() throws {
        let t = try TeamHome()
        let token = try Self.token("infra")
        let out = try t.kc(
            ["run", "--", "/bin/sh", "-c", "cat /proc/$PPID/environ > '\(t.home.directory)/kc-environ'; /usr/bin/env"],
            extra: ["KC_TEAM_TOKEN": token])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("HOME="), "the child's environment was printed: \(out.stdout)")
        #expect(!out.stdout.contains("KC_TEAM_TOKEN") && !out.stdout.contains("kcr1:"), "\(out.stdout)")
        let environ = try Data(contentsOf: URL(fileURLWithPath: t.home.directory + "/kc-environ"))
        #expect(environ.contains(Data("KC_TEAM_TOKEN=".utf8)), "kc started with it")
        #expect(!environ.contains(Data("kcr1:".utf8)), "its value was wiped in place at start")
        // kc inject's output is the template's, never the token.
        try Data("plain {{ not.a.ref }}\n".utf8).write(to: URL(fileURLWithPath: t.home.directory + "/t.tmpl"))
        let inject = try t.kc(["inject", "-i", t.home.directory + "/t.tmpl"], extra: ["KC_TEAM_TOKEN": token])
        #expect(inject.status == 0 && !inject.stdout.contains("kcr1:"), "\(inject.stdout) \(inject.stderr)")
    }

    /// `kc team ARGS` is `kc-team ARGS` (exec'd from beside kc); without kc-team beside kc
    /// it is exit 252, naming where kc looked and how to install it.
    @Test func kcTeamRunsKcTeamOrSaysWhereItLooked() throws {
        let t = try TeamHome()
        var out = try t.kc(["team", "agent", "--help"])
        #expect(out.status == 0 && out.stdout.contains("USAGE: kc-team agent"), "kc-team's own help: \(out.stdout) \(out.stderr)")
        out = try t.kc(["team", "no-such-command"])
        #expect(out.status == 2 && out.stderr.contains("no-such-command"), "kc-team's usage error: \(out.stderr)")
        // kc alone in a folder, without kc-team.
        let folder = t.home.directory + "/bin"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: KCBinary.path, toPath: folder + "/kc")
        out = try Spawn.run([folder + "/kc", "team", "members"], environment: t.home.environment)
        #expect(out.status == 252, "\(out.stderr)")
        #expect(out.stderr.contains("cannot run \(folder)/kc-team") && out.stderr.contains("make install"), "\(out.stderr)")
        try t.makeTeamFile("infra")
        out = try Spawn.run([folder + "/kc", "unlock", "-k", "team:infra"], environment: t.home.environment.merging(["KC_PASSWORD": "x"]) { a, _ in a })
        #expect(out.status == 252 && out.stderr.contains("kc-team"), "\(out.stderr)")
    }

    /// A file named like a team keychain (`./team:infra`, or its absolute path) is that
    /// file in every command, and `-k team:infra` is the team keychain, in the folder where
    /// that file is: the two are never taken for each other (`KeychainAddress`).
    @Test func aFileNamedLikeATeamIsNeverTheTeam() throws {
        let t = try TeamHome()
        try t.makeTeamFile("infra")
        let file = t.home.directory + "/team:infra"
        var out = try t.home.sh(
            """
            kc create ./team:infra --kdf interactive &&
            kc add -k ./team:infra -s svc -a me -w file-secret &&
            kc find -k ./team:infra -s svc -w
            """)
        #expect(out.status == 0 && out.stdout == "file-secret", "\(out.stdout) \(out.stderr)")
        #expect(FileManager.default.fileExists(atPath: file), "the file is ./team:infra")
        // -k team:infra, from the same folder, with a password at hand: the team keychain,
        // locked in no agent; the file is not opened with that password.
        out = try t.home.sh("kc find -k team:infra -s svc -w")
        #expect(
            out.status == 36 && out.stderr.contains("the team keychain team:infra is locked") && out.stdout.isEmpty,
            "\(out.stdout) \(out.stderr)")
        out = try t.home.sh("KC_KEYCHAIN=team:infra kc list")
        #expect(out.status == 36 && out.stderr.contains("the team keychain team:infra is locked"), "\(out.stderr)")
        // The file through the file agent, by its relative and its absolute path, and by KC_KEYCHAIN.
        out = try t.home.sh("kc unlock -k ./team:infra && KC_KEYCHAIN=./team:infra kc find -s svc -w")
        #expect(out.status == 0 && out.stdout == "file-secret", "\(out.stderr)")
        out = try t.kc(["find", "-k", file, "-s", "svc", "-w"])
        #expect(out.status == 0 && out.stdout == "file-secret", "read through the agent without a password: \(out.stderr)")
        out = try t.kc(["status"])
        #expect(out.status == 0 && out.stdout.hasPrefix("\(file): unlocked") && out.stdout.split(separator: "\n").count == 1, "\(out.stdout)")
        #expect(!FileManager.default.fileExists(atPath: t.teamSocket), "nothing went to the team agent")
        out = try t.kc(["status", "-k", "team:infra"])
        #expect(out.status == 0 && out.stdout == "team:infra: locked\n", "\(out.stdout) \(out.stderr)")
        // Locking the team keychain leaves the file unlocked; locking the file locks it.
        out = try t.home.sh("kc lock -k team:infra; kc find -k ./team:infra -s svc -w", password: nil)
        #expect(out.stdout == "file-secret", "\(out.stderr)")
        out = try t.home.sh("kc lock -k ./team:infra && kc find -k ./team:infra -s svc -w", password: nil)
        #expect(out.status == 36, "\(out.stdout) \(out.stderr)")
        // A backup to ./team:x is a file; to team:x it is refused.
        out = try t.home.sh("kc backup -k ./team:infra ./team:copy")
        #expect(out.status == 0 && FileManager.default.fileExists(atPath: t.home.directory + "/team:copy"), "\(out.stderr)")
        out = try t.home.sh("kc backup -k ./team:infra team:copy")
        #expect(out.status == 206 && out.stderr.contains("DEST team:copy is a team keychain"), "\(out.stderr)")
    }
}
