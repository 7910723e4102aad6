import KeychainCore
import POSIXSupport

extension UnixSocket {
    /// Reads one frame: its payload (version ‖ type ‖ body), at most `AgentProtocol.maxFrame` bytes.
    package func readFrame(until deadline: Deadline) throws -> [UInt8] {
        var header = [UInt8](repeating: 0, count: 4)
        try header.withUnsafeMutableBytes { try readExactly(4, into: $0, until: deadline) }
        let length = Int(header.reduce(UInt32(0)) { $0 << 8 | UInt32($1) })
        guard length >= 3, length <= AgentProtocol.maxFrame else {
            throw KeychainError(errSecParam, "an agent message of \(length) bytes is out of bounds")
        }
        var payload = [UInt8](repeating: 0, count: length)
        try payload.withUnsafeMutableBytes { try readExactly(length, into: $0, until: deadline) }
        return payload
    }
}
