import ArgumentParser
import KeychainCore
import POSIXSupport
import KeychainFormats
import KeychainClient
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// `kc find`: prints an item's attributes, or with -w only its secret.
struct Find: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Find items; print their attributes, or with -w only the secret.",
        discussion: """
            Examples:
              kc find -s github.com -a alice -w   # the secret's exact bytes
              TOKEN=$(kc find -s ci -a bot -w)    # in a script
              kc find -s github.com               # attributes, never the secret
              kc find github.com -w               # the service as an argument, as -s
              kc find --all --json                # every generic password, as JSON
              kc find --class internet -s example.com -g   # attributes and the secret
              kc find -s git --contains --all     # github.com, my-git, ...
              kc find -s github.com -a alice -w --clip    # to the clipboard

            -w prints the secret's exact bytes, with a newline only on a terminal.
            --clip [SECONDS] copies them instead (wl-copy, xclip or xsel, tmux, or
            OSC 52 on the terminal) and clears the clipboard after SECONDS (45) if
            it still holds the secret; exit 53 when there is no way to copy.
            Several items (--all, --limit) on a terminal show as kc list's lines;
            in a pipe, and with -g, every attribute of each.
            Exact matching is an index lookup; --ignore-case, --contains and
            --prefix (which combine) decrypt and compare every item of the class.
            Exit 44 when nothing matches.
            """
    )

    @OptionGroup var keychain: KeychainOptions
    @OptionGroup var item: ItemOptions

    @Flag(name: Options.secretOnly.names, help: Options.secretOnly.help)
    var secretOnly = false

    @Flag(name: Options.withSecret.names, help: Options.withSecret.help)
    var withSecret = false

    @Flag(name: Options.hex.names, help: Options.hex.help)
    var hex = false

    @Flag(name: Options.base64.names, help: Options.base64.help)
    var base64 = false

    @Flag(name: Options.findJSON.names, help: Options.findJSON.help)
    var json = false

    @Flag(name: Options.findAll.names, help: Options.findAll.help)
    var all = false

    @Option(name: Options.limit.names, parsing: .unconditional, help: Options.limit.help, completion: Options.limit.completion)
    var limit: Int?

    @Option(name: Options.findPrompt.names, parsing: .unconditional, help: Options.findPrompt.help, completion: Options.findPrompt.completion)
    var prompt: String?

    @OptionGroup var match: MatchOptions
    @OptionGroup var clip: ClipOptions

    /// `kc find github.com`: the service, as -s (as `kc totp SERVICE`, pass's `show NAME`).
    @Argument(
        help: ArgumentHelp("The service, as -s (the server, for internet passwords).", valueName: "service"),
        completion: .custom { CompletionCandidates.services($0, $1, $2) })
    var service: String?

    /// The parsed values, as plain data.
    var request: FindRequest {
        var request = FindRequest(
            keychain: keychain.choice, item: item.fields, secretOnly: secretOnly, withSecret: withSecret,
            hex: hex, base64: base64, json: json, all: all, limit: limit, prompt: prompt, matching: match.matching, clip: clip.seconds)
        if let service { _ = request.take(argument: service) }
        return request
    }

    func validate() throws {
        if service != nil && item.service != nil { throw ValidationError(FindRequest.serviceGivenTwice) }
        // The argument is the service: checked as -s is (a URL for an internet password).
        if service != nil { try request.item.validate() }
        try request.validate()
    }

    func run() throws { try request.run() }
}
