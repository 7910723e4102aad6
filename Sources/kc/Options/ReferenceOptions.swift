import ArgumentParser
import KeychainCore

/// The keychains a `kc://` reference may name with `?keychain=`, besides the command's own
/// (`-k`, else `$KC_KEYCHAIN`, else login): `kc read`, `kc run` and `kc inject`.
///
/// A reference comes from text the command's author may not have written in full (a
/// repository's `.env`, a template), so it cannot pull from a keychain the command line did
/// not name (docs/security.md, "Issue 15, items 9–14", item 10).
///
///     kc run -k ci --allow-keychain login --env-file .env.kc -- make deploy
struct ReferenceOptions: ParsableArguments {
    @Option(
        name: Options.allowKeychain.names, parsing: .unconditionalSingleValue, help: Options.allowKeychain.help, completion: Options.allowKeychain.completion)
    var allowedKeychains: [String] = []

    func validate() throws {
        if allowedKeychains.contains("") { throw ValidationError("--allow-keychain is empty: give a keychain path or name") }
    }
}
