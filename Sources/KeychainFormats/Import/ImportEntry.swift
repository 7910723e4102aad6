import KeychainCore

/// One entry of an import source after parsing: the keychain items it becomes (a login and,
/// with a one-time-code seed, a second item), what of it has no home in a keychain item,
/// or why it cannot be imported.
package struct ImportEntry {
    /// Where it is in the source: "line 12", "entry 3", "email/github.com.gpg".
    package var source: String
    /// Its title, for the report.
    package var name: String
    package var items: [ImportItem] = []
    /// Names of fields with a value that no keychain attribute keeps.
    package var dropped: [String] = []
    /// Why the entry is not imported: a malformed row (an error without --skip-invalid),
    /// or a kind of entry no keychain class holds (always skipped and reported).
    package var problem: Problem?

    package enum Problem {
        case malformed(String)
        case unsupported(String)
    }

    /// An entry that is not imported.
    package static func failed(_ source: String, name: String = "", _ problem: Problem) -> ImportEntry {
        ImportEntry(source: source, name: name, problem: problem)
    }
}
