internal import CSodium

/// Private key bytes kept in memory libsodium allocates (`sodium_malloc`: guard pages, locked
/// against swapping where the limit allows) and wiped when the owner lets go of them, as
/// for a key `ssh-add` gave the agent when it is removed, expires or the agent stops.
public final class SecretBytes: @unchecked Sendable {
    private let pointer: UnsafeMutableRawPointer?
    /// How many bytes are held.
    public let count: Int

    /// A copy of `bytes` in guarded memory; the caller wipes its own copy.
    public init<C: Collection>(_ bytes: C) where C.Element == UInt8 {
        _ = sodium_init()
        count = bytes.count
        pointer = sodium_malloc(max(bytes.count, 1))
        if let pointer {
            let buffer = UnsafeMutableRawBufferPointer(start: pointer, count: count)
            buffer.copyBytes(from: bytes)
        }
    }

    deinit {
        if let pointer {
            sodium_memzero(pointer, count)
            sodium_free(pointer)
        }
    }

    /// Whether the allocation succeeded (it can fail under a low RLIMIT_MEMLOCK).
    public var isValid: Bool { pointer != nil }

    /// Calls `body` with the bytes (not to be kept past the call).
    public func withBytes<R>(_ body: (UnsafeRawBufferPointer) throws -> R) rethrows -> R {
        try body(UnsafeRawBufferPointer(start: pointer, count: pointer == nil ? 0 : count))
    }

    /// Wipes a plain array holding secret bytes.
    public static func wipe(_ bytes: inout [UInt8]) {
        bytes.withUnsafeMutableBytes { raw in
            if let base = raw.baseAddress { sodium_memzero(base, raw.count) }
        }
    }
}
