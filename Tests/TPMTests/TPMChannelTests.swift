import Foundation
import KCTestSupport
import KeychainCore
import Testing

/// The key and the PIN kc hands kc-tpm cannot be collected by another process of the same
/// user (docs/security.md, "Key slots"). Such a process may open a dumpable process's
/// descriptors through `/proc/PID/fd/N` (a pipe opened there is the same pipe): kc-tpm is
/// dumpable from its exec until its first lines make it non-dumpable. So kc passes the key,
/// the blob, the PIN and the unsealed key on sockets, which cannot be opened through /proc,
/// and writes nothing before kc-tpm says it is non-dumpable and untraced (`--handshake`).
///
/// The attack runs as the account nobody (uid 65534: the tests run as root, whom no
/// dumpable flag stops), against kc and kc-tpm run as nobody too: a watcher polls /proc for
/// kc-tpm, opens every descriptor it can of each one, and logs what it reads.
@Suite struct TPMChannelTests {
    /// The watcher: `python3 SCRIPT LOG SECONDS`.
    static let watcher = """
        import os, sys, time, select
        log = open(sys.argv[1], "a", buffering=1)
        end = time.time() + float(sys.argv[2])
        seen, held = set(), {}
        log.write("ready\\n")
        while time.time() < end:
            for name in os.listdir("/proc"):
                if not name.isdigit() or name in seen:
                    continue
                try:
                    with open("/proc/%s/comm" % name) as f:
                        if f.read().strip() != "kc-tpm":
                            continue
                except OSError:
                    continue
                seen.add(name)
                log.write("seen %s\\n" % name)
                for fd in (0, 1, 3):
                    try:
                        held[(name, fd)] = os.open("/proc/%s/fd/%d" % (name, fd), os.O_RDONLY | os.O_NONBLOCK)
                        log.write("opened %s %d\\n" % (name, fd))
                    except OSError as e:
                        log.write("refused %s %d %s\\n" % (name, fd, e.strerror))
            for key, fd in list(held.items()):
                try:
                    data = os.read(fd, 4096)
                except BlockingIOError:
                    continue
                except OSError:
                    data = b""
                if data:
                    log.write("read %s %d %s\\n" % (key[0], key[1], data.hex()))
                else:
                    os.close(fd)
                    del held[key]
        log.write("done\\n")
        """

