import ArgumentParser
#if canImport(Glibc)
import Glibc
import KeychainCore
#endif

/// How `kc unlock` starts the agent, and what the agent does first.
enum AgentLauncher {
    /// This very binary (`/proc/self/exe`), so the agent always matches the client.
    static var executable: String {
        var buffer = [CChar](repeating: 0, count: 4096)
        let n = readlink("/proc/self/exe", &buffer, buffer.count - 1)
        guard n > 0 else { return CommandLine.arguments[0] }
        return String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// The only variables the agent inherits: never a password.
    static let allowedEnvironment = ["HOME", "PATH", "LANG", "LC_ALL", "XDG_RUNTIME_DIR", "XDG_DATA_HOME", "KC_AGENT_DIR", "KC_AGENT_GRACE"]

    /// Leaves the caller's session, folder and files behind: `$(kc unlock)` returns at once
    /// and no pipe of the caller stays open in the agent.
    static func detach() {
        _ = setsid()
        _ = chdir("/")
        let null = open("/dev/null", O_RDWR | O_CLOEXEC)
        if null >= 0 {
            for fd: Int32 in [0, 1, 2] { dup2(null, fd) }
            if null > 2 { close(null) }
        }
        if let dir = opendir("/proc/self/fd") {
            var fds: [Int32] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if let fd = Int32(name), fd > 2 { fds.append(fd) }
            }
            let own = dirfd(dir)
            closedir(dir)
            for fd in fds where fd != own { close(fd) }
        }
    }
}
