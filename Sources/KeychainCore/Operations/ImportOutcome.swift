#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// What an import did with one item.
public enum ImportOutcome: Equatable, Sendable {
    /// Added as a new item.
    case created
    /// An item with its primary key existed and was replaced (update mode). `duplicateOf`
    /// is the index of an earlier item of the same import it replaced, nil for an item
    /// that was in the keychain before.
    case updated(duplicateOf: Int?)
    /// An item with its primary key, attributes and secret was already there.
    case unchanged(duplicateOf: Int?)
    /// An item with its primary key but other attributes or secret exists; left alone.
    case skipped(duplicateOf: Int?)
    /// Not valid as a keychain item (skip-invalid mode); the reason, without the item's source.
    case invalid(KeychainError)
}
