import Foundation
import KCTestSupport
import AgentWire
import KeychainClient
import KeychainCore
import Testing

/// Replies of the wrong shape from a process posing as the agent (review of issue 16):
/// docs/security.md lets such a process answer lookups with values of its choosing, but
/// kc must reject or print them, never trap on them.
@Suite struct CraftedReplyTests {
    /// A same-uid listener at the socket. `status` (type 3) is answered with one held
    /// keychain (argv[3]); an `operation` (type 4) with the reply frame body given in hex
    /// (argv[4]); anything else with ok(null). It logs "ready", then "received N" per frame.
    static let impostor = """
        import socket, sys, ctypes
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0, as the real agent
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(sys.argv[1])
        s.listen(8)
        out = open(sys.argv[2], "a")
        print("ready", file=out, flush=True)
        s.settimeout(20)
        def lp(b): return len(b).to_bytes(4, "big") + b
        while True:
            try:
                c, _ = s.accept()
            except socket.timeout:
                break
            c.settimeout(2)
            data = b""
            try:
                while True:
                    chunk = c.recv(65536)
                    if not chunk: break
                    data += chunk
                    if len(data) >= 4 and len(data) >= 4 + int.from_bytes(data[:4], "big"): break
            except Exception:
                pass
            print("received", len(data), file=out, flush=True)
            kind = data[6] if len(data) > 6 else 0
            if kind == 3:
                entry = bytes([7]) + (1).to_bytes(4, "big") + lp(b"path") + bytes([1]) + lp(sys.argv[3].encode())
                body = bytes([6]) + (1).to_bytes(4, "big") + entry
            elif kind == 4:
                body = bytes.fromhex(sys.argv[4])
            else:
                body = bytes([0])
            payload = (\(AgentProtocol.version)).to_bytes(2, "big") + bytes([0x80]) + body
            try:
                c.sendall(len(payload).to_bytes(4, "big") + payload)
            except Exception:
                pass
            c.close()
        """

    /// ValueCodec bytes, for the replies.
    static func lp(_ s: String) -> [UInt8] { u32(UInt32(s.utf8.count)) + Array(s.utf8) }
    static func u32(_ v: UInt32) -> [UInt8] { (0..<4).map { UInt8(truncatingIfNeeded: v >> (24 - 8 * UInt32($0))) } }
    static func u64(_ v: UInt64) -> [UInt8] { (0..<8).map { UInt8(truncatingIfNeeded: v >> (56 - 8 * UInt64($0))) } }
    static func string(_ s: String) -> [UInt8] { [1] + lp(s) }
    static func int(_ n: Int) -> [UInt8] { [3] + u64(UInt64(bitPattern: Int64(n))) }
    static func date(_ t: Double) -> [UInt8] { [5] + u64(t.bitPattern) }
    static func array(_ elements: [[UInt8]]) -> [UInt8] { [6] + u32(UInt32(elements.count)) + elements.flatMap { $0 } }
    static func dictionary(_ pairs: [(String, [UInt8])]) -> [UInt8] {
        [7] + u32(UInt32(pairs.count)) + pairs.sorted { $0.0 < $1.0 }.flatMap { lp($0.0) + $0.1 }
    }

