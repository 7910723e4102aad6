import ArgumentParser
import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// `kc import`: items from kc's export and other password managers, in one transaction.
struct Import: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Import items from kc's export, Bitwarden, 1Password, KeePassXC, browsers, git or pass.",
        discussion: """
            Formats (detected from the JSON shape, the CSV header, or a folder,
            unless --format):
              json (kc export), bitwarden-json, bitwarden-csv, 1password-csv,
              keepassxc-csv, chrome-csv, firefox-csv, apple-csv, git-credentials,
              pass (a store folder).

            A login with a web address becomes an internet password, one without a
            generic password; notes go to the comment, folders to the kind,
            one-time-code seeds to a second item (docs/import-export.md has the
            whole mapping).

            All or nothing: one transaction. A malformed entry fails the import with
            its line and changes nothing, unless --skip-invalid. An item that exists
            is left alone (unchanged when identical, skipped otherwise) unless
            --update.

            Examples:
              kc import bitwarden_export.json
              kc import --dry-run --json passwords.csv
              kc import ~/.password-store
              kc import --format git-credentials ~/.git-credentials

            Exit 0 when every entry is in the keychain as given; 1 when the import
            was done but some entries were skipped, invalid or unsupported (listed);
            206 for input that is malformed, nothing imported.
            """
    )

    @OptionGroup var keychain: KeychainOptions

    @Argument(help: ArgumentHelp("The export file, a pass store folder, or - for stdin.", valueName: "source"))
    var source: String?

    @Option(name: Options.importFormat.names, parsing: .unconditional, help: Options.importFormat.help, completion: Options.importFormat.completion)
    var format: String?

    @Flag(name: Options.importUpdate.names, help: Options.importUpdate.help)
    var update = false

    @Flag(name: Options.dryRun.names, help: Options.dryRun.help)
    var dryRun = false

    @Flag(name: Options.importJSON.names, help: Options.importJSON.help)
    var json = false

    @Flag(name: Options.skipInvalid.names, help: Options.skipInvalid.help)
    var skipInvalid = false

    @Option(name: Options.importKDF.names, parsing: .unconditional, help: Options.importKDF.help, completion: Options.importKDF.completion)
    var kdf: KDFProfile?

    /// The largest input kc reads.
    static let maxInput = 256 << 20
    /// The largest JSON input: a parsed JSON document takes many times its size in memory.
    static let maxJSON = 64 << 20
    /// The most entries one import takes.
    static let maxEntries = 1_000_000

    func validate() throws {
        if let format, ImportFormat(rawValue: format) == nil {
            throw ValidationError("unknown format \"\(format)\": use one of \(ImportFormat.names)")
        }
        if source == "" { throw ValidationError("the source is empty: give a file, a folder or -") }
        if (source ?? "-") == "-" && keychain.passwordStdin {
            throw ValidationError("--password-stdin and importing from stdin both need stdin; use --password-file or KC_PASSWORD")
        }
    }

    func run() throws {
        let (entries, chosen) = try readEntries()
        if !skipInvalid,
            let bad = entries.first(where: {
                if case .malformed? = $0.problem { return true }; return false
            }),
            case .malformed(let why)? = bad.problem
        {
            throw KeychainError(
                errSecParam, "\(ItemPrinter.printable(bad.source)): \(why); nothing was imported",
                hint: "fix that entry, or pass --skip-invalid to import the others")
        }
        guard entries.count <= Self.maxEntries else {
            throw KeychainError(
                errSecDataTooLarge, "the input has \(entries.count) entries; kc imports at most \(Self.maxEntries) at once",
                hint: "split the file and import the parts")
        }
        let items = entries.flatMap(\.items)
        // A dry run changes nothing, not even by creating the default keychain: where the
        // real run would create it, the dry run imports into an empty one in memory.
        let handle: KeychainSession
        if dryRun && !keychain.choice.isExplicit && !KeychainSession.exists(keychain.path) {
            handle = KeychainSession(opened: try Keychain.emptyInMemory(standingFor: keychain.path))
            Report.note("dry run: \(keychain.path) does not exist yet; the import will create it")
        } else {
            handle = dryRun ? try Session.open(keychain.choice) : try Session.openOrCreateDefault(keychain.choice, profile: kdf ?? Configuration.kdf)
        }
        let showProgress = isatty(2) == 1 && !json && items.count >= 5000
        if showProgress { Report.err("kc: importing \(items.count) items…") }
        let outcomes = try handle.importItems(items, updateExisting: update, dryRun: dryRun, skipInvalid: skipInvalid) { done in
            if showProgress { Report.err("\rkc: importing \(items.count) items… \(done)") }
        }
        if showProgress { Report.err("\r\u{1B}[K") }
        let report = ImportReport(entries: entries, outcomes: outcomes)
        if json {
            Report.out(report.json(format: chosen, dryRun: dryRun))
        } else {
            Report.out(report.text(all: dryRun))
            Report.note("\(dryRun ? "dry run, nothing changed: would be " : "")\(report.summary) (from \(chosen.rawValue))")
        }
        if !report.complete { Startup.exit(1) }
    }

    /// Reads the source and parses it in its format.
    private func readEntries() throws -> ([ImportEntry], ImportFormat) {
        let path = source ?? "-"
        let chosen = format.flatMap(ImportFormat.init(rawValue:))
        if path != "-" && PassStore.isFolder(path) {
            guard chosen == nil || chosen == .pass else { throw KeychainError(errSecParam, "\(path) is a folder; only --format pass reads folders") }
            return (try PassStore.entries(path), .pass)
        }
        if chosen == .pass { throw KeychainError(errSecParam, "--format pass reads a pass store folder; \(path) is not one") }
        if path == "-" && Terminal.stdinIsTerminal {
            throw KeychainError(errSecParam, "kc import reads a file, a folder, or a pipe on stdin", hint: "kc import FILE")
        }
        let input =
            path == "-"
            ? try Readers.readAll(0, limit: Self.maxInput, what: "stdin")
            : try Readers.readFile(path, limit: Self.maxInput, what: "the import file")
        let what = path == "-" ? "stdin" : path
        return try input.withUnsafeBytes { bytes in
            let firstByte = bytes.first { $0 != 0x20 && $0 != 0x0A && $0 != 0x0D && $0 != 0x09 && $0 != 0xEF && $0 != 0xBB && $0 != 0xBF }
            // JSON: named, or not named and starting with "{".
            if chosen == .json || chosen == .bitwardenJSON || (chosen == nil && firstByte == UInt8(ascii: "{")) {
                guard bytes.count <= Self.maxJSON else {
                    throw KeychainError(
                        errSecDataTooLarge, "\(what) is a JSON document over \(Self.maxJSON >> 20) MiB; kc reads JSON up to that size",
                        hint: "split the export, or export as CSV")
                }
                guard let format = try chosen ?? ImportFormat.detectJSON(bytes) else { throw ImportFormat.unknown(what) }
                if format == .json { return (try KCExportDocument.decode(bytes).entries, format) }
                return (try BitwardenJSON.entries(try JSONValue.parse(bytes)), format)
            }
            // .git-credentials: named, or URL lines.
            if chosen == .gitCredentials || chosen == nil, let text = String(validating: bytes, as: UTF8.self),
                chosen == .gitCredentials || GitCredentials.looksLike(text)
            {
                return (GitCredentials.entries(text), .gitCredentials)
            }
            if chosen == .gitCredentials { throw KeychainError(errSecParam, "\(what) is not UTF-8 text") }
            return try csv(bytes, chosen: chosen, what: what)
        }
    }

    private func csv(_ bytes: UnsafeRawBufferPointer, chosen: ImportFormat?, what: String) throws -> ([ImportEntry], ImportFormat) {
        let table = try CSVTable(bytes)
        guard let format = chosen ?? ImportFormat.detectCSV(table.header), format.isCSV else { throw ImportFormat.unknown(what) }
        return (CSVFormats.entries(table, format: format), format)
    }
}
