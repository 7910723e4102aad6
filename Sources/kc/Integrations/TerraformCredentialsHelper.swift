import KeychainCore
import KeychainClient
import KeychainFormats
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `terraform-credentials-kc` (or `kc terraform-credentials`): the credentials helper
/// protocol of Terraform and OpenTofu (`credentials_helper "kc" {}` in the CLI
/// configuration). Terraform runs `terraform-credentials-kc [ARGS…] get|store|forget HOST`,
/// ARGS from the block's `args` (`-k KEYCHAIN` here); HOST in its compared form
/// (`TerraformHostname`). Credentials are generic passwords, service `terraform:HOST`,
/// account empty; the secret is the token, or the whole JSON object as Terraform gave it
/// when the object holds more than a token (the protocol forbids dropping properties).
/// Errors: one line on stderr and a non-zero exit, nothing on stdout.
enum TerraformCredentialsHelper {
    /// The program's name, as Terraform looks for it in its plugin folders.
    static let programName = "terraform-credentials-kc"
    /// The hidden subcommand of `kc` that is the same helper.
    static let subcommand = "terraform-credentials"
    /// The service of a host's item is this prefix and the host.
    static let servicePrefix = "terraform:"
    static let usage = "usage: terraform-credentials-kc [-k KEYCHAIN] get|store|forget HOST, or --install, or --uninstall"

    /// Runs one verb; returns the exit status.
    static func run(_ arguments: ArraySlice<String>) -> Int32 {
        var verb: String?
        do {
            let (choice, rest) = try HelperInput.options(arguments)
            verb = rest.first
            if rest == ["--install"] { return TerraformPluginLink.install() }
            if rest == ["--uninstall"] { return TerraformPluginLink.uninstall() }
            if rest == ["--help"] || rest == ["-h"] {
                Report.out(usage + "\n")
                return 0
            }
            guard let verb, ["get", "store", "forget"].contains(verb) else {
                Report.err("kc: \(rest.first.map { "unknown verb \(JSON.string($0)); " } ?? "")\(usage)\n")
                if rest.contains("store") { drainStdin() }
                return 2
            }
            guard rest.count == 2 else {
                Report.err("kc: \(usage)\n")
                if verb == "store" { drainStdin() }
                return 2
            }
            let service = servicePrefix + (try TerraformHostname.normalised(rest[1]))
            // store reads its whole stdin first, whatever happens next (the protocol asks it).
            var input = verb == "store" ? try HelperInput.readStdin(stopAtEmptyLine: false) : []
            defer { for i in input.indices { input[i] = 0 } }
            var secret = verb == "store" ? try self.secret(of: input) : []
            defer { for i in secret.indices { secret[i] = 0 } }
            let keychain = try Session.open(choice, lockedHint: HelperInput.unlockHint(choice))
            switch verb {
            case "get": try get(service, keychain)
            case "store": try store(service, secret, keychain)
            default: try forget(service, keychain)
            }
            return 0
        } catch let error as KeychainError {
            if verb == "store" { drainStdin() }
            Report.note("\(error.message)\(error.hint.map { " (\($0))" } ?? "")")
            return exitCode(for: error.status)
        } catch {
            if verb == "store" { drainStdin() }
            Report.note("\(error)")
            return 1
        }
    }

    /// What is stored for a credentials object: the token alone when the object is
    /// `{"token": "…"}` (so `kc find -w` and `kc read` give the token), else the object's
    /// bytes as they came. - Throws: errSecParam when it is not a JSON object with a string token.
    static func secret(of input: [UInt8]) throws -> [UInt8] {
        let document = try input.withUnsafeBytes { try JSONValue.parse($0) }
        guard let object = document.object else { throw KeychainError(errSecParam, "the credentials are not a JSON object") }
        guard let token = object["token"]?.string else { throw KeychainError(errSecParam, "the credentials object has no \"token\" string") }
        guard !token.isEmpty else { throw KeychainError(errSecParam, "the credentials object's token is empty") }
        if object.count == 1 && !token.hasPrefix("{") { return Array(token.utf8) }
        var bytes = input[...]
        while let first = bytes.first, [0x20, 0x09, 0x0A, 0x0D].contains(first) { bytes = bytes.dropFirst() }
        while let last = bytes.last, [0x20, 0x09, 0x0A, 0x0D].contains(last) { bytes = bytes.dropLast() }
        return Array(bytes)
    }

    /// The credentials object of a stored secret: itself when it is a JSON object (as
    /// `secret(of:)` stores one), else `{"token": SECRET}`.
    static func object(of data: [UInt8]) -> String {
        if data.first == UInt8(ascii: "{"), let parsed = try? data.withUnsafeBytes({ try JSONValue.parse($0) }), parsed.object != nil {
            return String(decoding: data, as: UTF8.self)
        }
        return JSON.object([("token", JSON.string(String(decoding: data, as: UTF8.self)))])
    }

    static func get(_ service: String, _ keychain: KeychainSession) throws {
        let found: Any?
        do {
            found = try keychain.copyMatching([
                kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecReturnData: true, kSecMatchLimit: kSecMatchLimitOne
            ])
        } catch let e as KeychainError where e.status == errSecItemNotFound {
            Report.out("{}\n")
            return
        }
        var data = Array(found as? Data ?? Data())
        defer { for i in data.indices { data[i] = 0 } }
        var out = Array(object(of: data).utf8) + [0x0A]
        defer { for i in out.indices { out[i] = 0 } }
        Report.writeAll(1, out)
    }

    /// Replaces what is stored for the host (every item of its service), or adds it.
    static func store(_ service: String, _ secret: [UInt8], _ keychain: KeychainSession) throws {
        let query: [String: Any] = [kSecClass: kSecClassGenericPassword, kSecAttrService: service]
        do {
            try keychain.update(query, [kSecValueData: Data(secret)])
        } catch let e as KeychainError where e.status == errSecItemNotFound {
            _ = try keychain.add([
                kSecClass: kSecClassGenericPassword, kSecAttrService: service, kSecAttrAccount: "",
                kSecAttrLabel: service, kSecValueData: Data(secret)
            ])
        }
    }

    /// Deletes what is stored for the host; nothing stored is success, as the protocol asks.
    static func forget(_ service: String, _ keychain: KeychainSession) throws {
        do {
            try keychain.delete([kSecClass: kSecClassGenericPassword, kSecAttrService: service])
        } catch let e as KeychainError where e.status == errSecItemNotFound {}
    }

    /// Reads stdin to its end, keeping nothing.
    static func drainStdin() {
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(0, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
        }
        for i in chunk.indices { chunk[i] = 0 }
    }
}
