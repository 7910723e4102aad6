import ArgumentParser
import KeychainCore
import KeychainFormats

/// The value of `kc add --accessible` and `kc update --new-accessible`: an accessibility
/// class by the name `kc find` prints (`after-first-unlock`) or by Apple's code (`ck`),
/// stored as the code (`docs/apple-compatibility.md`, "Accessibility").
///
///     kc add -s backup -a cron --accessible after-first-unlock
struct Accessibility: ExpressibleByArgument {
    /// Apple's code: ak, ck, dk, aku, cku, dku or akpu.
    let code: String

    /// A name or a code; nil for anything else.
    init?(argument: String) {
        if AttributeCodes.accessibility[argument] != nil {
            code = argument
        } else if let known = AttributeCodes.accessibility.first(where: { $0.value == argument }) {
            code = known.key
        } else {
            return nil
        }
    }

    /// The names, for help and completion.
    static var allValueStrings: [String] {
        [
            "when-unlocked", "after-first-unlock", "always", "when-unlocked-this-device-only",
            "after-first-unlock-this-device-only", "always-this-device-only", "when-passcode-set-this-device-only"
        ]
    }

    /// Warns on stderr when the class is one Apple deprecated (`always…`): kc stores it,
    /// protected as after-first-unlock.
    func warnIfDeprecated() {
        guard ProtectionClass.isDeprecated(code) else { return }
        let name = AttributeCodes.accessibility[code] ?? code
        Report.note(
            "warning: '\(name)' is deprecated by Apple; kc protects it as after-first-unlock (readable after kc lock until the agent stops or the machine restarts)"
        )
    }
}
