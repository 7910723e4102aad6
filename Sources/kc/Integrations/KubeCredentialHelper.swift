#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
import KeychainCore
import KeychainClient
import KeychainFormats
#if canImport(Glibc)
import Glibc
#endif

/// `kc kube-credential NAME`: a kubectl exec credential plugin (client.authentication.k8s.io
/// v1beta1 and v1). The credential is a generic password, service `kube:NAME`: account
/// `token` holds a bearer token; account `client-certificate` holds the PEM certificate
/// followed by its PEM private key. The comment `expirationTimestamp: RFC3339` (from
/// `--store --expires`) becomes the ExecCredential's `expirationTimestamp`
/// (`docs/integrations.md`, "kubectl").
enum KubeCredentialHelper {
    static let word = "kube-credential"
    static let defaultAPIVersion = "client.authentication.k8s.io/v1beta1"
    static let knownAPIVersions = ["client.authentication.k8s.io/v1beta1", "client.authentication.k8s.io/v1"]
    static let expiryPrefix = "expirationTimestamp: "
    static let usage = "usage: kc kube-credential [-k KEYCHAIN] NAME [--store [--expires RFC3339]] | --import KUBECONFIG USER [--backup]"

    struct Failure: Error { let message: String }

    /// The query of NAME's credential.
    static func query(_ name: String) -> [String: Any] {
        [kSecClass: kSecClassGenericPassword, kSecAttrService: "kube:" + name]
    }

