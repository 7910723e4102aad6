import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// The collections the provider shows: one per kc keychain in the data folder
/// (`~/.local/share/kc/NAME.keychain-db` is collection `NAME`), plus the default keychain
/// (`$KC_KEYCHAIN`, else `login`) wherever it is. The alias `default` is the default
/// keychain, so `/org/freedesktop/secrets/collection/login` and `…/aliases/default` are the
/// same collection on a machine that keeps the default.
package struct KeychainCollections {
    /// One collection.
    package struct Collection: Equatable {
        /// The object path element (`ObjectPath.element(for: name)`).
        package var id: String
        /// The keychain's name (its file name without `.keychain-db`).
        package var name: String
        /// The keychain file's real path (the agent's key for it).
        package var path: String
    }

    /// The collections, the default first.
    package private(set) var all: [Collection] = []
    /// The id of the default keychain's collection.
    package private(set) var defaultID: String = ""

    /// Reads the data folder now.
    package init() { refresh() }

    /// The default collection's keychain file (its real path): `$KC_KEYCHAIN` when it names
    /// a keychain file, else `login` (also when it does not parse). A team keychain is never the default collection, nor
    /// any collection: with `KC_KEYCHAIN=team:NAME` (the CLI's default), a desktop app
    /// storing its secret through libsecret would otherwise write it to a server every member
    /// of the team reads, and any member could plant items in this user's default collection.
    package static var defaultFile: String {
        switch try? KeychainAddress.chosen {
        case .file(let path)?: return KeychainAddress.file(path).agentPath
        case .team?, nil: return KeychainLocation.realPath(KeychainLocation.directory + "/login.keychain-db")
        }
    }

    /// Re-reads the data folder (a keychain created or removed since).
    package mutating func refresh() {
        let chosen = Self.defaultFile
        var found = [Self.collection(at: chosen)]
        let folder = KeychainLocation.directory
        if let dir = opendir(folder) {
            defer { closedir(dir) }
            var names: [String] = []
            while let entry = readdir(dir) {
                let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                    String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
                }
                if name.hasSuffix(".keychain-db"), !name.hasPrefix(".") { names.append(name) }
            }
            for name in names.sorted() {
                let path = KeychainLocation.realPath(folder + "/" + name)
                var st = stat()
                guard lstat(path, &st) == 0, st.st_mode & S_IFMT == S_IFREG, path != chosen else { continue }
                found.append(Self.collection(at: path))
            }
        }
        all = found
        defaultID = found[0].id
    }

    private static func collection(at path: String) -> Collection {
        let file = path.split(separator: "/").last.map(String.init) ?? path
        let name = file.hasSuffix(".keychain-db") ? String(file.dropLast(".keychain-db".count)) : file
        return Collection(id: ObjectPath.element(for: name), name: name, path: path)
    }

    /// The collection with `id`, or the one an alias names (`default` only).
    package func collection(id: String) -> Collection? { all.first { $0.id == id } }

    /// The collection an alias names: `default` (and `login`, GNOME's name for it).
    package func alias(_ name: String) -> Collection? {
        name == "default" || name == "login" && collection(id: "login") == nil ? collection(id: defaultID) : nil
    }
}
