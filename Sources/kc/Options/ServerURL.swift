import ArgumentParser
import KeychainCore
import KeychainFormats
import POSIXSupport

/// A URL pasted where an internet password's server goes (`kc add --class internet -s
/// https://github.com/x`), split as `kc import` splits a login's address (`WebAddress`):
/// server `github.com`, protocol `htps`, port, path `/x`. Stored whole, the server would be
/// `https://github.com/x`, which git's helper never matches and an export writes as
/// `https://https://github.com/x`.
///
/// `ItemFields` splits one in every command that takes item flags, so a query finds what
/// `kc add` stored from the same URL (`kc find --class internet -s https://github.com/x`).
/// A text without `://` is a host name and stays as it is; generic passwords keep their
/// service as typed.
struct ServerURL: Equatable {
    /// The URL, split.
    let address: WebAddress
    /// Apple's four-character code of its scheme (`htps`).
    let protocolCode: String

    /// The URL in `text`; nil when `text` has no `://` (a host name).
    /// - Throws: a usage error when it is a URL an internet password cannot hold: no host,
    ///   a port that is no number from 1 to 65535, a scheme Apple has no protocol code for,
    ///   or a password (which `ps` and the shell's history show).
    init?(_ text: String) throws {
        guard let schemeEnd = text.firstRange(of: "://") else { return nil }
        // A password is refused from the text as typed, before any parsing or decoding: a
        // URL that does not parse, or whose password does not decode (`%FF`), must neither
        // be quoted in a message with it nor pass with it silently dropped.
        let authority = text[schemeEnd.upperBound...].prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = authority.lastIndex(of: "@"), authority[..<at].contains(":") {
            throw ValidationError(
                "the URL of \(Options.service.shortest) holds a password, which ps and the shell's history show: give the URL without it and the secret at the prompt, on stdin or with --data-file"
            )
        }
        guard let address = WebAddress(text) else {
            throw ValidationError(
                "\(Options.service.shortest) \(ShellWord.quoted(WebAddress.withoutUserInfo(text))) is not a URL kc can split: scheme://host[:port][/path], the port from 1 to 65535"
            )
        }
        guard let code = address.protocolCode else {
            throw ValidationError(
                "\(Options.service.shortest): the scheme \"\(address.scheme)\" has no internet-password protocol; give the host alone (\(Options.service.shortest) \(address.host)) and \(Options.protocol.shortest) with a four-character code"
            )
        }
        guard address.password == nil else {
            throw ValidationError(
                "the URL of \(Options.service.shortest) holds a password, which ps and the shell's history show: give the URL without it and the secret at the prompt, on stdin or with --data-file"
            )
        }
        self.address = address
        protocolCode = code
    }

    /// The flags the URL stands for, as a user would type them: `-s github.com -r https
    /// -P 8443 -p /x` (and `-a alice` for a user name in it).
    var arguments: [String] {
        var out = [Options.service.shortest, ShellWord.quoted(address.host), Options.protocol.shortest, address.scheme]
        if let port = address.port { out += [Options.port.shortest, String(port)] }
        if !address.path.isEmpty { out += [Options.path.shortest, ShellWord.quoted(address.path)] }
        if let user = address.user { out += [Options.account.shortest, ShellWord.quoted(user)] }
        return out
    }

    /// "server github.com, protocol https, port 8443, path /x": what was stored or looked for.
    var description: String {
        var parts = ["server \(address.host)", "protocol \(address.scheme)"]
        if let port = address.port { parts.append("port \(port)") }
        if !address.path.isEmpty { parts.append("path \(address.path)") }
        if let user = address.user { parts.append("account \(user)") }
        return parts.joined(separator: ", ")
    }

    /// Refuses flags given beside the URL that say otherwise (`-r ssh`, `-P 443`, `-p /y`,
    /// `-a bob` with `https://alice@…`), showing the flags the URL stands for. The same value
    /// given twice is no conflict, nor a flag for what the URL leaves out (`-P 8443` beside
    /// `https://host/x`).
    func check(against fields: ItemFields) throws {
        var contradicting: [String] = []
        if let given = fields.protocol, FourCC.protocolCode(given) != protocolCode {
            contradicting += [Options.protocol.shortest, ShellWord.quoted(given)]
        }
        if let given = fields.port, let port = address.port, given != port {
            contradicting += [Options.port.shortest, String(given)]
        }
        if let given = fields.path, !address.path.isEmpty, given != address.path {
            contradicting += [Options.path.shortest, ShellWord.quoted(given)]
        }
        if let given = fields.account, let user = address.user, given != user {
            contradicting += [Options.account.shortest, ShellWord.quoted(given)]
        }
        guard !contradicting.isEmpty else { return }
        throw ValidationError(
            "\(Options.service.shortest) \(ShellWord.quoted(fields.service ?? "")) stands for \(arguments.joined(separator: " ")), and \(contradicting.joined(separator: " ")) says otherwise: give the URL alone, or the host with the flags"
        )
    }

    /// `attributes` with the server, protocol, and the port, path and account the URL
    /// gives (the flags given beside it agree: `check(against:)`).
    func apply(to attributes: inout [String: Any]) {
        attributes[kSecAttrServer] = address.host
        attributes[kSecAttrProtocol] = protocolCode
        if let port = address.port { attributes[kSecAttrPort] = port }
        if !address.path.isEmpty { attributes[kSecAttrPath] = address.path }
        if let user = address.user, attributes[kSecAttrAccount] == nil { attributes[kSecAttrAccount] = user }
    }
}
