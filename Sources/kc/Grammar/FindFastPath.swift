import KeychainCore
/// `kc find` parsed without swift-argument-parser.
///
/// ArgumentParser builds its model of every option by reflection each time a process starts:
/// about 12 million instructions, 95% of a `kc find -w` answered by the agent
/// (docs/performance.md). `kc find` is what scripts call a thousand times, so its plain forms
/// are parsed here by hand into the same `FindRequest` that ArgumentParser's `Find` would
/// give, with the service as its one argument (`kc find github.com -w`). Anything else
/// (help, an unknown, repeated or grouped flag, a second argument, the service given both
/// ways, a value of the wrong type, a validation error) gives nil, and ArgumentParser
/// parses the whole command line as usual, so every message stays its own.
///
/// The names come from the table (`Options.of("find")`), the one ArgumentParser's `Find`
/// declares its options from, and each option's value lands in the request through
/// `FindRequest.take`; nothing here names an option. GrammarTests checks that every option
/// of find in the table takes this path, and FastPathTests that both parsers agree.
enum FindFastPath {
    // Plain loops, arrays and class identity, no Set or Dictionary: in a static binary each
    // generic type's first use that needs a protocol conformance costs a scan of every
    // conformance record, which here cost more than the rest of the command.

    /// The request for the arguments after `find` (as `ArgumentNormaliser` gives them), or
    /// nil when ArgumentParser should parse them.
    static func parse(_ arguments: ArraySlice<String>) -> FindRequest? {
        var request = FindRequest(keychain: KeychainChoice(), item: ItemFields())
        var given: [OptionSpec] = []
        var argument: String?
        var rest = arguments
        while let word = rest.popFirst() {
            // `kc find github.com`: one argument, the service (`-` and `--` are ArgumentParser's).
            if !word.hasPrefix("-") {
                guard argument == nil else { return nil }
                argument = word
                continue
            }
            let (name, attached) = OptionSpec.split(word)
            // An option given twice is ArgumentParser's to refuse or accept.
            guard let option = Options.named(name, in: "find"), !given.contains(where: { $0 === option }) else { return nil }
            given.append(option)
            var text: String?
            if option.takesValue {
                if let attached {
                    guard !attached.isEmpty else { return nil }
                    text = attached
                } else {
                    // Unconditionally the next word, as ArgumentParser's `.unconditional`.
                    guard let next = rest.popFirst() else { return nil }
                    text = next
                }
            } else if attached != nil {
                return nil
            }
            guard request.take(option, text) else { return nil }
        }
        if let argument, !request.take(argument: argument) { return nil }
        // ArgumentParser validates the option groups and then the command; any failure is
        // left to it, so its message is the one the user sees.
        do {
            try request.keychain.validate()
            try request.item.validate()
            try request.validate()
        } catch {
            return nil
        }
        return request
    }
}
