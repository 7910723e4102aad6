import Foundation
import KCTestSupport
import KeychainCore

/// Debian's sshd on 127.0.0.1, on a free port, with a throwaway host key and an
/// authorized_keys file in the test's folder; killed with this value.
final class LoopbackSSHD {
    let port: Int
    let hostKey: String
    let authorizedKeys: String
    private let server: SpawnedChild
    /// The host alias the known_hosts file names.
    static let alias = "kc-test-host"

    /// Starts sshd accepting `keys` (public key lines) for this user.
    init(folder: String, keys: [String]) throws {
        // Debian's sshd wants its privilege separation folder.
        try FileManager.default.createDirectory(atPath: "/run/sshd", withIntermediateDirectories: true)
        hostKey = folder + "/host_ed25519"
        let keygen = try Spawn.run(
            ["/usr/bin/ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", hostKey], environment: ["PATH": "/usr/bin:/bin"], timeout: 60)
        guard keygen.status == 0 else { throw KeychainError(errSecIO, "ssh-keygen: \(keygen.stderr)") }
        authorizedKeys = folder + "/authorized_keys"
        try Data((keys.joined(separator: "\n") + "\n").utf8).write(to: URL(fileURLWithPath: authorizedKeys))
        port = try Self.freePort()
        let config = folder + "/sshd_config"
        try Data(
            """
            Port \(port)
            ListenAddress 127.0.0.1
            HostKey \(hostKey)
            PidFile none
            UsePAM no
            StrictModes no
            AuthorizedKeysFile \(authorizedKeys)
            PubkeyAuthentication yes
            PasswordAuthentication no
            KbdInteractiveAuthentication no
            PermitRootLogin prohibit-password
            LogLevel VERBOSE

            """.utf8
        ).write(to: URL(fileURLWithPath: config))
        server = try Spawn.start(["/usr/sbin/sshd", "-D", "-e", "-f", config], environment: ["PATH": "/usr/bin:/bin"], timeout: 300)
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            if Self.listening(port) { return }
            usleep(50_000)
        }
        throw KeychainError(errSecIO, "sshd did not listen on port \(port)")
    }

    /// A known_hosts line naming this server's host key as `alias`.
    func knownHostsLine(alias: String = LoopbackSSHD.alias) throws -> String {
        let key = try String(contentsOfFile: hostKey + ".pub", encoding: .utf8).split(separator: " ").prefix(2).joined(separator: " ")
        return "\(alias) \(key)"
    }

    /// The ssh command line that logs in with agent keys only: the identity is the public
    /// half alone (IdentitiesOnly), the host checked against `knownHosts`.
    func ssh(identity: String, knownHosts: String, command: String) -> [String] {
        [
            "/usr/bin/ssh", "-F", "/dev/null", "-p", String(port), "-o", "BatchMode=yes", "-o", "IdentitiesOnly=yes",
            "-o", "IdentityFile=\(identity)", "-o", "UserKnownHostsFile=\(knownHosts)", "-o", "GlobalKnownHostsFile=/dev/null",
            "-o", "StrictHostKeyChecking=yes", "-o", "HostKeyAlias=\(Self.alias)", "-o", "PasswordAuthentication=no",
            "-o", "KbdInteractiveAuthentication=no", "-o", "ConnectTimeout=20",
            "\(Self.userName)@127.0.0.1", command
        ]
    }

    /// This process's user name.
    static var userName: String {
        guard let entry = getpwuid(geteuid()) else { return "root" }
        return String(cString: entry.pointee.pw_name)
    }

    private static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw KeychainError(errSecIO, "socket") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) == 0 && getsockname(fd, $0, &length) == 0 }
        }
        guard bound else { throw KeychainError(errSecIO, "no free port") }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    private static func listening(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
