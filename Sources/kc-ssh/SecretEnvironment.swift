#if canImport(Glibc)
import Glibc
#endif

/// kc's passwords and tokens in kc-ssh's environment (kc execs kc-ssh before it takes them
/// out of its own). `unsetenv` only unlinks a variable: its bytes stay in the process's
/// initial environment block, which `/proc/PID/environ` shows for the whole life of the
/// process (a long-lived `kc ssh-agent --foreground`). So each value is overwritten with
/// zeros first, as `KeychainPassword.takeEnvironment` does for `KC_PASSWORD`.
enum SecretEnvironment {
    /// Overwrites and removes each of `names`.
    static func wipe(_ names: [String]) {
        for name in names {
            if let value = getenv(name) { memset(value, 0, strlen(value)) }
            unsetenv(name)
        }
    }
}
