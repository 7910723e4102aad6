/// `kc run`'s plain forms parsed without swift-argument-parser: `-k K`, `--allow-keychain K`,
/// `--env NAME=VALUE`, `--env-file F`, `--resolve-env`, `--mask`, `--no-masking`, then `--`
/// and the command.
///
/// It stays because ArgumentParser's start-up is most of a `kc run`: 4.5 ms against 1.4 ms
/// for `kc run -k K -- /bin/true` (docs/performance.md). The names come from the table
/// (`Options.of("run")`), which ArgumentParser's `Run` declares its options from; anything
/// else (help, errors, the password options, which mean a prompt or a file read anyway)
/// gives nil, and ArgumentParser handles it. An option's value is the next word whatever it
/// looks like, as ArgumentParser's `.unconditional` takes it, or the text after `=`.
/// GrammarTests and FastPathTests check that both parsers give the same request.
enum RunFastPath {
    /// The options of `kc run` left to ArgumentParser on purpose.
    static let leftToArgumentParser = [Options.passwordStdin, Options.passwordFile]

    /// The request for the arguments after `run` (as `ArgumentNormaliser` gives them), or nil.
    static func parse(_ arguments: ArraySlice<String>) -> RunRequest? {
        var r = RunRequest()
        var rest = arguments
        while let word = rest.popFirst() {
            if word == "--" {
                r.command = Array(rest)
                guard !r.command.isEmpty, !(r.noMasking && r.mask) else { return nil }
                return r
            }
            let (name, attached) = OptionSpec.split(word)
            guard let option = Options.named(name, in: "run"), !leftToArgumentParser.contains(where: { $0 === option }) else { return nil }
            guard option.takesValue else {
                guard attached == nil else { return nil }
                switch option {
                case Options.mask: r.mask = true
                case Options.noMasking: r.noMasking = true
                case Options.resolveEnv: r.resolveEnv = true
                default: return nil
                }
                continue
            }
            guard let value = attached ?? rest.popFirst(), !value.isEmpty else { return nil }
            switch option {
            case Options.env:
                guard let eq = value.firstIndex(of: "="), DotEnv.isName(String(value[..<eq])) else { return nil }
                r.envPairs.append(value)
            case Options.envFile: r.envFiles.append(value)
            case Options.allowKeychain: r.allowedKeychains.append(value)
            case Options.keychain:
                guard r.keychain.keychain == nil else { return nil }
                r.keychain.keychain = value
            default: return nil
            }
        }
        return nil
    }
}
