#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// A decrypted secret: a padded scratch buffer and the secret's length within it.
struct OpenedData: ~Copyable {
    let buffer: SecureBytes
    let length: Int

    func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try buffer.withUnsafeBytes { try body(UnsafeRawBufferPointer(rebasing: $0[0..<length])) }
    }
}
