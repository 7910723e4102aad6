import Foundation
import Testing

/// A same-uid process bound at a home's agent socket, posing as the kc agent (the
/// attacker of docs/security.md, "Other processes of your user"). It records every frame
/// it receives and answers each with "ok": an `operation` (type 4) with `operationReply`
/// when given, anything else with a status list, empty or claiming `holds`.
///
/// Its RELAY mode (`relay`, `AgentRelay`) takes over a running agent's socket instead,
/// relays every frame both ways, records every byte and can forge replies.
public enum AgentImpostor {
    /// How the impostor process looks to a peer check.
    public enum Kind: String, Sendable {
        /// An ordinary python3 process.
        case dumpable
        /// Non-dumpable, as the real agent is (the kernel hides its program).
        case nondumpable
        /// The listener exits (a zombie, never reaped) while its child serves on.
        case zombie
    }

    static let script = """
        import socket, os, sys, ctypes
        sock, log, kind, holds, reply, version = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4], sys.argv[5], int(sys.argv[6])
        reply_type = int(sys.argv[7])
        if kind == "nondumpable":
            ctypes.CDLL(None).prctl(4, 0, 0, 0, 0)   # PR_SET_DUMPABLE 0, as the real agent
        zombie = kind == "zombie"
        if zombie and os.fork() > 0:   # the first process stays, never reaping its child
            import time; time.sleep(25); sys.exit(0)
        s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        s.bind(sock)
        s.listen(8)
        if zombie and os.fork() > 0:   # the listener exits (a zombie); its child serves on
            os._exit(0)
        out = open(log, "a")
        print("ready", file=out, flush=True)
        s.settimeout(20)
        def lp(b): return len(b).to_bytes(4, "big") + b
        pages = 0
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
            if not reply.startswith("P") or pages == 0:
                print("received", len(data), data.hex(), file=out, flush=True)
            try:
                rtype = 0x80
                if len(data) > 6 and data[6] == 4 and reply.startswith("P"):
                    # pages that never end: `count` items, and a next place one past the last
                    count, item = reply[1:].split(":")
                    pages += 1
                    items = bytes([6]) + int(count).to_bytes(4, "big") + bytes.fromhex(item) * int(count)
                    body = bytes([7]) + (2).to_bytes(4, "big") + lp(b"items") + items + lp(b"next") + bytes([3]) + pages.to_bytes(8, "big")
                elif len(data) > 6 and data[6] == 4 and reply != "-":
                    body = bytes.fromhex(reply)
                    rtype = reply_type
                elif holds == "-":
                    body = bytes([6]) + (0).to_bytes(4, "big")
                else:
                    # one entry ("I hold a keychain"), naming it when a path is given
                    entry = bytes([7]) + (0).to_bytes(4, "big")
                    if holds != "+":
                        entry = bytes([7]) + (1).to_bytes(4, "big") + lp(b"path") + bytes([1]) + lp(holds.encode())
                    body = bytes([6]) + (1).to_bytes(4, "big") + entry
                payload = version.to_bytes(2, "big") + bytes([rtype]) + body   # the protocol version, as the real agent
                c.sendall(len(payload).to_bytes(4, "big") + payload)
            except Exception:
                pass
            c.close()
        """

    /// Starts the impostor at the home's socket (as `asUser`, a command prefix, when given)
    /// and waits until it listens. - Returns: the path of its log.
    /// - Parameters:
    ///   - holds: nil for an empty status; "" for one entry without a path; a path to name it.
    ///   - operationReply: the ValueCodec bytes an operation is answered with.
    ///   - endlessPages: instead, answer every operation with a page of `count` copies of
    ///     `item` (ValueCodec bytes) whose next place is one past the last page's: pages
    ///     that each move on but never end.
    ///   - operationReplyType: that reply's type (0x80 "ok"; 0x83 "presence required").
    ///   - version: the protocol version to speak (`AgentProtocol.version`).
    ///   - socket: the socket's name in the agent folder: the file agent's, or
    ///     `team-agent.sock` to pose as the team agent.
    public static func start(
        _ h: KCHome, kind: Kind = .dumpable, holds: String? = nil, operationReply: [UInt8]? = nil,
        operationReplyType: UInt8 = 0x80, version: UInt16, asUser: String = "",
        socket: String = "agent.sock", endlessPages: (count: Int, item: [UInt8])? = nil
    ) throws -> String {
        let dir = h.directory + "/agent"
        if !FileManager.default.fileExists(atPath: dir) {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
            if !asUser.isEmpty { #expect(chown(dir, 65534, 65534) == 0) }
        }
        let log = h.directory + "/impostor.log"
        if FileManager.default.fileExists(atPath: log) { try FileManager.default.removeItem(atPath: log) }
        let file = h.directory + "/impostor.py"
        try script.write(toFile: file, atomically: true, encoding: .utf8)
        let status = holds.map { $0.isEmpty ? "+" : $0 } ?? "-"
        let hex = { (bytes: [UInt8]) in bytes.map { String(format: "%02x", $0) }.joined() }
        let reply = endlessPages.map { "P\($0.count):\(hex($0.item))" } ?? operationReply.map(hex) ?? "-"
        let out = try Spawn.run(
            [
                "/bin/sh", "-c",
                """
                \(asUser) nohup python3 '\(file)' '\(dir)/\(socket)' '\(log)' \(kind.rawValue) '\(status)' '\(reply)' \(version) \(operationReplyType) >/dev/null 2>&1 &
                for i in $(seq 100); do grep -q ready '\(log)' 2>/dev/null && exit 0; sleep 0.05; done; exit 1
                """
            ], environment: ["PATH": "/usr/bin:/bin"])
        #expect(out.status == 0, "the impostor did not start: \(out.stderr)")
        return log
    }

    /// The RELAY mode: see `AgentRelay.start`.
    public static func relay(_ h: KCHome, asUser: String = "", forgePresence: String? = nil) throws -> AgentRelay {
        try AgentRelay.start(h, asUser: asUser, forgePresence: forgePresence)
    }

    /// Whether the impostor logged at `log` received `text` (UTF-8) in any frame.
    public static func received(_ log: String, _ text: String) -> Bool {
        received(log).contains { AgentRelay.contains(AgentRelay.bytes(hex: $0), Array(text.utf8)) }
    }

    /// What the impostor received, as hex, one entry per connection.
    public static func received(_ log: String) -> [String] {
        ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").split(separator: "\n")
            .filter { $0.hasPrefix("received") }.map { String($0.split(separator: " ").dropFirst(2).first ?? "") }
    }
}
