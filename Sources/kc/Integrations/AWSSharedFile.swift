import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// One of AWS's shared files (`~/.aws/credentials`, `~/.aws/config`): INI text read as
/// lines, edited in place line by line (everything not edited stays byte for byte), and
/// written back atomically with the file's own mode and owner (`FileReplacement`).
struct AWSSharedFile {
    /// The keys that hold a profile's credentials (botocore's names, the legacy
    /// `aws_security_token` among them).
    static let credentialKeys = ["aws_access_key_id", "aws_secret_access_key", "aws_session_token", "aws_security_token"]

    let path: String
    /// Whether it is ~/.aws/config (`[profile NAME]` sections) rather than the credentials
    /// file (`[NAME]`).
    let isConfig: Bool
    /// The lines, each with its line break (`\r\n`, `\r` or `\n`; the last may have none).
    var lines: [String]
    /// Its folder, held open from the read to the write.
    let folder: HeldFolder
    /// The file as read (nil: there was none): its mode, group and identity.
    let read: (mode: mode_t, gid: gid_t, identity: (dev: UInt, ino: UInt))?

    /// `~/.aws/credentials`, or `AWS_SHARED_CREDENTIALS_FILE` (`~` expanded, as botocore does).
    static var credentialsPath: String { location("AWS_SHARED_CREDENTIALS_FILE", default: "credentials") }
    /// `~/.aws/config`, or `AWS_CONFIG_FILE`.
    static var configPath: String { location("AWS_CONFIG_FILE", default: "config") }

    private static func location(_ variable: String, default name: String) -> String {
        let home = Environment.get("HOME") ?? ""
        guard let value = Environment.get(variable), !value.isEmpty else { return home + "/.aws/" + name }
        if value == "~" { return home }
        if value.hasPrefix("~/") { return home + value.dropFirst() }
        return value
    }

    /// Reads `path`; a missing file is an empty one. The folder is held (`HeldFolder`): a
    /// link, another user's file or folder, a file with other names is refused; so is a
    /// file botocore would not read (`AWSINI`).
    init(path: String, config: Bool) throws {
        self.path = path
        isConfig = config
        folder = try HeldFolder(file: path)
        guard var content = try folder.read(limit: 1 << 24) else {
            (lines, read) = ([], nil)
            return
        }
        read = (content.mode, content.gid, content.identity)
        var bytes = content.bytes
        content.bytes = []
        guard let text = String(validating: bytes, as: UTF8.self) else { throw KeychainError(errSecParam, "\(path) is not UTF-8 text") }
        for i in bytes.indices { bytes[i] = 0 }
        lines = AWSINI.lines(text)
        _ = try kinds()
    }

    /// Each line's kind, as botocore reads it. - Throws: errSecParam naming the line it
    /// would not read; nothing is changed then.
    func kinds() throws -> [AWSINI.Kind] {
        do {
            return try AWSINI.classify(lines)
        } catch {
            throw KeychainError(
                errSecParam, "\(path), line \(error.line): \(error.why), which AWS's own reader refuses or kc cannot place; nothing changed",
                hint: "fix the file and run again")
        }
    }

    /// The sections botocore reads as `profile`, in the file's order (the last one wins in
    /// the config: `[profile default]` after `[default]`), each as its header's line and
    /// its body's range; and the `[DEFAULT]` sections, whose keys configparser gives every
    /// section.
    func sections(of profile: String) throws -> (profile: [(header: Int, body: Range<Int>)], defaults: [Range<Int>]) {
        let kinds = try kinds()
        var found: [(header: Int, body: Range<Int>)] = []
        var defaults: [Range<Int>] = []
        for (i, kind) in kinds.enumerated() {
            guard case .header(let name) = kind else { continue }
            let end = kinds[(i + 1)...].firstIndex { if case .header = $0 { return true } else { return false } } ?? kinds.count
            if name == "DEFAULT" {
                defaults.append((i + 1)..<end)
            } else if let named = isConfig ? AWSINI.profile(ofConfigSection: name) : name, AWSINI.sameText(named, profile) {
                found.append((i, (i + 1)..<end))
            }
        }
        return (found, defaults)
    }

