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

    /// Whether a password typed at kc's prompt also unlocks the keychain in the agent
    /// (`UnlockOnPrompt`): yes unless `KC_UNLOCK_ON_PROMPT=0`. The one place that knob is
    /// read (the coming configuration file maps onto it here).
    static var unlockOnPrompt: Bool { Self.get("KC_UNLOCK_ON_PROMPT") != "0" }

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
