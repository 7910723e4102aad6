import Foundation
import KCTestSupport
import KeychainCore
import KeychainClient
import AgentWire
import POSIXSupport
import Testing

/// Issue 15, item 7: the password goes only to the real kc agent.
@Suite struct AgentTrustTests {
    /// Starts an `AgentImpostor` at the home's socket: dumpable, non-dumpable or a zombie
    /// listener; its status empty, or claiming one keychain (`keychain` when given).
    func startImpostor(
        _ h: KCHome, nondumpable: Bool = false, zombie: Bool = false, holds: Bool = false, keychain: String = "",
        asUser: String = ""
    ) throws -> String {
        try AgentImpostor.start(
            h, kind: zombie ? .zombie : nondumpable ? .nondumpable : .dumpable, holds: holds ? keychain : nil,
            version: AgentProtocol.version, asUser: asUser)
    }

    /// What the impostor received, as hex, one entry per connection.
    func received(_ log: String) -> [String] { AgentImpostor.received(log) }

    func hex(_ s: String) -> String { Array(s.utf8).map { String(format: "%02x", $0) }.joined() }

    /// The process that listens at the socket has exited (a zombie, its listening socket
    /// served on by a child): its program can no longer be examined. `kc add` says the
    /// agent exited (errSecIO, exit 220), not that it is an impostor, and sends nothing.
    @Test func aListenerThatHasExitedIsAnExitedAgentAndGetsNoSecret() throws {
        let h = try KCHome()
        try h.createKeychain()
        let log = try startImpostor(h, zombie: true, holds: true, keychain: h.defaultKeychain)
        let secret = "s3cret-for-no-one"
        let out = try h.kc(["add", "-s", "svc", "-a", "me"], stdin: Data(secret.utf8))
        #expect(out.status == 220, "\(out.stderr)")
        #expect(out.stderr.contains("exited during the request") && out.stderr.contains("nothing was sent"), "\(out.stderr)")
        #expect(!received(log).contains { $0.contains(hex(secret)) }, "the secret reached it")
    }

