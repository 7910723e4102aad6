extension Keychain {
    /// Checks a proof of user presence: `password` must open the master-key wrap the file
    /// holds now and give the very master key this keychain holds. One Argon2id derivation
    /// (the agent runs one at a time, as for an unlock). The record it opens is the one the
    /// header MAC covers: a password record spliced in from an older copy of the file (whose
    /// old password would open it) is refused here, not only by the read that follows.
    /// - Throws: errSecAuthFailed when it does not; errSecInteractionNotAllowed when locked;
    ///   errSecDecode when the header fails its check.
    func checkPresenceProof(_ password: borrowing SecureBytes) throws {
        let held = try allKeys()   // a locked keychain (after-first-unlock keys only) cannot check one
        let (record, state) = try store.transaction(write: false) { (try store.readKeychainRecord(), try store.readState()) }
        let wrong = KeychainError(errSecAuthFailed, "wrong password for \(path): user presence was not confirmed")
        let keys: KeyHierarchy
        do {
            (keys, _) = try Self.unwrap(record, password: password, path: path)
        } catch let error as KeychainError where error.status == errSecAuthFailed {
            throw wrong
        }
        guard try keys.master().bytes.constantTimeEquals(try held.master().bytes) else { throw wrong }
        try checkHeader(record, state, keys: held)
    }
}
