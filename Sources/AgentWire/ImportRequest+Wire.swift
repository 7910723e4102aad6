import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// How it travels (`docs/protocol.md` §2).
extension ImportRequest {
    /// `{items: [{query, source, created?, modified?}], update, dryRun, skipInvalid}`.
    package var dictionary: [String: Any] {
        let list: [Any] = items.map { item in
            var d: [String: Any] = ["query": item.query, "source": item.source]
            if let created = item.created { d["created"] = created }
            if let modified = item.modified { d["modified"] = modified }
            return d
        }
        return ["items": list, "update": updateExisting, "dryRun": dryRun, "skipInvalid": skipInvalid]
    }

    /// - Throws: errSecParam for a missing list, a malformed item or a non-Bool option.
    package init(dictionary d: [String: Any]) throws {
        guard let list = d["items"] as? [Any] else { throw KeychainError(errSecParam, "an import request has no items") }
        let items: [ImportItem] = try list.map { element in
            guard let e = element as? [String: Any], let query = e["query"] as? [String: Any], let source = e["source"] as? String,
                e["created"] == nil || e["created"] is Date, e["modified"] == nil || e["modified"] is Date
            else {
                throw KeychainError(errSecParam, "malformed item in an import request")
            }
            return ImportItem(query: query, created: e["created"] as? Date, modified: e["modified"] as? Date, source: source)
        }
        func flag(_ key: String) throws -> Bool {
            guard let v = d[key] else { return false }
            guard let b = v as? Bool else { throw KeychainError(errSecParam, "\"\(key)\" of an import request is not a Bool") }
            return b
        }
        self.init(items: items, updateExisting: try flag("update"), dryRun: try flag("dryRun"), skipInvalid: try flag("skipInvalid"))
    }

    /// One outcome as it travels: `{outcome, of?, status?, message?}`.
    package static func dictionary(of outcome: ImportOutcome) -> [String: Any] {
        switch outcome {
        case .created: return ["outcome": "created"]
        case .updated(let of): return ["outcome": "updated", "of": of ?? -1]
        case .unchanged(let of): return ["outcome": "unchanged", "of": of ?? -1]
        case .skipped(let of): return ["outcome": "skipped", "of": of ?? -1]
        case .invalid(let e): return ["outcome": "invalid", "status": Int(e.status), "message": e.message]
        }
    }

    /// The outcomes of a reply. - Throws: errSecIO for a malformed reply.
    package static func outcomes(_ reply: Any?, count: Int) throws -> [ImportOutcome] {
        let bad = KeychainError(errSecIO, "malformed import reply from the kc agent")
        guard let list = reply as? [Any], list.count == count else { throw bad }
        return try list.enumerated().map { index, element in
            guard let d = element as? [String: Any], let kind = d["outcome"] as? String else { throw bad }
            let of = (d["of"] as? Int).flatMap { $0 >= 0 ? $0 : nil }
            // "An earlier item of the same import": the report looks it up by that index.
            if let of, of >= index { throw bad }
            switch kind {
            case "created": return .created
            case "updated": return .updated(duplicateOf: of)
            case "unchanged": return .unchanged(duplicateOf: of)
            case "skipped": return .skipped(duplicateOf: of)
            case "invalid":
                guard let status = d["status"] as? Int, let message = d["message"] as? String else { throw bad }
                return .invalid(KeychainError(OSStatus(truncatingIfNeeded: status), message))
            default: throw bad
            }
        }
    }
}
