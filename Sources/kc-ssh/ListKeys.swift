import KeychainCore
import SSHAgent

/// `kc ssh list [-k K]`: the public keys kept in the keychain, one `TYPE BASE64 NAME` line
/// each, as `ssh-add -L` prints them. Reads attributes only.
struct ListKeys {
    let arguments: KeyArguments

    init(_ arguments: KeyArguments) { self.arguments = arguments }

    func run() throws {
        let session = try KeySession.open(arguments.keychain)
        for key in try SSHKeyItems.list(session) {
            KeyCommands.output(SSHPublicKey.line(blob: key.publicBlob, comment: key.name))
        }
    }
}

/// `kc ssh export-public NAME [-k K]`: one key's public line, for `authorized_keys`.
struct ExportPublicKey {
    let arguments: KeyArguments

    init(_ arguments: KeyArguments) { self.arguments = arguments }

    func run() throws {
        let session = try KeySession.open(arguments.keychain)
        let key = try SSHKeyItems.named(arguments.subject ?? "", in: session)
        KeyCommands.output(SSHPublicKey.line(blob: key.publicBlob, comment: key.name))
    }
}
