/// One operation on an unlocked keychain, typed: what `kc`, the Security module and every
/// other front end ask of a keychain, whether the agent holds it or it is open here.
/// Through the agent each travels as `docs/protocol.md` §2 says (AgentWire); the vectors
/// under `Tests/Vectors/agent/` pin those bytes.
public enum KeychainRequest {
    /// SecItemAdd: an add query. Answers `.value` (the kSecReturn… result, or nil).
    case add([String: Any])
    /// SecItemCopyMatching: a search query. Answers `.value`.
    case copyMatching([String: Any])
    /// SecItemUpdate: a search query and the attributes to change. Answers `.count`.
    case update([String: Any], attributes: [String: Any])
    /// SecItemDelete: a search query. Answers `.count`.
    case delete([String: Any])
    /// The number of items a search query matches. Answers `.count`.
    case count([String: Any])
    /// A checked copy of the whole keychain. Answers `.count` (items copied).
    case backup(BackupRequest)
    /// Items imported in one transaction. Answers `.outcomes`, one per item.
    case importItems(ImportRequest)
    /// Several searches at once, each succeeding or failing alone. Answers `.results`.
    case copyMany(BatchRequest)
    /// The whole-keychain check of `kc verify`. Answers `.count` (items checked).
    case verify
    /// One page of a search (`Keychain.copyPage`): the matches after place `after` (nil:
    /// from the start), at most `limit`. Answers `.page`.
    case copyPage([String: Any], after: Int64?, limit: Int)

    /// Whether the request holds an item's secret (the client establishes the peer first).
    public var carriesSecret: Bool {
        switch self {
        case .add, .update, .importItems: true
        default: false
        }
    }
}

extension KeychainRequest {
    /// Whether the request writes a secret that user presence will protect: an add or
    /// import of an item with access-control flags that ask for a person, or an update that
    /// sets such flags. A front end performs it in its own process (`KeychainSession`), so
    /// that the new secret never crosses the agent's socket to a peer it cannot establish.
    /// A flags value kc cannot read counts as protecting (the safe reading).
    public var setsUserPresence: Bool {
        func protects(_ dictionary: [String: Any]) -> Bool {
            guard let value = dictionary[kcAttrAccessControlFlags] else { return false }
            let raw: Int64? =
                switch value {
                case let v as Int: Int64(v)
                case let v as Int64: v
                case let v as Int32: Int64(v)
                case let v as UInt32: Int64(v)
                default: nil
                }
            guard let raw else { return true }
            return AccessControlFlags(stored: .int(raw)).requiresUserPresence
        }
        switch self {
        case .add(let q): return protects(q)
        case .update(_, let attributes): return protects(attributes)
        case .importItems(let i): return i.items.contains { protects($0.query) }
        default: return false
        }
    }

    /// The caller's `kSecUseOperationPrompt`, shown when the request needs a proof of user
    /// presence (the first query's, for a batch).
    public var operationPrompt: String? {
        switch self {
        case .copyMatching(let q), .update(let q, _): return q[kSecUseOperationPrompt] as? String
        case .copyMany(let b): return b.queries.lazy.compactMap { $0[kSecUseOperationPrompt] as? String }.first
        default: return nil
        }
    }
}