    /// Runs it; returns the exit status. Every failure is one line on stderr, which
    /// kubectl shows, and exit 1 (or the status's code).
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        do {
            let (choice, rest) = try HelperInput.options(arguments)
            if rest.first == "--help" || rest.first == "-h" {
                Report.out(usage + "\n")
                return 0
            }
            if rest.first == "--import" {
                let backup = rest.contains("--backup")
                let words = rest.dropFirst().filter { $0 != "--backup" }
                guard words.count == 2 else { throw Failure(message: usage) }
                try KubeconfigImport.run(path: words[words.startIndex], user: words[words.startIndex + 1], backup: backup, choice: choice)
                return 0
            }
            guard let name = rest.first, !name.hasPrefix("-"), !name.isEmpty else { throw Failure(message: usage) }
            let flags = Array(rest.dropFirst())
            if flags.isEmpty {
                try get(name, choice)
                return 0
            }
            guard flags.first == "--store" else { throw Failure(message: usage) }
            var expires: String?
            if flags.count == 3, flags[1] == "--expires" {
                expires = flags[2]
            } else if flags.count != 1 {
                throw Failure(message: usage)
            }
            if let expires, !isTimestamp(expires) { throw Failure(message: "--expires needs an RFC 3339 time in UTC, e.g. 2030-01-31T12:00:00Z") }
            var token = try HelperInput.readStdin(stopAtEmptyLine: false)
            defer { for i in token.indices { token[i] = 0 } }
            while let last = token.last, last == 0x0A || last == 0x0D { token.removeLast() }
            guard !token.isEmpty else { throw Failure(message: "no token on stdin") }
            guard !token.contains(0x0A), !token.contains(0) else { throw Failure(message: "the token has a line break or a NUL") }
            let keychain = try Session.open(choice, lockedHint: HelperInput.unlockHint(choice))
            try store(name, account: "token", secret: Data(token), expires: expires, keychain)
            return 0
        } catch let failure as Failure {
            Report.line("kc: " + failure.message)
            return failure.message == usage ? 2 : 1
        } catch let error as KeychainError {
            Report.line("kc: \(error.message)\(error.hint.map { " (\($0))" } ?? "")")
            return exitCode(for: error.status)
        } catch {
            Report.line("kc: \(error)")
            return 1
        }
    }

    /// `YYYY-MM-DDTHH:MM:SSZ` (fractions allowed), the form kubectl parses.
    static func isTimestamp(_ text: String) -> Bool {
        let b = Array(text.utf8)
        guard b.count >= 20, b.last == UInt8(ascii: "Z") else { return false }
        let digits = [0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18]
        let marks: [(Int, UInt8)] = [(4, UInt8(ascii: "-")), (7, UInt8(ascii: "-")), (10, UInt8(ascii: "T")), (13, UInt8(ascii: ":")), (16, UInt8(ascii: ":"))]
        return digits.allSatisfy { (0x30...0x39).contains(b[$0]) } && marks.allSatisfy { b[$0.0] == $0.1 }
    }

    /// Replaces NAME's credential with `secret` under `account`.
    static func store(_ name: String, account: String, secret: Data, expires: String?, _ keychain: KeychainSession) throws {
        do { _ = try keychain.delete(query(name)) } catch let e as KeychainError where e.status == errSecItemNotFound {}
        var add = query(name)
        add[kSecAttrAccount] = account
        add[kSecAttrLabel] = "kubectl " + name
        if let expires { add[kSecAttrComment] = expiryPrefix + expires }
        add[kSecValueData] = secret
        _ = try keychain.add(add)
    }

    /// The apiVersion kubectl sent in KUBERNETES_EXEC_INFO, or v1beta1 when it sent none.
    static func apiVersion() throws -> String {
        guard let raw = getenv("KUBERNETES_EXEC_INFO") else { return defaultAPIVersion }
        let bytes = Array(String(cString: raw).utf8)
        guard !bytes.isEmpty else { return defaultAPIVersion }
        let info = try? bytes.withUnsafeBytes { try JSONValue.parse($0) }
        guard let version = info?["apiVersion"]?.text, knownAPIVersions.contains(version) else {
            throw Failure(message: "KUBERNETES_EXEC_INFO names no apiVersion kc speaks (\(knownAPIVersions.joined(separator: ", ")))")
        }
        return version
    }

    /// Prints NAME's ExecCredential on stdout.
    static func get(_ name: String, _ choice: KeychainChoice) throws {
        let version = try apiVersion()
        let keychain = try Session.open(choice, lockedHint: HelperInput.unlockHint(choice))
        var q = query(name)
        q[kSecReturnAttributes] = true
        q[kSecReturnData] = true
        q[kSecMatchLimit] = kSecMatchLimitOne
        let found: Any?
        do { found = try keychain.copyMatching(q) } catch let e as KeychainError where e.status == errSecItemNotFound {
            throw Failure(message: "no kubectl credential `\(name)` in the keychain (store one with `kc kube-credential \(name) --store`)")
        }
        guard let item = found as? [String: Any] else { throw Failure(message: "no kubectl credential `\(name)`") }
        let secret = String(decoding: item[kSecValueData] as? Data ?? Data(), as: UTF8.self)
        var status: [(String, String)] = []
        if item[kSecAttrAccount] as? String == "client-certificate" {
            guard let (certificate, key) = PEMPair.split(secret) else { throw Failure(message: "the credential `\(name)` holds no certificate and key") }
            status = [("clientCertificateData", JSON.string(certificate)), ("clientKeyData", JSON.string(key))]
        } else {
            status = [("token", JSON.string(secret))]
        }
        if let comment = item[kSecAttrComment] as? String, comment.hasPrefix(expiryPrefix) {
            status.append(("expirationTimestamp", JSON.string(String(comment.dropFirst(expiryPrefix.count)))))
        }
        Report.out(
            JSON.object([("apiVersion", JSON.string(version)), ("kind", JSON.string("ExecCredential")), ("status", JSON.object(status))]) + "\n")
    }
}

/// A PEM certificate (chain) and its PEM private key, kept as one secret.
enum PEMPair {
    /// The certificate blocks and the private key block of `text`, or nil without both.
    static func split(_ text: String) -> (String, String)? {
        var certificate = ""
        var key = ""
        var current = ""
        var inKey = false
        for line in text.split(separator: "\n", omittingEmptySubsequences: true) {
            if line.hasPrefix("-----BEGIN ") { inKey = line.contains("PRIVATE KEY"); current = "" }
            current += line + "\n"
            if line.hasPrefix("-----END ") {
                if inKey { key += current } else { certificate += current }
                current = ""
            }
        }
        return certificate.isEmpty || key.isEmpty ? nil : (certificate, key)
    }
}
