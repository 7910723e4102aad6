import KeychainStatus
#if canImport(Glibc)
import Glibc
#endif

/// The boot a process runs in: the kernel's random boot id and the time on CLOCK_BOOTTIME.
/// The agent records it when it starts and forgets every key, after-first-unlock's
/// included, the moment the boot it sees is another (`docs/security.md`, "A locked
/// agent"): "after first unlock" means after the first unlock *since boot*.
///
///     let started = BootSession.current()
///     if !started.isSameBoot(as: .current()) { forgetEverything() }
///
/// The id is read from `/proc/sys/kernel/random/boot_id` (a fixed path: nothing in the
/// environment can point it elsewhere); see random(4).
package struct BootSession: Equatable, Sendable {
    /// Where Linux publishes the boot id.
    static let bootIDPath = "/proc/sys/kernel/random/boot_id"

    /// The boot id's text (36 bytes and a newline), or empty when it could not be read.
    package let bootID: [UInt8]
    /// Nanoseconds on CLOCK_BOOTTIME when recorded.
    package let bootTime: UInt64

    /// A recorded boot, as given (tests of the decision build these by hand).
    package init(bootID: [UInt8], bootTime: UInt64) {
        self.bootID = bootID
        self.bootTime = bootTime
    }

    /// The boot this process runs in now.
    package static func current() -> BootSession {
        BootSession(bootID: readBootID(), bootTime: Deadline.now.nanoseconds)
    }

    /// Whether `now` is still the boot `self` recorded: the same boot id (an id that could
    /// be read before and not now, or the reverse, counts as another boot: the keys go
    /// rather than stay on a doubt), and CLOCK_BOOTTIME has not gone back (it only goes
    /// forward within one boot, suspend included).
    package func isSameBoot(as now: BootSession) -> Bool {
        !bootID.isEmpty && bootID == now.bootID && now.bootTime >= bootTime
    }

    /// The boot id, or empty when unreadable.
    static func readBootID() -> [UInt8] {
        let fd = open(bootIDPath, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return [] }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 64)
        let n = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        return n > 0 ? Array(buffer[0..<n]) : []
    }
}
