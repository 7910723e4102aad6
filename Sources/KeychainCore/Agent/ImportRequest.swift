#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// An import sent to the agent (operation `importItems`, `docs/protocol.md`): the items and
/// options as one dictionary, the outcomes back as a list of dictionaries.
public enum ImportRequest {
    /// The request's query dictionary.
    public static func encode(_ items: [ImportItem], updateExisting: Bool, dryRun: Bool, skipInvalid: Bool) -> [String: Any] {
        let list: [Any] = items.map { item in
            var d: [String: Any] = ["query": item.query, "source": item.source]
            if let created = item.created { d["created"] = created }
            if let modified = item.modified { d["modified"] = modified }
            return d
        }
        return ["items": list, "update": updateExisting, "dryRun": dryRun, "skipInvalid": skipInvalid]
    }

    /// Runs a decoded request on `keychain`. - Throws: errSecParam for a malformed request.
    static func perform(_ request: [String: Any], on keychain: Keychain) throws -> [Any] {
        guard let list = request["items"] as? [Any] else { throw KeychainError(errSecParam, "an import request has no items") }
        let items: [ImportItem] = try list.map { element in
            guard let d = element as? [String: Any], let query = d["query"] as? [String: Any], let source = d["source"] as? String else {
                throw KeychainError(errSecParam, "malformed item in an import request")
            }
            return ImportItem(query: query, created: d["created"] as? Date, modified: d["modified"] as? Date, source: source)
        }
        let outcomes = try keychain.importItems(items, updateExisting: request["update"] as? Bool ?? false,
                                                dryRun: request["dryRun"] as? Bool ?? false,
                                                skipInvalid: request["skipInvalid"] as? Bool ?? false)
        return outcomes.map(encode)
    }

    static func encode(_ outcome: ImportOutcome) -> [String: Any] {
        switch outcome {
        case .created: return ["outcome": "created"]
        case .updated(let of): return ["outcome": "updated", "of": of ?? -1]
        case .unchanged(let of): return ["outcome": "unchanged", "of": of ?? -1]
        case .skipped(let of): return ["outcome": "skipped", "of": of ?? -1]
        case .invalid(let e): return ["outcome": "invalid", "status": Int(e.status), "message": e.message]
        }
    }

    /// The outcomes of an agent's reply. - Throws: errSecParam for a malformed reply.
    public static func decodeOutcomes(_ reply: Any?, count: Int) throws -> [ImportOutcome] {
        let bad = KeychainError(errSecParam, "malformed import reply from the agent")
        guard let list = reply as? [Any], list.count == count else { throw bad }
        return try list.map { element in
            guard let d = element as? [String: Any], let kind = d["outcome"] as? String else { throw bad }
            let of = (d["of"] as? Int).flatMap { $0 >= 0 ? $0 : nil }
            switch kind {
            case "created": return .created
            case "updated": return .updated(duplicateOf: of)
            case "unchanged": return .unchanged(duplicateOf: of)
            case "skipped": return .skipped(duplicateOf: of)
            case "invalid":
                return .invalid(KeychainError(OSStatus(truncatingIfNeeded: d["status"] as? Int ?? Int(errSecParam)),
                                              d["message"] as? String ?? "invalid"))
            default: throw bad
            }
        }
    }
}
