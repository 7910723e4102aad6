/// Text as one word of a POSIX shell command line, for commands kc prints for a person to
/// paste as they are (`kc team join 'kct1:…'`, `kc team add NAME --key …`).
///
///     ShellWord.quoted("team:infra")                       // team:infra
///     ShellWord.quoted("kct1:3f…@host=db port=5432")       // 'kct1:3f…@host=db port=5432'
///     ShellWord.quoted("it's")                             // 'it'\''s'
public enum ShellWord {
    /// `text` as it is when every character is one no shell treats specially (letters,
    /// digits, `-_./:@%+=,`), else in single quotes, each `'` in it as `'\''`. Single
    /// quotes keep everything else literal: `$`, backquotes, `\`, `!` (in POSIX sh), spaces,
    /// globs and newlines.
    public static func quoted(_ text: String) -> String {
        let plain =
            !text.isEmpty
            && text.unicodeScalars.allSatisfy {
                ("a"..."z").contains($0) || ("A"..."Z").contains($0) || ("0"..."9").contains($0) || "-_./:@%+=,".unicodeScalars.contains($0)
            }
        if plain { return text }
        return "'" + text.split(separator: "'", omittingEmptySubsequences: false).joined(separator: "'\\''") + "'"
    }
}
