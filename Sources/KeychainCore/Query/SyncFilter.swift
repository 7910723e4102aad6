/// Which items a query sees by their synchronizable flag.
enum SyncFilter: Sendable {
    /// Only items with sync = 0 (the implicit filter of every query).
    case notSynchronizable
    /// Only items with sync = 1 (`kSecAttrSynchronizable: true`).
    case synchronizable
    /// Both (`kSecAttrSynchronizableAny`).
    case any
}
