import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// `kc settings`: the keychain's stored auto-lock timeouts (needs the password).
struct Settings: ParsableCommand {
    static let configuration = CommandConfiguration(
        abstract: "Show or set the keychain's auto-lock timeouts (as security set-keychain-settings).",
        discussion: """
            Examples:
              kc settings                      # prints the current timeouts
              kc settings -t 300               # lock after 5 minutes without use
              kc settings -t 600 --max 7200

            They apply from the next unlock. Changing them needs the keychain
            password.
            """
    )

    @OptionGroup var keychain: KeychainOptions

    @Option(name: Options.settingsTimeout.names, parsing: .unconditional, help: Options.settingsTimeout.help, completion: Options.settingsTimeout.completion)
    var timeout: Int64?

    @Option(name: Options.settingsMax.names, parsing: .unconditional, help: Options.settingsMax.help, completion: Options.settingsMax.completion)
    var max: Int64?

    func validate() throws {
        try validateTimeouts(("-t/--timeout", timeout), ("--max", max))
    }

    func run() throws {
        let opened = try Session.openWithPassword(keychain.choice)
        let current = try opened.timeouts()
        if timeout != nil || max != nil {
            try opened.setTimeouts(idle: timeout.map(UInt64.init) ?? current.idle, maximum: max.map(UInt64.init) ?? current.maximum)
        }
        let now = try opened.timeouts()
        Report.out("idle timeout: \(now.idle) s\nmaximum: \(now.maximum) s\n")
    }
}
