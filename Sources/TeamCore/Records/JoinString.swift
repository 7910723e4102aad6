import KeychainCore

/// `kct1:<keychain id in hex>@<dsn>`: what `kc team create` prints and `kc team join`
/// takes. The id pins the keychain (its genesis, and so its root admin); the DSN says where
/// the server is and is not trusted for anything else.
package struct JoinString: Equatable, Sendable {
    /// The 32-byte keychain id.
    package var keychainID: [UInt8]
    /// The PostgreSQL connection string.
    package var dsn: String

    /// A join string of these values.
    package init(keychainID: [UInt8], dsn: String) {
        self.keychainID = keychainID
        self.dsn = dsn
    }

    /// The text form.
    package var text: String { "kct1:" + Hex.encode(keychainID) + "@" + dsn }

    /// Reads the text form. - Throws: errSecParam with what is wrong.
    package init(parsing text: String) throws {
        let hint = "copy the whole string `kc team create` printed, kct1:…@…"
        guard text.hasPrefix("kct1:"), let at = text.firstIndex(of: "@") else {
            throw KeychainError(errSecParam, "not a team join string (it starts kct1:<id>@<dsn>)", hint: hint)
        }
        let hex = String(text[text.index(text.startIndex, offsetBy: 5)..<at])
        guard let id = Hex.decode(hex), id.count == 32 else {
            throw KeychainError(errSecParam, "the keychain id in the join string is not 64 hex digits", hint: hint)
        }
        let dsn = String(text[text.index(after: at)...])
        guard !dsn.isEmpty else { throw KeychainError(errSecParam, "the join string has no database after the @", hint: hint) }
        self.init(keychainID: id, dsn: dsn)
    }
}
