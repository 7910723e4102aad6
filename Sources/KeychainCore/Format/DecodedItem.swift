#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An item after its metadata was opened and checked.
package struct DecodedItem {
    var row: ItemRow
    var itemClass: ItemClass
    package var attributes: [String: AttributeValue]

    /// Apple's persistent reference: class (4 bytes) ‖ item id (16 bytes).
    var persistentRef: [UInt8] { Array(row.classCode.utf8) + row.itemID }
}
