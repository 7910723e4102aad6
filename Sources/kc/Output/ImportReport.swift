import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient

/// What `kc import` tells: one row per keychain item (or per entry that became none), a
/// summary, and the exit code (`docs/import-export.md`, "Report").
struct ImportReport {
    struct Row {
        var source: String
        var name: String
        var what: String   // "internet github.com alice"
        var result: String   // created, updated, unchanged, skipped, invalid, unsupported
        var reason: String?
        var dropped: [String]
    }

    var rows: [Row] = []

    static let results = ["created", "updated", "unchanged", "skipped", "invalid", "unsupported"]

    /// Builds the rows from the entries, their items' outcomes (in order), and the input order.
    init(entries: [ImportEntry], outcomes: [ImportOutcome]) {
        var itemIndex = 0
        var sourceOfItem: [String] = []
        for entry in entries { for item in entry.items { sourceOfItem.append(item.source) } }
        for entry in entries {
            if let problem = entry.problem {
                switch problem {
                case .malformed(let why): rows.append(Row(source: entry.source, name: entry.name, what: "", result: "invalid", reason: why, dropped: []))
                case .unsupported(let why):
                    rows.append(Row(source: entry.source, name: entry.name, what: "", result: "unsupported", reason: why, dropped: entry.dropped))
                }
                continue
            }
            for (n, item) in entry.items.enumerated() {
                let outcome = outcomes[itemIndex]
                itemIndex += 1
                let earlier = { (of: Int?) in of.map { " (as \(sourceOfItem[$0]) of the input)" } ?? "" }
                var row = Row(
                    source: entry.source, name: n == 0 ? entry.name : entry.name + " (one-time codes)",
                    what: Self.describe(item.query), result: "", reason: nil, dropped: n == 0 ? entry.dropped : [])
                switch outcome {
                case .created: row.result = "created"
                case .updated(let of): row.result = "updated"; row.reason = "replaced the item with the same key" + earlier(of)
                case .unchanged(let of): row.result = "unchanged"; row.reason = "the same item is already there" + earlier(of)
                case .skipped(let of):
                    row.result = "skipped"
                    row.reason = "an item with the same key and other values exists" + earlier(of) + "; --update replaces it"
                case .invalid(let error): row.result = "invalid"; row.reason = error.message
                }
                rows.append(row)
            }
        }
    }

    /// "internet github.com alice" / "generic deploy-key ci": class and primary key.
    static func describe(_ query: [String: Any]) -> String {
        let cls = query[kSecClass] as? String
        let account = query[kSecAttrAccount] as? String ?? ""
        switch cls {
        case kSecClassInternetPassword?: return "internet \(query[kSecAttrServer] as? String ?? "") \(account)"
        case kSecClassGenericPassword?: return "generic \(query[kSecAttrService] as? String ?? "") \(account)"
        case kSecClassCertificate?: return "certificate"
        case kSecClassKey?: return "key"
        default: return ""
        }
    }

    func count(_ result: String) -> Int { rows.reduce(0) { $0 + ($1.result == result ? 1 : 0) } }

    /// Whether every entry is now in the keychain as given.
    var complete: Bool { rows.allSatisfy { ["created", "updated", "unchanged"].contains($0.result) } }

    var summary: String {
        Self.results.map { "\(count($0)) \($0)" }.joined(separator: ", ")
    }

    /// The text report: every row when `all`, else only the rows that need a look.
    func text(all: Bool) -> String {
        var out = ""
        for row in rows where all || !["created", "updated", "unchanged"].contains(row.result) || !row.dropped.isEmpty {
            // Every field came from the input: control characters never reach the terminal raw.
            let p = ItemPrinter.printable
            var line = "\(p(row.source)): \(row.result)"
            if !row.what.isEmpty { line += " \(p(row.what))" } else if !row.name.isEmpty { line += " \(p(row.name))" }
            if let reason = row.reason { line += ": \(p(reason))" }
            if !row.dropped.isEmpty { line += "; not kept: \(row.dropped.map(p).joined(separator: ", "))" }
            out += line + "\n"
        }
        return out
    }

    func json(format: ImportFormat, dryRun: Bool) -> String {
        let list = rows.map { row in
            var fields: [(String, String)] = [
                ("source", JSON.string(row.source)), ("name", JSON.string(row.name)),
                ("item", JSON.string(row.what)), ("result", JSON.string(row.result))
            ]
            if let reason = row.reason { fields.append(("reason", JSON.string(reason))) }
            fields.append(("notKept", JSON.array(row.dropped.map(JSON.string))))
            return JSON.object(fields)
        }
        let summary = JSON.object(Self.results.map { ($0, String(count($0))) })
        return JSON.object([
            ("format", JSON.string(format.rawValue)), ("dryRun", dryRun ? "true" : "false"),
            ("entries", JSON.array(list)), ("summary", summary)
        ]) + "\n"
    }
}
