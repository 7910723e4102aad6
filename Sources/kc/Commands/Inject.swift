import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// `kc inject`: a template with `{{ kc://… }}` references, written with the secrets in.
struct Inject: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Replace {{ kc://... }} references in a template with their secrets.",
        discussion: """
            Every reference is resolved before anything is written (one agent round
            trip per keychain); a missing one writes nothing. -o FILE is created
            0600, never over an existing file without --force. With --format dotenv
            each value is written so a dotenv reader reads it back unchanged (bare,
            or in single quotes), and a value no quoting keeps (a line end, a control
            character, a single quote or a backslash) is refused. A reference may
            name (?keychain=) only the command's keychain (-k, $KC_KEYCHAIN or
            login) or one given with --allow-keychain.

            Examples:
              kc inject -i config.tmpl -o config.yml
              kc inject -i .env.tmpl -o .env --format dotenv
            """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var references: ReferenceOptions

    @Option(name: Options.input.names, parsing: .unconditional, help: Options.input.help, completion: Options.input.completion)
    var input: String

    @Option(name: Options.output.names, parsing: .unconditional, help: Options.output.help, completion: Options.output.completion)
    var output: String?

    @Option(name: Options.injectFormat.names, parsing: .unconditional, help: Options.injectFormat.help, completion: Options.injectFormat.completion)
    var format: String = "raw"

    @Flag(name: Options.injectForce.names, help: Options.injectForce.help)
    var force = false

    func validate() throws {
        guard format == "raw" || format == "dotenv" else { throw ValidationError("--format is raw or dotenv") }
        if input.isEmpty || output?.isEmpty == true { throw ValidationError("-i and -o need a file name") }
        if input == "-" && keychain.passwordStdin { throw ValidationError("the template and --password-stdin cannot both come from stdin") }
    }

    func run() throws {
        let template =
            input == "-"
            ? try Readers.readAll(0, limit: 16 << 20, what: "the template on stdin")
            : try Readers.readFile(input, limit: 16 << 20, what: "the template")
        let text = try template.withUnsafeBytes { bytes -> String in
            guard let s = String(validating: bytes, as: UTF8.self) else { throw KeychainError(errSecParam, "the template is not UTF-8 text") }
            return s
        }
        // Split into literal text and references.
        var pieces: [(literal: String, reference: String?)] = []
        var rest = Substring(text)
        while let open = rest.firstRange(of: "{{") {
            guard let close = rest[open.upperBound...].firstRange(of: "}}") else { break }
            let inner = String(rest[open.upperBound..<close.lowerBound]).trimmingSpaces
            if SecretReference.isReference(inner) {
                pieces.append((String(rest[..<open.lowerBound]), inner))
            } else {
                pieces.append((String(rest[..<close.upperBound]), nil))
            }
            rest = rest[close.upperBound...]
        }
        pieces.append((String(rest), nil))
        let refs = pieces.compactMap(\.reference)
        let parsed = try refs.map { try SecretReference($0) }
        let secrets = try ReferenceResolver.resolve(parsed, base: keychain.choice, allowed: references.allowedKeychains) { refs[$0] }
        var out: [UInt8] = []
        defer { out.withUnsafeMutableBytes { if let b = $0.baseAddress { memset(b, 0, $0.count) } } }
        var n = 0
        // On a terminal, a secret with control characters is shown escaped (SecretOutput).
        let onTerminal = output == nil && Terminal.stdoutIsTerminal
        var escapedAny = false
        for piece in pieces {
            out += Array(piece.literal.utf8)
            guard let reference = piece.reference else { continue }
            let secret = secrets[n]
            n += 1
            if format == "dotenv" {
                guard let value = String(validating: secret.bytes, as: UTF8.self), let quoted = DotEnv.quoted(value) else {
                    throw KeychainError(
                        errSecParam,
                        "\(ItemPrinter.printable(reference)): its secret has a line end, a control character, a single quote, a backslash or bytes that are not text, which no dotenv quoting keeps the same in every reader",
                        hint: "use the default --format raw, or kc run")
                }
                out += Array(quoted.utf8)
            } else if onTerminal, secret.bytes.withUnsafeBytes(SecretOutput.needsEscaping) {
                var shown = secret.bytes.withUnsafeBytes(SecretOutput.escaped)
                out += shown
                Sodium.wipe(&shown)
                escapedAny = true
            } else {
                out += secret.bytes
            }
        }
        if let output {
            try PrivateFile.write(out, to: output, force: force)
        } else {
            Report.writeAll(1, out)
            if escapedAny { Report.note(SecretOutput.note) }
        }
    }
}