    /// Starts the impostor (as `asUser` when given) in the home's agent folder.
    func startImpostor(_ h: KCHome, holding keychain: String, operationReply: [UInt8], asUser: String = "") throws -> String {
        let dir = h.directory + "/agent"
        if !FileManager.default.fileExists(atPath: dir) {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            if !asUser.isEmpty { #expect(chown(dir, 65534, 65534) == 0) }
        }
        let log = h.directory + "/impostor.log"
        let script = h.directory + "/impostor.py"
        try Self.impostor.write(toFile: script, atomically: true, encoding: .utf8)
        let reply = operationReply.map { String(format: "%02x", $0) }.joined()
        let out = try Spawn.run(["/bin/sh", "-c", """
            \(asUser) nohup python3 '\(script)' '\(dir)/agent.sock' '\(log)' '\(keychain)' '\(reply)' >/dev/null 2>&1 &
            for i in $(seq 100); do grep -q ready '\(log)' 2>/dev/null && exit 0; sleep 0.05; done; exit 1
            """], environment: ["PATH": "/usr/bin:/bin"])
        #expect(out.status == 0, "the impostor did not start: \(out.stderr)")
        return log
    }

    /// A lookup answered with a date no calendar holds (1e300 s, NaN): `kc find` traps in
    /// the date formatter (exit 132/133 by SIGILL/SIGTRAP). Dates come from the agent as
    /// raw IEEE-754 bits, so anything can arrive; it must print, not crash.
    @Test(arguments: [1e300, Double.nan, -Double.infinity])
    func aLookupAnsweredWithAnAbsurdDateDoesNotCrashFind(_ seconds: Double) throws {
        let h = try KCHome()
        try h.createKeychain()
        let item = Self.dictionary([("class", Self.string("genp")), ("svce", Self.string("svc")), ("acct", Self.string("me")),
                                    ("cdat", Self.date(seconds)), ("mdat", Self.date(seconds))])
        _ = try startImpostor(h, holding: h.defaultKeychain, operationReply: Self.array([item]))
        for arguments in [["find", "-s", "svc"], ["find", "-s", "svc", "--json"], ["find", "--all"]] {
            let out = try h.kc(arguments)
            #expect(!out.stderr.contains("Fatal error") && ![132, 133, 134, 139].contains(out.status), "\(arguments): crashed: \(out.stderr)")
        }
    }

    /// The same date stored for real: a key item whose start date is 1e300 s, added through
    /// the agent (as any program using the Security module may). Afterwards every
    /// `kc find --all` and `kc export` of that keychain trapped.
    @Test func anAbsurdStoredDateDoesNotCrashFindOrExport() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let agent = AgentClient(paths: AgentPaths(directory: h.directory + "/agent"))
        let added = try agent.perform(path: h.defaultKeychain, .add([
            kSecClass: kSecClassKey, kSecAttrLabel: "far-key", kSecAttrStartDate: Date(timeIntervalSinceReferenceDate: 1e300),
            kSecValueData: Data("k".utf8),
        ]))
        guard case .result = added else { Issue.record("the agent did not hold the keychain"); return }
        for arguments in [["find", "--class", "key", "--all"], ["find", "--class", "key", "--all", "--json"], ["export", "--force"]] {
            let out = try h.kc(arguments)
            #expect(out.status == 0, "\(arguments): \(out.status) \(out.stderr)")
        }
    }

    /// An import answered with an outcome that names an "earlier item" past the end of the
    /// import (`of`: 7 for a one-item import): `kc import` indexed its list with it and
    /// trapped. The reply is malformed, and must be refused as such (errSecIO).
    /// Run as a normal user, for whom a non-dumpable impostor passes the peer check.
    @Test(.enabled(if: geteuid() == 0, "needs root to run kc as another user"))
    func anImportOutcomeNamingAnItemThatDoesNotExistIsRefused() throws {
        let h = try NobodyHome()
        let reply = Self.array([Self.dictionary([("outcome", Self.string("updated")), ("of", Self.int(7))])])
        _ = try startImpostor(h.home, holding: h.home.defaultKeychain, operationReply: reply, asUser: NobodyHome.setpriv)
        let csv = h.home.directory + "/one.csv"
        try "name,url,username,password\nsite,https://site.example,me,pw1\n".write(toFile: csv, atomically: true, encoding: .utf8)
        #expect(chown(csv, 65534, 65534) == 0)
        let out = try h.kc(["import", csv])
        #expect(!out.stderr.contains("Fatal error") && ![132, 133, 134, 139].contains(out.status), "kc import crashed: \(out.stderr)")
        #expect(out.status != 0, "a malformed reply is not a successful import: \(out.stdout)")
        #expect(out.stderr.contains("malformed import reply"), "\(out.stderr)")
    }
}
