/// Four-character codes (creator, type, protocol, authentication type) as Apple stores them.
package enum FourCC {
    /// A creator or type code: "aapl" becomes its big-endian number; digits are a number.
    package static func number(_ s: String) -> Int? {
        if let n = Int(s), n >= 0, n <= Int(UInt32.max) { return n }
        let bytes = Array(s.utf8)
        guard bytes.count == 4, bytes.allSatisfy({ $0 >= 0x20 && $0 < 0x7F }) else { return nil }
        return bytes.reduce(0) { $0 << 8 | Int($1) }
    }

    package static let protocols: [String: String] = [
        "ftp": "ftp ", "ftpaccount": "ftpa", "http": "http", "irc": "irc ", "nntp": "nntp", "pop3": "pop3",
        "smtp": "smtp", "socks": "sox ", "imap": "imap", "ldap": "ldap", "appletalk": "atlk", "afp": "afp ",
        "telnet": "teln", "ssh": "ssh ", "ftps": "ftps", "https": "htps", "httpproxy": "htpx", "httpsproxy": "htsx",
        "ftpproxy": "ftpx", "smb": "smb ", "rtsp": "rtsp", "rtspproxy": "rtsx", "daap": "daap", "eppc": "eppc",
        "ipp": "ipp ", "nntps": "ntps", "ldaps": "ldps", "telnets": "tels", "imaps": "imps", "ircs": "ircs", "pop3s": "pops"
    ]

    package static let authTypes: [String: String] = [
        "default": "dflt", "basic": "http", "digest": "httd", "form": "form", "ntlm": "ntlm",
        "msn": "msna", "dpa": "dpaa", "rpa": "rpaa"
    ]

    /// A protocol name or code to Apple's four-character code.
    package static func protocolCode(_ s: String) -> String? {
        if let code = protocols[s.lowercased()] { return code }
        return s.utf8.count == 4 ? s : nil
    }

    /// A protocol code back to its URL scheme ("htps" → "https"); the shortest name when
    /// several share a code. Nil for a code kc has no name for.
    package static func scheme(forProtocol code: String) -> String? {
        protocols.filter { $0.value == code }.map(\.key).min { ($0.count, $0) < ($1.count, $1) }
    }

    /// An authentication type name or code to Apple's four-character code.
    package static func authTypeCode(_ s: String) -> String? {
        if let code = authTypes[s.lowercased()] { return code }
        return s.utf8.count == 4 ? s : nil
    }
}
