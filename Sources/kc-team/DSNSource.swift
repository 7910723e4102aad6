import ArgumentParser
import KeychainCore
import TeamStore
#if canImport(Glibc)
import Glibc
#endif

/// Where a `kc team` command takes a PostgreSQL connection string (`docs/team.md`, "Keeping
/// a database password out of the process list"): `--dsn-file FILE` (`-` for standard
/// input), `--dsn-stdin`, or `--dsn DSN` on the command line, which every local user can
/// read (`ps`, /proc/PID/cmdline) for as long as the command runs, so a DSN given there
/// with a password draws a warning. A password is best kept out of the DSN altogether, in
/// `~/.pgpass`. `kc team …` never passes `--dsn` on: kc moves its value into a pipe and
/// gives kc-team `--dsn-fd N` (hidden), so kc-team's own command line holds no DSN.
struct DSNSource: ParsableArguments {
    @Option(
        help: ArgumentHelp(
            "The PostgreSQL connection string (a password in it is visible to every local user: use --dsn-file, --dsn-stdin or ~/.pgpass).", valueName: "DSN"))
    var dsn: String?

    @Option(name: .long, help: ArgumentHelp("Read the connection string from the first line of FILE (- for standard input).", valueName: "FILE"))
    var dsnFile: String?

    @Flag(name: .long, help: "Read the connection string from the first line of standard input.")
    var dsnStdin = false

    /// The descriptor of a pipe kc wrote `--dsn`'s value into (kc's own use).
    @Option(name: .long, help: .hidden)
    var dsnFd: Int32?

    /// Whether the DSN comes from standard input (so the team password cannot).
    var readsStandardInput: Bool { dsnStdin || dsnFile == "-" }

    /// The connection string given, or nil when none was; warns on standard error when one
    /// with a password was given on a command line.
    /// - Throws: errSecParam for two sources, or an empty DSN; errSecIO when a file cannot be read.
    func read() throws -> String? {
        let given = [dsn != nil, dsnFile != nil, dsnStdin, dsnFd != nil].filter { $0 }.count
        guard given <= 1 else {
            throw KeychainError(errSecParam, "give the connection string once: --dsn, --dsn-file or --dsn-stdin")
        }
        var text: String
        if let dsn {
            text = dsn
        } else if let dsnFd {
            defer { close(dsnFd) }
            text = try Self.firstLine(dsnFd, what: "the connection string kc passed")
        } else if let dsnFile, dsnFile != "-" {
            let fd = open(dsnFile, O_RDONLY | O_CLOEXEC)
            guard fd >= 0 else { throw KeychainError(errSecIO, "cannot read \(dsnFile): \(String(cString: strerror(errno)))") }
            defer { close(fd) }
            text = try Self.firstLine(fd, what: dsnFile)
        } else if readsStandardInput {
            text = try Self.firstLine(0, what: "standard input")
        } else {
            return nil
        }
        if dsn != nil || dsnFd != nil, let password = try? PostgresConnection.parse(text)["password"], !password.isEmpty {
            note(
                "warning: the DSN given with --dsn holds a password, which every user of this machine can read in the process list while kc runs; give it with --dsn-file or --dsn-stdin, or keep the password in ~/.pgpass"
            )
        }
        text = Self.trimmed(text)
        guard !text.isEmpty else { throw KeychainError(errSecParam, "the connection string is empty") }
        return text
    }

    /// `text` without leading and trailing spaces and tabs.
    private static func trimmed(_ text: String) -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" }
        return String(String(text.drop(while: isSpace).reversed()).drop(while: isSpace).reversed())
    }

    /// The first line of `fd` (at most 64 KiB), without its newline.
    private static func firstLine(_ fd: Int32, what: String) throws -> String {
        var bytes: [UInt8] = []
        var byte: UInt8 = 0
        while bytes.count < 65_536 {
            let r = Glibc.read(fd, &byte, 1)
            if r < 0 && errno == EINTR { continue }
            if r < 0 { throw KeychainError(errSecIO, "cannot read \(what): \(String(cString: strerror(errno)))") }
            guard r > 0, byte != 0x0a else { break }
            bytes.append(byte)
        }
        if bytes.last == 0x0d { bytes.removeLast() }
        defer { Sodium.wipe(&bytes) }
        return String(decoding: bytes, as: UTF8.self)
    }
}
