import KeychainStatus
#if canImport(Glibc)
import Glibc
#endif

/// What a background process (the kc agent, the Secret Service provider) does before it
/// serves: leave its caller behind.
public enum Detach {
    /// Leaves the caller's session, folder and files behind: `$(kc unlock)` returns at once
    /// and no pipe of the caller stays open in the background process.
    public static func fromCaller() {
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
