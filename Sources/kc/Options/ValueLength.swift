import KeychainCore

/// Attribute values over the core's size limit, refused before any keychain is opened with
/// the flag the user typed (`-s/--service`), not the raw key the core knows (`"svce"`).
enum ValueLength {
    /// - Throws: errSecDataTooLarge (exit 42) naming the first flag whose value is too long.
    static func check(_ values: [(flag: String, value: String?)]) throws {
        let limit = ItemQuery.maxAttributeBytes
        for (flag, value) in values {
            guard let count = value?.utf8.count, count > limit else { continue }
            throw KeychainError(
                errSecDataTooLarge, "the value of \(flag) is \(count) bytes; at most \(limit) are allowed",
                hint: "attributes are for names; keep large data in the secret (--data-file)")
        }
    }
}
