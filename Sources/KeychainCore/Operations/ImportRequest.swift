#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Operation 7, `importItems`: items imported in one transaction, all or none.
public struct ImportRequest {
    /// The items, in order.
    public var items: [ImportItem]
    /// Replace an item whose primary key exists.
    public var updateExisting: Bool
    /// Work out every outcome, then roll back.
    public var dryRun: Bool
    /// Report an invalid item instead of failing the import.
    public var skipInvalid: Bool
    /// Called every 1,000 items when the import runs in this process (never sent).
    public var progress: ((Int) -> Void)?

    /// An import of `items`.
    public init(items: [ImportItem], updateExisting: Bool, dryRun: Bool, skipInvalid: Bool, progress: ((Int) -> Void)? = nil) {
        self.items = items
        self.updateExisting = updateExisting
        self.dryRun = dryRun
        self.skipInvalid = skipInvalid
        self.progress = progress
    }
}
