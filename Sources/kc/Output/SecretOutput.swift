import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// A secret written to stdout by `kc find -w`, `kc read` and `kc inject`: to a pipe or a
/// file its exact bytes; on a terminal, never a byte the terminal would act on.
///
/// A secret is data from wherever it was imported: one holding `ESC ] 52 ; c ; … BEL`
/// would set the terminal's clipboard (to a command for the user to paste), others retitle
/// the window, clear the screen, or hide what precedes a carriage return. On a terminal
/// such a secret is shown escaped with `TerminalSafe`'s `.secret` style (line ends and
/// tabs kept, `\u001b` for ESC, `\xNN` for a byte outside UTF-8, `\\` for a backslash)
/// and a note on stderr says so and how to get the exact bytes (a pipe or a file). A
/// secret with no such character is written as it is, backslashes included.
/// docs/security.md, "What reaches your terminal"; docs/commands.md, "kc find".
enum SecretOutput {
    /// The note printed once when a secret was shown escaped.
    static let note =
        "note: the secret has control characters or bytes that are not text; shown escaped "
        + "(\\\\ is a backslash, \\uXXXX a character, \\xNN a byte); pipe or redirect the output for its exact bytes"

    /// Whether `secret` must be shown escaped on a terminal: it has a character or a byte
    /// `TerminalSafe` escapes other than a line end, a tab or a backslash.
    static func needsEscaping(_ secret: UnsafeRawBufferPointer) -> Bool {
        var trigger = TerminalSafe.Style.secret
        trigger.escapesBackslash = false
        return TerminalSafe.needsEscaping(raw: secret, trigger)
    }

    /// Writes one secret to stdout: its exact bytes to a pipe or a file; on a terminal,
    /// escaped when it has control characters (with the note on stderr), then a newline.
    static func write(_ secret: UnsafeRawBufferPointer) {
        guard Terminal.stdoutIsTerminal else {
            Report.writeAll(1, secret)
            return
        }
        guard needsEscaping(secret) else {
            Report.writeAll(1, secret)
            Report.writeAll(1, [0x0A])
            return
        }
        var shown = escaped(secret)
        Report.writeAll(1, shown)
        Report.writeAll(1, [0x0A])
        Sodium.wipe(&shown)
        Report.note(note)
    }

    /// `secret` in `TerminalSafe`'s `.secret` style (the caller wipes the result).
    static func escaped(_ secret: UnsafeRawBufferPointer) -> [UInt8] {
        TerminalSafe.escaped(raw: secret, .secret)
    }
}
