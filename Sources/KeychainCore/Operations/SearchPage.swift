#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One page of a paged search (`Keychain.copyPage`, the agent's `copyPage` operation,
/// `docs/protocol.md`): results in insertion order, and where the next page starts.
public struct SearchPage {
    /// The results of this page (attribute dictionaries, persistent references, or `true`
    /// per match when the query asked for nothing), as `copyMatching` shapes each one.
    public var items: [Any]
    /// The place to pass as `after` for the next page; nil when this page is the last.
    public var next: Int64?

    /// A page of these items.
    public init(items: [Any], next: Int64?) {
        self.items = items
        self.next = next
    }

    /// How many items a page holds at most unless asked for fewer.
    public static let defaultLimit = 1000
    /// The most items a page may be asked for.
    public static let maxLimit = 1 << 16
    /// A page stops once its results pass this many bytes (always after its first item):
    /// far below the agent's 17 MiB frame, so that one page of the largest items still
    /// fits and neither side holds much of a listing at once.
    public static let maxBytes = 1 << 20
    /// The most items one listing of `kc list` holds (`KeychainSession.forEachPage`): past
    /// it, pages that never end are refused (docs/protocol.md).
    public static let maxListingItems = 1 << 20
    /// The most bytes of encoded results one listing of `kc list` holds.
    public static let maxListingBytes = 256 << 20
    /// The longest one listing (`KeychainSession.forEachPage`) may take, in seconds: past
    /// it, pages that never end are refused however small they are.
    public static let maxListingSeconds = 120.0

    /// The bytes `value` takes in the agent's value encoding (`docs/protocol.md` §3):
    /// type tag, lengths and contents; an upper bound for what `copyPage` counts.
    public static func encodedSize(_ value: Any?) -> Int {
        switch value {
        case let s as String: return 5 + s.utf8.count
        case let d as Data: return 5 + d.count
        case let b as [UInt8]: return 5 + b.count
        case let list as [Any]: return list.reduce(5) { $0 + encodedSize($1) }
        case let dict as [String: Any]: return dict.reduce(5) { $0 + 4 + $1.key.utf8.count + encodedSize($1.value) }
        case let map as [String: String]: return map.reduce(5) { $0 + 9 + $1.key.utf8.count + $1.value.utf8.count }
        default: return 9
        }
    }
}
