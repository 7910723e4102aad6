#if canImport(FoundationEssentials)
import FoundationEssentials
#endif
import KeychainCore
import KeychainClient
import KeychainFormats
#if canImport(Glibc)
import Glibc
#endif

/// `kc kube-credential --import KUBECONFIG USER`: moves USER's static token, or its embedded
/// client certificate and key, into kc (as `kube:USER`) and rewrites the kubeconfig with an
/// exec stanza in their place. kc has no YAML library: it rewrites only the block form
/// `kubectl config set-credentials` writes (a `users:` list at the top level, the user's
/// settings as plain `key: value` lines) and refuses anything else with a message.
enum KubeconfigImport {
    typealias Failure = KubeCredentialHelper.Failure
    static let movable: Set<String> = ["token", "client-certificate-data", "client-key-data"]

    /// One line of the file with its indentation.
    struct Line {
        let text: Substring
        var indent: Int { text.prefix { $0 == " " }.count }
        var body: Substring { text.drop { $0 == " " } }
        var isBlank: Bool { body.isEmpty || body.hasPrefix("#") }
    }

    static func run(path: String, user: String, backup: Bool, choice: KeychainChoice) throws {
        var original = try read(path)
        defer { for i in original.indices { original[i] = 0 } }
        let text = String(decoding: original, as: UTF8.self)
        guard !text.contains("\r"), !text.contains("\t") else { throw refuse(path, "it has carriage returns or tabs") }
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { Line(text: $0) }
        let (block, settings) = try userBlock(lines, user: user, path: path)
        let unknown = settings.keys.filter { !movable.contains($0) }.sorted()
        guard unknown.isEmpty else { throw refuse(path, "user `\(user)` also has \(unknown.joined(separator: ", ")), which kc does not move") }
        let secret: Data
        let account: String
        if let token = settings["token"] {
            guard settings.count == 1 else { throw refuse(path, "user `\(user)` has both a token and a client certificate") }
            secret = Data(try scalar(token, path).utf8)
            account = "token"
        } else if let certificate = settings["client-certificate-data"], let key = settings["client-key-data"], settings.count == 2 {
            guard let c = Data(base64Encoded: try scalar(certificate, path)), let k = Data(base64Encoded: try scalar(key, path)),
                PEMPair.split(String(decoding: c + k, as: UTF8.self)) != nil
            else { throw refuse(path, "user `\(user)`'s client-certificate-data and client-key-data are not base64 PEM") }
            secret = c + k
            account = "client-certificate"
        } else {
            throw refuse(path, "user `\(user)` has no token, nor client-certificate-data with client-key-data")
        }
        // The stanza in the settings' place, at their indentation.
        let pad = String(repeating: " ", count: lines[block.lowerBound].indent)
        var args = [KubeCredentialHelper.word]
        if let keychain = choice.keychain { args += ["--keychain", keychain] }
        args.append(user)
        let stanza =
            ["\(pad)exec:", "\(pad)  apiVersion: \(KubeCredentialHelper.defaultAPIVersion)", "\(pad)  command: kc", "\(pad)  args:"]
            + args.map { "\(pad)  - \(JSON.string($0))" }
        var rewritten: [String] = lines[..<block.lowerBound].map { String($0.text) }
        rewritten += stanza
        rewritten += lines[block.upperBound...].map { String($0.text) }
        let output = Array(rewritten.joined(separator: "\n").utf8)
        rewritten.removeAll()
        // No value moved may be left anywhere in the new text (a second `users:` list, a
        // second user of that name): kubectl would go on reading it.
        let moved = settings.values.map { String($0).trimmingSpaces }.filter { !$0.isEmpty }
        let newText = String(decoding: output, as: UTF8.self)
        guard !moved.contains(where: { newText.contains($0) }) else {
            throw refuse(path, "the value kc would move appears in it more than once")
        }
        // The secret is in the keychain before a backup holding it exists, and before the
        // file changes: a locked keychain leaves nothing behind.
        let keychain = try Session.open(choice, lockedHint: HelperInput.unlockHint(choice))
        try KubeCredentialHelper.store(user, account: account, secret: secret, expires: nil, keychain)
        if backup { try PrivateFile.write(original, to: path + ".kc-backup", force: false) }
        var st = stat()
        guard stat(path, &st) == 0 else { throw KeychainError(errSecIO, "cannot read \(path)'s mode") }
        // The old mode and owner (root importing into a user's file keeps it theirs), given
        // before the new file has a name; no named copy exists while it is written.
        try FileReplacement.replace(path, with: output, mode: st.st_mode & 0o7777, owner: (st.st_uid, st.st_gid))
        Report.line(
            "kc: moved user `\(user)`'s \(account == "token" ? "token" : "client key") into the keychain as kube:\(user); \(path) now runs `kc kube-credential`"
                + (backup ? " (the old file, with the secret, is \(path).kc-backup, 0600)" : ""))
    }

    static func refuse(_ path: String, _ why: String) -> Failure {
        Failure(message: "cannot rewrite \(path) safely: \(why); move the credential by hand (`kc kube-credential NAME --store`)")
    }

