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
    /// (`UnlockOnPrompt`): yes when `KC_UNLOCK_ON_PROMPT` is `1`/`true`/`yes`/`on`; no for
    /// `0`/`false`/`no`/`off` (any case, spaces around ignored). Any other value is taken
    /// as no, with a warning: someone who wrote something there meant to change it. Unset:
    /// the configuration file's `unlock-on-prompt`, else yes. The one place that knob is read.
    static var unlockOnPrompt: Bool {
        guard let raw = Self.get("KC_UNLOCK_ON_PROMPT") else { return Configuration.file.unlockOnPrompt?.value ?? true }
        let value = String(raw.filter { $0 != " " && $0 != "\t" }).lowercased()
        if ["1", "true", "yes", "on"].contains(value) { return true }
        if ["0", "false", "no", "off"].contains(value) { return false }
        Report.note("warning: KC_UNLOCK_ON_PROMPT=\"\(raw)\" is not 1/true/yes/on or 0/false/no/off; taken as off")
        return false
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
