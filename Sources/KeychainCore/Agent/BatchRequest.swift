/// Several SecItemCopyMatching queries in one agent round trip (operation `copyMany`,
/// `docs/protocol.md`): `kc run` resolves all its references at once. Each query succeeds
/// or fails on its own.
public enum BatchRequest {
    /// The request's query dictionary.
    public static func encode(_ queries: [[String: Any]]) -> [String: Any] {
        ["queries": queries.map { $0 as Any }]
    }

    /// Runs each query on `keychain`, in one read of the file per query.
    static func perform(_ request: [String: Any], on keychain: Keychain) throws -> [Any] {
        guard let list = request["queries"] as? [Any] else { throw KeychainError(errSecParam, "a batch request has no queries") }
        return try list.map { element in
            guard let query = element as? [String: Any] else { throw KeychainError(errSecParam, "malformed query in a batch request") }
            return encode(Result { try keychain.copyMatching(query) })
        }
    }

    /// Runs the queries here, with the same per-query results.
    public static func performLocally(_ queries: [[String: Any]], on keychain: Keychain) -> [Result<Any?, KeychainError>] {
        queries.map { query in Result { try keychain.copyMatching(query) }.mapError { $0 as? KeychainError ?? KeychainError(errSecInternalError) } }
    }

    static func encode(_ result: Result<Any?, any Error>) -> [String: Any] {
        switch result {
        case .success(let value):
            var d: [String: Any] = [:]
            if let value { d["result"] = value }
            return d
        case .failure(let error):
            let e = error as? KeychainError ?? KeychainError(errSecInternalError)
            return ["status": Int(e.status), "message": e.message, "hint": e.hint ?? ""]
        }
    }

    /// The per-query results of an agent's reply. - Throws: errSecParam for a malformed reply.
    public static func decode(_ reply: Any?, count: Int) throws -> [Result<Any?, KeychainError>] {
        let bad = KeychainError(errSecParam, "malformed batch reply from the agent")
        guard let list = reply as? [Any], list.count == count else { throw bad }
        return try list.map { element in
            guard let d = element as? [String: Any] else { throw bad }
            if let status = d["status"] as? Int {
                let hint = d["hint"] as? String ?? ""
                return .failure(KeychainError(OSStatus(truncatingIfNeeded: status), d["message"] as? String, hint: hint.isEmpty ? nil : hint))
            }
            return .success(d["result"])
        }
    }
}