    /// The file's bytes: a regular file of at most 1 MiB.
    static func read(_ path: String) throws -> [UInt8] {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW)
        guard fd >= 0 else { throw Failure(message: "cannot open \(path): \(String(cString: strerror(errno)))") }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFREG, st.st_size <= 1 << 20 else {
            throw Failure(message: "\(path) is not a regular file of at most 1 MiB")
        }
        var out: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = Glibc.read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n < 0 { throw Failure(message: "cannot read \(path)") }
            if n == 0 { break }
            out.append(contentsOf: chunk[0..<n])
        }
        for i in chunk.indices { chunk[i] = 0 }
        return out
    }

    /// The line range of USER's settings under `user:` and those settings (key: raw value).
    static func userBlock(_ lines: [Line], user: String, path: String) throws -> (Range<Int>, [String: Substring]) {
        guard let top = lines.firstIndex(where: { $0.indent == 0 && $0.body.hasPrefix("users:") }) else {
            throw refuse(path, "it has no `users:` list")
        }
        // kubectl reads the last of two `users:` keys: kc would rewrite the other one.
        guard lines.filter({ $0.indent == 0 && $0.body.hasPrefix("users:") }).count == 1 else {
            throw refuse(path, "it has more than one `users:` list")
        }
        guard lines[top].body.dropFirst(6).allSatisfy({ $0 == " " }) else { throw refuse(path, "its `users:` is not a block list") }
        // The list's items: `- ` lines at one indentation, up to the next top-level key.
        var end = top + 1
        while end < lines.count, lines[end].isBlank || lines[end].indent > 0 || lines[end].body.hasPrefix("- ") { end += 1 }
        guard let head = (top + 1..<end).first(where: { !lines[$0].isBlank }), lines[head].body.hasPrefix("- ") else {
            throw refuse(path, "its `users:` list is not in kubectl's block form")
        }
        let listIndent = lines[head].indent
        let items = (head..<end).filter { lines[$0].indent == listIndent && lines[$0].body.hasPrefix("- ") }
        let keyIndent = listIndent + 2
        for (n, start) in items.enumerated() {
            let stop = n + 1 < items.count ? items[n + 1] : end
            // The item's keys: on the dash line, then at keyIndent.
            var name: String?
            var userLine: Int?
            for i in start..<stop where !lines[i].isBlank {
                let body = i == start ? lines[i].body.dropFirst(2) : lines[i].body
                guard i == start || lines[i].indent >= keyIndent else { throw refuse(path, "its `users:` list is not in kubectl's block form") }
                guard i == start || lines[i].indent == keyIndent else { continue }
                if body.hasPrefix("name:") { name = try scalar(body.dropFirst(5), path) }
                if body.hasPrefix("user:") { userLine = i }
            }
            guard name == user else { continue }
            let sameName = items.filter { item in
                (item..<end).first { lines[$0].body.dropFirst(item == $0 ? 2 : 0).hasPrefix("name:") }.map { i in
                    (try? scalar(lines[i].body.dropFirst(item == i ? 2 : 0).dropFirst(5), path)) == user
                } ?? false
            }
            guard sameName.count == 1 else { throw refuse(path, "it has more than one user `\(user)`") }
            guard let userLine else { throw refuse(path, "user `\(user)` has no `user:` settings") }
            guard lines[userLine].body.dropFirst(5).allSatisfy({ $0 == " " }) else {
                throw refuse(path, "user `\(user)`'s settings are not block `key: value` lines")
            }
            var settings: [String: Substring] = [:]
            var first: Int?
            var last = userLine
            var i = userLine + 1
            while i < stop, lines[i].isBlank || lines[i].indent > keyIndent {
                if !lines[i].isBlank {
                    let indent = lines[i].indent
                    if first == nil { first = i }
                    guard let first, indent == lines[first].indent, let colon = lines[i].body.firstIndex(of: ":") else {
                        throw refuse(path, "user `\(user)` has nested settings")
                    }
                    let key = String(lines[i].body[..<colon])
                    let value = lines[i].body[lines[i].body.index(after: colon)...]
                    guard !key.isEmpty, value.first == " ", settings[key] == nil else { throw refuse(path, "user `\(user)` has nested settings") }
                    settings[key] = value
                    last = i
                }
                i += 1
            }
            guard let first else { throw refuse(path, "user `\(user)` has no settings") }
            return (first..<last + 1, settings)
        }
        throw Failure(message: "\(path) has no user `\(user)`")
    }

    /// A one-line YAML scalar: plain, 'single' or "double" quoted without escapes.
    static func scalar(_ raw: Substring, _ path: String) throws -> String {
        var v = raw
        while v.first == " " { v = v.dropFirst() }
        while v.last == " " { v = v.dropLast() }
        if v.hasPrefix("'") {
            guard v.count >= 2, v.hasSuffix("'") else { throw refuse(path, "a quoted value does not end on its line") }
            return String(v.dropFirst().dropLast()).replacing("''", with: "'")
        }
        if v.hasPrefix("\"") {
            guard v.count >= 2, v.hasSuffix("\""), !v.contains("\\") else { throw refuse(path, "a quoted value has escapes or does not end on its line") }
            return String(v.dropFirst().dropLast())
        }
        let special: Set<Character> = ["|", ">", "&", "*", "!", "{", "[", "%", "@", "`"]
        guard let c = v.first, !special.contains(c), !v.contains(" #") else { throw refuse(path, "a value is not a plain one-line scalar") }
        return String(v)
    }
}
