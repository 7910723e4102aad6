import ArgumentParser
import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
#if canImport(Glibc)
import Glibc
#endif

/// `kc export`: the items with every attribute, their dates and their secrets, decrypted,
/// on explicit request.
struct Export: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Write items with their attributes, dates and secrets as JSON (decrypted).",
        discussion: """
            --format json (the default) is kc's own versioned JSON
            (docs/import-export.md): an object with "format": "kc-export",
            "version": 1, "exported" (the time) and "items", each item as
            `kc find --json -g` prints it; `kc import` reads it back exactly.
            --format bitwarden-json and csv (Bitwarden's CSV) carry generic and
            internet passwords for other password managers; certificates and keys
            are left out (counted). Every class unless --class is given. Items
            accessible on this device only (*-this-device-only) never leave this
            machine: every format leaves them out and says how many on stderr.
            Items that require user presence are exported on a terminal once the
            keychain's password is typed there; without a terminal (a script)
            they are left out and named on stderr, and the rest is exported.

            The secrets are in plaintext: kc refuses to write them to a terminal
            without --force, and creates an -o FILE with mode 0600 (never over an
            existing file without --force).

            Examples:
              kc export -o ~/export.json
              kc export --class internet -s example.com -o site.json
              kc export | gpg --encrypt -r me > kc-export.json.gpg
              kc export --format bitwarden-json -o for-bitwarden.json
            """
    )

    @OptionGroup var keychain: KeychainOptions

    @Option(name: Options.exportClass.names, parsing: .unconditional, help: Options.exportClass.help, completion: Options.exportClass.completion)
    var itemClass: CLIClass?

    @Option(name: Options.exportService.names, parsing: .unconditional, help: Options.exportService.help, completion: Options.exportService.completion)
    var service: String?

    @Option(name: Options.exportAccount.names, parsing: .unconditional, help: Options.exportAccount.help, completion: Options.exportAccount.completion)
    var account: String?

    @Option(name: Options.exportLabel.names, parsing: .unconditional, help: Options.exportLabel.help, completion: Options.exportLabel.completion)
    var label: String?

    @Option(name: Options.output.names, parsing: .unconditional, help: Options.output.help, completion: Options.output.completion)
    var output: String?

    @Option(name: Options.exportFormat.names, parsing: .unconditional, help: Options.exportFormat.help, completion: Options.exportFormat.completion)
    var format: String = "json"

    @Flag(name: Options.exportForce.names, help: Options.exportForce.help)
    var force = false

    func validate() throws {
        guard ["json", "bitwarden-json", "csv"].contains(format) else {
            throw ValidationError("unknown format \"\(format)\": kc exports json, bitwarden-json or csv")
        }
        if output?.isEmpty == true { throw ValidationError("-o is empty: give a file name") }
    }

    func run() throws {
        if output == nil && Terminal.stdoutIsTerminal && !force {
            throw KeychainError(
                errSecParam, "kc export writes secrets in plaintext; not to a terminal",
                hint: "use -o FILE, a pipe, or --force")
        }
        let handle = try Session.open(keychain.choice)
        // The whole keychain is checked before anything leaves it (DESIGN.md: "before backup
        // and export"): an export must not launder replayed or edited rows into plaintext.
        _ = try handle.verify()
        var items: [(className: String, attributes: [String: Any], data: Data?)] = []
        var classes: [CLIClass] = []
        var queries: [[String: Any]] = []
        for cls in itemClass.map({ [$0] }) ?? CLIClass.allCases {
            var query: [String: Any] = [
                kSecClass: cls.secClass, kSecMatchLimit: kSecMatchLimitAll,
                kSecReturnAttributes: true, kSecReturnData: true
            ]
            if let service { query[cls == .internet ? kSecAttrServer : kSecAttrService] = service }
            query[kSecAttrAccount] = account
            query[kSecAttrLabel] = label
            // Certificates and keys have no service or account: none of theirs can match.
            if (service != nil || account != nil) && cls != .generic && cls != .internet { continue }
            classes.append(cls)
            queries.append(query)
        }
        // One batch for every class: items that require user presence, whatever their class,
        // are named in one prompt, asked once (docs/security.md, "User presence"). When
        // nobody can answer it (a script, no terminal), they are left out and named, as
        // this-device-only items are, and the rest is exported.
        var unconfirmed: [String] = []
        let ask = handle.presence
        handle.presence = { prompt in
            guard let ask else { throw KeychainError(errSecInteractionNotAllowed, "nobody can confirm user presence here") }
            do {
                return try ask(prompt)
            } catch let error as KeychainError where error.status == errSecInteractionNotAllowed {
                unconfirmed = prompt.items
                throw error
            }
        }
        let results: [Result<Any?, KeychainError>]
        do {
            results = try handle.copyMany(queries)
        } catch let error as KeychainError where error.status == errSecInteractionNotAllowed && !unconfirmed.isEmpty {
            results = try handle.copyMany(
                queries.map { query in
                    var skipping = query
                    skipping[kSecUseAuthenticationUI] = kSecUseAuthenticationUISkip
                    return skipping
                })
        }
        if !unconfirmed.isEmpty {
            let names = PresencePrompt(path: handle.path, items: unconfirmed, reason: nil).distinctItems
            Report.note(
                "left out \(unconfirmed.count) item\(unconfirmed.count == 1 ? "" : "s") that require\(unconfirmed.count == 1 ? "s" : "") user presence, "
                    + "with no terminal to confirm it on: " + names.joined(separator: ", "))
            Report.note("hint: run kc export on a terminal, where kc asks for the keychain's password, to include them")
        }
        for (cls, result) in zip(classes, results) {
            let found: Any?
            switch result {
            case .success(let value): found = value
            case .failure(let error) where error.status == errSecItemNotFound: continue
            case .failure(let error): throw error
            }
            for dict in found as? [[String: Any]] ?? [] {
                var attributes = dict
                let data = attributes.removeValue(forKey: kSecValueData) as? Data
                items.append((cls.rawValue, attributes, data))
            }
        }
        // Apple's ...ThisDeviceOnly: such items never leave the machine (kc backup, this
        // device's own encrypted copy, keeps them).
        let deviceOnly = items.filter { ProtectionClass.isThisDeviceOnly($0.attributes[kSecAttrAccessible] as? String) }.count
        if deviceOnly > 0 {
            items.removeAll { ProtectionClass.isThisDeviceOnly($0.attributes[kSecAttrAccessible] as? String) }
            Report.note(
                "left out \(deviceOnly) item\(deviceOnly == 1 ? "" : "s") accessible on this device only (*-this-device-only): they never leave this machine")
        }
        var count = items.count
        let document: String
        if format == "json" {
            document =
                KCExportDocument(
                    exported: Date(),
                    items: items.map {
                        KCExportItem(className: $0.className, attributes: $0.attributes, data: $0.data ?? Data())
                    }
                ).json
        } else {
            let bitwarden = BitwardenExport(items: items)
            document = format == "csv" ? bitwarden.csv() : bitwarden.json()
            count = bitwarden.logins.count
            if !bitwarden.leftOut.isEmpty {
                Report.note(
                    "left out \(bitwarden.leftOut.count) item\(bitwarden.leftOut.count == 1 ? "" : "s") that \(format) has no place for: "
                        + bitwarden.leftOut.map(ItemPrinter.printable).joined(separator: ", ") + " (use --format json to keep everything)")
            }
        }
        items.removeAll()
        var bytes = Array(document.utf8)
        defer { bytes.withUnsafeMutableBytes { if let base = $0.baseAddress { memset(base, 0, $0.count) } } }
        if let output {
            try PrivateFile.write(bytes, to: output, force: force)
            Report.note("exported \(count) item\(count == 1 ? "" : "s") to \(output)")
        } else {
            Report.writeAll(1, bytes)
        }
    }
}
