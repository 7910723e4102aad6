import COpenSSL
import CSodium
import Foundation
import KCTestSupport
import KeychainCore
import Testing

@testable import SSHAgent

/// The private wire form kc keeps is a working key: a key `kc ssh generate` made is read
/// back through the agent (`KeychainIdentities`, as the SSH agent reads it), signs here
/// (Ed25519 with libsodium, ECDSA and RSA with libcrypto) in OpenSSH's SSHSIG format, and
/// `ssh-keygen -Y verify` accepts the signature against the exported public key; a
/// signature of other bytes is refused, so the check can fail.
@Suite struct SSHKeySignatureTests {
    static let namespace = "file"

    @Test(arguments: [
        ["--type", "ed25519"], ["--type", "ecdsa"], ["--type", "ecdsa", "--bits", "384"], ["--type", "ecdsa", "--bits", "521"],
        ["--type", "rsa", "--bits", "2048"]
    ])
    func generatedKeySignsAndSSHKeygenVerifies(_ options: [String]) throws {
        let h = try SSHKeyHome()
        let generated = try h.ssh(["generate", "signer"] + options)
        #expect(generated.status == 0, "\(generated.stderr)")
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let source = KeychainIdentitiesTests.source(h)
        guard let identity = try source.identities().first, var wire = try source.privateKey(for: identity.blob) else {
            Issue.record("the generated key is not served")
            return
        }
        defer { Sodium.wipe(&wire) }
        let key = try SSHPrivateKey(wire: wire)
        let message = Array("the message signed\n".utf8)
        try h.write("message", message)
        try h.write("other", Array("another message\n".utf8))
        try h.write("allowed", Array(("signer@kc " + generated.stdout.split(separator: " ").prefix(2).joined(separator: " ") + "\n").utf8))
        try h.write("message.sig", Array(try Self.sshsig(key, message).utf8))
        let verify = ["ssh-keygen", "-Y", "verify", "-f", "allowed", "-I", "signer@kc", "-n", Self.namespace, "-s", "message.sig"]
        let good = try Spawn.run(["/bin/sh", "-c", "cd \"$0\" && exec \"$@\" < message", h.directory] + verify, environment: ["PATH": "/usr/bin:/bin"])
        #expect(good.status == 0 && good.stdout.contains("Good \"file\" signature for signer@kc"), "\(good.stdout)\(good.stderr)")
        let bad = try Spawn.run(["/bin/sh", "-c", "cd \"$0\" && exec \"$@\" < other", h.directory] + verify, environment: ["PATH": "/usr/bin:/bin"])
        #expect(bad.status != 0, "\(bad.stdout)")
    }

    /// An armoured SSHSIG signature (OpenSSH PROTOCOL.sshsig) of `message` with SHA-512.
    static func sshsig(_ key: SSHPrivateKey, _ message: [UInt8]) throws -> String {
        var digest = [UInt8](repeating: 0, count: 64)
        crypto_hash_sha512(&digest, message, UInt64(message.count))
        var signed = SSHWireWriter()
        signed.raw(Array("SSHSIG".utf8))
        signed.string(namespace)
        signed.string("")
        signed.string("sha512")
        signed.string(digest)
        var blob = SSHWireWriter()
        blob.raw(Array("SSHSIG".utf8))
        blob.uint32(1)
        blob.string(key.publicBlob)
        blob.string(namespace)
        blob.string("")
        blob.string("sha512")
        blob.string(try sign(key, signed.bytes))
        return "-----BEGIN SSH SIGNATURE-----\n" + Data(blob.bytes).base64EncodedString(options: .lineLength64Characters) + "\n-----END SSH SIGNATURE-----\n"
    }

    /// An SSH signature blob (`string algorithm, string signature`) of `data`.
    static func sign(_ key: SSHPrivateKey, _ data: [UInt8]) throws -> [UInt8] {
        var out = SSHWireWriter()
        var r = SSHWireReader(key.wire)
        _ = try r.string()
        switch key.type {
        case .ed25519:
            _ = try r.string()
            let secret = try r.string()
            var signature = [UInt8](repeating: 0, count: 64)
            #expect(crypto_sign_detached(&signature, nil, data, UInt64(data.count), secret) == 0)
            out.string("ssh-ed25519")
            out.string(signature)
        case .ecdsaP256, .ecdsaP384, .ecdsaP521:
            let digest = key.type == .ecdsaP256 ? "SHA256" : key.type == .ecdsaP384 ? "SHA384" : "SHA512"
            let der = try evpSign(key, data, digest: digest)
            var rs = SSHWireWriter()
            for integer in try Self.derIntegers(der) { rs.mpint(magnitude: integer) }
            out.string(key.type.rawValue)
            out.string(rs.bytes)
        case .rsa:
            out.string("rsa-sha2-512")
            out.string(try evpSign(key, data, digest: "SHA512"))
        }
        return out.bytes
    }

    static func evpSign(_ key: SSHPrivateKey, _ data: [UInt8], digest: String) throws -> [UInt8] {
        guard let pkey = try LibcryptoKey.evpKey(key), let context = EVP_MD_CTX_new() else { throw KeychainError(errSecInternalError) }
        defer {
            EVP_MD_CTX_free(context)
            EVP_PKEY_free(pkey)
        }
        var length = 0
        guard EVP_DigestSignInit_ex(context, nil, digest, nil, nil, pkey, nil) == 1,
            EVP_DigestSign(context, nil, &length, data, data.count) == 1
        else { throw KeychainError(errSecInternalError, "sign init") }
        var signature = [UInt8](repeating: 0, count: length)
        guard EVP_DigestSign(context, &signature, &length, data, data.count) == 1 else { throw KeychainError(errSecInternalError, "sign") }
        return Array(signature[..<length])
    }

    /// The two INTEGERs of a DER `SEQUENCE { r, s }` (an ECDSA signature).
    static func derIntegers(_ der: [UInt8]) throws -> [[UInt8]] {
        var i = 0
        func length() throws -> Int {
            let first = Int(der[i]); i += 1
            if first < 0x80 { return first }
            var n = 0
            for _ in 0..<(first & 0x7F) { n = n << 8 | Int(der[i]); i += 1 }
            return n
        }
        guard der.first == 0x30 else { throw KeychainError(errSecDecode) }
        i = 1
        _ = try length()
        var integers: [[UInt8]] = []
        for _ in 0..<2 {
            guard der[i] == 0x02 else { throw KeychainError(errSecDecode) }
            i += 1
            let n = try length()
            integers.append(Array(der[i..<(i + n)]))
            i += n
        }
        return integers
    }
}
