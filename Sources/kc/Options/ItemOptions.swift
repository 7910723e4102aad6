import ArgumentParser
import KeychainCore

extension KDFProfile: ExpressibleByArgument {}

/// The attribute flags shared by add, find, update and delete, named as macOS `security`'s.
struct ItemOptions: ParsableArguments {
    /// `--class` as given: nil when absent (`kc list` then lists every class).
    @Option(name: .customLong("class"), parsing: .unconditional, help: "The item class: generic (default), internet, certificate or key.")
    var chosenClass: CLIClass?

    /// The item class: `--class`, else generic.
    var itemClass: CLIClass { chosenClass ?? .generic }

    @Option(name: [.customShort("a"), .long], parsing: .unconditional, help: "Account name.",
            completion: .custom { CompletionCandidates.accounts($0, $1, $2) })
    var account: String?

    @Option(name: [.customShort("s"), .long], parsing: .unconditional, help: "Service name (the server, for internet passwords).",
            completion: .custom { CompletionCandidates.services($0, $1, $2) })
    var service: String?

    @Option(name: [.customShort("l"), .long], parsing: .unconditional, help: "Label (default on add: the service or server).")
    var label: String?

    @Option(name: [.customShort("D"), .long], parsing: .unconditional, help: "Kind (kSecAttrDescription).")
    var kind: String?

    @Option(name: [.customShort("j"), .long], parsing: .unconditional, help: "Comment.")
    var comment: String?

    @Option(name: [.customShort("G"), .long], parsing: .unconditional, help: "Generic attribute (generic passwords).")
    var generic: String?

    @Option(name: [.customShort("c"), .long], parsing: .unconditional, help: ArgumentHelp("Creator: a four-character code or a number.", valueName: "code"))
    var creator: String?

    @Option(name: [.customShort("C"), .long], parsing: .unconditional, help: ArgumentHelp("Type: a four-character code or a number.", valueName: "code"))
    var type: String?

    @Option(name: [.customShort("d"), .customLong("security-domain")], parsing: .unconditional, help: "Security domain (internet passwords).")
    var securityDomain: String?

    @Option(name: [.customShort("p"), .long], parsing: .unconditional, help: "Path (internet passwords).")
    var path: String?

    @Option(name: [.customShort("P"), .long], parsing: .unconditional, help: "Port number (internet passwords).")
    var port: Int?

    @Option(name: [.customShort("r"), .long], parsing: .unconditional, help: ArgumentHelp("Protocol (internet passwords): https, http, ftp, ssh, smtp, imap... or a four-character code such as htps.", valueName: "protocol"))
    var `protocol`: String?

    @Option(name: [.customShort("t"), .customLong("auth-type")], parsing: .unconditional, help: ArgumentHelp("Authentication type (internet passwords): default, basic, digest, form, ntlm, or a four-character code. Default on add: default (dflt).", valueName: "type"))
    var authType: String?

    @Option(name: .long, parsing: .unconditional, help: "Application tag (keys).")
    var tag: String?

    /// The parsed values, as plain data.
    var fields: ItemFields {
        ItemFields(itemClass: itemClass, account: account, service: service, label: label, kind: kind, comment: comment,
                   generic: generic, creator: creator, type: type, securityDomain: securityDomain, path: path,
                   port: port, protocol: `protocol`, authType: authType, tag: tag)
    }

    func validate() throws { try fields.validate() }

    /// See `ItemFields.checkFitsClass()`.
    func checkFitsClass() throws { try fields.checkFitsClass() }

    /// See `ItemFields.attributes`.
    var attributes: [String: Any] { fields.attributes }

    /// See `ItemFields.query`.
    var query: [String: Any] { fields.query }

    /// See `ItemFields.summary`.
    var summary: String { fields.summary }

    /// See `ItemFields.hasConditions`.
    var hasConditions: Bool { fields.hasConditions }
}
