extension KeychainRequest {
    /// Performs the request on an open keychain: the one place that maps a request to a
    /// `Keychain` call, for the agent and for a client that opened the keychain itself.
    /// - Parameter presence: the proof of user presence for this one request (none by
    ///   default); a request that needs one without it throws `UserPresenceRequired`.
    public func perform(on keychain: Keychain, presence: UserPresence = UserPresence()) throws -> KeychainReply {
        switch self {
        case .add(let q): return .value(try keychain.add(q))
        case .copyMatching(let q): return .value(try keychain.copyMatching(q, presence: presence))
        case .update(let q, let attributes): return .count(try keychain.update(q, attributes, presence: presence))
        case .delete(let q): return .count(try keychain.delete(q))
        case .count(let q): return .count(try keychain.count(q))
        case .backup(let b): return .count(try keychain.backup(to: b.destination, replacing: b.replacing))
        case .importItems(let i):
            return .outcomes(
                try keychain.importItems(
                    i.items, updateExisting: i.updateExisting, dryRun: i.dryRun,
                    skipInvalid: i.skipInvalid, progress: i.progress, presence: presence))
        case .copyMany(let b):
            // One proof for the whole batch: queries that need one fail the batch, naming every
            // protected item of every query (so the caller asks once, naming them all, and
            // performs it all again); every other error stays its query's.
            var results: [Result<Any?, KeychainError>] = []
            var protected: [String] = []
            for query in b.queries {
                do {
                    results.append(.success(try keychain.copyMatching(query, presence: presence)))
                } catch let error as KeychainError {
                    results.append(.failure(error))
                } catch let required as UserPresenceRequired {
                    protected += required.items
                    results.append(.failure(KeychainError(errSecInteractionNotAllowed)))
                } catch {
                    results.append(.failure(KeychainError(errSecInternalError)))
                }
            }
            if !protected.isEmpty { throw UserPresenceRequired(items: protected) }
            return .results(results)
        case .verify: return .count(try keychain.check())
        case .copyPage(let q, let after, let limit): return .page(try keychain.copyPage(q, after: after, limit: limit))
        }
    }
}
