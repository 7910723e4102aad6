import Foundation
import Testing
@testable import KeychainCore
import KeychainClient
import AgentWire
import POSIXSupport
import KCTestSupport

/// `kc unlock`, the agent process, `kc lock`, timeouts and the agent's defences, through
/// the real binary and a real agent process.
@Suite struct AgentTests {
    /// A home with a keychain holding one item, unlocked in the agent.
    static func unlocked(timeout: Int? = nil) throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        _ = try h.kc(["add", "-s", "ci", "-a", "bot", "-w", "the-token"], password: KCHome.password)
        var args = ["unlock"]
        if let timeout { args += ["--timeout", String(timeout)] }
        let out = try h.kc(args, password: KCHome.password)
        #expect(out.status == 0 && out.stdout.isEmpty, "\(out.stderr)")
        return h
    }

    /// The pid the running agent wrote into its lock file.
    func agentPID(_ h: KCHome) throws -> Int32 {
        let text = try String(contentsOfFile: h.directory + "/agent/agent.lock", encoding: .utf8)
        return Int32(text.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0
    }

    /// Every live `kc agent` process of this test's home (tests run in parallel).
    func agentProcesses(_ h: KCHome) -> [Int32] {
        let marker = "KC_AGENT_DIR=\(h.directory)/agent"
        return ((try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []).compactMap { name -> Int32? in
            guard let pid = Int32(name),
                let cmd = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline"),
                String(decoding: cmd, as: UTF8.self).hasSuffix("\0agent\0"),
                let env = FileManager.default.contents(atPath: "/proc/\(pid)/environ"),
                String(decoding: env, as: UTF8.self).split(separator: "\0").contains(where: { $0 == marker })
            else { return nil }
            return pid
        }
    }

    @Test func unlockFindLockFind() throws {
        let h = try Self.unlocked()
        var out = try h.kc(["find", "-s", "ci", "-a", "bot", "-w"])   // no password source at all
        #expect(out.status == 0 && out.stdout == "the-token", "\(out.stderr)")
        // Writes go through the agent too.
        #expect(try h.kc(["add", "-s", "new", "-w", "v2"]).status == 0)
        #expect(try h.kc(["update", "-s", "new", "-w", "v3"]).status == 0)
        #expect(try h.kc(["find", "-s", "new", "-w"]).stdout == "v3")
        #expect(try h.kc(["delete", "-s", "new"]).status == 0)
        #expect(try h.kc(["find", "-s", "new"]).status == 44)
        out = try h.kc(["status"])
        #expect(out.stdout.hasPrefix("\(h.defaultKeychain): unlocked, locks in "))
        #expect(try h.kc(["lock"]).status == 0)
        out = try h.kc(["find", "-s", "ci", "-a", "bot", "-w"])
        #expect(out.status == 36)
        #expect(out.stderr.contains("run `kc unlock` first"))
        #expect(try h.kc(["status"]).stdout == "no keychain is unlocked\n")
    }

    @Test func socketAndFolderArePrivate() throws {
        let h = try Self.unlocked()
        var st = stat()
        #expect(lstat(h.directory + "/agent", &st) == 0 && st.st_mode & 0o777 == 0o700 && (st.st_mode & S_IFMT) == S_IFDIR)
        #expect(lstat(h.directory + "/agent/agent.sock", &st) == 0 && st.st_mode & 0o777 == 0o600 && (st.st_mode & S_IFMT) == S_IFSOCK)
        #expect(st.st_uid == geteuid())
    }

    @Test func sigtermWipesAndEnds() throws {
        let h = try Self.unlocked()
        let pid = try agentPID(h)
        #expect(pid > 0 && kill(pid, SIGTERM) == 0)
        var gone = false
        for _ in 0..<50 where !gone {
            Thread.sleep(forTimeInterval: 0.1)
            gone = kill(pid, 0) != 0
        }
        #expect(gone, "the agent ended on SIGTERM")
        #expect(!FileManager.default.fileExists(atPath: h.directory + "/agent/agent.sock"), "and removed its socket")
        #expect(try h.kc(["find", "-s", "ci", "-w"]).status == 36)
    }

    /// Issue 32: the agent's folder removed under it (logout's clean-up of /run/user/UID, a
    /// tmp cleaner) left it running, unlocked and unreachable; it now wipes and ends.
    @Test func removedFolderWipesAndEnds() throws {
        let h = try Self.unlocked()
        let pid = try agentPID(h)
        #expect(pid > 0)
        try FileManager.default.removeItem(atPath: h.directory + "/agent")
        var gone = false
        for _ in 0..<50 where !gone {
            Thread.sleep(forTimeInterval: 0.1)
            gone = kill(pid, 0) != 0
        }
        #expect(gone, "the agent ended within 5 s of its socket going")
        #expect(try h.kc(["find", "-s", "ci", "-w"]).status == 36, "nothing holds the keychain unlocked")
        // A new agent starts in a new folder as usual.
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(try h.kc(["find", "-s", "ci", "-a", "bot", "-w"]).status == 0)
        #expect(try h.kc(["lock"]).status == 0)
    }

    @Test func theAgentLeavesWhenNothingIsUnlocked() throws {
        let h = try KCHome()
        h.environment["KC_AGENT_GRACE"] = "1"
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(agentProcesses(h).count == 1)
        #expect(try h.kc(["lock"]).status == 0)
        var left = false
        for _ in 0..<60 where !left {
            Thread.sleep(forTimeInterval: 0.1)
            left = agentProcesses(h).isEmpty
        }
        #expect(left, "the agent exits after its grace period with nothing unlocked")
    }

    @Test func unlockReturnsAtOnceInCommandSubstitution() throws {
        let h = try KCHome()
        try h.createKeychain()
        let started = Date()
        let out = try h.sh("OUT=$(kc unlock); echo \"[$OUT] $?\"")
        #expect(out.stdout == "[] 0\n", "\(out.stderr)")
        #expect(Date().timeIntervalSince(started) < 10, "the agent does not hold the caller's stdout open")
    }

    @Test func wrongPasswordLeavesTheAgentAsItWas() throws {
        let h = try Self.unlocked()
        let before = try h.kc(["status", "--json"]).stdout
        let out = try h.kc(["unlock"], password: "wrong")
        #expect(out.status == 51)
        let after = try h.kc(["status", "--json"]).stdout
        #expect(before.contains(h.defaultKeychain) && after.contains(h.defaultKeychain))
        #expect(try h.kc(["find", "-s", "ci", "-w"]).stdout == "the-token")
    }

    @Test func idleTimeoutLocks() throws {
        let h = try Self.unlocked(timeout: 2)
        #expect(try h.kc(["find", "-s", "ci", "-w"]).status == 0)
        Thread.sleep(forTimeInterval: 3.2)
        #expect(try h.kc(["find", "-s", "ci", "-w"]).status == 36, "locked after 2 s without use")
        #expect(try h.kc(["status"]).stdout == "no keychain is unlocked\n")
    }

    @Test func statusDoesNotResetTheIdleTimer() throws {
        let h = try Self.unlocked(timeout: 3)
        Thread.sleep(forTimeInterval: 1.5)
        let json = try h.kc(["status", "--json"]).stdout
        let list = try #require(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [[String: Any]])
        #expect((list.first?["idle"] as? Int).map { $0 <= 2 } == true, "\(json)")
        Thread.sleep(forTimeInterval: 2.0)
        #expect(try h.kc(["find", "-s", "ci", "-w"]).status == 36, "status at 1.5 s did not extend the 3 s timeout")
    }

    @Test func lockAll() throws {
        let h = try Self.unlocked()
        #expect(try h.kc(["create", "second", "--kdf", "interactive"], password: "p2").status == 0)
        #expect(try h.kc(["add", "-k", "second", "-s", "x", "-w", "y"], password: "p2").status == 0)
        #expect(try h.kc(["unlock", "-k", "second"], password: "p2").status == 0)
        #expect(try h.kc(["find", "-k", "second", "-s", "x", "-w"]).stdout == "y")
        #expect(try h.kc(["status"]).stdout.split(separator: "\n").count == 2)
        #expect(try h.kc(["lock", "--all"]).status == 0)
        #expect(try h.kc(["find", "-k", "second", "-s", "x", "-w"]).status == 36)
        #expect(try h.kc(["find", "-s", "ci", "-w"]).status == 36)
    }

    @Test func agentKilledWithSIGKILLIsReplaced() throws {
        let h = try Self.unlocked()
        let pid = try agentPID(h)
        #expect(pid > 0)
        kill(pid, SIGKILL)
        Thread.sleep(forTimeInterval: 0.3)
        #expect(FileManager.default.fileExists(atPath: h.directory + "/agent/agent.sock"), "a stale socket is left behind")
        var out = try h.kc(["find", "-s", "ci", "-w"])
        #expect(out.status == 36, "the dead agent holds nothing: \(out.stderr)")
        out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "ci", "-w"]).stdout == "the-token")
        #expect(try h.sh("kc find -s ci -w >/dev/null && sqlite3 '\(h.defaultKeychain)' 'PRAGMA integrity_check'", password: nil).stdout == "ok\n")
    }

    @Test func twoUnlocksAtOnceStartOneAgent() throws {
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.sh("kc unlock & kc unlock & wait; echo unlocked")
        #expect(out.stdout == "unlocked\n", "\(out.stderr)")
        #expect(agentProcesses(h).count == 1)
        #expect(try h.kc(["find", "--all"]).status == 44, "unlocked: nothing there, but no password asked")
    }

    @Test func concurrentClientsAllGetTheRightSecret() throws {
        let h = try Self.unlocked()
        for i in 0..<8 { _ = try h.kc(["add", "-s", "svc\(i)", "-w", "secret-\(i)"]) }
        let out = try h.sh(
            """
            for p in 0 1 2 3 4 5 6 7; do
              ( for i in $(seq 200); do
                  [ "$(kc find -s svc$p -w 2>>errors.log)" = "secret-$p" ] || echo "wrong answer in $p"
                done ) &
            done
            wait
            echo done
            """, password: nil)
        let errors = (try? String(contentsOfFile: h.directory + "/errors.log", encoding: .utf8)) ?? ""
        #expect(out.stdout == "done\n", "\(out.stdout.prefix(300)) \(errors.prefix(500))")
    }

    @Test func theAgentHoldsNoPasswordAndDumpsNoCore() throws {
        let h = try Self.unlocked()
        let pid = try agentPID(h)
        let environ = try Data(contentsOf: URL(fileURLWithPath: "/proc/\(pid)/environ"))
        let text = String(decoding: environ, as: UTF8.self)
        #expect(!text.contains("KC_PASSWORD") && !text.contains(KCHome.password))
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let core = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") }
        #expect(
            core.map { $0.split(separator: " ", omittingEmptySubsequences: true).dropFirst(4).prefix(2) == ["0", "0"] } == true,
            "\(core ?? "")")
        let stat = try String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8)
        let fields = stat.split(separator: ")").last?.split(separator: " ") ?? []
        // After "(comm)": state, ppid, pgrp, session.
        #expect(fields.count > 4 && fields[3] == Substring(String(pid)), "the agent leads its own session (setsid): \(stat)")
    }

    /// DESIGN.md: the agent refuses a generation lower than one it has seen. An older copy
    /// of the file put back while the agent runs is refused at the next unlock.
    @Test func theAgentRefusesARestoredOlderFile() throws {
        let h = try Self.unlocked()
        #expect(try h.kc(["lock"]).status == 0)   // the agent closes the file (its log is folded in)
        let old = h.directory + "/old.keychain-db"
        #expect(try h.sh("cp '\(h.defaultKeychain)' '\(old)' && echo copied", password: nil).stdout == "copied\n")
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(try h.kc(["add", "-s", "later", "-w", "v"]).status == 0)
        #expect(try h.kc(["lock"]).status == 0)
        #expect(
            try h.sh(
                "rm -f '\(h.defaultKeychain)-wal' '\(h.defaultKeychain)-shm' && cp '\(old)' '\(h.defaultKeychain)' && echo restored",
                password: nil
            ).stdout == "restored\n")
        let out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 93, "\(out.stderr)")
        #expect(out.stderr.contains("an older copy"))
        #expect(try h.kc(["find", "-s", "ci", "-w"]).status == 36, "nothing was unlocked")
    }

    @Test func rekeyElsewhereMakesTheAgentLetGo() throws {
        let h = try Self.unlocked()
        // A re-key by a process that does not reach this agent (`kc passwd` itself tells the
        // agent it reaches: PasswdAgentSpliceTests): the agent notices at its next request.
        let out = try h.kc(
            ["passwd", "--rekey"], password: KCHome.password,
            extra: ["KC_NEW_PASSWORD": "rotated", "KC_AGENT_DIR": h.directory + "/another-agent"])
        #expect(out.status == 0, "\(out.stderr)")
        let find = try h.kc(["find", "-s", "ci", "-w"])
        #expect(find.status == 36, "\(find.stderr)")
        #expect(find.stderr.contains("re-keyed"))
        #expect(try h.kc(["unlock"], password: "rotated").status == 0)
        #expect(try h.kc(["find", "-s", "ci", "-w"]).stdout == "the-token")
    }

    /// Hostile or broken messages get an error reply or a closed connection; the agent
    /// keeps serving.
    @Test func malformedMessagesNeverStopTheAgent() throws {
        let h = try Self.unlocked()
        let paths = AgentPaths(directory: h.directory + "/agent")
        func send(_ bytes: [UInt8], close early: Bool = false) {
            guard let socket = try? UnixSocket.connect(to: paths.socket) else { Issue.record("no agent"); return }
            try? socket.writeAll(bytes, until: .after(seconds: 2))
            if !early { _ = try? socket.readFrame(until: .after(seconds: 3)) }
        }
        var cases: [[UInt8]] = [
            [], [0, 0], [0xFF, 0xFF, 0xFF, 0xFF], [0, 0, 0, 3, 0, 1],   // empty, short, huge, no body
            AgentProtocol.frame(type: 4, body: []), AgentProtocol.frame(type: 99, body: [1, 2, 3]),
            [0, 0, 0, 3, 0, 9, 3],   // another protocol version
            AgentProtocol.frame(type: 4, body: [0, 0, 0, 200, 1]),   // length past the end
            AgentProtocol.frame(type: 4, body: [0, 0, 0, 1, 0x2F, 2, 7, 0xFF, 0xFF, 0xFF, 0xFF]),   // a dictionary of 4G entries
            AgentProtocol.frame(type: 1, body: [0, 0, 0, 1, 0x2F])   // unlock cut short
        ]
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<200 {
            let n = Int.random(in: 0..<64, using: &rng)
            let body = (0..<n).map { _ in UInt8.random(in: 0...255, using: &rng) }
            // Random bodies for every request type except lock and stop, which any same-uid
            // client may send legitimately.
            let type = [0, 1, 3, 4, 6, 200].randomElement(using: &rng) ?? 4
            cases.append(AgentProtocol.frame(type: UInt8(type), body: body))
        }
        for (i, bytes) in cases.enumerated() { send(bytes, close: i % 3 == 0) }
        #expect(try h.kc(["find", "-s", "ci", "-w"]).stdout == "the-token", "the agent still serves")
    }

    /// A client that asks for a large answer and never reads it cannot hold the agent.
    @Test func aClientThatStopsReadingDoesNotBlockTheAgent() throws {
        let h = try Self.unlocked()
        let file = h.directory + "/big.bin"
        try Data(count: 4 << 20).write(to: URL(fileURLWithPath: file))
        for i in 0..<3 { #expect(try h.kc(["add", "-s", "big\(i)", "--data-file", file]).status == 0) }
        var w = ByteWriter()
        w.lengthPrefixed(Array(h.defaultKeychain.utf8))
        w.u8(AgentProtocol.Operation.copyMatching.rawValue)
        try ValueCodec.encode([kSecClass: kSecClassGenericPassword, kSecMatchLimit: kSecMatchLimitAll, kSecReturnData: true] as [String: Any], into: &w)
        try ValueCodec.encode(nil, into: &w)
        let socket = try #require(try UnixSocket.connect(to: h.directory + "/agent/agent.sock"))
        try socket.writeAll(AgentProtocol.frame(type: AgentProtocol.Request.operation.rawValue, body: w.bytes), until: .after(seconds: 5))
        // Never read. Another client is still served within the agent's write deadline.
        let started = Date()
        #expect(try h.kc(["find", "-s", "ci", "-w"]).stdout == "the-token")
        #expect(Date().timeIntervalSince(started) < 15)
        _ = socket
    }

    @Test func absurdTimeoutsAreRefusedNotFatal() throws {
        let h = try Self.unlocked()
        var out = try h.kc(["unlock", "--timeout", "20000000000"], password: KCHome.password)
        #expect(out.status == 2)
        out = try h.kc(["settings", "-t", "20000000000"], password: KCHome.password)
        #expect(out.status == 2)
        #expect(try h.kc(["find", "-s", "ci", "-w"]).stdout == "the-token", "the agent still runs")
    }

    /// Another uid that reaches the socket (here through CAP_DAC_OVERRIDE, since the 0700
    /// folder stops it otherwise) is refused by the agent's SO_PEERCRED check.
    @Test(.enabled(if: geteuid() == 0, "needs root to run a client as another uid"))
    func anotherUIDIsRefusedByTheAgent() throws {
        let h = try Self.unlocked()
        let socketPath = h.directory + "/agent/agent.sock"
        let frame = AgentProtocol.frame(type: 3, body: [])   // status
        let script = """
            import socket, os, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.connect(sys.argv[1])
            s.settimeout(5)
            try:
                s.sendall(bytes.fromhex(sys.argv[2]))
                data = s.recv(100)
            except (BrokenPipeError, ConnectionResetError):
                data = b""
            print(os.getuid(), len(data))
            """
        let hex = frame.map { String(format: "%02x", $0) }.joined()
        let out = try h.sh(
            """
            setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+dac_override --ambient-caps=+dac_override \
              python3 -c '\(script)' '\(socketPath)' '\(hex)'
            python3 -c '\(script)' '\(socketPath)' '\(hex)'
            """, password: nil)
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines.first == "65534 0", "another uid gets no reply at all: \(out.stdout) \(out.stderr)")
        #expect(lines.count == 2 && lines[1].hasPrefix("0 ") && lines[1] != "0 0", "this uid is answered: \(out.stdout)")
        #expect(try h.kc(["find", "-s", "ci", "-w"]).stdout == "the-token")
    }

    /// A process of another uid listening at the socket path: the client refuses before it
    /// sends a byte (the password included).
    @Test(.enabled(if: geteuid() == 0, "needs root to listen as another uid"))
    func theClientRefusesAnAgentOfAnotherUID() throws {
        let h = try KCHome()
        try h.createKeychain()
        let dir = h.directory + "/agent"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let script = """
            import socket, os, sys
            s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            s.bind(sys.argv[1])
            os.setgid(65534); os.setuid(65534)
            s.listen(1)
            print("ready", flush=True)
            c, _ = s.accept()
            c.settimeout(3)
            try:
                data = c.recv(1000)
            except Exception:
                data = b""
            print("received", len(data), flush=True)
            """
        let out = try h.sh(
            """
            python3 -c '\(script)' '\(dir)/agent.sock' > \(h.directory)/fake.out &
            for i in $(seq 50); do grep -q ready \(h.directory)/fake.out 2>/dev/null && break; sleep 0.1; done
            kc find -s x -w; echo "exit $?"
            wait
            """)
        #expect(out.stdout.hasSuffix("exit 206\n"), "\(out.stdout) \(out.stderr)")
        #expect(out.stderr.contains("runs as uid 65534, not as you; nothing was sent"))
        #expect(
            try String(contentsOfFile: h.directory + "/fake.out", encoding: .utf8) == "ready\nreceived 0\n",
            "the fake agent received nothing")
    }

    @Test func anUnsafeAgentFolderIsRefused() throws {
        let h = try KCHome()
        try h.createKeychain()
        let dir = h.directory + "/agent"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o755])
        var out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 206)
        #expect(out.stderr.contains("has mode 755, not 700"))
        try FileManager.default.removeItem(atPath: dir)
        symlink(h.directory, dir)
        out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 206)
        #expect(out.stderr.contains("is not a real folder"))
    }

    /// With `ulimit -c unlimited` in the shell that unlocks, an agent killed by SIGABRT
    /// leaves no core file (a control process in the same shell does), and neither its
    /// command line nor its environment holds the password.
    @Test(
        .enabled(
            if: (try? String(contentsOfFile: "/proc/sys/kernel/core_pattern", encoding: .utf8))?.hasPrefix("core") == true,
            "needs core files written to the working folder"))
    func anAbortedAgentLeavesNoCore() throws {
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.sh(
            """
            ulimit -c unlimited
            mkdir -m 700 control agentcwd
            (cd control && exec sleep 30) & control=$!
            sleep 0.3; kill -ABRT $control; wait $control
            echo "control: $(ls control | grep -c '^core')"
            cd agentcwd && kc unlock >/dev/null 2>&1 || echo "unlock failed"
            pid=$(head -n1 "$KC_AGENT_DIR/agent.lock")
            tr '\\0' ' ' < /proc/$pid/cmdline; echo
            if grep -q -a -F "$KC_PASSWORD" /proc/$pid/environ /proc/$pid/cmdline; then echo "PASSWORD FOUND"; fi
            kill -ABRT $pid; sleep 1
            echo "agent: $(ls | grep -c '^core')"
            """)
        #expect(out.stdout.contains("control: 1"), "the control process should dump core: \(out.stdout)")
        #expect(out.stdout.contains("agent: 0"), "\(out.stdout)")
        #expect(!out.stdout.contains("PASSWORD FOUND") && !out.stdout.contains("unlock failed"), "\(out.stdout)")
        #expect(out.stdout.contains("kc agent") || out.stdout.contains(" agent"), "\(out.stdout)")
    }
}
