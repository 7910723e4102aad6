#if canImport(Glibc)
import Glibc
#endif

import KeychainCore

/// A pipe whose two ends close on exec from birth (`pipe2(O_CLOEXEC)`, see
/// `CloseOnExec`), so a spawned child holds only the end it was given with dup2.
enum CloseOnExecPipe {
    /// [read end, write end], or nil when the system has no descriptors left.
    static func make() -> [Int32]? {
        CloseOnExec.pipe()
    }
}
