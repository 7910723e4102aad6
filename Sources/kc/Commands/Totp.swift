import ArgumentParser
import KeychainCore
import KeychainFormats
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// `kc totp`: the current one-time code of an item holding an `otpauth://` URI.
struct Totp: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Print the current one-time code (TOTP or HOTP) of a stored seed.",
        discussion: """
            The item's secret is an otpauth:// URI, as kc import and kc add --totp
            store it: service otpauth/SERVICE beside the login. -s SERVICE (or the
            SERVICE argument) looks there first, then at SERVICE itself. SHA1,
            SHA256 and SHA512; 6 to 8 digits; any period; Steam codes. A HOTP
            (counter) code advances the stored counter, once per code, even when
            several kc run at once.

            The code goes to stdout (a newline only on a terminal); the seconds it
            stays valid go to stderr when that is a terminal. KC_TOTP_TIME=SECONDS
            gives the code for that Unix time instead of now.

            Examples:
              kc totp github.com                  # otpauth/github.com, any account
              kc totp -s github.com -a alice
              kc totp "kc://github.com/alice"     # a reference, as kc read takes
              CODE=$(kc totp -s vpn -a ci)        # in a CI job
              kc totp github.com --clip           # to the clipboard, cleared in 45 s

            Exit 44 when nothing matches, 206 when the secret is not a valid
            otpauth:// URI (the fault is named, never the secret).
            """
    )

    /// -k and the password options.
    @OptionGroup var keychain: KeychainOptions
    /// -s, -a and the other item flags that narrow the search.
    @OptionGroup var item: ItemOptions
    /// --allow-keychain, for a reference that names another keychain.
    @OptionGroup var references: ReferenceOptions
    /// `--clip [SECONDS]`: the code to the clipboard instead of stdout.
    @OptionGroup var clip: ClipOptions
    /// `--json`: the code as a JSON object, for scripts (never the seed).
    @Flag(name: Options.totpJSON.names, help: Options.totpJSON.help)
    var json = false

    /// A kc:// reference, or a service (as -s).
    @Argument(
        help: ArgumentHelp("A kc:// reference, or a service (as -s).", valueName: "ref|service"),
        completion: .custom { CompletionCandidates.services($0, $1, $2) })
    var reference: String?

    /// One way to name the item, of a class that holds passwords.
    func validate() throws {
        guard item.itemClass == .generic || item.itemClass == .internet else {
            throw ValidationError("one-time-code seeds are generic or internet passwords, not \(item.itemClass.rawValue)s")
        }
        if let reference {
            if SecretReference.isReference(reference) {
                guard !item.hasConditions && item.chosenClass == nil else {
                    throw ValidationError("a kc:// reference names the item: drop the attribute flags, or the reference")
                }
            } else if item.service != nil {
                throw ValidationError("give the service once: as the argument or with -s")
            }
        } else if !item.hasConditions {
            throw ValidationError("name the item: kc totp SERVICE, kc totp -s SERVICE [-a ACCOUNT], or a kc:// reference")
        }
        if json, clip.seconds != nil {
            throw ValidationError("--json prints the code: leave out --clip")
        }
    }

    /// Prints the code, and on a terminal how long it stays valid.
    func run() throws {
        let code = try code()
        if json {
            let number = { (value: Int64?) in value.map { String($0) } ?? "null" }
            Report.out(
                JSON.object([
                    ("code", JSON.string(code.text)), ("type", JSON.string(code.period == nil ? "hotp" : "totp")),
                    ("expires_in", number(code.secondsLeft)), ("period", number(code.period))
                ]) + "\n")
            return
        }
        if let seconds = clip.seconds {
            try Clipboard.copy(secret: Array(code.text.utf8), clearAfter: seconds)
        } else {
            Report.out(code.text + (Terminal.stdoutIsTerminal ? "\n" : ""))
        }
        if let left = code.secondsLeft, Terminal.stderrIsTerminal {
            Report.note("valid for \(left) more second\(left == 1 ? "" : "s")")
        }
    }

    /// The code, computed (and a HOTP counter advanced) but not printed: for `run` and for
    /// whatever copies it instead. Warns on stderr when the query matched two items.
    func code() throws -> OneTimeCode.Code {
        let time = try OneTimeCode.now()
        if Environment.get(OneTimeCode.timeVariable) != nil, Terminal.stderrIsTerminal {
            Report.note("note: \(OneTimeCode.timeVariable) is set: the code for that time, not for now")
        }
        let session: KeychainSession
        let query: [String: Any]
        let label: String
        if let reference, SecretReference.isReference(reference) {
            var ref = try SecretReference(reference)
            ref.totp = true
            try ReferenceResolver.checkKeychains([ref], base: keychain.choice, allowed: references.allowedKeychains) { _ in reference }
            session = try Session.open(ref.choice(keychain.choice))
            query = ref.query.filter { $0.key != kSecReturnData }
            label = reference
        } else {
            var fields = item.fields
            if let reference { fields.service = reference }
            try fields.checkFitsClass()
            session = try Session.open(keychain.choice)
            query = fields.query
            label = fields.summary
        }
        let results = try session.copyMany(OneTimeCode.candidates(query))
        let code = try OneTimeCode.code(results[...], in: session, label: label, at: time)
        if code.ambiguous {
            Report.note("warning: more than one item matches \(label); printed the code of the first")
            Report.note("hint: narrow the query with -a ACCOUNT (`kc find ... --all` lists them)")
        }
        return code
    }
}
