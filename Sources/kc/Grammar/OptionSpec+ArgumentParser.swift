import ArgumentParser

/// ArgumentParser's declarations, derived from the table: a command declares
///
///     @Option(name: Options.service.names, parsing: .unconditional, help: Options.service.help,
///             completion: Options.service.completion)
///     var service: String?
///
/// so that no spelling, help text, value name or completion is written twice. Only
/// ArgumentParser's path reads these (the fast parsers never touch an ArgumentParser type).
extension OptionSpec {
    /// `-s` and `--service` as ArgumentParser names them, one-letter name first.
    var names: NameSpecification {
        var elements: [NameSpecification.Element] = []
        if let letter = short?.dropFirst().first { elements.append(.customShort(letter)) }
        if let long { elements.append(.customLong(String(long.dropFirst(2)))) }
        return NameSpecification(elements)
    }

    /// The help text and value name.
    var help: ArgumentHelp { ArgumentHelp(abstract, valueName: valueName) }

    /// What a Tab offers; nil for the value type's default.
    var completion: CompletionKind? {
        switch candidates {
        case .keychains?: return .custom { CompletionCandidates.keychains($0, $1, $2) }
        case .services?: return .custom { CompletionCandidates.services($0, $1, $2) }
        case .accounts?: return .custom { CompletionCandidates.accounts($0, $1, $2) }
        case .words(let words)?: return .list(words)
        case nil: return nil
        }
    }
}
