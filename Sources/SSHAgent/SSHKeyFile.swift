import KeychainCore

/// A private key file `kc ssh add` reads: OpenSSH's own format (`OpenSSHKeyFile`), or PEM
/// (`-----BEGIN RSA/EC/PRIVATE KEY-----`, PKCS#8, encrypted PEM) through libcrypto
/// (`PEMKeyFile`). Recognised by its first BEGIN line.
///
///     let file = try SSHKeyFile(contents)
///     let passphrase = file.isEncrypted ? try ask() : nil
///     var (key, comment) = try file.privateKey(passphrase: passphrase)
///     defer { key.wipe() }
public enum SSHKeyFile {
    case openSSH(OpenSSHKeyFile)
    case pem(PEMKeyFile)

    /// The largest key file read (an RSA 16384-bit key's file is about 13 KiB).
    public static let maxSize = 64 << 10

    /// The file with these contents.
    /// - Throws: errSecDecode when it is no private key file kc reads (a public key, a PuTTY
    ///   file…), with a hint; errSecDataTooLarge past `maxSize`.
    public init(_ contents: [UInt8]) throws {
        guard contents.count <= Self.maxSize else {
            throw KeychainError(errSecDataTooLarge, "the file is larger than \(Self.maxSize >> 10) KiB: not a private key")
        }
        guard let (label, body) = Self.firstBlock(contents) else {
            throw KeychainError(
                errSecDecode, "the file is not a private key kc reads (no -----BEGIN … PRIVATE KEY----- line)",
                hint: "give the private key file (such as ~/.ssh/id_ed25519), not the .pub")
        }
        switch label {
        case OpenSSHKeyFile.label:
            guard var binary = SSHPublicKey.decodeBase64(body) else {
                throw KeychainError(errSecDecode, "the key file is malformed: its body is not base64")
            }
            defer { Sodium.wipe(&binary) }
            self = .openSSH(try OpenSSHKeyFile(binary: binary))
        case "ENCRYPTED PRIVATE KEY":
            // Its cost is checked before a passphrase is asked for or anything decrypted.
            guard var der = SSHPublicKey.decodeBase64(body) else {
                throw KeychainError(errSecDecode, "the key file is malformed: its body is not base64")
            }
            defer { Sodium.wipe(&der) }
            try PKCS8Cost.check(der: der)
            self = .pem(PEMKeyFile(contents: contents, label: label, body: body))
        case "PRIVATE KEY", "RSA PRIVATE KEY", "EC PRIVATE KEY":
            self = .pem(PEMKeyFile(contents: contents, label: label, body: body))
        default:
            throw KeychainError(errSecDecode, "kc does not read \(label.prefix(40)) files", hint: "convert it with `ssh-keygen -p -f FILE`")
        }
    }

    /// Overwrites what the file held (an unencrypted key's private section, a PEM file's
    /// bytes): call it once the key has been read.
    public mutating func wipe() {
        switch self {
        case .openSSH(var file):
            self = .pem(PEMKeyFile(contents: [], label: "", body: []))
            file.wipe()
        case .pem(var file):
            self = .pem(PEMKeyFile(contents: [], label: "", body: []))
            file.wipe()
        }
    }

    /// Whether reading the key needs a passphrase.
    public var isEncrypted: Bool {
        switch self {
        case .openSSH(let file): file.isEncrypted
        case .pem(let file): file.isEncrypted
        }
    }

    /// The private key and the comment the file gives it (PEM files give none).
    public func privateKey(passphrase: [UInt8]?) throws -> (key: SSHPrivateKey, comment: String) {
        switch self {
        case .openSSH(let file): try file.privateKey(passphrase: passphrase)
        case .pem(let file): (try file.privateKey(passphrase: passphrase), "")
        }
    }

    /// The label and body (the lines between BEGIN and the matching END) of the first PEM
    /// block, or nil.
    static func firstBlock(_ contents: [UInt8]) -> (label: String, body: ArraySlice<UInt8>)? {
        let begin = Array("-----BEGIN ".utf8), dashes = Array("-----".utf8)
        guard let start = find(begin, in: contents[...]) else { return nil }
        let afterBegin = start + begin.count
        guard let labelEnd = find(dashes, in: contents[afterBegin...]) else { return nil }
        let label = String(decoding: contents[afterBegin..<labelEnd], as: UTF8.self)
        guard label.utf8.count <= 64, !label.contains("\n") else { return nil }
        let bodyStart = labelEnd + dashes.count
        let end = Array("-----END \(label)-----".utf8)
        guard let bodyEnd = find(end, in: contents[bodyStart...]) else { return nil }
        return (label, contents[bodyStart..<bodyEnd])
    }

    private static func find(_ needle: [UInt8], in hay: ArraySlice<UInt8>) -> Int? {
        guard needle.count <= hay.count else { return nil }
        var i = hay.startIndex
        while i + needle.count <= hay.endIndex {
            if hay[i] == needle[0] && hay[i..<(i + needle.count)].elementsEqual(needle) { return i }
            i += 1
        }
        return nil
    }
}
