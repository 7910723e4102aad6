import KeychainCore

/// A one-time-code seed as an `otpauth://` URI describes it (`OTPAuthURI.swift`): the key,
/// the hash, the number of digits, and either a time step (TOTP, RFC 6238) or a counter
/// (HOTP, RFC 4226). Computes codes; never prints or stores anything itself.
///
///     let seed = try OneTimeSeed(uri: Array("otpauth://totp/x?secret=GEZDGNBV".utf8))
///     let code = seed.code(at: 59)        // the code for 1970-01-01T00:00:59Z
///
/// A class so that the key is wiped once, when the last reference goes.
package final class OneTimeSeed {
    /// Time-based or counter-based.
    package enum Kind: Equatable, Sendable {
        /// RFC 6238: the counter is the Unix time divided by `period` seconds (T0 = 0).
        case totp(period: Int64)
        /// RFC 4226: `counter` is the next code's counter; each code used advances it.
        case hotp(counter: UInt64)
    }

    /// The letters of Steam Guard codes (five of them, from the same truncated HMAC).
    package static let steamAlphabet = Array("23456789BCDFGHJKMNPQRTVWXY".utf8)
    /// The digits RFC 4226 allows a code (it requires at least 6; 8 keeps 31 bits meaningful).
    package static let digitRange = 6...8
    /// The longest time step accepted (a year): a larger one is a mistake, not a policy.
    package static let maxPeriod: Int64 = 366 * 86_400

    /// The HMAC key (the decoded `secret`).
    private(set) var key: [UInt8]
    /// TOTP with its period, or HOTP with its counter.
    package let kind: Kind
    /// The hash under the HMAC (`algorithm=`, default SHA1).
    package let algorithm: HMAC.Algorithm
    /// 6–8, or 5 for Steam.
    package let digits: Int
    /// Steam Guard: five letters of `steamAlphabet` instead of decimal digits.
    package let steam: Bool
    /// The URI's `issuer` (or the label's part before `:`), when it names one.
    package var issuer: String?
    /// The label's account part (after `issuer:`), when there is a label.
    package var accountName: String?

    /// A seed from its parts. - Throws: errSecParam for digits outside 6–8 (not Steam),
    /// a period outside 1 s – a year, or an empty key.
    package init(key: [UInt8], kind: Kind, algorithm: HMAC.Algorithm = .sha1, digits: Int = 6, steam: Bool = false) throws {
        var key = key
        guard !key.isEmpty else { throw KeychainError(errSecParam, "the secret is empty") }
        if !steam, !Self.digitRange.contains(digits) {
            Sodium.wipe(&key)
            throw KeychainError(errSecParam, "digits must be 6, 7 or 8, not \(digits)")
        }
        if case .totp(let period) = kind, !(1...Self.maxPeriod).contains(period) {
            Sodium.wipe(&key)
            throw KeychainError(errSecParam, "the period must be 1 to \(Self.maxPeriod) seconds, not \(period)")
        }
        self.key = key
        self.kind = kind
        self.algorithm = algorithm
        self.digits = steam ? 5 : digits
        self.steam = steam
    }

    deinit { Sodium.wipe(&key) }

    /// Whether each code advances a stored counter (HOTP).
    package var isCounterBased: Bool {
        if case .hotp = kind { return true }
        return false
    }

    /// The TOTP time step (nil for HOTP).
    package var period: Int64? {
        if case .totp(let period) = kind { return period }
        return nil
    }

    /// The code for `time` (Unix seconds, at least 0): TOTP's counter is
    /// ⌊time / period⌋ (RFC 6238 §4.2); for HOTP, the stored counter (time plays no part).
    package func code(at time: Int64) -> String {
        switch kind {
        case .totp(let period): return code(counter: UInt64(max(time, 0) / period))
        case .hotp(let counter): return code(counter: counter)
        }
    }

    /// Seconds until the TOTP code for `time` changes (nil for HOTP).
    package func secondsLeft(at time: Int64) -> Int64? {
        guard case .totp(let period) = kind else { return nil }
        return period - max(time, 0) % period
    }

    /// HOTP(K, C) (RFC 4226 §5.3): HMAC over the counter's 8 big-endian bytes, dynamic
    /// truncation to 31 bits, then `digits` decimal digits (or five Steam letters).
    package func code(counter: UInt64) -> String {
        var message = (0..<8).map { UInt8(truncatingIfNeeded: counter >> UInt64(56 - 8 * $0)) }
        var mac = HMAC.authenticate(message, key: key, algorithm: algorithm)
        defer { Sodium.wipe(&mac); Sodium.wipe(&message) }
        let offset = Int(mac[mac.count - 1] & 0x0F)
        var binary =
            UInt32(mac[offset] & 0x7F) << 24 | UInt32(mac[offset + 1]) << 16
            | UInt32(mac[offset + 2]) << 8 | UInt32(mac[offset + 3])
        if steam {
            var letters: [UInt8] = []
            for _ in 0..<5 {
                letters.append(Self.steamAlphabet[Int(binary % UInt32(Self.steamAlphabet.count))])
                binary /= UInt32(Self.steamAlphabet.count)
            }
            return String(decoding: letters, as: UTF8.self)
        }
        var modulus: UInt32 = 1
        for _ in 0..<digits { modulus *= 10 }
        let number = String(binary % modulus)
        return String(repeating: "0", count: digits - number.count) + number
    }
}
