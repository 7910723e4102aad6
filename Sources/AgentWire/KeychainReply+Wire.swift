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
        }
    }
}
