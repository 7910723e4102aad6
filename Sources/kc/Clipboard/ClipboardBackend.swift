import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#endif

/// A way to put bytes on the user's clipboard, in the order `Clipboard.copy` tries them
/// (docs/commands.md, "The clipboard"): Wayland, X11 (xclip, then xsel), tmux, then the
/// OSC 52 escape sequence on the controlling terminal.
///
/// Each backend names a `target` when it can be used (the display, the tmux server, the
/// terminal); the keeper that clears the copy later is given the backend's name and that
/// target, and reads back and clears through the same backend.
enum ClipboardBackend: String, CaseIterable {
    /// `wl-copy` / `wl-paste` (wl-clipboard), when `$WAYLAND_DISPLAY` is set.
    case wayland = "wl-copy"
    /// `xclip -selection clipboard`, when `$DISPLAY` is set.
    case xclip
    /// `xsel --clipboard`, when `$DISPLAY` is set and xclip is not installed.
    case xsel
    /// `tmux load-buffer -w`, when `$TMUX` is set: tmux keeps a buffer and sets the outer
    /// terminal's clipboard with OSC 52 (its `set-clipboard` option).
    case tmux
    /// `ESC ] 52 ; c ; BASE64 BEL` written to the controlling terminal.
    case osc52 = "osc52"

    /// What a backend needs to work, or why it cannot be used here.
    enum Availability {
        /// It can be tried: its display, tmux socket or terminal, and its program (none for OSC 52).
        case usable(target: String, tool: ClipboardTool?)
        /// It cannot: why, for the message that names what was tried.
        case unusable(String)
    }

    /// How the backend is named in messages.
    var displayName: String { self == .osc52 ? "OSC 52" : rawValue }

    /// Whether this backend can be used from here, and with what.
    func availability() -> Availability {
        func variable(_ name: String) -> String? {
            guard let v = Environment.get(name), !v.isEmpty else { return nil }
            return v
        }
        switch self {
        case .wayland:
            guard let display = variable("WAYLAND_DISPLAY") else { return .unusable("WAYLAND_DISPLAY is not set") }
            guard let tool = ClipboardTool.find("wl-copy") else { return .unusable("not installed (wl-clipboard)") }
            // wl-copy keeps what it serves in a file it makes under /tmp (a fixed path in
            // wl-clipboard): only where /tmp is memory may a secret go there.
            guard Self.isInMemory("/tmp") else {
                return .unusable("it would keep the secret in a file under /tmp, which is on disk here (not tmpfs)")
            }
            let socket = display.hasPrefix("/") ? display : (variable("XDG_RUNTIME_DIR") ?? "") + "/" + display
            // The resolved path goes to wl-copy (WAYLAND_DISPLAY may be absolute): see `ownSocket`.
            guard let resolved = Self.ownSocket(socket) else { return .unusable("\(socket) is not a socket of this user") }
            return .usable(target: resolved, tool: tool)
        case .xclip, .xsel:
            guard let display = variable("DISPLAY") else { return .unusable("DISPLAY is not set") }
            guard let tool = ClipboardTool.find(rawValue) else { return .unusable("not installed") }
            // `su` without `-` keeps $DISPLAY: every client of an X server can read its
            // clipboard, so the server must be this user's or root's.
            if let refusal = XServerOwner.refusal(display: display) { return .unusable(refusal) }
            return .usable(target: display, tool: tool)
        case .tmux:
            guard let session = variable("TMUX") else { return .unusable("TMUX is not set") }
            guard let tool = ClipboardTool.find("tmux") else { return .unusable("not installed") }
            // $TMUX is "SOCKET,PID,SESSION".
            let socket = String(session.split(separator: ",", omittingEmptySubsequences: false).first ?? "")
            guard socket.hasPrefix("/") else { return .unusable("TMUX does not name a socket") }
            // `su` without `-` keeps $TMUX: the secret must not go to another account's server.
            guard let resolved = Self.ownSocket(socket) else { return .unusable("\(socket) is not a socket of this user") }
            return .usable(target: resolved, tool: tool)
        case .osc52:
            guard let tty = OSC52.controllingTerminal() else { return .unusable("no controlling terminal") }
            return .usable(target: tty, tool: nil)
        }
    }

