#if os(Linux)
import KeychainCore

/// A source of random numbers. (Apple: `SecRandomRef`, an opaque pointer.)
public typealias SecRandomRef = OpaquePointer

/// The default source, the system's (Apple: `kSecRandomDefault`, which is nil).
nonisolated(unsafe) public let kSecRandomDefault: SecRandomRef? = nil

/// Fills `count` bytes at `bytes` with cryptographically secure random bytes from Swift's
/// `SystemRandomNumberGenerator` (the kernel's getrandom on Linux). Apple's
/// `SecRandomCopyBytes`, with its signature; `rnd` is ignored, as only the default exists.
/// - Returns: errSecSuccess.
public func SecRandomCopyBytes(_ rnd: SecRandomRef?, _ count: Int, _ bytes: UnsafeMutableRawPointer) -> Int32 {
    var generator = SystemRandomNumberGenerator()
    var filled = 0
    while filled < count {
        var word = generator.next()
        let take = min(8, count - filled)
        withUnsafeBytes(of: &word) { (bytes + filled).copyMemory(from: $0.baseAddress!, byteCount: take) }
        filled += take
        word = 0
    }
    return errSecSuccess
}
#endif
