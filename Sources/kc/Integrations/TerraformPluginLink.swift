import KeychainCore
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

/// `terraform-credentials-kc --install`: links `terraform-credentials-kc` to this kc in the
/// plugin folders Terraform and OpenTofu search for credentials helpers (never the PATH):
/// `~/.terraform.d/plugins` (both tools), and OpenTofu's `$XDG_DATA_HOME/opentofu/plugins`
/// (`~/.local/share/opentofu/plugins` without the variable). A link already there is
/// replaced; a file that is not a link is left alone and named. `--uninstall` removes the
/// links that lead to this kc, and leaves (and names) anything else there.
enum TerraformPluginLink {
    /// The folders, in the order they are linked.
    static func folders() -> [String] {
        guard let home = Environment.get("HOME"), home.hasPrefix("/") else { return [] }
        let data = Environment.get("XDG_DATA_HOME").flatMap { $0.hasPrefix("/") ? $0 : nil } ?? home + "/.local/share"
        return [home + "/.terraform.d/plugins", data + "/opentofu/plugins"]
    }

    /// Makes the links; prints one line for each. Returns the exit status.
    static func install() -> Int32 {
        let target = AgentClient.ownExecutable
        let places = folders()
        guard !places.isEmpty else {
            Report.note("HOME is not set to an absolute path; no plugin folder to link into")
            return exitCode(for: errSecParam)
        }
        var status: Int32 = 0
        for folder in places {
            do {
                try link(in: folder, to: target)
                Report.out("\(folder)/\(TerraformCredentialsHelper.programName) -> \(target)\n")
            } catch let error as KeychainError {
                Report.note(error.message)
                status = exitCode(for: error.status)
            } catch {
                Report.note("\(error)")
                status = 1
            }
        }
        if status == 0 { Report.out("now add `credentials_helper \"kc\" {}` to ~/.terraformrc (OpenTofu: ~/.tofurc)\n") }
        return status
    }

    /// Removes each folder's `terraform-credentials-kc` when it is a link that leads to this
    /// kc (its target, resolved, is this program); prints one line for each removed, names
    /// on stderr what it leaves (a file, a link elsewhere or leading nowhere). Exit 0 then
    /// too: what is left is not kc's. - Returns: the exit status.
    static func uninstall() -> Int32 {
        let places = folders()
        guard !places.isEmpty else {
            Report.note("HOME is not set to an absolute path; no plugin folder to look in")
            return exitCode(for: errSecParam)
        }
        let own = resolved(AgentClient.ownExecutable)
        var removed = 0
        for folder in places {
            let path = folder + "/" + TerraformCredentialsHelper.programName
            let directory: Int32
            do {
                guard let fd = try checkedFolder(folder, create: false) else { continue }
                directory = fd
            } catch let error as KeychainError {
                Report.note(error.message)
                return exitCode(for: error.status)
            } catch {
                return 1
            }
            defer { close(directory) }
            let name = TerraformCredentialsHelper.programName
            var st = stat()
            guard fstatat(directory, name, &st, AT_SYMLINK_NOFOLLOW) == 0 else { continue }
            guard st.st_mode & S_IFMT == S_IFLNK else {
                Report.note("left \(path): it is not a link")
                continue
            }
            guard let own, resolved("/proc/self/fd/\(directory)/\(name)") == own else {
                var buffer = [CChar](repeating: 0, count: 4096)
                let n = readlinkat(directory, name, &buffer, buffer.count - 1)
                let target = n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
                Report.note("left \(path): it leads to \(target), not to this kc (\(own ?? AgentClient.ownExecutable))")
                continue
            }
            guard unlinkat(directory, name, 0) == 0 else {
                Report.note("cannot remove \(path): \(String(cString: strerror(errno)))")
                return exitCode(for: errSecReadOnly)
            }
            Report.out("removed \(path)\n")
            removed += 1
        }
        if removed > 0 { Report.out("remove `credentials_helper \"kc\" {}` from ~/.terraformrc (OpenTofu: ~/.tofurc) too\n") }
        return 0
    }