    /// The credential keys' values in the section botocore reads for `profile`, by key.
    /// - Throws: errSecParam when a credential key's value goes on over more lines, or the
    ///   `[DEFAULT]` section holds one: kc would not know what AWS reads.
    func credentials(of profile: String) throws -> [String: String] {
        let kinds = try kinds()
        let (found, defaults) = try sections(of: profile)
        for body in defaults where body.contains(where: { Self.isCredential(kinds[$0]) }) {
            throw KeychainError(
                errSecParam, "\(path) has credential keys in [DEFAULT], which AWS gives every profile; nothing changed", hint: "move them by hand")
        }
        var out: [String: String] = [:]
        guard let last = found.last else { return out }
        for i in last.body {
            guard case .option(let key, let value) = kinds[i], Self.credentialKeys.contains(key) else { continue }
            if i + 1 < kinds.count, kinds[i + 1] == .continuation {
                throw KeychainError(
                    errSecParam, "\(path), line \(i + 2): the value of \(key) goes on over more lines; nothing changed", hint: "write it on one line")
            }
            out[key] = value
        }
        return out
    }

    static func isCredential(_ kind: AWSINI.Kind) -> Bool {
        if case .option(let key, _) = kind { return credentialKeys.contains(key) }
        return false
    }

    /// Whether a line of `profile`'s sections (or `[DEFAULT]`) still names a credential key
    /// once stripped as botocore strips it, in any form: checked before a rewrite is trusted
    /// to have moved them all.
    func mentionsCredentials(of profile: String) throws -> Bool {
        let (found, defaults) = try sections(of: profile)
        return (found.map(\.body) + defaults).contains { body in
            lines[body].contains { line in
                let t = AWSINI.strip(AWSINI.content(line)).lowercased()
                return Self.credentialKeys.contains { t.hasPrefix($0) }
            }
        }
    }

    /// Removes the credential keys from every section botocore reads as `profile`, and a
    /// section itself when nothing but blank lines is left in it. - Returns: whether
    /// anything was removed.
    mutating func removeCredentials(of profile: String) throws -> Bool {
        let kinds = try kinds()
        var removed = false
        for (header, body) in try sections(of: profile).profile.reversed() {
            for i in body where Self.isCredential(kinds[i]) && i + 1 < kinds.count && kinds[i + 1] == .continuation {
                throw KeychainError(
                    errSecParam, "\(path), line \(i + 2): a credential key's value goes on over more lines; nothing changed", hint: "write it on one line")
            }
            let kept = body.filter { !Self.isCredential(kinds[$0]) }
            guard kept.count < body.count else { continue }
            removed = true
            if kept.allSatisfy({ AWSINI.strip(AWSINI.content(lines[$0])).isEmpty }) {
                lines.replaceSubrange(header..<body.upperBound, with: [])
            } else {
                lines.replaceSubrange(body, with: kept.map { lines[$0] })
            }
        }
        return removed
    }

    /// Sets `key = value` in the section botocore reads as `profile` (replacing the key's
    /// line, or after the section's last non-blank line, or in a new section `[header]` at
    /// the end). - Returns: whether the text changed.
    mutating func set(_ key: String, _ value: String, of profile: String, header newHeader: String) throws -> Bool {
        let kinds = try kinds()
        let line = "\(key) = \(value)\n"
        guard let (header, body) = try sections(of: profile).profile.last else {
            if let last = lines.indices.last, !Self.hasBreak(lines[last]) { lines[last] += "\n" }
            if let last = lines.last, !AWSINI.strip(AWSINI.content(last)).isEmpty { lines.append("\n") }
            lines += ["[\(newHeader)]\n", line]
            return true
        }
        if let at = body.first(where: { if case .option(key, _) = kinds[$0] { return true } else { return false } }) {
            // The old value with the lines that continue it (blank lines between them too).
            var end = at + 1
            var j = at + 1
            while j < body.upperBound, kinds[j] == .continuation || kinds[j] == .blank {
                if kinds[j] == .continuation { end = j + 1 }
                j += 1
            }
            guard case .option(_, let old) = kinds[at], old != value || end > at + 1 else { return false }
            lines.replaceSubrange(at..<end, with: [line])
            return true
        }
        var at = body.upperBound
        while at > header + 1, AWSINI.strip(AWSINI.content(lines[at - 1])).isEmpty { at -= 1 }
        if !Self.hasBreak(lines[at - 1]) { lines[at - 1] += "\n" }
        lines.insert(line, at: at)
        return true
    }

    /// Whether `line` ends with a line break.
    static func hasBreak(_ line: String) -> Bool { line.unicodeScalars.last == "\n" || line.unicodeScalars.last == "\r" }

    /// Writes the lines in the file's place (`FileReplacement`: an unnamed file given the
    /// old mode and owner, flushed, then renamed over `path`): a reader sees the old file or
    /// the new one, and no copy of the old text is left behind, even by a killed run.
    func write() throws {
        _ = try kinds()
        try folder.replace(with: Array(lines.joined().utf8), mode: read?.mode ?? 0o600, gid: read?.gid, expected: read?.identity)
    }
}
