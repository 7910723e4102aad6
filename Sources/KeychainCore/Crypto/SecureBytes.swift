internal import CSodium
#if canImport(Glibc)
import Glibc
#endif

/// A buffer of secret bytes that is zeroed when released and can never be copied
/// implicitly (see `docs/security.md`, "Memory").
///
/// Long-lived keys use libsodium's guarded heap (`sodium_malloc`: guard pages, `mlock`);
/// per-operation secrets (an item's plaintext, a data key) use `scratch` storage, plain
/// `malloc` wiped with `sodium_memzero` on release, because `sodium_malloc` costs four
/// mappings per call and fails near 16k live allocations.
///
///     let password = try SecureBytes(copying: Array("correct horse".utf8))
///     let keychain = try Keychain.open(at: path, password: password)
///
/// - Throws: `KeychainError(errSecAllocate)` when memory cannot be had.
public struct SecureBytes: ~Copyable {
    private let base: UnsafeMutableRawPointer
    private let guarded: Bool
    /// The number of bytes.
    public let count: Int

    /// Allocates `count` zero bytes; `guarded` selects libsodium's guarded heap.
    public init(count: Int, guarded: Bool = false) throws {
        try Sodium.ensureReady()
        guard count >= 0 else { throw KeychainError(errSecParam, "negative buffer size") }
        let size = max(count, 1)
        let pointer: UnsafeMutableRawPointer?
        if guarded {
            pointer = sodium_malloc(size)
        } else {
            pointer = malloc(size)
        }
        guard let pointer else {
            throw KeychainError(errSecAllocate, "cannot allocate \(count) bytes of secure memory")
        }
        memset(pointer, 0, size)
        self.base = pointer
        self.guarded = guarded
        self.count = count
    }

    /// `count` bytes from the system's CSPRNG (`randombytes_buf`), made in place.
    public static func random(count: Int, guarded: Bool = true) throws -> SecureBytes {
        try Sodium.ensureReady()
        let out = try SecureBytes(count: count, guarded: guarded)
        out.withUnsafeMutableBytes { if let base = $0.baseAddress { randombytes_buf(base, $0.count) } }
        return out
    }

    /// Copies `bytes` into a new buffer. The caller should wipe its own copy.
    public init(copying bytes: [UInt8], guarded: Bool = false) throws {
        try self.init(count: bytes.count, guarded: guarded)
        if !bytes.isEmpty {
            bytes.withUnsafeBytes { source in
                base.copyMemory(from: source.baseAddress!, byteCount: source.count)
            }
        }
    }

    /// Copies raw bytes into a new buffer. The caller should wipe its own copy.
    public init(copying source: UnsafeRawBufferPointer, guarded: Bool = false) throws {
        try self.init(count: source.count, guarded: guarded)
        if let address = source.baseAddress, source.count > 0 {
            base.copyMemory(from: address, byteCount: source.count)
        }
    }

    deinit {
        sodium_memzero(base, max(count, 1))
        if guarded {
            sodium_free(base)
        } else {
            free(base)
        }
    }

    /// Calls `body` with a read-only view of the bytes. Do not let the pointer escape.
    public func withUnsafeBytes<R: ~Copyable, E: Error>(_ body: (UnsafeRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeRawBufferPointer(start: base, count: count))
    }

    /// Calls `body` with a writable view of the bytes. Do not let the pointer escape.
    public func withUnsafeMutableBytes<R: ~Copyable, E: Error>(_ body: (UnsafeMutableRawBufferPointer) throws(E) -> R) throws(E) -> R {
        try body(UnsafeMutableRawBufferPointer(start: base, count: count))
    }

    /// A new buffer holding the first `length` bytes (clamped to `count`).
    public func copy(prefix length: Int) throws -> SecureBytes {
        try SecureBytes(copying: UnsafeRawBufferPointer(start: base, count: max(0, min(length, count))), guarded: guarded)
    }

    /// Constant-time comparison with another buffer (`sodium_memcmp`).
    public func constantTimeEquals(_ other: borrowing SecureBytes) -> Bool {
        guard count == other.count else { return false }
        return other.withUnsafeBytes { theirs in
            sodium_memcmp(base, theirs.baseAddress ?? UnsafeRawPointer(base), count) == 0
        }
    }
}
