// Apple's four SecItem functions over a kc keychain. They take the keychain explicitly
// (there is no hidden default); the `Security` module adds Apple's exact signatures on top,
// with the keychain chosen from the environment and the agent (docs/apple-compatibility.md).
// Results and status codes follow Apple's (docs/apple-compatibility.md, "Results" and "Status codes").

/// Adds an item; see `Keychain.add(_:)`.
///
///     var result: Any?
///     let status = SecItemAdd([kSecClass: kSecClassGenericPassword, kSecAttrService: "s",
///                              kSecValueData: Data("x".utf8)], &result, keychain: keychain)
///
/// - Returns: errSecSuccess, or the status of the failure.
public func SecItemAdd(_ attributes: [String: Any], _ result: UnsafeMutablePointer<Any?>?, keychain: Keychain) -> OSStatus {
    osStatus {
        let value = try keychain.add(attributes)
        if let result, value != nil { result.pointee = value }
    }
}

/// Finds items; see `Keychain.copyMatching(_:)`. `result` receives a value, a dictionary
/// or an array, as Apple's does.
public func SecItemCopyMatching(_ query: [String: Any], _ result: UnsafeMutablePointer<Any?>?, keychain: Keychain) -> OSStatus {
    osStatus {
        let value = try keychain.copyMatching(query)
        if let result, value != nil { result.pointee = value }
    }
}

/// Changes every matching item; see `Keychain.update(_:_:)`.
public func SecItemUpdate(_ query: [String: Any], _ attributesToUpdate: [String: Any], keychain: Keychain) -> OSStatus {
    osStatus { try keychain.update(query, attributesToUpdate) }
}

/// Deletes every matching item; see `Keychain.delete(_:)`.
public func SecItemDelete(_ query: [String: Any], keychain: Keychain) -> OSStatus {
    osStatus { try keychain.delete(query) }
}

/// The OSStatus of `body`: errSecSuccess, a KeychainError's status, or errSecInternalError
/// for any other error. How the SecItem functions (here and in the `Security` module) turn
/// throwing code into Apple's status results.
public func osStatus(of body: () throws -> Void) -> OSStatus {
    do {
        try body()
        return errSecSuccess
    } catch let error as KeychainError {
        return error.status
    } catch {
        return errSecInternalError
    }
}
