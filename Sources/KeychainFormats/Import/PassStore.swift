import POSIXSupport
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// A `pass` store (passwordstore.org): a folder of `NAME.gpg` files, each decrypted with
/// `gpg --batch --decrypt` through a pipe (no plaintext file), with kc's password variables
/// removed from gpg's environment. An entry's first line is the password; `login:`,
/// `username:`, `user:` or `email:` lines give the account, `url:` the address, an
/// `otpauth://` line the one-time-code seed; other `key: value` lines go to the comment,
/// any other lines are notes. The entry's path in the store ("email/github.com") is its title.
package enum PassStore {
    /// Whether `path` is a folder.
    package static func isFolder(_ path: String) -> Bool {
        var st = stat()
        return stat(path, &st) == 0 && st.st_mode & S_IFMT == S_IFDIR
    }

    package static func entries(_ root: String) throws -> [ImportEntry] {
        var files: [String] = []
        var skipped: [ImportEntry] = []
        try collect(root, relative: "", into: &files, skipped: &skipped)
        guard !files.isEmpty || !skipped.isEmpty else {
            throw KeychainError(errSecParam, "\(root) holds no .gpg files: it is not a pass store")
        }
        return try skipped
            + files.map { relative in
                var plain = try decrypt(root + "/" + relative, name: relative)
                defer { for i in plain.indices { plain[i] = 0 } }
                guard let text = String(validating: plain, as: UTF8.self) else {
                    return .failed(relative, .malformed("the decrypted entry is not UTF-8 text"))
                }
                return entry(text, name: String(relative.dropLast(4)), source: relative)
            }
    }

    package static func entry(_ text: String, name: String, source: String) -> ImportEntry {
        var login = Login(source: source)
        login.title = name
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        if lines.last == "" { lines.removeLast() }
        login.password = lines.first ?? ""
        var notes: [String] = []
        for line in lines.dropFirst() {
            let trimmed = line.trimmingSpaces
            if trimmed.hasPrefix("otpauth://") && login.totp.isEmpty { login.totp = trimmed; continue }
            if let colon = line.firstIndex(of: ":"), !line[..<colon].contains(" "), !line[..<colon].isEmpty {
                let key = line[..<colon].lowercased()
                let value = String(line[line.index(after: colon)...]).trimmingSpaces
                if ["login", "username", "user", "email"].contains(key) && login.username.isEmpty { login.username = value; continue }
                if ["url", "website", "site"].contains(key) && login.url.isEmpty && !value.hasPrefix("//") { login.url = value; continue }
                if !value.hasPrefix("//") { login.fields.append((String(line[..<colon]), value)); continue }
            }
            notes.append(line)
        }
        login.notes = notes.joined(separator: "\n").trimmingSpaces
        return login.entry()
    }

    /// The `.gpg` files under `folder`, sorted, not following links, skipping dot files. A
    /// `.gpg` name that is not UTF-8, a link or anything but a regular file is reported.
    private static func collect(_ folder: String, relative: String, into files: inout [String], skipped: inout [ImportEntry]) throws {
        guard let dir = opendir(folder) else {
            throw KeychainError(errSecIO, "cannot read the folder \(folder): \(String(cString: strerror(errno)))", cause: .errno(errno))
        }
        var names: [String] = []
        while let entry = readdir(dir) {
            let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard raw.first != UInt8(ascii: ".") else { continue }
            guard let name = String(validating: raw, as: UTF8.self) else {
                let shown = String(decoding: raw, as: UTF8.self)
                skipped.append(.failed(relative.isEmpty ? shown : relative + "/" + shown, .unsupported("the file name is not UTF-8; rename it to import it")))
                continue
            }
            names.append(name)
        }
        closedir(dir)
        for name in names.sorted() {
            let path = folder + "/" + name
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            let rel = relative.isEmpty ? name : relative + "/" + name
            let kind = st.st_mode & S_IFMT
            if kind == S_IFDIR {
                try collect(path, relative: rel, into: &files, skipped: &skipped)
            } else if name.hasSuffix(".gpg") {
                if kind == S_IFREG {
                    files.append(rel)
                } else {
                    skipped.append(
                        .failed(rel, .unsupported(kind == S_IFLNK ? "a symbolic link; kc does not follow links in a pass store" : "not a regular file")))
                }
            }
        }
    }

    /// `gpg --batch --quiet --decrypt FILE`, its output read from a pipe.
    package static func decrypt(_ path: String, name: String) throws -> [UInt8] {
        guard let pipeFDs = CloseOnExec.pipe() else { throw KeychainError(errSecIO, "cannot make a pipe for gpg") }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_adddup2(&actions, pipeFDs[1], 1)   // dup2 clears close-on-exec on fd 1 only
        let arguments = ["gpg", "--batch", "--quiet", "--yes", "--decrypt", "--", path]
        var argv: [UnsafeMutablePointer<CChar>?] = arguments.map { strdup($0) } + [nil]
        var envp: [UnsafeMutablePointer<CChar>?] = ChildEnvironment.inherited().map { strdup("\($0.0)=\($0.1)") } + [nil]
        defer {
            for p in argv { free(p) }
            for p in envp { free(p) }
        }
        var pid: pid_t = 0
        let rc = posix_spawnp(&pid, "gpg", &actions, nil, &argv, &envp)
        close(pipeFDs[1])
        guard rc == 0 else {
            close(pipeFDs[0])
            throw KeychainError(
                errSecParam, "cannot run gpg to read the pass store: \(String(cString: strerror(rc)))",
                hint: "install gnupg (apt-get install gnupg)", cause: .errno(rc))
        }
        var out: [UInt8] = []
        var tooLarge = false
        var buffer = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(pipeFDs[0], &buffer, buffer.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            if out.count + n > 1 << 20 {
                tooLarge = true
                kill(pid, SIGKILL)   // a decompression bomb is not read to its end
                break
            }
            out.append(contentsOf: buffer[0..<n])
        }
        for i in buffer.indices { buffer[i] = 0 }
        close(pipeFDs[0])
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        let exited = status & 0x7F == 0
        guard exited && (status >> 8) & 0xFF == 0 else {
            for i in out.indices { out[i] = 0 }
            throw KeychainError(
                errSecAuthFailed, "gpg could not decrypt \(name) from the pass store",
                hint: "check that its key is in your keyring and that gpg-agent can use it")
        }
        if tooLarge {
            for i in out.indices { out[i] = 0 }
            throw KeychainError(errSecDataTooLarge, "\(name) in the pass store decrypts to more than 1 MiB")
        }
        return out
    }
}