    /// A same-uid process bound at the agent's socket while the keychain is locked gets no
    /// password from `kc unlock`: it is not the kc executable. Exit 22, nothing sent.
    @Test func unlockRefusesAnImpostorOfTheSameUser() throws {
        let h = try KCHome()
        try h.createKeychain()
        let log = try startImpostor(h)
        let out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 22, "\(out.stderr)")
        #expect(out.stderr.contains("is not the real kc agent") && out.stderr.contains("runs another program than this kc"), "\(out.stderr)")
        #expect(out.stderr.contains("the password was not sent"))
        let frames = received(log)
        #expect(!frames.contains { $0.contains(hex(KCHome.password)) }, "the impostor received the password: \(frames)")
        // The only thing it could have been asked is `status` (a frame without a body).
        #expect(frames.allSatisfy { $0.count <= 2 * 8 }, "only a bodiless status request reached it: \(frames)")
    }

    /// A recovery key goes to the agent only as a password does (docs/security.md, "Key
    /// slots"): a same-uid impostor at the socket gets neither the key's text nor its 32
    /// bytes from `kc unlock --recovery`. Exit 22, nothing sent.
    @Test func unlockWithARecoveryKeyRefusesAnImpostor() throws {
        let h = try KCHome()
        try h.createKeychain()
        let added = try h.kc(["keyslot", "add", "--recovery"], password: KCHome.password, extra: KeySlotTests.noAgent(h))
        try #require(added.status == 0, "\(added.stderr)")
        let key = added.stdout.trimmingCharacters(in: .newlines)
        // Modhex is hex spelt with other letters: the bytes on the wire, as hex.
        let bytes = String(key.filter { $0 != "-" }.map { Array("0123456789abcdef")[Array("cbdefghijklnrtuv").firstIndex(of: $0) ?? 0] })
        #expect(bytes.count == 64)
        let log = try startImpostor(h)
        let out = try h.kc(["unlock", "--recovery", "--password-stdin"], stdin: Data(key.utf8))
        #expect(out.status == 22, "\(out.stderr)")
        #expect(out.stderr.contains("was not sent"), "\(out.stderr)")
        let frames = received(log)
        #expect(!frames.contains { $0.contains(bytes) || $0.contains(hex(key)) }, "the impostor received the recovery key: \(frames)")
    }

    /// An impostor that says it holds the keychain receives no secret from `kc add`: a
    /// request that carries one is checked as far as the kernel shows the peer.
    @Test func addRefusesAnImpostorThatSaysItHoldsTheKeychain() throws {
        let h = try KCHome()
        try h.createKeychain()
        let log = try startImpostor(h, holds: true, keychain: h.defaultKeychain)
        let secret = "s3cret-for-the-real-agent-only"
        let out = try h.kc(["add", "-s", "svc", "-a", "me"], stdin: Data(secret.utf8))
        #expect(out.status == 22, "\(out.stderr)")
        #expect(out.stderr.contains("runs another program than this kc") && out.stderr.contains("the secret was not sent"), "\(out.stderr)")
        let frames = received(log)
        #expect(frames.count >= 1, "kc asked it for its status first: \(frames)")
        #expect(!frames.contains { $0.contains(hex(secret)) }, "the impostor received the secret: \(frames)")
    }

    /// The impostor made non-dumpable, as the real agent is, against kc run as a normal
    /// user (root sees through that with CAP_SYS_PTRACE; a normal user cannot see its
    /// program). Claiming to hold a keychain, it is refused: this kc did not start it.
    @Test(.enabled(if: geteuid() == 0, "needs root to run kc as another user"))
    func unlockAsANormalUserRefusesANonDumpableImpostor() throws {
        let h = try NobodyHome()
        let log = try startImpostor(h.home, nondumpable: true, holds: true, asUser: NobodyHome.setpriv)
        let out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 22, "\(out.stderr)")
        #expect(out.stderr.contains("kc cannot establish that the agent"), "\(out.stderr)")
        let frames = received(log)
        #expect(!frames.contains { $0.contains(hex(KCHome.password)) }, "the impostor received the password: \(frames)")
    }

    /// The same, claiming to hold nothing: kc asks it to stop (no secret in that), starts
    /// its own agent, which takes the socket over (the impostor holds no lock), and
    /// unlocks there. The impostor never sees the password.
    @Test(.enabled(if: geteuid() == 0, "needs root to run kc as another user"))
    func unlockAsANormalUserReplacesAnEmptyUnverifiableAgent() throws {
        let h = try NobodyHome()
        let log = try startImpostor(h.home, nondumpable: true, holds: false, asUser: NobodyHome.setpriv)
        let out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        let frames = received(log)
        #expect(!frames.contains { $0.contains(hex(KCHome.password)) }, "the impostor received the password: \(frames)")
        #expect(try h.kc(["find", "-s", "nothing"]).status == 44, "the real agent answers: \(frames)")
        _ = try h.kc(["agent", "--stop"])
    }

    /// As a normal user (no CAP_SYS_PTRACE): the agent kc starts is verified by its pid,
    /// an empty agent left running is restarted before a password goes to it, and a
    /// second keychain cannot be unlocked into an agent this kc cannot check.
    @Test(.enabled(if: geteuid() == 0, "needs root to run kc as another user"))
    func unlockAsANormalUser() throws {
        let h = try NobodyHome()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(try h.kc(["add", "-s", "svc", "-a", "me"], stdin: Data("tok".utf8)).status == 0)
        #expect(try h.kc(["find", "-s", "svc", "-w"]).stdout == "tok")
        // Locked, the agent lingers (grace) holding nothing: unlock restarts it.
        #expect(try h.kc(["lock"]).status == 0)
        var out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "svc", "-w"]).stdout == "tok")
        // A second keychain while the first is held: refused, nothing sent, the first kept.
        #expect(try h.kc(["create", "--kdf", "interactive", h.home.directory + "/two.keychain-db"], password: "two").status == 0)
        out = try h.kc(["unlock", "-k", h.home.directory + "/two.keychain-db"], password: "two")
        #expect(out.status == 22, "\(out.stderr)")
        #expect(out.stderr.contains("kc cannot establish that the agent") && out.stderr.contains("kc lock --all, then unlock this one"), "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "svc", "-w"]).stdout == "tok")
    }

    /// An agent that is being traced (here under strace, which could read the password
    /// as it arrives) is refused.
    @Test(.enabled(if: FileManager.default.isExecutableFile(atPath: "/usr/bin/strace"), "needs strace"))
    func unlockRefusesATracedAgent() throws {
        let h = try KCHome()
        try h.createKeychain()
        var env = h.environment
        env["PATH"] = "/usr/bin:/bin"
        let out = try Spawn.run(
            [
                "/bin/sh", "-c",
                """
                nohup strace -f -o /dev/null '\(KCBinary.path)' agent >/dev/null 2>&1 &
                for i in $(seq 100); do [ -S "$KC_AGENT_DIR/agent.sock" ] && break; sleep 0.05; done
                '\(KCBinary.path)' unlock; echo "exit $?"
                '\(KCBinary.path)' agent --stop
                """
            ], environment: env.merging(["KC_PASSWORD": KCHome.password]) { _, b in b })
        #expect(out.stdout == "exit 22\n", "\(out.stdout) \(out.stderr)")
        #expect(out.stderr.contains("is being traced"), "\(out.stderr)")
    }
}

/// A KCHome owned by nobody (uid 65534), with kc run as nobody through setpriv: the
/// kernel then hides the agent's executable, as it does for every normal user. The home is
/// under /tmp and kc a copy in it (`OtherUser`), so nobody reaches both wherever the
/// checkout lives.
final class NobodyHome {
    static let setpriv = OtherUser.setpriv.joined(separator: " ")
    let home: KCHome
    /// The copy of kc that nobody runs.
    let kcPath: String

    deinit {
        // The agent runs as nobody: KCHome's own stop (as root) is refused by its uid check.
        _ = try? kc(["agent", "--stop"])
    }

    init() throws {
        home = try KCHome(base: OtherUser.base)
        #expect(chown(home.directory, 65534, 65534) == 0)
        guard let copy = try OtherUser.install(["kc"], into: home.directory + "/bin")["kc"] else {
            throw KeychainError(errSecIO, "kc was not copied")
        }
        kcPath = copy
        let out = try kc(["create", "--kdf", "interactive"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
    }

    func kc(_ arguments: [String], password: String? = nil, stdin: Data? = nil) throws -> KCBinary.Output {
        var env = home.environment
        env["PATH"] = "/usr/bin:/bin"
        if let password { env["KC_PASSWORD"] = password }
        return try Spawn.run(OtherUser.setpriv + [kcPath] + arguments, environment: env, stdin: stdin)
    }
}

extension FileManager {
    func removeItem(atPath path: String, ifExists: Bool) throws {
        if fileExists(atPath: path) { try removeItem(atPath: path) }
    }
}
