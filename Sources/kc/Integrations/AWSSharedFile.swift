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
    /// The lines, each with its line break (the last may have none).
    var lines: [String]
    /// Whether the file existed when read.
    let existed: Bool
    /// Its mode when read (0600 for a new file).
    let mode: mode_t
    /// Its owner when read (nil for a new file): root rewriting a user's file keeps it theirs.
    let owner: (uid: uid_t, gid: gid_t)?

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

    /// Reads `path`; a missing file is an empty one.
    init(path: String) throws {
        self.path = path
        var st = stat()
        guard lstat(path, &st) == 0 else {
            guard errno == ENOENT else { throw KeychainError(errSecIO, "cannot read \(path): \(String(cString: strerror(errno)))") }
            (lines, existed, mode, owner) = ([], false, 0o600, nil)
            return
        }
        // The rewrite renames a new file over the path: through a link (a dotfile manager's)
        // or beside another hard link, the old text, keys included, would live on there.
        if st.st_mode & S_IFMT == S_IFLNK {
            throw KeychainError(
                errSecParam, "\(path) is a link: rewriting it would leave the keys in the file it points to",
                hint: "point AWS_SHARED_CREDENTIALS_FILE or AWS_CONFIG_FILE at the file itself and run again")
        }
        guard st.st_mode & S_IFMT == S_IFREG else { throw KeychainError(errSecParam, "\(path) is not a regular file") }
        guard st.st_nlink == 1 else {
            throw KeychainError(errSecParam, "\(path) has \(st.st_nlink) hard links: the other names would keep the keys")
        }
        // Root (sudo keeping HOME) may rewrite a user's file: the new one keeps its owner.
        guard st.st_uid == geteuid() || geteuid() == 0 else {
            throw KeychainError(errSecParam, "\(path) belongs to uid \(st.st_uid), not to you: kc does not rewrite it")
        }
        mode = st.st_mode & 0o7777
        owner = (st.st_uid, st.st_gid)
        existed = true
        let fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else {
            let e = errno
            throw KeychainError(e == EACCES ? errSecReadOnly : errSecIO, "cannot read \(path): \(String(cString: strerror(e)))")
        }
        defer { close(fd) }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            let n = read(fd, &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            guard n >= 0 else { throw KeychainError(errSecIO, "cannot read \(path): \(String(cString: strerror(errno)))") }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0..<n])
            guard bytes.count <= 1 << 24 else { throw KeychainError(errSecDataTooLarge, "\(path) is larger than 16 MiB") }
        }
        for i in chunk.indices { chunk[i] = 0 }
        guard let text = String(validating: bytes, as: UTF8.self) else { throw KeychainError(errSecParam, "\(path) is not UTF-8 text") }
        for i in bytes.indices { bytes[i] = 0 }
        lines = text.split(separator: "\n", omittingEmptySubsequences: false).map { $0 + "\n" }
        // The split's last piece follows the last line break: empty, or a line without one.
        if let last = lines.last {
            lines.removeLast()
            if last != "\n" { lines.append(String(last.dropLast())) }
        }
    }

    /// The section's name when `line` is a section header (`[NAME]`, `[profile NAME]`).
    static func header(_ line: String) -> String? {
        let t = line.trimmingSpaces
        guard t.hasPrefix("["), t.hasSuffix("]"), t.count >= 2 else { return nil }
        return String(t.dropFirst().dropLast()).trimmingSpaces
    }

    /// The key of a top-level `key = value` line (lower case), and its value; nil for a
    /// comment, a blank line, a header or an indented (nested) line.
    static func setting(_ line: String) -> (key: String, value: String)? {
        guard let first = line.first, first != " ", first != "\t", first != "#", first != ";", first != "[" else { return nil }
        // configparser (botocore's reader) splits at the first `=` or `:`.
        guard let equals = line.firstIndex(where: { $0 == "=" || $0 == ":" }) else { return nil }
        return (String(line[..<equals]).trimmingSpaces.lowercased(), String(line[line.index(after: equals)...]).trimmingSpaces)
    }

    /// Whether `section` still names a credential key on any line, in any form kc does not
    /// rewrite (indented, say): checked before a rewrite is trusted to have moved them all.
    func mentionsCredentials(in section: String) -> Bool {
        guard let (_, body) = range(of: section) else { return false }
        return lines[body].contains { line in
            let t = line.trimmingSpaces.lowercased()
            return Self.credentialKeys.contains { t.hasPrefix($0) }
        }
    }

    /// The line range of the section named `section` (after its header), or nil.
    func range(of section: String) -> (header: Int, body: Range<Int>)? {
        guard let start = lines.firstIndex(where: { Self.header($0) == section }) else { return nil }
        let end = lines[(start + 1)...].firstIndex(where: { Self.header($0) != nil }) ?? lines.count
        return (start, (start + 1)..<end)
    }

    /// The credential keys' values in `section`, by key.
    func credentials(in section: String) -> [String: String] {
        guard let (_, body) = range(of: section) else { return [:] }
        var out: [String: String] = [:]
        for line in lines[body] {
            if let (key, value) = Self.setting(line), Self.credentialKeys.contains(key) { out[key] = value }
        }
        return out
    }

    /// Removes the credential keys from `section`, and the section itself when nothing but
    /// blank lines is left in it. - Returns: whether anything was removed.
    mutating func removeCredentials(in section: String) -> Bool {
        guard let (header, body) = range(of: section) else { return false }
        let kept = lines[body].filter { line in Self.setting(line).map { !Self.credentialKeys.contains($0.key) } ?? true }
        guard kept.count < body.count else { return false }
        if kept.allSatisfy({ $0.trimmingSpaces.isEmpty }) {
            lines.replaceSubrange(header..<body.upperBound, with: [])
        } else {
            lines.replaceSubrange(body, with: kept)
        }
        return true
    }

    /// Sets `key = value` in `section` (replacing the key's line, or after the section's last
    /// setting, or in a new section at the end). - Returns: whether the text changed.
    mutating func set(_ key: String, _ value: String, in section: String) -> Bool {
        let line = "\(key) = \(value)\n"
        guard let (header, body) = range(of: section) else {
            if let last = lines.indices.last, !lines[last].hasSuffix("\n") { lines[last] += "\n" }
            if let last = lines.last, !last.trimmingSpaces.isEmpty { lines.append("\n") }
            lines += ["[\(section)]\n", line]
            return true
        }
        if let at = lines[body].firstIndex(where: { Self.setting($0)?.key == key }) {
            guard Self.setting(lines[at])?.value != value else { return false }
            lines[at] = line
            return true
        }
        var at = body.upperBound
        while at > header + 1, lines[at - 1].trimmingSpaces.isEmpty { at -= 1 }
        if at > 0, !lines[at - 1].hasSuffix("\n") { lines[at - 1] += "\n" }
        lines.insert(line, at: at)
        return true
    }

    /// Writes the lines in the file's place (`FileReplacement`: an unnamed file given the
    /// old mode and owner, flushed, then renamed over `path`): a reader sees the old file or
    /// the new one, and no copy of the old text is left behind, even by a killed run.
    func write() throws {
        if !existed, let slash = path.lastIndex(of: "/"), slash != path.startIndex { _ = mkdir(String(path[..<slash]), 0o700) }
        try FileReplacement.replace(path, with: Array(lines.joined().utf8), mode: mode, owner: owner)
    }
}
