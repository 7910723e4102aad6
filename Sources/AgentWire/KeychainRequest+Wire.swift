import KeychainCore

/// How each request travels: an operation number, a query and attributes (`docs/protocol.md` §2).
extension KeychainRequest {
    /// The operation number on the wire.
    public var operation: AgentProtocol.Operation {
        switch self {
        case .add: .add
        case .copyMatching: .copyMatching
        case .update: .update
        case .delete: .delete
        case .count: .count
        case .backup: .backup
        case .importItems: .importItems
        case .copyMany: .copyMany
        case .verify: .verify
        case .copyPage: .copyPage
        }
    }

    /// The (query, attributes) values the operation travels as.
    package var wireValues: (query: [String: Any], attributes: [String: Any]?) {
        switch self {
        case .add(let q), .copyMatching(let q), .delete(let q), .count(let q): (q, nil)
        case .update(let q, let attributes): (q, attributes)
        case .backup(let b): (b.dictionary, nil)
        case .importItems(let i): (i.dictionary, nil)
        case .copyMany(let b): (b.dictionary, nil)
        case .verify: ([:], nil)
        case .copyPage(let q, let after, let limit):
            (after.map { ["query": q, "after": Int($0), "limit": limit] } ?? ["query": q, "limit": limit], nil)
        }
    }

    /// The request an operation's decoded values make. - Throws: errSecParam when they do
    /// not have the operation's shape.
    package init(_ operation: AgentProtocol.Operation, query: [String: Any], attributes: [String: Any]?) throws {
        switch operation {
        case .add: self = .add(query)
        case .copyMatching: self = .copyMatching(query)
        case .update:
            guard let attributes else { throw KeychainError(errSecParam, "an update request has no attributes") }
            self = .update(query, attributes: attributes)
        case .delete: self = .delete(query)
        case .count: self = .count(query)
        case .backup: self = .backup(try BackupRequest(dictionary: query))
        case .importItems: self = .importItems(try ImportRequest(dictionary: query))
        case .copyMany: self = .copyMany(try BatchRequest(dictionary: query))
        case .verify: self = .verify
        case .copyPage:
            guard let q = query["query"] as? [String: Any], let limit = query["limit"] as? Int,
                (1...SearchPage.maxLimit).contains(limit), query["after"] == nil || query["after"] is Int,
                Set(query.keys).isSubset(of: ["query", "after", "limit"])
            else { throw KeychainError(errSecParam, "a page request is {query, after?, limit: 1…\(SearchPage.maxLimit)}") }
            self = .copyPage(q, after: (query["after"] as? Int).map(Int64.init), limit: limit)
        }
    }
}
