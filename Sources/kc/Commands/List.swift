import ArgumentParser
import KeychainCore
import KeychainFormats
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// `kc list`: one line per item of every class (class, service or server, account, label,
/// modified), sorted, never a secret.
struct List: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "list",
        abstract: "List the items of every class, one line each; never a secret.",
        discussion: """
            Examples:
              kc list                             # every item of every class
              kc list -s github.com               # service or server github.com
              kc list --class internet -a alice   # internet passwords of alice
              kc list --json                      # JSON, for scripts
            Columns: class, service (the server of an internet password, the
            subject of a certificate, the tag of a key), account, label, modified.
            Sorted by class, then service, account and label.
            On a terminal: aligned under a header, cut to the terminal's width.
            In a pipe or a file: one tab-separated line per item, no header,
            nothing cut.
            Without --class, every class; an attribute flag keeps the classes
            that have it (-a: generic and internet passwords).
            Exit 44 when the keychain has no items, or none match.
            """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var item: ItemOptions

    @Flag(name: Options.listJSON.names, help: Options.listJSON.help)
    var json = false

    func run() throws {
        let classes = try self.classes()
        let keychain = try Session.open(self.keychain.choice)
        // Each item's cells (and JSON), not its attributes: the listing is held whole to be
        // sorted, at 100,000 items too.
        var rows: [(cells: [String], json: String?)] = []
        for cls in classes {
            var fields = item.fields
            fields.itemClass = cls
            var query = fields.query
            query[kSecReturnAttributes] = true
            // Page by page: no agent reply has to hold the whole keychain (docs/protocol.md).
            // At most `SearchPage.maxListingItems` in all: pages that never end are refused.
            let left = SearchPage.maxListingItems - rows.count
            try keychain.forEachPage(query, maxItems: left, maxBytes: SearchPage.maxListingBytes) { page in
                for case let attributes as [String: Any] in page {
                    let object = json ? ItemJSON.json(className: cls.rawValue, attributes: attributes, secret: nil) : nil
                    rows.append((Self.cells(cls, attributes), object))
                }
            }
        }
        guard !rows.isEmpty else { throw notFound(keychain.path) }
        let order = rows.indices.sorted { Self.precedes(rows[$0].cells, rows[$1].cells) }
        if json {
            Report.out(JSON.array(order.map { rows[$0].json ?? "{}" }) + "\n")
            return
        }
        let table = ItemTable(rows: order.map { rows[$0].cells })
        Report.out(Terminal.stdoutIsTerminal ? table.aligned(width: TerminalWidth.stdoutColumns) : table.tabSeparated)
    }

    /// The classes to ask: `--class`, else every class that has all the attributes given
    /// (`-a` leaves out certificates and keys). - Throws: errSecNoSuchAttr (exit 41) when
    /// `--class` lacks one, or no class has them all.
    private func classes() throws -> [CLIClass] {
        if item.chosenClass != nil {
            try item.checkFitsClass()
            return [item.itemClass]
        }
        let fitting = CLIClass.allCases.filter { cls in
            var fields = item.fields
            fields.itemClass = cls
            return (try? fields.checkFitsClass()) != nil
        }
        guard !fitting.isEmpty else {
            throw KeychainError(
                errSecNoSuchAttr, "no item class has all of the attributes given",
                hint: "kc add --help lists which flag applies to which class")
        }
        return fitting
    }

    /// The message for an empty listing: an empty keychain, or nothing that matches.
    private func notFound(_ path: String) -> KeychainError {
        if item.hasConditions {
            let what = item.chosenClass == nil ? item.fields.summary : item.summary
            return KeychainError(
                errSecItemNotFound, "no item matches \(what) in \(path)",
                hint: "`kc list` with no attribute lists every item")
        }
        if let cls = item.chosenClass {
            return KeychainError(
                errSecItemNotFound, "there are no \(cls.rawValue) items in \(path)",
                hint: "`kc list` lists the items of every class")
        }
        return KeychainError(
            errSecItemNotFound, "there are no items in \(path)",
            hint: "add one with `kc add -s SERVICE -a ACCOUNT`, or bring them in with `kc import FILE`")
    }

    /// One item's cells: class, service (server, subject, tag), account, label, modified.
    static func cells(_ cls: CLIClass, _ attributes: [String: Any]) -> [String] {
        let nameKey: String
        switch cls {
        case .generic: nameKey = kSecAttrService
        case .internet: nameKey = kSecAttrServer
        case .certificate: nameKey = kSecAttrSubject
        case .key: nameKey = kSecAttrApplicationTag
        }
        func cell(_ key: String) -> String {
            guard let value = attributes[key] else { return "" }
            if let s = value as? String, s.isEmpty { return "" }
            if let d = value as? Data, d.isEmpty { return "" }
            return ItemPrinter.textValue(value, name: AttributeNames.byKey[key] ?? key, className: cls.rawValue)
        }
        return [cls.rawValue, cell(nameKey), cell(kSecAttrAccount), cell(kSecAttrLabel), cell(kSecAttrModificationDate)]
    }

    /// Listing order: class (generic, internet, certificate, key), then service, account and
    /// label ignoring case, then byte by byte.
    static func precedes(_ a: [String], _ b: [String]) -> Bool {
        let rank = { (row: [String]) in CLIClass.allCases.firstIndex { $0.rawValue == row[0] } ?? Int.max }
        if rank(a) != rank(b) { return rank(a) < rank(b) }
        for column in 1...3 where a[column] != b[column] {
            let la = a[column].lowercased(), lb = b[column].lowercased()
            if la != lb { return Array(la.utf8).lexicographicallyPrecedes(Array(lb.utf8)) }
            return Array(a[column].utf8).lexicographicallyPrecedes(Array(b[column].utf8))
        }
        return false
    }
}
