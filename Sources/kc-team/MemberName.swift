import KeychainCore

/// The rule for a member's name in a team (`create`'s and `join`'s `--member`, `add`'s and
/// `add-runner`'s NAME): any text but an empty one, or one holding a control character or a
/// bidirectional-text control. Such a name would show as something else in `kc team
/// members`, in the removal message and in the `kc team add` line `join` prints to paste
/// (which puts the name last, after `--`, so a name starting with `-` pastes too).
enum MemberName {
    /// `name`, when it is a member name. - Throws: errSecParam saying what is wrong.
    @discardableResult
    static func check(_ name: String) throws -> String {
        guard !name.isEmpty else { throw KeychainError(errSecParam, "a member name cannot be empty") }
        if let bad = name.unicodeScalars.first(where: isRefused) {
            throw KeychainError(
                errSecParam,
                "a member name cannot hold a control or bidirectional-text character (U+\(String(bad.value, radix: 16, uppercase: true)))",
                hint: "use printable text, e.g. --member alice-laptop")
        }
        return name
    }

    /// Control characters (C0, DEL, C1) and the bidirectional-text controls (ALM, LRM, RLM,
    /// LRE…RLO, LRI…PDI), which reorder how a terminal shows the text around them.
    static func isRefused(_ scalar: Unicode.Scalar) -> Bool {
        switch scalar.value {
        case 0x00...0x1F, 0x7F...0x9F, 0x061C, 0x200E, 0x200F, 0x202A...0x202E, 0x2066...0x2069: true
        default: false
        }
    }
}
