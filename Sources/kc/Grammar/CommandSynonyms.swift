/// The words people type for kc's commands, from the tools they come from: pass and gopass
/// (`rm`, `insert`, `show`, `edit`, `mv`, `cp`, `grep`), rbw and bw (`get`, `remove`,
/// `edit`), 1Password's `op` (`get`, `edit`), git and the shell (`init`, `ls`, `cat`), and
/// macOS `security` (`add-generic-password`, `find-internet-password`, `unlock-keychain`…).
///
/// `CommandSuggestion` answers an unknown command from here before it looks for the
/// nearest spelling: `kc rm` means `kc delete`, however far `rm` is from `delete` (and close
/// to `run`). Each suggestion is a kc command line after `kc`, with placeholders in capitals
/// (NAME, TEXT, KEYCHAIN, SERVER, NEW…): CommandSuggestionTests parses every one with kc's
/// own parser, so none names a command or an option that does not exist.
enum CommandSynonyms {
    /// One meaning: the words that say it, and what kc says instead.
    struct Entry: Sendable {
        /// The words typed in the command's place.
        let words: [String]
        /// The kc command lines meant (after `kc`), each with what it is for when there are
        /// several: a single bare command is named as `'delete'`, the rest as `` `kc …` ``.
        let suggestions: [(command: String, purpose: String?)]
    }

    /// The table.
    static let entries: [Entry] = [
        Entry(
            words: ["rm", "remove", "del", "erase", "forget", "delete-generic-password", "delete-internet-password"],
            suggestions: [("delete -s NAME", nil)]),
        Entry(words: ["insert", "new", "put", "set", "store", "save", "add-generic-password"], suggestions: [("add -s NAME", nil)]),
        Entry(words: ["add-internet-password"], suggestions: [("add --class internet -s SERVER", nil)]),
        Entry(words: ["init", "new-keychain", "create-keychain", "mkkeychain"], suggestions: [("create", nil)]),
        Entry(words: ["search", "grep", "query", "lookup"], suggestions: [("find --contains -s TEXT --all", nil), ("list", nil)]),
        Entry(words: ["edit", "change", "modify", "set-password"], suggestions: [("update -s NAME", nil)]),
        Entry(
            words: ["show", "get", "cat", "print", "reveal", "view", "find-generic-password"],
            suggestions: [("find NAME -w", "the secret"), ("find NAME", "its attributes")]),
        Entry(words: ["find-internet-password"], suggestions: [("find --class internet -s SERVER", nil)]),
        Entry(words: ["ls", "list-items", "items", "dump-keychain"], suggestions: [("list", nil)]),
        Entry(
            words: ["mv", "rename"],
            suggestions: [("update -s NAME --new-service NEW", "to rename"), ("move -s NAME --to KEYCHAIN", "to another keychain")]),
        Entry(
            words: ["cp", "copy", "clone"],
            suggestions: [
                ("find NAME --clip", "to the clipboard"), ("move -s NAME --to KEYCHAIN", "to another keychain"),
                ("export", "to a file")
            ]),
        Entry(words: ["clip", "clipboard", "xclip", "pbcopy"], suggestions: [("find NAME --clip", nil)]),
        Entry(words: ["otp", "2fa", "mfa", "code"], suggestions: [("totp NAME", nil)]),
        Entry(words: ["pwgen", "random", "generate-password", "gen-password"], suggestions: [("generate", nil)]),
        Entry(words: ["exec", "env", "with-secrets"], suggestions: [("run --env VAR=kc://NAME/ACCOUNT -- COMMAND", nil)]),
        Entry(words: ["template", "render"], suggestions: [("inject -i TEMPLATE", nil)]),
        Entry(words: ["unlock-keychain", "login", "open"], suggestions: [("unlock", nil)]),
        Entry(words: ["lock-keychain", "logout", "close"], suggestions: [("lock", nil)]),
        Entry(words: ["password", "chpass", "change-password", "set-keychain-password"], suggestions: [("passwd", nil)]),
        Entry(words: ["set-keychain-settings", "timeout"], suggestions: [("settings", nil)]),
        Entry(words: ["info", "show-keychain-info", "whoami"], suggestions: [("status", nil)]),
        Entry(words: ["check", "fsck"], suggestions: [("verify", nil)])
    ]

    /// The suggestions for `word`, if the table has it.
    static func suggestions(for word: String) -> [(command: String, purpose: String?)]? {
        for entry in entries where entry.words.contains(word) { return entry.suggestions }
        return nil
    }

    /// What to say after "unknown command 'WORD'": `did you mean 'delete'?`, or
    /// `` did you mean `kc find NAME -w` (the secret) or `kc find NAME` (its attributes)? ``.
    static func advice(_ suggestions: [(command: String, purpose: String?)]) -> String {
        if suggestions.count == 1, let only = suggestions.first, !only.command.contains(" ") {
            return "did you mean '\(only.command)'?"
        }
        let named = suggestions.map { command, purpose in "`kc \(command)`" + (purpose.map { " (\($0))" } ?? "") }
        return "did you mean " + named.joined(separator: " or ") + "?"
    }
}