    @Test func anotherProcessOfTheUserReadsNeitherTheKeyNorThePIN() throws {
        let tpm = try TestSWTPM()
        let home = try KCHome(base: OtherUser.base)
        #expect(chown(home.directory, 65534, 65534) == 0)
        let programs = try OtherUser.install(["kc", "kc-tpm"], into: home.directory + "/bin")
        let kc = try #require(programs["kc"])
        var environment = home.environment
        environment["PATH"] = "/usr/bin:/bin"
        environment["KC_TPM_TCTI"] = tpm.tcti
        func run(_ arguments: [String], password: Bool = false) throws -> KCBinary.Output {
            var env = environment
            if password { env["KC_PASSWORD"] = KCHome.password }
            return try Spawn.run(OtherUser.setpriv + [kc] + arguments, environment: env)
        }
        defer { _ = try? run(["agent", "--stop"]) }
        let path = home.directory + "/k.keychain-db"
        let pin = home.directory + "/pin"
        try Data("7531".utf8).write(to: URL(fileURLWithPath: pin))
        #expect(chown(pin, 65534, 65534) == 0 && chmod(pin, 0o600) == 0)
        try #require(try run(["create", "--kdf", "interactive", "-k", path], password: true).status == 0)

        let log = home.directory + "/watcher.log"
        let script = home.directory + "/watcher.py"
        try Self.watcher.write(toFile: script, atomically: true, encoding: .utf8)
        let watcher = try Spawn.start(OtherUser.setpriv + ["/usr/bin/python3", script, log, "120"], environment: ["PATH": "/usr/bin:/bin"], timeout: 150)
        defer { kill(watcher.pid, SIGKILL) }
        for _ in 0..<100 where !((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").contains("ready") { usleep(50_000) }

        for round in 0..<6 {
            let added = try run(["keyslot", "add", "--tpm2", "--pin-file", pin, "-k", path], password: true)
            #expect(added.status == 0, "round \(round): \(added.stderr)")
            let unlocked = try run(["unlock", "--tpm2-only", "--pin-file", pin, "-k", path])
            #expect(unlocked.status == 0, "round \(round): \(unlocked.stderr)")
            _ = try run(["lock", "--all"])
        }
        kill(watcher.pid, SIGKILL)
        let lines = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
        // The watcher saw kc-tpm (else the test proves nothing) and read nothing from it.
        #expect(lines.filter { $0.hasPrefix("seen ") }.count >= 4, "the watcher saw too few kc-tpm processes: \(lines)")
        let reads = lines.filter { $0.hasPrefix("read ") }
        #expect(reads.isEmpty, "another process of the user read from kc-tpm's descriptors: \(reads)")
        #expect(!lines.contains { $0.contains(Array("7531".utf8).map { String(format: "%02x", $0) }.joined()) }, "the PIN was read")
    }

    /// kc-tpm gets descriptors 0 to 3 (3 only for a PIN) and nothing else of kc's: not the
    /// keychain file, not a socket of the agent, not a pipe of a test running beside it
    /// (docs/tpm.md). A stand-in kc-tpm beside a copy of kc lists what it holds.
    @Test func kcTPMHoldsOnlyItsOwnDescriptors() throws {
        let h = try KCHome()
        let bin = h.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.copyItem(atPath: KCBinary.path, toPath: bin + "/kc")
        let log = h.directory + "/fds"
        let standIn = bin + "/kc-tpm"
        try """
        #!/usr/bin/python3
        import os, sys
        os.write(1, b"\\x06")
        held = []
        for n in os.listdir("/proc/self/fd"):
            try:
                held.append(n + " " + os.readlink("/proc/self/fd/" + n))
            except OSError:
                pass   # the listing's own descriptor, closed by now
        with open(os.environ["KC_TEST_FD_LOG"], "w") as log:
            log.write("\\n".join(held) + "\\n")
        sys.stderr.write("kc: the stand-in kc-tpm listed its descriptors\\n")
        sys.exit(53)
        """.write(toFile: standIn, atomically: true, encoding: .utf8)
        #expect(chmod(standIn, 0o755) == 0)
        let pin = h.directory + "/pin"
        try Data("2468".utf8).write(to: URL(fileURLWithPath: pin))
        #expect(chmod(pin, 0o600) == 0)
        var environment = h.environment
        environment["KC_TEST_FD_LOG"] = log
        environment["KC_PASSWORD"] = KCHome.password
        let path = h.directory + "/k.keychain-db"
        var out = try Spawn.run([bin + "/kc", "create", "--kdf", "interactive", "-k", path], environment: environment)
        try #require(out.status == 0, "\(out.stderr)")
        _ = try Spawn.run([bin + "/kc", "unlock", "-k", path], environment: environment)   // an agent, with its socket
        for (round, arguments) in [["--pin-file", pin], []].enumerated() {
            try? FileManager.default.removeItem(atPath: log)
            out = try Spawn.run([bin + "/kc", "keyslot", "add", "--tpm2", "-k", path] + arguments, environment: environment)
            #expect(out.status == exitCode(for: errSecNotAvailable) && out.stderr.contains("stand-in"), "\(out.stderr)")
            let held = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
            let numbers = Set(held.compactMap { Int($0.split(separator: " ").first ?? "") })
            #expect(numbers == (round == 0 ? [0, 1, 2, 3] : [0, 1, 2]), "kc-tpm held: \(held)")
            #expect(!held.contains { $0.contains("keychain") || $0.contains("agent") }, "\(held)")
        }
        _ = try Spawn.run([bin + "/kc", "agent", "--stop"], environment: environment)
    }
}
