import ArgumentParser
import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

// kc-team: team keychains on PostgreSQL (docs/team.md). `kc team …` execs it; it is its own
// program so that the `kc` client links no PostgreSQL client.

// Every file it creates is private; no core dump can hold a key.
umask(0o077)
ProcessHardening.disableCoreDumps()
// Secrets kc passed through its exec leave the environment before anything runs.
TeamPassword.takeEnvironment()
do {
    var command = try KCTeam.parseAsRoot()
    try command.run()
    exit(0)
} catch let error as KeychainError {
    TeamReport.fail(error)
} catch let error as TeamChoice.SeveralJoined {
    TeamReport.line("kc-team: " + error.message)
    TeamReport.line("kc-team: hint: " + error.hint)
    exit(2)
} catch {
    let code = KCTeam.exitCode(for: error)
    let message = KCTeam.fullMessage(for: error)
    if code == .success {
        // Help: on stdout, its usage wrapped to fit 80 columns (or a narrower $COLUMNS).
        let columns = getenv("COLUMNS").flatMap { Int(String(cString: $0)) } ?? UsageText.maximumWidth
        if !message.isEmpty { TeamReport.write(1, UsageText.wrappingUsage(in: message, width: columns) + "\n") }
        exit(0)
    }
    // In kc's voice: `kc-team: MESSAGE`, `kc-team: hint: …`, as its other errors.
    let voiced = UsageText.voiced(
        message, message: KCTeam.message(for: error), program: "kc-team", arguments: Array(CommandLine.arguments.dropFirst()))
    TeamReport.write(2, TerminalSafe.usageMessage(voiced, arguments: Array(CommandLine.arguments.dropFirst())) + "\n")
    // Usage errors exit 2, as kc's (ArgumentParser's default is 64).
    exit(code == .validationFailure ? 2 : code.rawValue)
}
