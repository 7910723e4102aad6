import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// Copies a secret to the clipboard instead of printing it, and has it cleared later by a
/// detached keeper (`ClipboardKeeper`) if the clipboard still holds it.
///
/// The backends are tried in a fixed order (`ClipboardBackend`): wl-copy when
/// `$WAYLAND_DISPLAY` is set, xclip or xsel when `$DISPLAY` is set, tmux when `$TMUX` is
/// set, then OSC 52 on the controlling terminal. The first that works is used.
///
///     try Clipboard.copy(secret: data, clearAfter: 45)   // kc find -w --clip
///
/// - Throws: errSecNotAvailable (exit 53) naming each backend tried and why it could not
///   be used; nothing was copied, and the caller must not print the secret instead.
enum Clipboard {
    /// How long a copy stays on the clipboard unless `--clip SECONDS` says otherwise.
    static let defaultSeconds = 45

    /// Copies `secret` and arranges for it to be cleared after `seconds`.
    static func copy(secret: borrowing SecureBytes, clearAfter seconds: Int) throws {
        try secret.withUnsafeBytes { try copy(raw: $0, clearAfter: seconds) }
    }

    /// Copies `secret` (a `Data` or `[UInt8]`) and arranges for it to be cleared after `seconds`.
    static func copy(secret: some ContiguousBytes, clearAfter seconds: Int) throws {
        try secret.withUnsafeBytes { try copy(raw: $0, clearAfter: seconds) }
    }

    /// The copy itself; says on stderr where the secret went and when it is cleared.
    static func copy(raw secret: UnsafeRawBufferPointer, clearAfter seconds: Int) throws {
        var tried: [String] = []
        for backend in ClipboardBackend.allCases {
            switch backend.availability() {
            case .unusable(let why):
                tried.append("\(backend.displayName): \(why)")
            case .usable(let target, let tool):
                var extra: [String] = []
                if let failure = try backend.copy(secret, target: target, tool: tool, extra: &extra) {
                    tried.append("\(backend.displayName): \(failure)")
                    continue
                }
                awaitArrival(secret, backend: backend, target: target, extra: extra)
                try ClipboardKeeper.start(secret: secret, backend: backend, seconds: seconds, target: target, extra: extra)
                // A terminal's clipboard cannot be read back: OSC 52 clears whatever it holds then.
                let condition = backend == .osc52 ? "" : " if it still holds the secret"
                Report.note("copied to the clipboard with \(backend.displayName); cleared in \(seconds) s\(condition)")
                return
            }
        }
        throw KeychainError(
            errSecNotAvailable,
            "no way to copy to the clipboard; the secret was not printed (tried "
                + tried.joined(separator: "; ") + ")",
            hint: "install wl-clipboard (Wayland) or xclip (X11), or run kc in a terminal that supports OSC 52; without --clip, -w prints the secret")
    }

    /// Waits (up to 2 s) until the clipboard shows the copy: xclip, xsel and wl-copy return
    /// while the process they leave behind is still taking the selection, and a paste
    /// right after kc returns must find the secret.
    private static func awaitArrival(_ secret: UnsafeRawBufferPointer, backend: ClipboardBackend, target: String, extra: [String]) {
        guard backend != .osc52, backend != .tmux, let expected = try? SecureBytes(copying: secret, guarded: true) else { return }
        let end = ClipboardTool.now() + 2
        repeat {
            if let held = try? backend.read(target: target, extra: extra, limit: secret.count + 1, timeout: 1),
                held.constantTimeEquals(expected)
            {
                return
            }
            usleep(20_000)
        } while ClipboardTool.now() < end
    }
}
