import Foundation
import Testing

/// The impostor agent in RELAY mode (issue 29, "The attackers become part of the suite";
/// docs/security.md, "Other processes of your user"): a same-uid process, non-dumpable as
/// the real agent is (so a normal user's kc cannot see its program), that renames the real
/// agent's `agent.sock` (the agent keeps listening on the renamed path), binds its own at
/// the original path, relays every frame both ways to the real agent, and records every
/// byte in both directions. It can also answer on its own: with `forgePresence`, every
/// search (`copyMatching`, `copyMany`) is answered "presence required" naming a forged
/// item, to phish the password of every user of the agent.
///
///     let relay = try AgentRelay.start(home.home, asUser: NobodyHome.setpriv)
///     … run kc as that user …
///     #expect(!relay.received(KCHome.password))
///
/// Its process exits after 30 s without a connection, or at `stop()` / deinit.
public final class AgentRelay {
    /// The log: one line per chunk, `c2a HEX` (from a client) or `a2c HEX` (from the agent
    /// or forged), each prefixed by the connection's number.
    public let log: String
    private let directory: String
    private var pid: Int32 = 0

    static let script = """
        import socket, os, sys, ctypes, time
        folder, log, forge = sys.argv[1], sys.argv[2], sys.argv[3]
        ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0, as the real agent
        sock, real = folder + "/agent.sock", folder + "/agent.sock.real"
        os.rename(sock, real)                     # the real agent keeps listening there
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(sock)
        s.listen(16)
        out = open(log, "a")
        print("pid", os.getpid(), file=out, flush=True)
        print("ready", file=out, flush=True)
        s.settimeout(30)
        def frame(conn):
            data = b""
            while len(data) < 4 or len(data) < 4 + int.from_bytes(data[:4], "big"):
                chunk = conn.recv(65536)
                if not chunk: return data
                data += chunk
            return data
        def lp(b): return len(b).to_bytes(4, "big") + b
        n = 0
        while True:
            try:
                c, _ = s.accept()
            except socket.timeout:
                break
            n += 1
            try:
                c.settimeout(20)
                request = frame(c)
                print(n, "c2a", request.hex(), file=out, flush=True)
                if len(request) < 7:
                    c.close(); continue
                version = request[4:6]
                if forge != "-" and request[6] == 4:
                    # an operation: its body is lp(path) u8 op …
                    plen = int.from_bytes(request[7:11], "big")
                    op = request[11 + plen] if len(request) > 11 + plen else 0
                    if op in (2, 8):
                        # in the client's own protocol: version 4 named one item, 5 a list
                        body = lp(forge.encode())
                        if int.from_bytes(version, "big") >= 5: body = (1).to_bytes(4, "big") + body
                        reply = version + bytes([0x83]) + body
                        reply = len(reply).to_bytes(4, "big") + reply
                        print(n, "a2c", reply.hex(), "forged", file=out, flush=True)
                        c.sendall(reply); c.close(); continue
                a = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
                a.settimeout(120)
                a.connect(real)
                a.sendall(request)
                reply = frame(a)
                a.close()
                print(n, "a2c", reply.hex(), file=out, flush=True)
                c.sendall(reply)
            except Exception as e:
                print(n, "error", repr(e), file=out, flush=True)
            c.close()
        """

    private init(log: String, directory: String) {
        self.log = log
        self.directory = directory
    }

    deinit { stop() }

