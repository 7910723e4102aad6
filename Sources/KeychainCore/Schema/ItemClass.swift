/// The five keychain item classes, with Apple's raw values (the `kSecClass…` constants).
public enum ItemClass: String, CaseIterable, Sendable {
    /// `kSecClassGenericPassword`.
    case genericPassword = "genp"
    /// `kSecClassInternetPassword`.
    case internetPassword = "inet"
    /// `kSecClassCertificate`.
    case certificate = "cert"
    /// `kSecClassKey`.
    case key = "keys"
    /// `kSecClassIdentity`: no rows of its own; a certificate joined with its key.
    case identity = "idnt"

    /// The classes that have rows in the store.
    static let stored: [ItemClass] = [.genericPassword, .internetPassword, .certificate, .key]

    /// The 4-character code written to the store.
    var code: String { rawValue }
}
