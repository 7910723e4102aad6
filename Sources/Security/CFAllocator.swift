#if os(Linux)
/// A memory allocator, as Core Foundation's creation functions take one. Swift manages
/// memory here, so the allocator passed is accepted and not used; `nil` and
/// `kCFAllocatorDefault` both mean the default. (Apple: `CFAllocator`.)
public final class CFAllocator: Sendable {
    /// The one allocator: use `kCFAllocatorDefault`.
    fileprivate init() {}
}

/// The default allocator. (Apple: `kCFAllocatorDefault`, a `CFAllocator!`.)
public let kCFAllocatorDefault: CFAllocator! = CFAllocator()
#endif
