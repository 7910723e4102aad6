import ArgumentParser
import KeychainCore

extension KDFProfile: ExpressibleByArgument {}

/// The attribute flags shared by add, find, update and delete, named as macOS `security`'s.
struct ItemOptions: ParsableArguments {
    /// `--class` as given: nil when absent (`kc list` then lists every class).
    @Option(name: Options.itemClass.names, parsing: .unconditional, help: Options.itemClass.help, completion: Options.itemClass.completion)
    var chosenClass: CLIClass?

    /// The item class: `--class`, else generic.
    var itemClass: CLIClass { chosenClass ?? .generic }

    @Option(name: Options.account.names, parsing: .unconditional, help: Options.account.help, completion: Options.account.completion)
    var account: String?

    @Option(name: Options.service.names, parsing: .unconditional, help: Options.service.help, completion: Options.service.completion)
    var service: String?

    @Option(name: Options.label.names, parsing: .unconditional, help: Options.label.help, completion: Options.label.completion)
    var label: String?

    @Option(name: Options.kind.names, parsing: .unconditional, help: Options.kind.help, completion: Options.kind.completion)
    var kind: String?

    @Option(name: Options.comment.names, parsing: .unconditional, help: Options.comment.help, completion: Options.comment.completion)
    var comment: String?

    @Option(name: Options.generic.names, parsing: .unconditional, help: Options.generic.help, completion: Options.generic.completion)
    var generic: String?

    @Option(name: Options.creator.names, parsing: .unconditional, help: Options.creator.help, completion: Options.creator.completion)
    var creator: String?

    @Option(name: Options.type.names, parsing: .unconditional, help: Options.type.help, completion: Options.type.completion)
    var type: String?

    @Option(name: Options.securityDomain.names, parsing: .unconditional, help: Options.securityDomain.help, completion: Options.securityDomain.completion)
    var securityDomain: String?

    @Option(name: Options.path.names, parsing: .unconditional, help: Options.path.help, completion: Options.path.completion)
    var path: String?

    @Option(name: Options.port.names, parsing: .unconditional, help: Options.port.help, completion: Options.port.completion)
    var port: Int?

    @Option(name: Options.protocol.names, parsing: .unconditional, help: Options.protocol.help, completion: Options.protocol.completion)
    var `protocol`: String?

    @Option(name: Options.authType.names, parsing: .unconditional, help: Options.authType.help, completion: Options.authType.completion)
    var authType: String?

    @Option(name: Options.tag.names, parsing: .unconditional, help: Options.tag.help, completion: Options.tag.completion)
    var tag: String?

    /// The parsed values, as plain data.
    var fields: ItemFields {
        ItemFields(
            itemClass: itemClass, account: account, service: service, label: label, kind: kind, comment: comment,
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
