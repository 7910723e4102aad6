import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// When nobody can answer an unlock prompt, so that the provider dismisses it at once (as
/// `kc` exits 36 at once where it cannot ask) instead of leaving a script, a CI job or
/// `ssh host cmd` waiting silently for the whole prompt timeout (docs/secret-service.md,
/// "Unlocking, with or without a desktop").
///
/// Nobody can answer when the provider is to ask through pinentry (it was not started with
/// `--no-pinentry`, which chooses to wait for `kc unlock` instead) and pinentry can reach
/// nobody: neither `DISPLAY` nor `WAYLAND_DISPLAY` is set and no terminal was given with
/// `--tty` (or the one given is not a terminal this user can open), or the pinentry program
/// is not found on `PATH`.
package enum NobodyToAsk {
    /// Why nobody can answer, or nil when someone can (or prompts wait for `kc unlock` by
    /// choice). - Parameters: `pinentry`, the program (nil: `--no-pinentry`); `tty`, the
    /// terminal given with `--tty`.
    package static func reason(pinentry: String?, tty: String?) -> String? {
        guard let pinentry else { return nil }
        var display = false
        for name in ["DISPLAY", "WAYLAND_DISPLAY"] {
            if let value = getenv(name), value.pointee != 0 { display = true }
        }
        let terminal = tty.map { isTerminal($0) } ?? false
        if !display && !terminal {
            if let tty { return "the terminal \(tty) cannot be opened, and no display is set (DISPLAY, WAYLAND_DISPLAY)" }
            return "no display is set (DISPLAY, WAYLAND_DISPLAY) and no terminal was given (--tty)"
        }
        guard isProgram(pinentry) else { return "pinentry (\(pinentry)) is not installed" }
        return nil
    }

    /// The line `kc secret-service --start` says when the provider it started has nobody to
    /// ask.
    package static func startNote(_ reason: String) -> String {
        "nobody can answer an unlock prompt here: \(reason). A client asking for a locked keychain fails at once; run `kc unlock` first"
    }

    /// The line the provider writes to its stderr (the journal, under systemd), the first
    /// time it dismisses a prompt for that reason.
    static func dismissNote(_ reason: String) -> String {
        "kc-secret-service: dismissed an unlock prompt at once, as nobody can answer it here: \(reason). Run `kc unlock` first, or restart the provider with --no-pinentry to have prompts wait for it (kc secret-service --start --replace --no-pinentry)\n"
    }

    /// Whether `path` is a terminal this process can open for reading and writing.
    private static func isTerminal(_ path: String) -> Bool {
        let fd = open(path, O_RDWR | O_NOCTTY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        return isatty(fd) == 1
    }

    /// Whether `program` names an executable file: itself when it holds a `/`, else found
    /// on `PATH` (as pinentry is started).
    private static func isProgram(_ program: String) -> Bool {
        if program.contains("/") { return access(program, X_OK) == 0 }
        let path = getenv("PATH").map { String(cString: $0) } ?? "/usr/bin:/bin"
        return path.split(separator: ":").contains { dir in access(String(dir) + "/" + program, X_OK) == 0 }
    }
}
