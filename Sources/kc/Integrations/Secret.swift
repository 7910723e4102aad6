import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A resolved secret's bytes, wiped when the last reference goes.
final class Secret {
    private(set) var bytes: [UInt8]

    init(_ bytes: [UInt8]) { self.bytes = bytes }

    deinit {
        bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { memset(base, 0, $0.count) } }
    }
}
