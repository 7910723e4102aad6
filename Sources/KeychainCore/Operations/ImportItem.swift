#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// One item to import: an add query (class, attributes, `kSecValueData`) and, when the
/// source kept them, its original creation and modification dates.
public struct ImportItem {
    /// As for `Keychain.add`; kSecReturn… keys are ignored.
    public var query: [String: Any]
    /// The creation date to keep; nil means now.
    public var created: Date?
    /// The modification date to keep; nil means now.
    public var modified: Date?
    /// Where the item came from ("line 12", "entry 3"), named in error messages.
    public var source: String

    /// Creates an item to import.
    public init(query: [String: Any], created: Date? = nil, modified: Date? = nil, source: String) {
        self.query = query
        self.created = created
        self.modified = modified
        self.source = source
    }
}
