import KeychainCore

/// git's credential store file (`~/.git-credentials`, git-credential-store(1)): one
/// `scheme://user:password@host[:port][/path]` per line, user and password
/// percent-encoded. Each becomes an internet password, as kc's git helper stores them.
package enum GitCredentials {
    /// Whether `text`'s first non-empty line looks like one of these.
    package static func looksLike(_ text: String) -> Bool {
        guard let first = text.split(separator: "\n").first(where: { !String($0).trimmingSpaces.isEmpty }) else { return false }
        return first.contains("://") && first.contains("@") && !first.contains(" ")
    }

    package static func entries(_ text: String) -> [ImportEntry] {
        var out: [ImportEntry] = []
        for (index, raw) in text.split(separator: "\n", omittingEmptySubsequences: false).enumerated() {
            let line = String(raw).trimmingSpaces
            guard !line.isEmpty else { continue }
            let source = "line \(index + 1)"
            guard let address = WebAddress(line), line.contains("://") else {
                out.append(.failed(source, .malformed("not a URL")))
                continue
            }
            guard let user = address.user, let password = address.password else {
                out.append(.failed(source, name: address.host, .malformed("no user name and password before the host")))
                continue
            }
            guard address.protocolCode != nil else {
                out.append(.failed(source, name: address.host, .malformed("the scheme \"\(address.scheme)\" has no keychain protocol")))
                continue
            }
            var login = Login(source: source)
            login.url = address.text
            login.username = user
            login.password = password
            out.append(login.entry())
        }
        return out
    }
}
