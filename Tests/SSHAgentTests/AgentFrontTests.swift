import Foundation
import KCTestSupport
import Testing

/// `kc ssh-agent -s | -c | --stop`, run through the real kc binary: the shell lines, a
/// detached agent started once and reused, stopped; exit 252 without kc-ssh.
@Suite struct AgentFrontTests {
    @Test func sPrintsTheSocketStartsTheAgentOnceAndStopStopsIt() throws {
        let home = try KCHome()
        let socket = home.environment["KC_AGENT_DIR", default: ""] + "/ssh-agent.sock"
        defer { _ = try? home.kc(["ssh-agent", "--stop"]) }
        let first = try home.kc(["ssh-agent", "-s"])
        #expect(first.status == 0, "\(first.stderr)")
        #expect(first.stdout == "SSH_AUTH_SOCK=\(socket); export SSH_AUTH_SOCK;\n")
        #expect(first.stderr.contains("started the SSH agent"))
        // ssh-add talks to it.
        let env = ["HOME": home.directory, "PATH": "/usr/bin:/bin", "SSH_AUTH_SOCK": socket]
        let listed = try Spawn.run(["/usr/bin/ssh-add", "-l"], environment: env, timeout: 30)
        #expect(listed.stdout.contains("The agent has no identities."), "\(listed.stderr)")
        // A second -s (and -c) finds the running one.
        let second = try home.kc(["ssh-agent", "-c"])
        #expect(second.status == 0)
        #expect(second.stdout == "setenv SSH_AUTH_SOCK \(socket);\n")
        #expect(second.stderr.contains("serves \(socket)"))
        #expect(!second.stderr.contains("started"))
        // --stop: nothing answers afterwards.
        let stop = try home.kc(["ssh-agent", "--stop"])
        #expect(stop.status == 0, "\(stop.stderr)")
        let gone = try Spawn.run(["/usr/bin/ssh-add", "-l"], environment: env, timeout: 30)
        #expect(gone.status == 2, "\(gone.stdout) \(gone.stderr)")
    }

    @Test func theDetachedAgentKeepsNoPasswordInItsEnvironment() throws {
        let home = try KCHome()
        defer { _ = try? home.kc(["ssh-agent", "--stop"]) }
        let started = try home.kc(["ssh-agent", "-s"], extra: ["KC_PASSWORD": "hunter2-secret", "KC_TEAM_TOKEN": "kcr1:token-secret"])
        #expect(started.status == 0, "\(started.stderr)")
        let pid = try #require(started.stderr.split(separator: "(pid ").dropFirst().first?.split(separator: ")").first.flatMap { Int($0) })
        // Root reads /proc/PID/environ even of a non-dumpable process.
        let environ = try #require(FileManager.default.contents(atPath: "/proc/\(pid)/environ"))
        let text = String(decoding: environ, as: UTF8.self)
        #expect(text.contains("KC_AGENT_DIR="), "not the agent's environment: \(text)")
        #expect(!text.contains("hunter2-secret"))
        #expect(!text.contains("token-secret"))
    }

    @Test func withoutKcSSHBesideItKcExits252() throws {
        let folder = NSTemporaryDirectory() + "/kc-alone-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        try FileManager.default.copyItem(atPath: KCBinary.path, toPath: folder + "/kc")
        for arguments in [["ssh-agent", "-s"], ["ssh", "list"]] {
            let out = try Spawn.run([folder + "/kc"] + arguments, environment: ["PATH": "/usr/bin:/bin", "HOME": folder], timeout: 30)
            #expect(out.status == 252, "\(out.stderr)")
            #expect(out.stderr.contains("kc-ssh"))
            #expect(out.stdout.isEmpty)
        }
        // kc's own help for them needs no kc-ssh.
        let help = try Spawn.run([folder + "/kc", "ssh-agent", "--help"], environment: ["PATH": "/usr/bin:/bin", "HOME": folder], timeout: 30)
        #expect(help.status == 0)
        #expect(help.stdout.contains("eval \"$(kc ssh-agent -s)\""))
    }
}
