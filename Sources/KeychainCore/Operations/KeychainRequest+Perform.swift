extension KeychainRequest {
    /// Performs the request on an open keychain: the one place that maps a request to a
    /// `Keychain` call, for the agent and for a client that opened the keychain itself.
    public func perform(on keychain: Keychain) throws -> KeychainReply {
        switch self {
        case .add(let q): return .value(try keychain.add(q))
        case .copyMatching(let q): return .value(try keychain.copyMatching(q))
        case .update(let q, let attributes): return .count(try keychain.update(q, attributes))
        case .delete(let q): return .count(try keychain.delete(q))
        case .count(let q): return .count(try keychain.count(q))
        case .backup(let b): return .count(try keychain.backup(to: b.destination, replacing: b.replacing))
        case .importItems(let i):
            return .outcomes(try keychain.importItems(i.items, updateExisting: i.updateExisting, dryRun: i.dryRun,
                                                      skipInvalid: i.skipInvalid, progress: i.progress))
        case .copyMany(let b):
            return .results(b.queries.map { query in
                Result { try keychain.copyMatching(query) }.mapError { $0 as? KeychainError ?? KeychainError(errSecInternalError) }
            })
        case .verify: return .count(try keychain.check())
        }
    }
}
