/// What a `KeychainRequest` answers, typed by the request's kind.
public enum KeychainReply {
    /// An add's or search's result: attributes, data, references, a list of them, or nil.
    case value(Any?)
    /// A number: items changed, deleted, counted, copied or checked.
    case count(Int)
    /// An import's outcome for each item, in order.
    case outcomes([ImportOutcome])
    /// A batch's result or error for each query, in order.
    case results([Result<Any?, KeychainError>])
    /// One page of a search, and where the next starts.
    case page(SearchPage)

    /// The value of an add or search. - Throws: errSecInternalError for another kind.
    public func value() throws -> Any? {
        guard case .value(let v) = self else { throw KeychainError(errSecInternalError, "expected a value reply") }
        return v
    }

    /// The number a count-answering request gave. - Throws: errSecInternalError for another kind.
    public func count() throws -> Int {
        guard case .count(let n) = self else { throw KeychainError(errSecInternalError, "expected a count reply") }
        return n
    }
}
