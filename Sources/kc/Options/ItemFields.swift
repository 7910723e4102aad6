import ArgumentParser
import KeychainCore
import KeychainFormats
import POSIXSupport

/// The attribute flags of add, find, update and delete once parsed (by ArgumentParser
/// through `ItemOptions`, or by `FindFastPath`), with what the commands make of them. The
/// flags' names in messages and hints come from the table (`Options`).
struct ItemFields: Equatable {
    var itemClass: CLIClass = .generic
    var account: String?
    var service: String?
    var label: String?
    var kind: String?
    var comment: String?
    var generic: String?
    var creator: String?
    var type: String?
    var securityDomain: String?
    var path: String?
    var port: Int?
    var `protocol`: String?
    var authType: String?
    var tag: String?

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("the port must be between 0 and 65535") }
        for (flag, value) in [(Options.creator.shortest, creator), (Options.type.shortest, type)] {
            if let value, FourCC.number(value) == nil {
                throw ValidationError("\(flag) takes a four-character code (such as aapl) or a number")
            }
        }
        if let p = `protocol`, FourCC.protocolCode(p) == nil {
            throw ValidationError("unknown protocol \"\(p)\": use https, http, ftp, ssh… or a four-character code")
        }
        if let t = authType, FourCC.authTypeCode(t) == nil {
            throw ValidationError("unknown authentication type \"\(t)\": use default, basic, digest, form, ntlm or a four-character code")
        }
        if let serverURL = try serverURL { try serverURL.check(against: self) }
    }

    /// The URL given as an internet password's server (`-s https://github.com/x`), split
    /// (`ServerURL`); nil for a host name, or another class.
    /// - Throws: a usage error for a URL an internet password cannot hold.
    var serverURL: ServerURL? {
        get throws {
            guard itemClass == .internet, let service else { return nil }
            return try ServerURL(service)
        }
    }

    /// Refuses a flag the class does not have (errSecNoSuchAttr, exit 41), and a value over
    /// the size limit (errSecDataTooLarge, exit 42), naming the flag.
    func checkFitsClass() throws {
        try ValueLength.check([
            (Options.account.displayName, account), (Options.service.displayName, service), (Options.label.displayName, label),
            (Options.kind.displayName, kind), (Options.comment.displayName, comment), (Options.generic.displayName, generic),
            (Options.securityDomain.displayName, securityDomain), (Options.path.displayName, path), (Options.tag.displayName, tag)
        ])
        // Arrays, not sets: `kc find` runs this on every call, and a Set's first use in a
        // static binary costs a scan of the protocol conformances (docs/performance.md).
        let passwords: [CLIClass] = [.generic, .internet]
        let flags: [(OptionSpec, Bool, [CLIClass])] = [
            (Options.account, account != nil, passwords), (Options.service, service != nil, passwords),
            (Options.kind, kind != nil, passwords), (Options.comment, comment != nil, passwords),
            (Options.generic, generic != nil, [.generic]), (Options.creator, creator != nil, [.generic, .internet, .key]),
            (Options.type, type != nil, [.generic, .internet, .key]),
            (Options.securityDomain, securityDomain != nil, [.internet]), (Options.path, path != nil, [.internet]),
            (Options.port, port != nil, [.internet]), (Options.protocol, `protocol` != nil, [.internet]),
            (Options.authType, authType != nil, [.internet]), (Options.tag, tag != nil, [.key])
        ]
        for (option, given, classes) in flags where given && !classes.contains(itemClass) {
            let flag = option.displayName
            let names = CLIClass.allCases.filter { classes.contains($0) }.map(\.rawValue).joined(separator: " and ")
            throw KeychainError(
                errSecNoSuchAttr, "\(flag) is not an attribute of \(itemClass.rawValue) items",
                hint: "it applies to \(names) items; choose the class with --class")
        }
    }

    /// The attribute conditions or values given on the command line, by raw key.
    var attributes: [String: Any] {
        var a: [String: Any] = [:]
        a[kSecAttrAccount] = account
        if let service { a[itemClass == .internet ? kSecAttrServer : kSecAttrService] = service }
        a[kSecAttrLabel] = label
        a[kSecAttrDescription] = kind
        a[kSecAttrComment] = comment
        a[kSecAttrGeneric] = generic
        a[kSecAttrCreator] = creator.flatMap(FourCC.number)
        a[kSecAttrType] = type.flatMap(FourCC.number)
        a[kSecAttrSecurityDomain] = securityDomain
        a[kSecAttrPath] = path
        a[kSecAttrPort] = port
        a[kSecAttrProtocol] = `protocol`.flatMap(FourCC.protocolCode)
        a[kSecAttrAuthenticationType] = authType.flatMap(FourCC.authTypeCode)
        a[kSecAttrApplicationTag] = tag
        // Checked by `validate()`, which both parsers run.
        if let serverURL = try? serverURL { serverURL.apply(to: &a) }
        return a
    }

    /// A query dictionary: the class and the attributes.
    var query: [String: Any] {
        var q = attributes
        q[kSecClass] = itemClass.secClass
        return q
    }

    /// "service=github.com account=alice", for messages (never a secret).
    var summary: String {
        let names: [(String, String?)] = [
            (itemClass == .internet ? "server" : "service", service), ("account", account), ("label", label),
            ("kind", kind), ("comment", comment), ("generic", generic), ("creator", creator), ("type", type),
            ("security-domain", securityDomain), ("path", path), ("port", port.map(String.init)),
            ("protocol", `protocol`), ("auth-type", authType), ("tag", tag)
        ]
        let parts = names.compactMap { name, value in value.map { "\(name)=\($0)" } }
        let cls = itemClass == .generic ? "" : "\(itemClass.rawValue) "
        return parts.isEmpty ? "\(cls)any item" : cls + parts.joined(separator: " ")
    }

    /// The flags that give these fields, as a user would type them (values quoted for the
    /// shell when they need it), for hints that suggest a command.
    var arguments: [String] {
        let flags: [(OptionSpec, String?)] = [
            (Options.service, service), (Options.account, account), (Options.label, label), (Options.kind, kind),
            (Options.comment, comment), (Options.generic, generic), (Options.creator, creator), (Options.type, type),
            (Options.securityDomain, securityDomain), (Options.path, path), (Options.port, port.map(String.init)),
            (Options.protocol, `protocol`), (Options.authType, authType), (Options.tag, tag)
        ]
        let given = flags.compactMap { option, value in value.map { [option.shortest, ShellWord.quoted($0)] } }.flatMap { $0 }
        return (itemClass == .generic ? [] : [Options.itemClass.shortest, itemClass.rawValue]) + given
    }

    /// Whether any attribute narrows the query.
    var hasConditions: Bool { !attributes.isEmpty }
}
