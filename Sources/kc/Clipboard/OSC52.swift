import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// The OSC 52 escape sequence, which asks the terminal emulator itself to set its
/// clipboard: `ESC ] 52 ; c ; BASE64 BEL`. It travels over SSH, needs no display, and is
/// honoured by xterm (with `allowWindowOps`), kitty, WezTerm, Alacritty, foot, iTerm2 and
/// Windows Terminal among others. Inside tmux kc uses tmux's own `load-buffer -w` instead
/// (`ClipboardBackend.tmux`): tmux 3.3 drops an application's OSC 52 unless
/// `set-clipboard on` and drops pass-through sequences unless `allow-passthrough on`.
///
/// A terminal's clipboard cannot be read back (most terminals refuse the `?` query), so
/// the clearing cannot check that the secret is still there: the keeper sends the empty
/// sequence `ESC ] 52 ; c ; BEL` (an empty clipboard) at the deadline, to the same
/// terminal if it is still this user's (docs/commands.md says so).
enum OSC52 {
    /// The path of this process's controlling terminal (`/dev/pts/N`), or nil when it has
    /// none. `ttyname` of `/dev/tty` says only "/dev/tty", which the keeper, in a session
    /// of its own, cannot open: the device comes from /proc/self/stat, and its name from
    /// the standard streams that are that terminal, else from the pty numbering.
    static func controllingTerminal() -> String? {
        let fd = open("/dev/tty", O_WRONLY | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        close(fd)
        guard let device = controllingDevice(), device != 0 else { return nil }
        var candidates: [String] = []
        for stream: Int32 in 0...2 where isatty(stream) == 1 {
            if let name = ttyname(stream) { candidates.append(String(cString: name)) }
        }
        let major = (device >> 8) & 0xFFF, minor = (device & 0xFF) | ((device >> 12) & 0xFFF00)
        if (136...143).contains(major) { candidates.append("/dev/pts/\((major - 136) * 256 + minor)") }
        for path in candidates where path.hasPrefix("/dev/") {
            var st = stat()
            if stat(path, &st) == 0, st.st_mode & S_IFMT == S_IFCHR, st.st_rdev == UInt(device) { return path }
        }
        return nil
    }

    /// The `tty_nr` field of /proc/self/stat (the controlling terminal's device number).
    private static func controllingDevice() -> Int? {
        let fd = open("/proc/self/stat", O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var buffer = [UInt8](repeating: 0, count: 1024)
        let n = read(fd, &buffer, buffer.count)
        guard n > 0 else { return nil }
        let text = String(decoding: buffer[0..<n], as: UTF8.self)
        // "pid (comm) state ppid pgrp session tty_nr ...": comm may hold spaces and ')'.
        guard let close = text.lastIndex(of: ")") else { return nil }
        let fields = text[text.index(after: close)...].split(separator: " ")
        return fields.count > 4 ? Int(fields[4]) : nil
    }

    /// Writes the sequence that sets the clipboard to `secret` to the terminal at `path`.
    /// The base64 text is built in memory that is wiped afterwards.
    static func write(_ secret: UnsafeRawBufferPointer, to path: String) -> Bool {
        let prefix: [UInt8] = [0x1B] + Array("]52;c;".utf8)
        let length = prefix.count + (secret.count + 2) / 3 * 4 + 1
        guard let sequence = try? SecureBytes(count: length, guarded: true) else { return false }
        sequence.withUnsafeMutableBytes { out in
            for (i, byte) in prefix.enumerated() { out[i] = byte }
            Base64.encode(secret, into: UnsafeMutableRawBufferPointer(rebasing: out[prefix.count..<(length - 1)]))
            out[length - 1] = 0x07
        }
        return sequence.withUnsafeBytes { send($0, to: path) }
    }

    /// Writes the sequence that empties the clipboard (`ESC ] 52 ; c ; BEL`) to the terminal
    /// at `path`, if it is still a terminal that belongs to this user.
    @discardableResult
    static func clear(_ path: String) -> Bool {
        let sequence: [UInt8] = [0x1B] + Array("]52;c;".utf8) + [0x07]
        return sequence.withUnsafeBytes { send($0, to: path) }
    }

    /// Opens the terminal (never as a controlling terminal, without waiting on a full
    /// output queue), checks it is a terminal this user owns, and writes `bytes`.
    private static func send(_ bytes: UnsafeRawBufferPointer, to path: String) -> Bool {
        guard path.hasPrefix("/dev/") else { return false }
        let fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var st = stat()
        guard fstat(fd, &st) == 0, st.st_mode & S_IFMT == S_IFCHR, st.st_uid == getuid(), isatty(fd) == 1 else { return false }
        return Report.writeAll(fd, bytes)
    }
}
