#if canImport(Glibc)
import Glibc
#endif

/// What `/proc/PID/status` says of a process that kc decides on: its uids (real, effective,
/// saved, file-system) and its tracer. The agent's client reads a peer's
/// (`AgentPeer`); kc-tpm reads its own before it takes a secret
/// (`ProcessHardening.isTraced`).
public struct ProcessStatus: Sendable {
    /// The four uids of the `Uid:` line.
    public let uids: [UInt32]
    /// `TracerPid:`, 0 when no tracer is attached; -1 when the line is missing.
    public let tracer: Int32

    /// The status of `pid`, or of this process when nil; nil when it cannot be read (the
    /// process is gone).
    public static func read(_ pid: Int32? = nil) -> ProcessStatus? {
        let fd = open(pid.map { "/proc/\($0)/status" } ?? "/proc/self/status", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 4096)
        while bytes.count < 65536 {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            bytes.append(contentsOf: buffer[0..<n])
        }
        var uids: [UInt32] = []
        var tracer: Int32?
        for line in String(decoding: bytes, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(whereSeparator: { $0 == "\t" || $0 == " " })
            guard let key = fields.first else { continue }
            if key == "Uid:" { uids = fields.dropFirst().compactMap { UInt32($0) } }
            if key == "TracerPid:", fields.count == 2 { tracer = Int32(fields[1]) }
        }
        return ProcessStatus(uids: uids, tracer: tracer ?? -1)   // no TracerPid line: not accepted
    }
}
