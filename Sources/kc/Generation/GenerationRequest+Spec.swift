import KeychainCore

/// The compact form of the generation options that `kc add --generate=SPEC` takes: items
/// separated by commas, in any order, except that `exclude:` takes the rest of SPEC.
///
///     32                       --length 32
///     letters,digits           --charset letters,digits (any --charset element: a-f, !@#)
///     nosymbols / digitsonly   --no-symbols / --digits-only
///     require:digit+symbol     --require digit,symbol
///     words / words:N          --words 6 / --words N
///     sep:S                    --separator S
///     exclude:CHARS            --exclude CHARS (the rest of SPEC, commas included)
///
/// `default` (what `--generate` alone means) is the defaults of `kc generate`.
///
///     try GenerationRequest(spec: "20,letters,digits").recipe()   // 20 from 62
///     try GenerationRequest(spec: "words:5,sep:.").recipe()       // five words, dot-separated
extension GenerationRequest {
    /// Parses SPEC. - Throws: errSecParam (exit 206) naming the item that is not understood.
    init(spec: String) throws {
        self.init()
        var rest = Substring(spec)
        var charsetElements: [String] = []
        var wordsMode = false
        var wordCount: Int?
        while !rest.isEmpty {
            if rest.hasPrefix("exclude:") {
                exclude = String(rest.dropFirst("exclude:".count))
                break
            }
            let item: Substring
            if let comma = rest.firstIndex(of: ",") {
                item = rest[..<comma]
                rest = rest[rest.index(after: comma)...]
                if rest.isEmpty { throw Self.specError(spec, "it ends in a comma") }
            } else {
                item = rest
                rest = ""
            }
            if item.isEmpty { throw Self.specError(spec, "an empty item") }
            if item == "default" {
                continue
            } else if let number = Int(item) {
                if length != nil { throw Self.specError(spec, "two lengths") }
                length = number
            } else if item == "words" {
                wordsMode = true
            } else if item.hasPrefix("words:") {
                guard let number = Int(item.dropFirst("words:".count)) else { throw Self.specError(spec, "words:N needs a number") }
                wordsMode = true
                wordCount = number
            } else if item.hasPrefix("sep:") {
                separator = String(item.dropFirst("sep:".count))
            } else if item.hasPrefix("require:") {
                require = item.dropFirst("require:".count).split(separator: "+", omittingEmptySubsequences: false).joined(separator: ",")
            } else if item == "nosymbols" {
                noSymbols = true
            } else if item == "digitsonly" {
                digitsOnly = true
            } else if item.count >= 3, item.allSatisfy({ $0.isASCII && $0.isLowercase }), CharacterClass.group(named: String(item)) == nil {
                // In SPEC a word is a keyword: letters themselves are given as a range (a-f).
                throw Self.specError(spec, "unknown item '\(item)'")
            } else {
                charsetElements.append(String(item))
            }
        }
        if !charsetElements.isEmpty { charset = charsetElements.joined(separator: ",") }
        // `words,5` is `words:5`; `words` alone is six words.
        if wordsMode {
            if wordCount != nil && length != nil { throw Self.specError(spec, "two word counts") }
            words = wordCount ?? length ?? Self.defaultWords
            length = nil
        }
    }

    /// The number of words of `--generate=words`: six, as the EFF advises (77.5 bits).
    static let defaultWords = 6

    /// The error for a SPEC that is not understood.
    private static func specError(_ spec: String, _ fault: String) -> KeychainError {
        KeychainError(
            errSecParam, "--generate=\(spec): \(fault)",
            hint: "for example --generate=32, --generate=20,letters,digits, --generate=words:6 (see kc add --help)")
    }
}
