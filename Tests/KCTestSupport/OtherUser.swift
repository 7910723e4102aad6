import Foundation
import KeychainCore

/// Another account for the tests that act as one (they run as root): uid and gid 65534
/// (nobody), a normal user with no capability, no CAP_SYS_PTRACE among them.
///
/// Such a test must not depend on where the checkout lives. A clone in a folder only its
/// owner may enter (a `mktemp -d` folder, mode 0700, as a home directory often is) leaves
/// the built programs out of that account's reach ("Failed to execute program
/// org.freedesktop.secrets: Permission denied"). So the programs the account runs are
/// copied into a folder it can reach (`install`), and a home it uses is made under /tmp
/// (`KCHome(base: OtherUser.base)`), whatever TMPDIR says; `checkReachable` turns what is
/// still out of reach (a Swift runtime in a private folder) into an early failure that
/// says why.
public enum OtherUser {
    /// The account's uid and gid.
    public static let uid: uid_t = 65534

    /// The command prefix that runs a program as the account: real and effective uid and
    /// gid, no supplementary groups.
    public static let setpriv = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"]

    /// Where the homes of the account's tests are made: /tmp, which every account may
    /// enter, rather than NSTemporaryDirectory() (TMPDIR may be a private folder).
    public static let base = "/tmp"

    /// The folder the test programs were built in (beside the test bundle).
    static var buildFolder: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().path
    }

    /// Copies the built programs named (`kc` is `KCBinary.path`, which honours
    /// KC_TEST_BINARY; the others come from beside the test bundle) into `folder`, made
    /// 0755 and this process's, so that the account can run them but not change them; the
    /// copies stay together, as `make install` puts them (kc-secret-service finds kc beside
    /// itself). Then checks that the account can start the copied kc.
    /// - Returns: each program's copy, by name.
    /// - Throws: errSecIO, saying why, when the account cannot reach or run them.
    public static func install(_ programs: [String], into folder: String) throws -> [String: String] {
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        guard chmod(folder, 0o755) == 0 else { throw KeychainError(errSecIO, "cannot chmod \(folder): errno \(errno)") }
        var copies: [String: String] = [:]
        for name in programs {
            let source = name == "kc" ? KCBinary.path : buildFolder + "/" + name
            let copy = folder + "/" + name
            if FileManager.default.fileExists(atPath: copy) { try FileManager.default.removeItem(atPath: copy) }
            try copyClosingOnExec(source, to: copy)
            copies[name] = copy
            try checkReachable(copy)
        }
        if let kc = copies["kc"] {
            // Through a shell: setpriv itself still holds root's capabilities when it execs
            // (they go at that exec), so it reaches what the account alone could not;
            // dbus-daemon, or kc starting its agent, execs as the account.
            // A child another test forks at the moment of the copy holds the copy's write
            // descriptor until its own exec (close-on-exec closes it only then): exec meets
            // "Text file busy" in that window, so a few tries.
            var out = try Spawn.run(setpriv + ["/bin/sh", "-c", "exec \"$0\" --version", kc], environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
            for _ in 0..<20 where out.status == 126 && out.stderr.contains("Text file busy") {
                usleep(50_000)
                out = try Spawn.run(setpriv + ["/bin/sh", "-c", "exec \"$0\" --version", kc], environment: ["PATH": "/usr/bin:/bin"], timeout: 30)
            }
            guard out.status == 0 else {
                throw KeychainError(
                    errSecIO,
                    "uid \(uid) cannot run \(kc) (exit \(out.status)): \(out.stderr)"
                        + "; the Swift runtime it links must be readable by every user")
            }
        }
        return copies
    }

    /// Copies `source` to a new file `destination`, mode 0755, through descriptors that are
    /// close-on-exec from birth (FileManager's copy is not: a child another test forks
    /// meanwhile would keep the copy open for writing, and the copy could not be run).
    /// - Throws: errSecIO, naming the file and errno.
    static func copyClosingOnExec(_ source: String, to destination: String) throws {
        let input = open(source, O_RDONLY | O_CLOEXEC)
        guard input >= 0 else { throw KeychainError(errSecIO, "cannot open \(source): errno \(errno)") }
        defer { close(input) }
        let output = open(destination, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o755)
        guard output >= 0 else { throw KeychainError(errSecIO, "cannot create \(destination): errno \(errno)") }
        var buffer = [UInt8](repeating: 0, count: 1 << 20)
        var failed: Int32 = 0
        while failed == 0 {
            let count = buffer.withUnsafeMutableBytes { read(input, $0.baseAddress, $0.count) }
            if count == 0 { break }
            if count < 0 { if errno != EINTR { failed = errno }; continue }
            var written = 0
            while written < count && failed == 0 {
                let n = buffer.withUnsafeBytes { write(output, $0.baseAddress! + written, count - written) }
                if n < 0 { if errno != EINTR { failed = errno } } else { written += n }
            }
        }
        if fchmod(output, 0o755) != 0 && failed == 0 { failed = errno }
        close(output)
        if failed != 0 { throw KeychainError(errSecIO, "cannot copy \(source) to \(destination): errno \(failed)") }
    }

    /// Throws, saying which folder stops it, unless the account can enter every folder on
    /// the way to `path` (each one's "x" for others, or the account's own).
    public static func checkReachable(_ path: String) throws {
        var folder = ""
        for part in path.split(separator: "/").dropLast() {
            folder += "/" + part
            var st = stat()
            guard stat(folder, &st) == 0 else { throw KeychainError(errSecIO, "\(folder) does not exist") }
            let enterable = st.st_uid == uid ? st.st_mode & S_IXUSR != 0 : st.st_mode & S_IXOTH != 0
            guard enterable else {
                throw KeychainError(
                    errSecIO,
                    "uid \(uid) cannot enter \(folder) (mode \(String(st.st_mode & 0o7777, radix: 8))), "
                        + "on the way to \(path): a test acting as another user needs what it runs where that user can reach it")
            }
        }
    }
}
