import KeychainCore

/// How replies travel (`docs/protocol.md` §2).
extension KeychainReply {
    /// The value it travels as (`docs/protocol.md` §2).
    package var wireValue: Any? {
        switch self {
        case .value(let v): v
        case .count(let n): n
        case .outcomes(let list): list.map(ImportRequest.dictionary(of:)) as [Any]
        case .results(let list): list.map(BatchRequest.dictionary(of:)) as [Any]
        case .page(let page): page.next.map { ["items": page.items, "next": Int($0)] } ?? ["items": page.items]
        }
    }

    /// The reply to `request` that the agent's `value` is. - Throws: errSecIO when the
    /// value does not have the shape the request's kind answers.
    package init(wire value: Any?, for request: KeychainRequest) throws {
        let bad = KeychainError(errSecIO, "malformed answer from the kc agent")
        switch request {
        case .add, .copyMatching:
            self = .value(value)
        case .update, .delete, .count, .backup, .verify:
            guard let n = value as? Int else { throw bad }
            self = .count(n)
        case .importItems(let r):
            self = .outcomes(try ImportRequest.outcomes(value, count: r.items.count))
        case .copyMany(let b):
            self = .results(try BatchRequest.results(value, count: b.queries.count))
        case .copyPage(_, let after, let limit):
            // At most `limit` items, and a next place past the one asked for: a reply that
            // would make the client ask for the same page for ever is refused. A page ends
            // once its items pass `SearchPage.maxBytes` (after its first), so all but its
            // last item stay below that: a larger page is refused too.
            guard let d = value as? [String: Any], let items = d["items"] as? [Any], items.count <= limit,
                d["next"] == nil || (d["next"] as? Int).map({ Int64($0) > (after ?? Int64.min) && !items.isEmpty }) == true,
                SearchPage.encodedSize(Array(items.dropLast())) - 5 < SearchPage.maxBytes
            else { throw bad }
            self = .page(SearchPage(items: items, next: (d["next"] as? Int).map(Int64.init)))
        }
    }
}
