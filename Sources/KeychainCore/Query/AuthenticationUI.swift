/// What a query says about asking the user (`kSecUseAuthenticationUI`, and the deprecated
/// `kSecUseNoAuthenticationUI`): whether an item that needs a proof of user presence may
/// be asked for, makes the call fail, or is left out (docs/apple-compatibility.md).
package enum AuthenticationUI: Sendable, Equatable {
    /// `kSecUseAuthenticationUIAllow` (the default): the caller may be asked for a proof.
    case allow
    /// `kSecUseAuthenticationUIFail`, or `kSecUseNoAuthenticationUI` true: such an item
    /// fails the call with errSecInteractionNotAllowed, without asking.
    case fail
    /// `kSecUseAuthenticationUISkip`: such items are left out of the results
    /// (SecItemCopyMatching only; errSecParam elsewhere, as Apple).
    case skip

    /// Parses `kSecUseAuthenticationUI`'s value.
    /// - Throws: errSecParam for any other value, or Skip outside SecItemCopyMatching.
    init(value: Any, for operation: Operation) throws {
        switch value as? String {
        case kSecUseAuthenticationUIAllow?: self = .allow
        case kSecUseAuthenticationUIFail?: self = .fail
        case kSecUseAuthenticationUISkip?:
            guard operation == .copyMatching else {
                throw KeychainError(errSecParam, "kSecUseAuthenticationUISkip is allowed only in SecItemCopyMatching")
            }
            self = .skip
        default:
            throw KeychainError(errSecParam, "kSecUseAuthenticationUI must be kSecUseAuthenticationUIAllow, …Fail or …Skip")
        }
    }
}
