import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// Whether a D-Bus daemon answers at the private bus's socket, asked with a short deadline
/// before sd-bus connects: sd-bus waits up to 90 s for a listener's authentication answer,
/// and `kc secret-service --start` holds the agent folder's lock meanwhile, so a listener
/// that never speaks D-Bus would stall every `--start` (docs/secret-service.md).
enum BusSocketProbe {
    /// What listens at the socket.
    enum Outcome: Equatable {
        /// Nothing (no file, or a stale socket nobody listens on): start a daemon there.
        case nobody
        /// A D-Bus daemon, which answered the first authentication line.
        case daemon
        /// Something that accepted the connection but gave no D-Bus answer in time; why.
        case silent(String)
    }

    /// How long the listener has to answer.
    static let seconds = 3.0

    /// Connects to `path` and sends D-Bus's first authentication line (a NUL byte, then
    /// `AUTH EXTERNAL` with this uid in hex); a daemon answers `OK …` or `REJECTED …`.
    static func probe(_ path: String, seconds: Double = seconds) -> Outcome {
        let connection: UnixSocket
        do {
            guard let connected = try UnixSocket.connect(to: path) else { return .nobody }
            connection = connected
        } catch {
            return .silent("it does not accept a connection (\((error as? KeychainError)?.message ?? "\(error)"))")
        }
        let deadline = Deadline.after(seconds: seconds)
        let uid = Array(String(getuid()).utf8).map { byte in
            let hex = Array("0123456789abcdef".utf8)
            return String(decoding: [hex[Int(byte >> 4)], hex[Int(byte & 0xF)]], as: UTF8.self)
        }.joined()
        do {
            try connection.writeAll([0] + Array("AUTH EXTERNAL \(uid)\r\n".utf8), until: deadline)
            var answer = [UInt8](repeating: 0, count: 2)
            try answer.withUnsafeMutableBytes { try connection.readExactly(2, into: $0, until: deadline) }
            guard answer == Array("OK".utf8) || answer == Array("RE".utf8) else {
                return .silent("it does not answer as a D-Bus daemon")
            }
            return .daemon
        } catch {
            return .silent("it gave no D-Bus answer within \(Int(seconds)) s")
        }
    }
}
