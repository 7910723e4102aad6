/// What encoding a row of one class needs, worked out once from the schema: the primary-key
/// attributes with their defaults and blind-index key, and the index columns with theirs.
/// Every add, lookup and import fingerprints items; computing these per item cost string
/// hashing and small allocations in the hottest loop (docs/performance.md).
package struct ClassPlan {
    let primaryKey: [(attribute: String, defaultValue: AttributeValue)]
    let primaryKeyID: UInt64
    let indexes: [(column: IndexColumn, attribute: String, keyID: UInt64)]
    /// Primary-key attributes encoded only when the item has them (`Schema.optionalPrimaryKey`).
    let optionalPrimaryKey: [String]
    /// The map attribute whose pairs are indexed, and the key of its pair fingerprints.
    let pairs: (attribute: String, keyID: UInt64)?

    init(_ itemClass: ItemClass) {
        primaryKey = Schema.primaryKey(itemClass).map { ($0, Schema.defaultValue($0) ?? .string("")) }
        primaryKeyID = BlindIndex.primaryKeyID(classCode: itemClass.code)
        indexes = Schema.computeIndexColumns(itemClass).map { ($0.column, $0.attribute, Schema.blindKeyID(column: $0.column, itemClass: itemClass)) }
        optionalPrimaryKey = Schema.optionalPrimaryKey(itemClass)
        pairs = Schema.pairAttribute(itemClass).map { ($0, BlindIndex.keyID(classCode: itemClass.code, attribute: $0)) }
    }

    private static let generic = ClassPlan(.genericPassword)
    private static let internet = ClassPlan(.internetPassword)
    private static let certificate = ClassPlan(.certificate)
    private static let key = ClassPlan(.key)
    private static let identity = ClassPlan(.identity)

    /// The plan of a class (a switch, not a dictionary: no hashing).
    static func of(_ itemClass: ItemClass) -> ClassPlan {
        switch itemClass {
        case .genericPassword: return generic
        case .internetPassword: return internet
        case .certificate: return certificate
        case .key: return key
        case .identity: return identity
        }
    }
}
