import KeychainCore
import KeychainClient
import POSIXSupport
import SSHAgent
#if canImport(Glibc)
import Glibc
#endif

/// `kc ssh add FILE [--name NAME] [--passphrase-file F] [--user-presence] [-k K]`: reads an
/// OpenSSH or PEM private key, decrypting it with its passphrase (typed at the terminal,
/// or from --passphrase-file), and keeps it as a key item (`SSHKeyItems`).
struct AddKey {
    let arguments: KeyArguments

    init(_ arguments: KeyArguments) { self.arguments = arguments }

    func run() throws {
        let path = arguments.subject ?? ""
        var contents = try FileInput.read(path, limit: SSHKeyFile.maxSize, what: "key file")
        defer { for i in contents.indices { contents[i] = 0 } }
        var file = try SSHKeyFile(contents)
        defer { file.wipe() }
        var passphrase: [UInt8] = []
        defer { Sodium.wipe(&passphrase) }
        if file.isEncrypted { passphrase = try Self.passphrase(for: path, file: arguments.passphraseFile) }
        var (key, comment) = try file.privateKey(passphrase: file.isEncrypted ? passphrase : nil)
        defer { key.wipe() }
        let name = arguments.name ?? (comment.isEmpty ? Self.baseName(path) : comment)
        try SSHKeyItems.checkName(name)
        let session = try KeySession.open(arguments.keychain)
        try Self.store(key, name: name, userPresence: arguments.userPresence, in: session)
        KeyCommands.say("added the \(key.type.rawValue) key \(name) (\(SSHPublicKey.fingerprint(key.publicBlob))) to \(session.address)")
    }

    /// Adds `key` as `name`, refusing a name or key already kept there.
    /// - Throws: errSecDuplicateItem, with a hint.
    static func store(_ key: SSHPrivateKey, name: String, userPresence: Bool, in session: KeychainSession) throws {
        let existing = try SSHKeyItems.list(session)
        if let same = existing.first(where: { $0.publicBlob == key.publicBlob }) {
            throw KeychainError(errSecDuplicateItem, "this key is already in \(session.address), as \(same.name)")
        }
        if existing.contains(where: { $0.name == name }) {
            throw KeychainError(errSecDuplicateItem, "an SSH key named \(name) is already in \(session.address)", hint: "choose another with --name")
        }
        _ = try session.add(SSHKeyItems.addQuery(key, name: name, userPresence: userPresence))
    }

    /// The passphrase of an encrypted key: the first line of `file`, else typed at the
    /// terminal. - Throws: errSecInteractionNotAllowed (exit 36) with neither.
    static func passphrase(for path: String, file: String?) throws -> [UInt8] {
        if let file {
            var bytes = try FileInput.read(file, limit: 4096, what: "passphrase file")
            defer { for i in bytes.indices { bytes[i] = 0 } }
            var end = bytes.firstIndex(of: 0x0A) ?? bytes.count
            if end > 0 && bytes[end - 1] == 0x0D { end -= 1 }
            guard end > 0 else { throw KeychainError(errSecParam, "the passphrase file \(file) is empty") }
            return Array(bytes[..<end])
        }
        guard TerminalPrompt.isAvailable else {
            throw KeychainError(
                errSecInteractionNotAllowed, "the key file \(path) is encrypted and there is no terminal to ask for its passphrase",
                hint: "pass --passphrase-file FILE (its first line is the passphrase)")
        }
        let typed = try TerminalPrompt.readSecret(prompt: "Passphrase for \(path): ")
        return typed.withUnsafeBytes { Array($0) }
    }

    /// The last component of `path`, without `.pem` / `.key`.
    static func baseName(_ path: String) -> String {
        var name = path.split(separator: "/").last.map(String.init) ?? path
        for suffix in [".pem", ".key"] where name.hasSuffix(suffix) && name.count > suffix.count {
            name.removeLast(suffix.count)
        }
        return name
    }
}

/// Reading a whole small file the user names (a key, a passphrase).
enum FileInput {
    /// The bytes of `path`, at most `limit`. - Throws: errSecIO when it cannot be read,
    /// errSecDataTooLarge past `limit`.
    static func read(_ path: String, limit: Int, what: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else {
            let code = errno
            throw KeychainError(errSecIO, "cannot read the \(what) \(path): \(String(cString: strerror(code)))", cause: .errno(code))
        }
        defer { close(fd) }
        var out: [UInt8] = []
        out.reserveCapacity(limit + 16384)   // never reallocated: no copy of a key left behind unwiped
        var buffer = [UInt8](repeating: 0, count: 16384)
        defer { for i in buffer.indices { buffer[i] = 0 } }
        while true {
            let n = Glibc.read(fd, &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 {
                let code = errno
                throw KeychainError(errSecIO, "cannot read the \(what) \(path): \(String(cString: strerror(code)))", cause: .errno(code))
            }
            if n == 0 { return out }
            out += buffer[..<n]
            guard out.count <= limit else {
                for i in out.indices { out[i] = 0 }
                throw KeychainError(errSecDataTooLarge, "the \(what) \(path) is larger than \(limit >> 10) KiB")
            }
        }
    }
}
