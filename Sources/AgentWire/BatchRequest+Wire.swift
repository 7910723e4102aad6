import KeychainCore

/// How it travels (`docs/protocol.md` §2).
extension BatchRequest {
    /// `{queries: [query]}`.
    package var dictionary: [String: Any] { ["queries": queries.map { $0 as Any }] }

    /// - Throws: errSecParam when `queries` is missing or holds a non-dictionary.
    package init(dictionary d: [String: Any]) throws {
        guard let list = d["queries"] as? [Any] else { throw KeychainError(errSecParam, "a batch request has no queries") }
        self.init(
            queries: try list.map { element in
                guard let query = element as? [String: Any] else { throw KeychainError(errSecParam, "malformed query in a batch request") }
                return query
            })
    }

    /// One query's result as it travels: `{result?}` or `{status, message, hint}`.
    package static func dictionary(of result: Result<Any?, KeychainError>) -> [String: Any] {
        switch result {
        case .success(let value):
            var d: [String: Any] = [:]
            if let value { d["result"] = value }
            return d
        case .failure(let e):
            return ["status": Int(e.status), "message": e.message, "hint": e.hint ?? ""]
        }
    }

    /// The per-query results of a reply. - Throws: errSecIO for a malformed reply.
    package static func results(_ reply: Any?, count: Int) throws -> [Result<Any?, KeychainError>] {
        let bad = KeychainError(errSecIO, "malformed batch reply from the kc agent")
        guard let list = reply as? [Any], list.count == count else { throw bad }
        return try list.map { element in
            guard let d = element as? [String: Any] else { throw bad }
            if let status = d["status"] as? Int {
                guard let message = d["message"] as? String else { throw bad }
                let hint = d["hint"] as? String ?? ""
                return .failure(KeychainError(OSStatus(truncatingIfNeeded: status), message, hint: hint.isEmpty ? nil : hint))
            }
            return .success(d["result"])
        }
    }
}
