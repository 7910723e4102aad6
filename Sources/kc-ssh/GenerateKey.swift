import KeychainCore
import SSHAgent

/// `kc ssh generate NAME [--type ed25519|ecdsa|rsa] [--bits N] [--user-presence] [-k K]`:
/// makes a key in this process (`SSHKeyGenerator`), keeps it as a key item and prints its
/// public key. The private half is never written anywhere else.
struct GenerateKey {
    let arguments: KeyArguments

    init(_ arguments: KeyArguments) { self.arguments = arguments }

    func run() throws {
        let name = arguments.subject ?? ""
        try SSHKeyItems.checkName(name)
        let type: SSHKeyType
        switch (arguments.type ?? "ed25519", arguments.bits) {
        case ("ed25519", nil), ("ed25519", 256?): type = .ed25519
        case ("ecdsa", nil), ("ecdsa", 256?): type = .ecdsaP256
        case ("ecdsa", 384?): type = .ecdsaP384
        case ("ecdsa", 521?): type = .ecdsaP521
        case ("rsa", _): type = .rsa
        case ("ed25519", _?), ("ecdsa", _?):
            throw UsageError(message: "--bits for \(arguments.type ?? "ed25519") is \(arguments.type == "ecdsa" ? "256, 384 or 521" : "256 (or left out)")")
        default: throw UsageError(message: "--type takes ed25519, ecdsa or rsa, not '\(arguments.type ?? "")'")
        }
        let session = try KeySession.open(arguments.keychain)
        try session.prepare()   // a locked keychain fails (or asks) before the key is made
        var key = try SSHKeyGenerator.generate(type, bits: arguments.bits ?? SSHKeyGenerator.defaultRSABits)
        defer { key.wipe() }
        try AddKey.store(key, name: name, userPresence: arguments.userPresence, in: session)
        KeyCommands.output(key.publicLine(comment: name))
    }
}
