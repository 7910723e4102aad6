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
            var st = stat()
            guard lstat(path, &st) == 0 else { continue }
            guard st.st_mode & S_IFMT == S_IFLNK else {
                Report.note("left \(path): it is not a link")
                continue
            }
            guard let own, resolved(path) == own else {
                var buffer = [CChar](repeating: 0, count: 4096)
                let n = readlink(path, &buffer, buffer.count - 1)
                let target = n > 0 ? String(decoding: buffer[0..<n].map { UInt8(bitPattern: $0) }, as: UTF8.self) : "?"
                Report.note("left \(path): it leads to \(target), not to this kc (\(own ?? AgentClient.ownExecutable))")
                continue
            }
            guard unlink(path) == 0 else {
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
    /// the link put in place by rename (never a moment without one).
    static func link(in folder: String, to target: String) throws {
        try makeFolders(folder)
        let path = folder + "/" + TerraformCredentialsHelper.programName
        var st = stat()
        if lstat(path, &st) == 0 && (st.st_mode & S_IFMT) != S_IFLNK {
            throw KeychainError(errSecDuplicateItem, "\(path) exists and is not a link; move it away first")
        }
        let temporary = folder + "/.\(TerraformCredentialsHelper.programName).\(getpid())"
        unlink(temporary)
        guard symlink(target, temporary) == 0 else {
            throw KeychainError(errSecReadOnly, "cannot make a link in \(folder): \(String(cString: strerror(errno)))")
        }
        guard rename(temporary, path) == 0 else {
            let why = String(cString: strerror(errno))
            unlink(temporary)
            throw KeychainError(errSecReadOnly, "cannot put the link at \(path): \(why)")
        }
    }

    /// Creates `folder` and its missing parents (0755 less the umask).
    static func makeFolders(_ folder: String) throws {
        var made = ""
        for part in folder.split(separator: "/") {
            made += "/" + part
            if mkdir(made, 0o755) != 0 && errno != EEXIST {
                throw KeychainError(errSecReadOnly, "cannot create \(made): \(String(cString: strerror(errno)))")
            }
        }
    }
}
