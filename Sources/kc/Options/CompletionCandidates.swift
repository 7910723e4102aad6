import ArgumentParser
import KeychainCore
import KeychainClient
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// What a Tab offers for `-k` (and `--allow-keychain`), `-s` and `-a`: the completion
/// scripts of `kc --generate-completion-script` run `kc ---completion …` (ArgumentParser's
/// `completion: .custom`), which calls these.
///
/// Keychain names come from the data folder, paths from the file system. Services (servers
/// with `--class internet`) and accounts come only from the agent, and only while it holds
/// the chosen keychain unlocked: completion never asks for a password, never opens a
/// keychain file, waits for the agent at most `agentTimeout`, and offers nothing when any
/// of that fails. It asks for attributes only; no secret is ever requested or printed.
enum CompletionCandidates {
    /// The longest a Tab waits for the agent (a scan of a huge keychain gives up here).
    static let agentTimeout = 1.0

    /// The attribute a candidate list is of.
    enum Field {
        case service, account
    }

    /// `-k`: the names of the keychains in the data folder (`NAME` for
    /// `NAME.keychain-db`), the team keychains this device has joined (`team:NAME` for
    /// `teams/NAME.team`), and, once the word looks like a path (`/`, `.` or `~` in it),
    /// the files and folders it may name.
    static func keychains(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        let typed = CompletionWords.unquoted(prefix)
        var out: [String] = []
        if !typed.contains("/") {
            out += entries(of: KeychainLocation.directory).filter { !$0.isFolder && $0.name.hasSuffix(".keychain-db") }
                .map { String($0.name.dropLast(".keychain-db".count)) }
                .filter { $0.hasPrefix(typed) && !$0.isEmpty }
            out += entries(of: KeychainLocation.directory + "/teams").filter { !$0.isFolder && $0.name.hasSuffix(".team") }
                .compactMap { try? KeychainAddress(teamName: String($0.name.dropLast(".team".count))).description }
                .filter { $0.hasPrefix(typed) }
        }
        if typed.contains("/") || typed.hasPrefix(".") || typed.hasPrefix("~") {
            out += paths(completing: typed)
        }
        return formatted(out.sorted())
    }

    /// `-s`: the services (the servers, for `--class internet`) in the chosen keychain,
    /// narrowed to an account given on the line.
    static func services(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        formatted(values(of: .service, on: CompletionWords(words: words, index: index)))
    }

    /// `-a`: the accounts in the chosen keychain, narrowed to a service given on the line.
    static func accounts(_ words: [String], _ index: Int, _ prefix: String) -> [String] {
        formatted(values(of: .account, on: CompletionWords(words: words, index: index)))
    }

    /// The distinct values of `field` in the keychain the line chooses, from the agent
    /// while it holds that keychain unlocked; nothing otherwise.
    static func values(of field: Field, on line: CompletionWords) -> [String] {
        let itemClass = line.value(of: Options.itemClass.spellings).flatMap(CLIClass.init(rawValue:)) ?? .generic
        guard itemClass == .generic || itemClass == .internet else { return [] }
        let serviceKey = itemClass == .internet ? kSecAttrServer : kSecAttrService
        var query: [String: Any] = [
            kSecClass: itemClass.secClass, kSecMatchLimit: kSecMatchLimitAll,
            kSecReturnAttributes: true
        ]
        if field == .account, let service = line.value(of: Options.service.spellings) { query[serviceKey] = service }
        if field == .service, let account = line.value(of: Options.account.spellings) { query[kSecAttrAccount] = account }
        let named = line.value(of: Options.keychain.spellings)
        if named == "" { return [] }
        guard let address = try? KeychainChoice(keychain: named.map(expandingTilde)).address() else { return [] }
        // A team keychain's attributes come from the team agent (no secret is asked for).
        var agent = AgentClient().holding(address)
        agent.timeout = agentTimeout
        guard case .result(let reply)? = try? agent.perform(path: address.agentPath, .copyMatching(query)),
            let found = try? reply.value()
        else { return [] }
        let items = (found as? [[String: Any]]) ?? [(found as? [String: Any]) ?? [:]]
        let key = field == .service ? serviceKey : kSecAttrAccount
        return Set(items.compactMap { $0[key] as? String }).sorted()
    }

    /// The files and folders (these with a `/`) whose paths start with `typed`, spelled as
    /// typed (a leading `~/` stays); dot files only when the name typed starts with a dot.
    static func paths(completing typed: String) -> [String] {
        let folderPart = typed.lastIndex(of: "/").map { String(typed[...$0]) } ?? ""
        let namePart = String(typed.dropFirst(folderPart.count))
        let folder = folderPart.isEmpty ? "." : expandingTilde(folderPart)
        return entries(of: folder)
            .filter { $0.name.hasPrefix(namePart) && ($0.name.first != "." || namePart.first == ".") }
            .map { folderPart + $0.name + ($0.isFolder ? "/" : "") }
    }

    /// The entries of `folder` but `.` and `..` (names that are not UTF-8 left out), and
    /// whether each is a folder (a link to one counts); none when it cannot be read.
    static func entries(of folder: String) -> [(name: String, isFolder: Bool)] {
        guard let dir = opendir(folder) else { return [] }
        defer { closedir(dir) }
        var out: [(name: String, isFolder: Bool)] = []
        while let entry = readdir(dir) {
            let raw = withUnsafeBytes(of: entry.pointee.d_name) { Array($0.prefix { $0 != 0 }) }
            guard let name = String(validating: raw, as: UTF8.self), name != ".", name != ".." else { continue }
            var st = stat()
            let isFolder = stat(folder + "/" + name, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR
            out.append((name, isFolder))
        }
        return out
    }

    /// `~/…` with the home folder ($HOME) in place of `~`; anything else as it is.
    static func expandingTilde(_ path: String) -> String {
        guard path == "~" || path.hasPrefix("~/"), let home = Environment.get("HOME") else { return path }
        return home + path.dropFirst()
    }

    /// The candidates as the requesting shell reads them back literally; a value with a
    /// control character (a line end would split it) is left out.
    ///
    /// bash's script passes them to `compgen -W`, which expands `$(…)`, `$VAR` and `~` in
    /// them: a service named `$(rm -rf ~)` would run at a Tab. So for bash every character
    /// but letters, digits and `-_./:@%+=,` is escaped with a backslash, which compgen's
    /// quote removal takes off again. zsh's `_describe` reads `value:description`, so a
    /// colon is escaped there. fish takes each line as it is.
    static func formatted(_ values: [String]) -> [String] {
        let shell = CompletionShell.requesting
        return
            values
            .filter { !$0.isEmpty && !TerminalSafe.hasControl($0) }
            .map { value in
                if shell == .bash {
                    return value.map { c in
                        c.isASCII && (c.isLetter || c.isNumber || "-_./:@%+=,".contains(c)) ? String(c) : "\\" + String(c)
                    }.joined()
                }
                if shell == .zsh {
                    return value.replacing(":", with: "\\:")
                }
                return value
            }
    }
}
