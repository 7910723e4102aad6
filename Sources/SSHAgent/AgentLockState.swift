internal import CSodium
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// Constant-time comparison (`sodium_memcmp`).
enum SecretCompare {
    static func equal(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        a.count == b.count && (a.isEmpty || sodium_memcmp(a, b, a.count) == 0)
    }
}

/// `ssh-add -x` / `-X`: while locked the agent lists and signs nothing, its own keys and
/// the keychains' alike, until UNLOCK gives the same passphrase. The passphrase is never
/// kept: only its Argon2id hash (`crypto_pwhash`, interactive limits, a fresh salt), compared
/// in constant time. Each wrong UNLOCK waits 0.1 s longer than the last (at most 10 s),
/// one try (and one derivation) at a time whatever the number of connections.
public final class AgentLockState: Sendable {
    private struct State {
        var locked = false
        var salt: [UInt8] = []
        var hash: [UInt8] = []
        var failures = 0
    }

    private let state = Mutex(State())
    /// Serializes UNLOCK tries, so the back-off holds across connections.
    private let tries = Mutex(())

    /// Unlocked.
    public init() {}

    /// Whether the agent is locked.
    public var isLocked: Bool { state.withLock { $0.locked } }

    /// Locks with `passphrase`. - Returns: false when already locked, or the passphrase is empty.
    public func lock(_ passphrase: [UInt8]) -> Bool {
        guard !passphrase.isEmpty else { return false }
        // One derivation at a time (each takes 64 MiB), as for UNLOCK.
        return tries.withLock { _ in
            guard !isLocked else { return false }
            var salt = [UInt8](repeating: 0, count: Int(crypto_pwhash_SALTBYTES))
            randombytes_buf(&salt, salt.count)
            guard let hash = Self.hash(passphrase, salt: salt) else { return false }
            return state.withLock { s in
                guard !s.locked else { return false }
                s = State(locked: true, salt: salt, hash: hash, failures: s.failures)
                return true
            }
        }
    }

    /// Unlocks when `passphrase` is the one locked with; a wrong one waits first.
    public func unlock(_ passphrase: [UInt8]) -> Bool {
        tries.withLock { _ in
            let (locked, salt, expected) = state.withLock { ($0.locked, $0.salt, $0.hash) }
            guard locked, !passphrase.isEmpty else { return false }
            if let hash = Self.hash(passphrase, salt: salt), SecretCompare.equal(hash, expected) {
                state.withLock { s in s = State() }
                return true
            }
            let failures = state.withLock { s -> Int in
                s.failures = min(s.failures + 1, 100)
                return s.failures
            }
            usleep(UInt32(100_000 * failures))
            return false
        }
    }

    private static func hash(_ passphrase: [UInt8], salt: [UInt8]) -> [UInt8]? {
        _ = sodium_init()
        var out = [UInt8](repeating: 0, count: 32)
        let rc = passphrase.withUnsafeBytes { p -> Int32 in
            guard let base = p.baseAddress?.assumingMemoryBound(to: CChar.self) else { return -1 }
            return crypto_pwhash(
                &out, UInt64(out.count), base, UInt64(passphrase.count), salt,
                UInt64(crypto_pwhash_OPSLIMIT_INTERACTIVE), Int(crypto_pwhash_MEMLIMIT_INTERACTIVE), crypto_pwhash_ALG_ARGON2ID13)
        }
        return rc == 0 ? out : nil
    }
}
