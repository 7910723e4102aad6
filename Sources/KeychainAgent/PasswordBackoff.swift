import KeychainCore
import POSIXSupport

/// How the agent slows down guessing through its socket (`docs/security.md`, "User
/// presence" and "Other processes of your user"): one typo is free; after a second wrong
/// password in a row the next one is not tried for 1 s, then 2 s, 4 s … (twice as long after
/// every further wrong one, at most `maximumDelay`), and a right one starts again from nothing. A password that comes
/// too early is refused without a key derivation. The agent runs one derivation at a time
/// anyway (one thread), so this bounds guesses per day, not their cost.
///
///     try backoff.admit()                 // throws while waiting
///     do { try open() } catch { backoff.failed(); throw error }
///     backoff.succeeded()
///
/// What it does not stop: a process of the user can read the keychain file and guess
/// offline at the same cost per guess.
struct PasswordBackoff {
    /// The longest wait between two tries: one hour (24 guesses a day once reached).
    static let maximumDelay: Double = 3600
    /// Wrong passwords in a row.
    private(set) var failures = 0
    /// When the next password may be tried (CLOCK_BOOTTIME).
    private var notBefore = Deadline.now

    /// The wait after `failures` wrong passwords in a row.
    static func delay(after failures: Int) -> Double {
        guard failures > 1 else { return 0 }
        return min(maximumDelay, Double(1 << min(failures - 2, 20)))
    }

    /// - Throws: errSecAuthFailed, without trying the password, while the wait after the
    ///   last wrong one lasts.
    func admit() throws {
        let wait = notBefore.remainingSeconds
        guard failures > 1, wait > 0 else { return }
        throw KeychainError(
            errSecAuthFailed,
            "\(failures) wrong password\(failures == 1 ? "" : "s") in a row: the kc agent tries the next one in \(wait) s; this one was not tried",
            hint: "wait \(wait) s and try again (each wrong password doubles the wait; a right one resets it)")
    }

    /// Records a wrong password: the next one waits twice as long as the last.
    mutating func failed() {
        failures += 1
        notBefore = .after(seconds: Self.delay(after: failures))
    }

    /// Records a right password: no wait.
    mutating func succeeded() {
        failures = 0
        notBefore = .now
    }
}
