/// A reference-counted, immutable key in guarded memory. Keys are shared by reference so
/// that locking a keychain drops its reference while a running operation keeps the key
/// alive until it finishes; the bytes are wiped when the last reference goes.
package final class SymmetricKey: @unchecked Sendable {
    /// The key bytes.
    package let bytes: SecureBytes

    package init(_ bytes: consuming SecureBytes) {
        self.bytes = bytes
    }

    /// Calls `body` with the key's bytes.
    package func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try bytes.withUnsafeBytes(body)
    }
}

extension SymmetricKey {
    /// Zeroes the key in place (`KeyRevocation`); it stays allocated until its last
    /// reference goes.
    package func wipe() {
        bytes.withUnsafeMutableBytes { Sodium.wipe($0) }
    }
}
