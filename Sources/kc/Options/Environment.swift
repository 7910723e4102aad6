import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// The process environment.
enum Environment {
    static func get(_ name: String) -> String? {
        guard let v = getenv(name) else { return nil }
        return String(cString: v)
    }

    /// Reads a password variable once, overwrites its bytes in this process's environment
    /// (so /proc/self/environ no longer shows it) and removes it, so no child inherits it.
    static func takeSecret(_ name: String) throws -> SecureBytes? {
        guard let raw = getenv(name) else { return nil }
        let count = strlen(raw)
        defer {
            // Wiped and removed even when copying it failed.
            memset(raw, 0, count)
            unsetenv(name)
        }
        return try SecureBytes(copying: UnsafeRawBufferPointer(start: raw, count: count))
    }
}
