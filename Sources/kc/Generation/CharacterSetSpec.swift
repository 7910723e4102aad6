import KeychainCore

/// The characters a `--charset SPEC` names: a comma-separated list whose elements are
/// class names (`lower`, `upper`, `letters`, `digits`, `symbols`, `alnum`) or the
/// characters themselves, where `a-f`, `A-Z` or `0-7` stands for a range of letters or
/// digits (a `-` anywhere else is itself). Only printable ASCII other than space is
/// accepted; a comma cannot be given literally (it separates the elements).
///
///     try CharacterSetSpec.characters("0-9a-f", flag: "--charset")         // 16 hex digits
///     try CharacterSetSpec.characters("letters,digits,!@#$%", flag: "--charset")
enum CharacterSetSpec {
    /// The distinct characters `spec` names, in ASCII order.
    /// - Throws: errSecParam (exit 206) for a character that is not printable ASCII, an
    ///   empty element, a backwards range, or a word that looks like a mistyped class name.
    static func characters(_ spec: String, flag: String) throws -> [UInt8] {
        try checkPrintableASCII(spec, flag: flag)
        var set: Set<UInt8> = []
        for element in spec.split(separator: ",", omittingEmptySubsequences: false).map(String.init) {
            guard !element.isEmpty else {
                throw KeychainError(
                    errSecParam, "\(flag): an empty element in '\(spec)'",
                    hint: "separate class names or characters with single commas, for example letters,digits")
            }
            if let group = CharacterClass.group(named: element) {
                for kind in group { set.formUnion(kind.members) }
                continue
            }
            try checkNotAMistypedClass(element, flag: flag)
            set.formUnion(try literal(Array(element.utf8), flag: flag))
        }
        return set.sorted()
    }

    /// The characters of `--exclude CHARS`: each one literally (no ranges, no classes).
    /// - Throws: errSecParam (exit 206) for a character that is not printable ASCII.
    static func excluded(_ chars: String, flag: String = "--exclude") throws -> Set<UInt8> {
        try checkPrintableASCII(chars, flag: flag)
        return Set(chars.utf8)
    }

    /// Refuses anything but printable ASCII other than space (0x21-0x7E): a space or a
    /// character outside ASCII in a secret breaks on some sites and in many configs.
    static func checkPrintableASCII(_ text: String, flag: String) throws {
        for scalar in text.unicodeScalars where !(0x21...0x7E).contains(scalar.value) {
            let hex = String(scalar.value, radix: 16, uppercase: true)
            let code = "U+" + String(repeating: "0", count: max(0, 4 - hex.count)) + hex
            let shown = scalar.value == 0x20 ? "a space" : "'\(String(scalar))' (\(code))"
            throw KeychainError(
                errSecParam, "\(flag): \(shown) is not a printable ASCII character",
                hint: "generated secrets use printable ASCII other than space (! to ~)")
        }
    }

    /// The characters of one literal element, with `x-y` ranges of letters or digits.
    private static func literal(_ bytes: [UInt8], flag: String) throws -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if i + 2 < bytes.count, bytes[i + 1] == UInt8(ascii: "-"),
                let kind = CharacterClass.of(bytes[i]), kind != .symbol, CharacterClass.of(bytes[i + 2]) == kind
            {
                guard bytes[i] <= bytes[i + 2] else {
                    let range = String(decoding: bytes[i...(i + 2)], as: UTF8.self)
                    throw KeychainError(
                        errSecParam, "\(flag): the range \(range) is backwards",
                        hint: "write ranges from low to high, for example a-z or 0-9")
                }
                out += Array(bytes[i]...bytes[i + 2])
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }

    /// A word of three or more lowercase letters that shares its first three with a class
    /// name (`lowr`, `digts`, `leters`) is almost surely a typo, not the letters themselves.
    private static func checkNotAMistypedClass(_ element: String, flag: String) throws {
        guard element.utf8.count >= 3, element.utf8.allSatisfy({ CharacterClass.of($0) == .lower }) else { return }
        let start = element.prefix(3)
        guard let near = CharacterClass.groupNames.first(where: { $0.hasPrefix(start) }) else { return }
        throw KeychainError(
            errSecParam, "\(flag): unknown class '\(element)'; did you mean '\(near)'?",
            hint: "the classes are \(CharacterClass.groupNames.joined(separator: ", ")); give letters themselves as a range (a-f)")
    }
}