    /// Starts the relay over the running agent of `h` (its socket must exist), as `asUser`
    /// (a command prefix such as `NobodyHome.setpriv`) when given, and waits until it listens.
    /// - Parameter forgePresence: an item name to answer every search with "presence
    ///   required" for, instead of relaying it; nil to relay everything.
    public static func start(_ h: KCHome, asUser: String = "", forgePresence: String? = nil) throws -> AgentRelay {
        let dir = h.directory + "/agent"
        let relay = AgentRelay(log: h.directory + "/relay.log", directory: dir)
        if FileManager.default.fileExists(atPath: relay.log) { try FileManager.default.removeItem(atPath: relay.log) }
        let file = h.directory + "/relay.py"
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        if !asUser.isEmpty { #expect(chown(file, 65534, 65534) == 0) }
        let forge = forgePresence ?? "-"
        let out = try Spawn.run(
            [
                "/bin/sh", "-c",
                """
                \(asUser) nohup python3 '\(file)' '\(dir)' '\(relay.log)' "$FORGE" >/dev/null 2>&1 &
                for i in $(seq 200); do grep -q ready '\(relay.log)' 2>/dev/null && exit 0; sleep 0.05; done; exit 1
                """
            ], environment: ["PATH": "/usr/bin:/bin", "FORGE": forge])
        #expect(out.status == 0, "the relay did not start: \(out.stderr)")
        relay.pid = relay.lines.first { $0.hasPrefix("pid ") }.flatMap { Int32($0.dropFirst(4)) } ?? 0
        return relay
    }

    /// Ends the relay (the process it started, by its pid) and gives the real agent its
    /// socket back.
    public func stop() {
        guard pid > 0 else { return }
        kill(pid, SIGTERM)
        pid = 0
        let real = directory + "/agent.sock.real"
        if FileManager.default.fileExists(atPath: real) {
            unlink(directory + "/agent.sock")
            rename(real, directory + "/agent.sock")
        }
    }

    private var lines: [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n").map(String.init)
    }

    /// Every chunk recorded in one direction ("c2a": from clients; "a2c": to clients).
    func chunks(_ direction: String) -> [[UInt8]] {
        lines.compactMap { line in
            let fields = line.split(separator: " ")
            guard fields.count >= 3, fields[1] == direction else { return nil }
            return Self.bytes(hex: fields[2])
        }
    }

    /// What clients sent through it, one entry per connection.
    public var fromClients: [[UInt8]] { chunks("c2a") }
    /// What went back to clients (relayed from the agent, or forged), one per connection.
    public var toClients: [[UInt8]] { chunks("a2c") }
    /// The number of connections it relayed or answered.
    public var connections: Int { fromClients.count }
    /// How many replies it forged.
    public var forged: Int { lines.filter { $0.hasSuffix(" forged") }.count }

    /// The request type of each frame clients sent (1 unlock, 3 status, 4 operation…).
    public var requestTypes: [UInt8] { fromClients.compactMap { $0.count > 6 ? $0[6] : nil } }

    /// The operation number of each operation request clients sent (2 copyMatching, 10
    /// copyPage…; docs/protocol.md), in order.
    public var operations: [UInt8] {
        fromClients.compactMap { frame in
            guard frame.count > 11, frame[6] == 4 else { return nil }
            let length = Int(frame[7]) << 24 | Int(frame[8]) << 16 | Int(frame[9]) << 8 | Int(frame[10])
            return frame.count > 11 + length ? frame[11 + length] : nil
        }
    }

    /// The size in bytes of each frame that went back to clients, in order (read from the
    /// log's hex without decoding it: listings make large logs).
    public var replySizes: [Int] {
        lines.compactMap { line in
            let fields = line.split(separator: " ", maxSplits: 3)
            return fields.count >= 3 && fields[1] == "a2c" ? fields[2].utf8.count / 2 : nil
        }
    }

    /// Whether any byte string the relay recorded, in either direction, contains `needle`.
    public func received(_ needle: [UInt8]) -> Bool {
        (fromClients + toClients).contains { Self.contains($0, needle) }
    }

    /// Whether the relay recorded `text` (UTF-8) anywhere.
    public func received(_ text: String) -> Bool { received(Array(text.utf8)) }

    /// Whether a client sent it `text` (the direction a password or a proof would travel).
    public func receivedFromClient(_ text: String) -> Bool {
        fromClients.contains { Self.contains($0, Array(text.utf8)) }
    }

    static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard !needle.isEmpty, haystack.count >= needle.count else { return needle.isEmpty }
        for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
            if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
        }
        return false
    }

    /// The bytes a hex string spells (pairs of hex digits; a bad pair is 0).
    public static func bytes<S: StringProtocol>(hex: S) -> [UInt8] {
        var out: [UInt8] = []
        var i = hex.startIndex
        while i < hex.endIndex, let j = hex.index(i, offsetBy: 2, limitedBy: hex.endIndex) {
            guard let b = UInt8(hex[i..<j], radix: 16) else { break }
            out.append(b)
            i = j
        }
        return out
    }
}