    /// `path` with every link resolved; nil when it leads nowhere.
    static func resolved(_ path: String) -> String? {
        guard let real = realpath(path, nil) else { return nil }
        defer { free(real) }
        return String(cString: real)
    }

    /// `folder/terraform-credentials-kc` → `target`, the folder made as `mkdir -p` makes it,
    /// the link put in place by rename (never a moment without one), both relative to the
    /// checked folder (`checkedFolder`).
    static func link(in folder: String, to target: String) throws {
        guard let directory = try checkedFolder(folder, create: true) else { throw KeychainError(errSecIO, "cannot open \(folder)") }
        defer { close(directory) }
        let name = TerraformCredentialsHelper.programName
        let path = folder + "/" + name
        var st = stat()
        if fstatat(directory, name, &st, AT_SYMLINK_NOFOLLOW) == 0 && (st.st_mode & S_IFMT) != S_IFLNK {
            throw KeychainError(errSecDuplicateItem, "\(path) exists and is not a link; move it away first")
        }
        let temporary = ".\(name).\(getpid())"
        unlinkat(directory, temporary, 0)
        guard symlinkat(target, directory, temporary) == 0 else {
            throw KeychainError(errSecReadOnly, "cannot make a link in \(folder): \(String(cString: strerror(errno)))")
        }
        guard renameat(directory, temporary, directory, name) == 0 else {
            let why = String(cString: strerror(errno))
            unlinkat(directory, temporary, 0)
            throw KeychainError(errSecReadOnly, "cannot put the link at \(path): \(why)")
        }
    }

    /// Opens `folder` (never through a link: `O_NOFOLLOW`) after checking the way to it,
    /// making what is missing (0755 less the umask) when `create`: no part of it may be a
    /// link unless root's and outside HOME, and HOME and every folder under it on the way,
    /// and the folder itself, must be this user's. So root (sudo keeping HOME) makes no
    /// root-owned folder in a user's home, and no link leads kc into another folder.
    /// - Returns: the folder's descriptor, nil when it does not exist and `create` is false.
    /// - Throws: errSecParam naming the link or the other account's folder; errSecReadOnly.
    static func checkedFolder(_ folder: String, create: Bool) throws -> Int32? {
        let home = Environment.get("HOME") ?? "/"
        var made = ""
        for part in folder.split(separator: "/") {
            made += "/" + part
            var st = stat()
            if lstat(made, &st) != 0 {
                guard errno == ENOENT else { throw KeychainError(errSecReadOnly, "cannot reach \(made): \(String(cString: strerror(errno)))") }
                guard create else { return nil }
                guard mkdir(made, 0o755) == 0 || errno == EEXIST, lstat(made, &st) == 0 else {
                    throw KeychainError(errSecReadOnly, "cannot create \(made): \(String(cString: strerror(errno)))")
                }
            }
            let underHome = made == home || made.hasPrefix(home + "/")
            if st.st_mode & S_IFMT == S_IFLNK {
                guard st.st_uid == 0 && !underHome else {
                    throw KeychainError(
                        errSecParam, "\(made) is a link: kc does not follow it to put or remove its plugin link",
                        hint: "link into the real folder, or remove the link")
                }
                continue
            }
            if (underHome || made == folder) && st.st_uid != geteuid() {
                throw KeychainError(
                    errSecParam, "\(made) belongs to uid \(st.st_uid), not to you: kc does not put or remove its plugin link there",
                    hint: "run the command as that user")
            }
        }
        let fd = open(folder, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw KeychainError(errSecParam, "cannot open \(folder) without following a link: \(String(cString: strerror(errno)))") }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_uid == geteuid() else {
            close(fd)
            throw KeychainError(errSecParam, "\(folder) changed while kc checked it; nothing done")
        }
        return fd
    }
}
