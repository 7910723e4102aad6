internal import CSodium

/// libsodium set-up and the small primitives the rest of `Crypto/` shares.
package enum Sodium {
    private static let initialised: Bool = sodium_init() >= 0

    /// Initialises libsodium once per process.
    /// - Throws: `errSecInternalError` if libsodium cannot start (no entropy source).
    package static func ensureReady() throws {
        guard initialised else {
            throw KeychainError(errSecInternalError, "libsodium could not be initialised")
        }
    }

    /// The version string of the libsodium in use (for `kc --version`).
    static var version: String {
        String(cString: sodium_version_string())
    }

    /// `count` bytes from the system's CSPRNG (`randombytes_buf`).
    package static func randomBytes(_ count: Int) -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        bytes.withUnsafeMutableBytes { buffer in
            if let base = buffer.baseAddress { randombytes_buf(base, count) }
        }
        return bytes
    }

    /// A number drawn uniformly from `0..<upperBound` by the system's CSPRNG, with no
    /// modulo bias (`randombytes_uniform` rejects the values that would cause one).
    ///
    ///     let index = try Sodium.randomUniform(94)   // 0...93, each with probability 1/94
    ///
    /// - Throws: `errSecInternalError` if libsodium cannot start; `errSecParam` for an
    ///   upper bound of 0 (there is nothing to draw).
    /// - SeeAlso: https://doc.libsodium.org/generating_random_data
    package static func randomUniform(_ upperBound: UInt32) throws -> UInt32 {
        try ensureReady()
        guard upperBound >= 2 else {
            if upperBound == 1 { return 0 }
            throw KeychainError(errSecParam, "no number below 0 to draw")
        }
        return randombytes_uniform(upperBound)
    }

    /// Zeroes an array's storage in place (best effort: copies made earlier are not reached).
    package static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { wipe($0) }
    }

    /// Zeroes memory in place (`sodium_memzero`).
    package static func wipe(_ buffer: UnsafeMutableRawBufferPointer) {
        if let base = buffer.baseAddress { sodium_memzero(base, buffer.count) }
    }

    /// Constant-time equality of two byte arrays of equal length.
    package static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        guard a.count == b.count else { return false }
        if a.isEmpty { return true }
        return a.withUnsafeBytes { pa in
            b.withUnsafeBytes { pb in
                sodium_memcmp(pa.baseAddress!, pb.baseAddress!, a.count) == 0
            }
        }
    }
}
