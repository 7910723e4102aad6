import KeychainCore
import POSIXSupport
import SecretService
import KeychainClient
#if canImport(Glibc)
import Glibc
#endif

// kc-secret-service: the freedesktop.org Secret Service provider for kc (docs/secret-service.md).
// `kc secret-service …` execs it; it is its own program so that the `kc` client links no D-Bus.

let usage = """
    usage: kc secret-service [--start] [--replace] [--address ADDRESS] [--prompt-timeout SECONDS]
                             [--pinentry PROGRAM | --no-pinentry] [--tty TTY]
      --start            start the provider (and a private dbus-daemon when no session bus is
                         reachable) in the background and print the shell lines to eval:
                           eval "$(kc secret-service --start)"
                         run again, it finds that bus and provider and prints the same lines
      --replace          take org.freedesktop.secrets over from another provider that allows it;
                         with --start, restart kc's own running provider with these options
      --address ADDRESS  serve the bus at ADDRESS instead of the session bus
      --prompt-timeout S how long an Unlock prompt waits for `kc unlock` before it is
                         dismissed (default 60)
      --pinentry PROGRAM the dialog that asks for a locked keychain's password (default:
                         pinentry, when a display or --tty can reach the user); where
                         nobody can answer (no display, no --tty, no such program), an
                         unlock prompt is dismissed at once
      --no-pinentry      never ask; prompts wait for `kc unlock` only (until the timeout)
      --tty TTY          the terminal pinentry draws on (--start passes its own terminal)
    Exit codes: 0 served until the bus went away, 1 the name is owned by another program
    or the bus cannot be reached, 2 usage error.

    """

func fail(_ message: String, _ code: Int32) -> Never {
    // A message quotes argv and errors quote paths: escaped (`TerminalSafe`), the usage
    // text after an unknown option being the program's own lines.
    let text = TerminalSafe.escaped("kc secret-service: " + message, .lines) + "\n"
    _ = text.withCString { write(2, $0, strlen($0)) }
    exit(code)
}

umask(0o077)
ProcessHardening.disableCoreDumps()
// A long-lived process keeps no password in its environment (it never needs one). Unsetting
// alone leaves the bytes in the environment block it started with (its memory for its whole
// life, and /proc/PID/environ): they are overwritten first, as kc does.
for name in ChildEnvironment.withheld {
    if let value = getenv(name) { memset(value, 0, strlen(value)) }
    unsetenv(name)
}
var address: String?
var replace = false, startMode = false, detach = false
var promptTimeout = 60.0
var pinentry: String? = "pinentry"
var tty: String?
var arguments = CommandLine.arguments.dropFirst()
while let word = arguments.popFirst() {
    switch word {
    case "--start": startMode = true
    case "--replace": replace = true
    case "--detach": detach = true
    case "--address":
        guard let value = arguments.popFirst(), !value.isEmpty else { fail("--address needs a bus address", 2) }
        address = value
    case "--prompt-timeout":
        guard let value = arguments.popFirst(), let seconds = Double(value), seconds > 0, seconds <= 3600 else {
            fail("--prompt-timeout takes 1 to 3600 seconds", 2)
        }
        promptTimeout = seconds
    case "--pinentry":
        guard let value = arguments.popFirst(), !value.isEmpty else { fail("--pinentry needs a program", 2) }
        pinentry = value
    case "--no-pinentry": pinentry = nil
    case "--tty":
        guard let value = arguments.popFirst(), value.hasPrefix("/dev/") else { fail("--tty takes a terminal such as /dev/pts/3", 2) }
        tty = value
    case "-h", "--help":
        _ = usage.withCString { write(1, $0, strlen($0)) }
        exit(0)
    default:
        fail("unknown option '\(TerminalSafe.escaped(word))'\n" + usage, 2)
    }
}

if startMode {
    do {
        var extra: [String] = []
        if let pinentry { extra += ["--pinentry", pinentry] } else { extra.append("--no-pinentry") }
        if let terminal = tty ?? (isatty(0) == 1 ? ttyname(0).map { String(cString: $0) } : nil) { extra += ["--tty", terminal] }
        extra += ["--prompt-timeout", String(promptTimeout)]
        let lines = try ProviderLauncher.start(executable: AgentClient.ownExecutable, replace: replace, arguments: extra) { note in
            let text = "kc: " + TerminalSafe.escaped(note) + "\n"
            _ = text.withCString { write(2, $0, strlen($0)) }
        }
        _ = lines.withCString { write(1, $0, strlen($0)) }
        exit(0)
    } catch {
        fail(error.message, 1)
    }
}

if detach { Detach.fromCaller() }
do {
    let bus = try BusConnection(address: address)
    let provider = SecretServiceProvider(bus: bus, promptTimeout: promptTimeout, pinentry: pinentry, tty: tty)
    try provider.start(replace: replace)
    try provider.run()
    exit(0)
} catch let error where error.name == "org.freedesktop.DBus.Error.AddressInUse" {
    fail(error.message + "; stop it, or pass --replace", 1)
} catch {
    if error.message == "the bus went away" { exit(0) }
    fail(error.message, 1)
}
