import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Where the Secret Service's items and kc's generic passwords meet (docs/secret-service.md,
/// "Attributes"): every Secret Service item is a generic password, and
///
/// - a client's `service` attribute is the item's service (`kc find -s`), its `username`
///   (else `account`, else `user`) the item's account (`kc find -a`), so what Python's
///   keyring or secret-tool stored is found by `kc find -s SERVICE -a USER`;
/// - the whole attribute map is kept, encrypted, in `kcAttrSecretServiceAttributes`, unless
///   it says nothing more than service and account: such an item is a plain kc item;
/// - a plain kc item (no map) shows `service`, `account` and `username` attributes, so
///   clients that search by either name find kc's own passwords;
/// - a second item with the same attributes (CreateItem without `replace`, which the
///   specification allows) carries one more pair, `copyMark`, with a random value: the map
///   is part of the keychain's primary key, so the two are two items. Clients never see
///   the pair.
package enum ItemMapping {
    /// The kc query key for the Secret Service attribute map (KeychainCore, format 3).
    package static let mapKey = kcAttrSecretServiceAttributes
    /// The kc query key for the Secret Service content type (KeychainCore, format 3).
    package static let contentTypeKey = kcAttrContentType
    /// The attribute names a plain kc item answers to.
    static let plainNames: Set<String> = ["service", "account", "username"]
    /// The pair that tells apart items whose attributes are the same (kc's own: hidden
    /// from clients, refused in the attributes they give).
    package static let copyMark = AttributeMap.copyMark

    /// A fresh value for `copyMark`: 16 random bytes in hex.
    package static func newCopyValue() -> String { ObjectPath.hex(Sodium.randomBytes(16)) }

    /// The attributes a client set on a stored map: the map without `copyMark`.
    package static func clientMap(_ map: [String: String]) -> [String: String] {
        var map = map
        map[copyMark] = nil
        return map
    }

    /// The attributes a client sees for an item, from its keychain attributes.
    package static func busAttributes(_ attributes: [String: Any]) -> [String: String] {
        if let map = attributes[mapKey] as? [String: String], !map.isEmpty { return clientMap(map) }
        var out: [String: String] = [:]
        if let service = text(attributes[kSecAttrService]) { out["service"] = service }
        if let account = text(attributes[kSecAttrAccount]) {
            out["account"] = account
            out["username"] = account
        }
        return out
    }

    /// Whether `map` says nothing more than a plain item's service and account.
    package static func isPlain(_ map: [String: String]) -> Bool {
        guard map["service"] != nil, Set(map.keys).isSubset(of: plainNames) else { return false }
        if let a = map["account"], let u = map["username"], a != u { return false }
        return map["account"] != nil || map["username"] != nil
    }

    /// The keychain attributes (no class) of an item a client creates; with `copy`, the
    /// map (kept even when plain) carries `copyMark` with that value.
    package static func keychainAttributes(_ map: [String: String], label: String, contentType: String?, copy: String? = nil) -> [String: Any] {
        var a: [String: Any] = [
            kSecAttrService: map["service"] ?? "",
            kSecAttrAccount: map["username"] ?? map["account"] ?? map["user"] ?? "",
            kSecAttrLabel: label
        ]
        if let copy {
            a[mapKey] = map.merging([copyMark: copy]) { _, mark in mark }
        } else if !isPlain(map) {
            a[mapKey] = map
        }
        if let contentType, contentType != "text/plain" { a[contentTypeKey] = contentType }
        return a
    }

    /// The queries (generic passwords) whose union is the items matching `map` as the
    /// specification's SearchItems does: every given pair present.
    package static func searchQueries(_ map: [String: String]) -> [[String: Any]] {
        let base: [String: Any] = [
            kSecClass: kSecClassGenericPassword, kSecMatchLimit: kSecMatchLimitAll,
            kSecReturnAttributes: true, kSecReturnPersistentRef: true
        ]
        if map.isEmpty { return [base] }
        var queries: [[String: Any]] = []
        var mapped = base
        mapped[mapKey] = map
        queries.append(mapped)
        // Plain items answer to service, account and username only.
        if Set(map.keys).isSubset(of: plainNames) {
            let account = map["account"] ?? map["username"]
            if map["account"] == nil || map["username"] == nil || map["account"] == map["username"] {
                var plain = base
                plain[mapKey] = [String: String]()
                if let service = map["service"] { plain[kSecAttrService] = service }
                if let account { plain[kSecAttrAccount] = account }
                queries.append(plain)
            }
        }
        return queries
    }

    /// How an item (its keychain attributes) answers to `attributes`: 0 when the pairs its
    /// client gave (its map without `copyMark`) are exactly `attributes`; 1 when it is a plain
    /// kc item (no map) and `attributes` say no more than a plain item's service and account
    /// (it answers to `service`, `account` and `username` alike); 2 otherwise.
    package static func rank(_ item: [String: Any], for attributes: [String: String]) -> Int {
        let map = clientMap(item[mapKey] as? [String: String] ?? [:])
        if map == attributes { return 0 }
        return map.isEmpty && isPlain(attributes) ? 1 : 2
    }

    /// `found` in the order every client meets it: by `rank`, then the oldest first (of two
    /// made in the same instant, the one without `copyMark`). So the first item a search
    /// returns (secret-tool lookup, libsecret's password_lookup, a locked search's
    /// placeholder) is the one CreateItem with `replace` replaces.
    package static func ordered(
        _ found: [(ref: [UInt8], attributes: [String: Any])], for attributes: [String: String]
    ) -> [(ref: [UInt8], attributes: [String: Any])] {
        let key = { (item: (ref: [UInt8], attributes: [String: Any])) in
            (
                rank(item.attributes, for: attributes),
                (item.attributes[kSecAttrCreationDate] as? Date)?.timeIntervalSinceReferenceDate ?? .infinity,
                (item.attributes[mapKey] as? [String: String])?[copyMark] == nil ? 0 : 1
            )
        }
        return found.enumerated().sorted { a, b in
            let (ka, kb) = (key(a.element), key(b.element))
            return ka != kb ? ka < kb : a.offset < b.offset
        }.map(\.element)
    }

    /// A string attribute as text (kc keeps text attributes as strings or UTF-8 data).
    static func text(_ value: Any?) -> String? {
        switch value {
        case let s as String: return s
        case let d as Data: return String(validating: Array(d), as: UTF8.self)
        default: return nil
        }
    }
}
