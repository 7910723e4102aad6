import ArgumentParser
import KeychainCore

/// The item classes by their command-line names.
enum CLIClass: String, ExpressibleByArgument, CaseIterable {
    case generic, internet, certificate, key

    /// The kSecClass value.
    var secClass: String {
        switch self {
        case .generic: return kSecClassGenericPassword
        case .internet: return kSecClassInternetPassword
        case .certificate: return kSecClassCertificate
        case .key: return kSecClassKey
        }
    }
}

extension KDFProfile: ExpressibleByArgument {}

/// The attribute flags shared by add, find, update and delete, named as macOS `security`'s.
struct ItemOptions: ParsableArguments {
    @Option(name: .customLong("class"), help: "The item class: generic (default), internet, certificate or key.")
    var itemClass: CLIClass = .generic

    @Option(name: [.customShort("a"), .long], help: "Account name.")
    var account: String?

    @Option(name: [.customShort("s"), .long], help: "Service name (the server, for internet passwords).")
    var service: String?

    @Option(name: [.customShort("l"), .long], help: "Label (default on add: the service or server).")
    var label: String?

    @Option(name: [.customShort("D"), .long], help: "Kind (kSecAttrDescription).")
    var kind: String?

    @Option(name: [.customShort("j"), .long], help: "Comment.")
    var comment: String?

    @Option(name: [.customShort("G"), .long], help: "Generic attribute (generic passwords).")
    var generic: String?

    @Option(name: [.customShort("c"), .long], help: ArgumentHelp("Creator: a four-character code or a number.", valueName: "code"))
    var creator: String?

    @Option(name: [.customShort("C"), .long], help: ArgumentHelp("Type: a four-character code or a number.", valueName: "code"))
    var type: String?

    @Option(name: [.customShort("d"), .customLong("security-domain")], help: "Security domain (internet passwords).")
    var securityDomain: String?

    @Option(name: [.customShort("p"), .long], help: "Path (internet passwords).")
    var path: String?

    @Option(name: [.customShort("P"), .long], help: "Port number (internet passwords).")
    var port: Int?

    @Option(name: [.customShort("r"), .long], help: ArgumentHelp("Protocol (internet passwords): https, http, ftp, ssh, smtp, imap… or a four-character code such as htps.", valueName: "protocol"))
    var `protocol`: String?

    @Option(name: [.customShort("t"), .customLong("auth-type")], help: ArgumentHelp("Authentication type (internet passwords): default, basic, digest, form, ntlm, or a four-character code. Default on add: default (dflt).", valueName: "type"))
    var authType: String?

    @Option(name: .long, help: "Application tag (keys).")
    var tag: String?

    func validate() throws {
        if let port, !(0...65535).contains(port) { throw ValidationError("the port must be between 0 and 65535") }
        for (flag, value) in [("-c", creator), ("-C", type)] {
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
    }

    /// Refuses a flag the class does not have (errSecNoSuchAttr, exit 41), naming the flag.
    func checkFitsClass() throws {
        let passwords: Set<CLIClass> = [.generic, .internet]
        let flags: [(String, Bool, Set<CLIClass>)] = [
            ("-a/--account", account != nil, passwords), ("-s/--service", service != nil, passwords),
            ("-D/--kind", kind != nil, passwords), ("-j/--comment", comment != nil, passwords),
            ("-G/--generic", generic != nil, [.generic]), ("-c/--creator", creator != nil, [.generic, .internet, .key]),
            ("-C/--type", type != nil, [.generic, .internet, .key]),
            ("-d/--security-domain", securityDomain != nil, [.internet]), ("-p/--path", path != nil, [.internet]),
            ("-P/--port", port != nil, [.internet]), ("-r/--protocol", `protocol` != nil, [.internet]),
            ("-t/--auth-type", authType != nil, [.internet]), ("--tag", tag != nil, [.key]),
        ]
        for (flag, given, classes) in flags where given && !classes.contains(itemClass) {
            let names = CLIClass.allCases.filter { classes.contains($0) }.map(\.rawValue).joined(separator: " and ")
            throw KeychainError(errSecNoSuchAttr, "\(flag) is not an attribute of \(itemClass.rawValue) items",
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
            ("protocol", `protocol`), ("auth-type", authType), ("tag", tag),
        ]
        let parts = names.compactMap { name, value in value.map { "\(name)=\($0)" } }
        let cls = itemClass == .generic ? "" : "\(itemClass.rawValue) "
        return parts.isEmpty ? "\(cls)any item" : cls + parts.joined(separator: " ")
    }

    /// Whether any attribute narrows the query.
    var hasConditions: Bool { !attributes.isEmpty }
}

/// Four-character codes (creator, type, protocol, authentication type) as Apple stores them.
enum FourCC {
    /// A creator or type code: "aapl" becomes its big-endian number; digits are a number.
    static func number(_ s: String) -> Int? {
        if let n = Int(s), n >= 0, n <= Int(UInt32.max) { return n }
        let bytes = Array(s.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    static let protocols: [String: String] = [
        "ftp": "ftp ", "ftpaccount": "ftpa", "http": "http", "irc": "irc ", "nntp": "nntp", "pop3": "pop3",
        "smtp": "smtp", "socks": "sox ", "imap": "imap", "ldap": "ldap", "appletalk": "atlk", "afp": "afp ",
        "telnet": "teln", "ssh": "ssh ", "ftps": "ftps", "https": "htps", "httpproxy": "htpx", "httpsproxy": "htsx",
        "ftpproxy": "ftpx", "smb": "smb ", "rtsp": "rtsp", "rtspproxy": "rtsx", "daap": "daap", "eppc": "eppc",
        "ipp": "ipp ", "nntps": "ntps", "ldaps": "ldps", "telnets": "tels", "imaps": "imps", "ircs": "ircs", "pop3s": "pops",
    ]

    static let authTypes: [String: String] = [
        "default": "dflt", "basic": "http", "digest": "httd", "form": "form", "ntlm": "ntlm",
        "msn": "msna", "dpa": "dpaa", "rpa": "rpaa",
    ]

    /// A protocol name or code to Apple's four-character code.
    static func protocolCode(_ s: String) -> String? {
        if let code = protocols[s.lowercased()] { return code }
        return s.utf8.count == 4 ? s : nil
    }

    /// An authentication type name or code to Apple's four-character code.
    static func authTypeCode(_ s: String) -> String? {
        if let code = authTypes[s.lowercased()] { return code }
        return s.utf8.count == 4 ? s : nil
    }
}
