import KeychainCore
import TeamCore

/// Opens team keychains for the team agent (`kc-team agent`).
public enum TeamKeychains {
    /// Opens the team keychain `name` with `secret` (the password of this device's seed
    /// file, or a runner token `kcr1:…`), checks it against the server and the local
    /// checkpoint, and answers it ready for SecItem calls.
    public static func open(name: String, secret: borrowing SecureBytes, minimumGeneration: UInt64) throws -> Keychain {
        try TeamName.validate(name)
        throw KeychainError(errSecUnimplemented, "team keychains are being built")
    }
}