    /// Whether `path` is a socket of this user's that stays so (`ownSocket`).
    static func isOwnSocket(_ path: String) -> Bool { ownSocket(path) != nil }

    /// `path` with every symbolic link in its folders resolved, when it is a socket (not a
    /// link to one) owned by this user and no other account can change what that resolved
    /// path names: each folder above it is this user's or root's, and one that others may
    /// write is sticky (so they cannot rename or remove the entry below it, which is this
    /// user's or root's too). Nil otherwise. The copy and the keeper use the resolved path:
    /// checking the path as given let an account that owns one of its folders (`su` keeps
    /// $TMUX and $WAYLAND_DISPLAY, and their folders are that account's to point) swap a
    /// link between the check and the tool's connect and receive the secret
    /// [ClipboardTests.aSocketPathThroughAnotherAccountsFolderGetsNoCopy].
    static func ownSocket(_ path: String) -> String? {
        let me = getuid()
        func isOwn(_ p: String) -> Bool {
            var st = stat()
            return lstat(p, &st) == 0 && (st.st_mode & S_IFMT) == S_IFSOCK && st.st_uid == me
        }
        guard isOwn(path), let real = realpath(path, nil) else { return nil }
        let resolved = String(cString: real)
        free(real)
        guard resolved.hasPrefix("/"), isOwn(resolved) else { return nil }
        var folder = resolved
        repeat {
            folder = String(folder[..<(folder.lastIndex(of: "/") ?? folder.startIndex)])
            let checked = folder.isEmpty ? "/" : folder
            var st = stat()
            guard lstat(checked, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR, st.st_uid == me || st.st_uid == 0 else { return nil }
            if st.st_mode & 0o022 != 0 && st.st_mode & 0o1000 == 0 { return nil }
        } while !folder.isEmpty
        return resolved
    }

    /// Whether the file system mounted at `path` (or the mount that holds it) keeps its files
    /// in memory only: tmpfs or ramfs, by the last matching line of /proc/self/mounts.
    static func isInMemory(_ path: String) -> Bool {
        guard let data = FileManager.default.contents(atPath: "/proc/self/mounts") else { return false }
        var best: (point: String, type: String)?
        for line in String(decoding: data, as: UTF8.self).split(separator: "\n") {
            let fields = line.split(separator: " ")
            guard fields.count >= 3 else { continue }
            let point = String(fields[1]), type = String(fields[2])
            let holds = point == "/" || path == point || path.hasPrefix(point + "/")
            // The longest mount point that holds `path`; a later line for it shadows an earlier.
            if holds, point.count >= (best?.point.count ?? 0) { best = (point, type) }
        }
        return best.map { $0.type == "tmpfs" || $0.type == "ramfs" } ?? false
    }

    /// The name of the tmux buffer a copy made by the process `pid` goes to.
    static func tmuxBuffer(_ pid: pid_t) -> String { "kc-clipboard-\(pid)" }

    /// Puts `secret` on the clipboard. Returns nil, or why it failed (for the message that
    /// names what was tried).
    /// - Parameter extra: the keeper's arguments after the target (the tmux buffer's name).
    func copy(_ secret: UnsafeRawBufferPointer, target: String, tool: ClipboardTool?, extra: inout [String]) throws -> String? {
        switch self {
        case .wayland:
            guard let tool else { return "not installed" }
            // wl-copy 2.3 has --sensitive (the x-kde-passwordManagerHint type); Debian 12's
            // 2.1 has not. CLIPBOARD_STATE is what `wl-paste --watch` gives its watchers.
            let help = try tool.run(["--help"], read: 16 << 10)
            let sensitive = help.text.contains("--sensitive")
            let result = try tool.run(
                (sensitive ? ["--sensitive"] : []) + ["--type", "text/plain"], input: secret,
                environment: [("WAYLAND_DISPLAY", target), ("CLIPBOARD_STATE", "sensitive")])
            return result.succeeded ? nil : Self.failure(result.status)
        case .xclip:
            guard let tool else { return "not installed" }
            let result = try tool.run(["-selection", "clipboard", "-in"], input: secret, environment: [("DISPLAY", target)])
            return result.succeeded ? nil : Self.failure(result.status)
        case .xsel:
            guard let tool else { return "not installed" }
            let result = try tool.run(["--clipboard", "--input"], input: secret, environment: [("DISPLAY", target)])
            return result.succeeded ? nil : Self.failure(result.status)
        case .tmux:
            guard let tool else { return "not installed" }
            let buffer = Self.tmuxBuffer(getpid())
            let result = try tool.run(["-S", target, "load-buffer", "-b", buffer, "-w", "-"], input: secret)
            guard result.succeeded else { return Self.failure(result.status) }
            extra = [buffer]
            return nil
        case .osc52:
            return OSC52.write(secret, to: target) ? nil : "cannot write to \(target)"
        }
    }

    /// Reads the clipboard back (at most `limit` bytes), or nil when it cannot be read
    /// (OSC 52; a tool that fails because the clipboard is empty or holds no text).
    func read(target: String, extra: [String], limit: Int, timeout: Double = 5) throws -> SecureBytes? {
        let result: ClipboardTool.Result
        switch self {
        case .wayland:
            guard let tool = ClipboardTool.find("wl-paste") else { return nil }
            result = try tool.run(["--no-newline", "--type", "text/plain"], read: limit, environment: [("WAYLAND_DISPLAY", target)], timeout: timeout)
        case .xclip:
            guard let tool = ClipboardTool.find("xclip") else { return nil }
            result = try tool.run(["-selection", "clipboard", "-out"], read: limit, environment: [("DISPLAY", target)], timeout: timeout)
        case .xsel:
            guard let tool = ClipboardTool.find("xsel") else { return nil }
            result = try tool.run(["--clipboard", "--output"], read: limit, environment: [("DISPLAY", target)], timeout: timeout)
        case .tmux:
            guard let tool = ClipboardTool.find("tmux"), let buffer = extra.first else { return nil }
            result = try tool.run(["-S", target, "show-buffer", "-b", buffer], read: limit, timeout: timeout)
        case .osc52:
            return nil
        }
        guard result.succeeded, !result.overflowed else { return nil }
        return result.output
    }

    /// Empties the clipboard (the keeper calls it only once it has compared what the
    /// clipboard holds with the secret, or, for OSC 52, which cannot be read back, always).
    func clear(target: String, extra: [String]) throws {
        switch self {
        case .wayland:
            _ = try ClipboardTool.find("wl-copy")?.run(["--clear"], environment: [("WAYLAND_DISPLAY", target)])
        case .xclip:
            // An empty selection owned by a new xclip, which exits when someone else copies.
            _ = try ClipboardTool.find("xclip")?.run(["-selection", "clipboard", "-in"], environment: [("DISPLAY", target)])
        case .xsel:
            _ = try ClipboardTool.find("xsel")?.run(["--clipboard", "--clear"], environment: [("DISPLAY", target)])
        case .tmux:
            guard let tool = ClipboardTool.find("tmux"), let buffer = extra.first else { return }
            // Still the newest buffer: nothing was copied in tmux since, so the outer
            // terminal's clipboard (which tmux set from it) is emptied too.
            let list = try tool.run(["-S", target, "list-buffers", "-F", "#{buffer_name}"], read: 64 << 10)
            let newest = list.text.split(separator: "\n").first.map(String.init)
            _ = try tool.run(["-S", target, "delete-buffer", "-b", buffer])
            if newest == buffer {
                let clients = try tool.run(["-S", target, "list-clients", "-F", "#{client_tty}"], read: 64 << 10)
                for tty in clients.text.split(separator: "\n") { _ = OSC52.clear(String(tty)) }
            }
        case .osc52:
            _ = OSC52.clear(target)
        }
    }

    /// "exit N", or "did not finish" for a tool killed at its deadline.
    private static func failure(_ status: Int32?) -> String {
        status.map { "failed with exit \($0)" } ?? "did not finish in time"
    }
}
