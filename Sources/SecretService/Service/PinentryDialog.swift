import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// One password dialog through pinentry (GnuPG's dialog program: a window on a desktop, a
/// full-screen form on a terminal), spoken to in its Assuan protocol over pipes. It never
/// blocks the provider: the commands are written at once, and `poll` reads what pinentry
/// has answered so far.
final class PinentryDialog {
    /// What the dialog has come to.
    enum State {
        /// Still open.
        case waiting
        /// The user typed a password (the caller unlocks with it and wipes it).
        case entered([UInt8])
        /// The user cancelled, or pinentry failed or exited.
        case cancelled
    }

    private let pid: pid_t
    private var input: Int32
    private var output: Int32
    private var received: [UInt8] = []
    private var finished = false

    /// Starts `program`. - Parameters: `tty` for a terminal dialog (`--ttyname`); `error`
    /// is shown above the field (a wrong password before).
    /// - Throws: when pinentry cannot be started.
    init(program: String, tty: String?, description: String, error: String?) throws(BusError) {
        guard let toPinentry = CloseOnExec.pipe() else { throw .failed("cannot make a pipe") }
        guard let fromPinentry = CloseOnExec.pipe() else {
            for fd in toPinentry { close(fd) }
            throw .failed("cannot make a pipe")
        }
        var arguments = [program]
        if let tty {
            let term = getenv("TERM").map { String(cString: $0) } ?? "xterm"
            arguments += ["--ttyname", tty, "--ttytype", term.isEmpty ? "xterm" : term]
        }
        let child: pid_t
        do {
            child = try ChildProcess.spawn(arguments, stdin: toPinentry[0], stdout: fromPinentry[1])
        } catch {
            for fd in toPinentry + fromPinentry { close(fd) }
            throw error
        }
        close(toPinentry[0])
        close(fromPinentry[1])
        pid = child
        input = toPinentry[1]
        output = fromPinentry[0]
        _ = fcntl(output, F_SETFL, fcntl(output, F_GETFL) | O_NONBLOCK)
        var script = "SETTITLE kc\nSETDESC \(Self.escaped(description))\nSETPROMPT Password:\n"
        if let error { script += "SETERROR \(Self.escaped(error))\n" }
        script += "GETPIN\nBYE\n"
        let bytes = Array(script.utf8)
        _ = bytes.withUnsafeBytes { write(input, $0.baseAddress, $0.count) }
    }

    deinit { stop() }

    /// Ends the dialog (closing its window) and reaps pinentry.
    func stop() {
        guard !finished else { return }
        finished = true
        kill(pid, SIGTERM)
        var status: Int32 = 0
        _ = waitpid(pid, &status, 0)
        close(input)
        close(output)
        Sodium.wipe(&received)
    }

    /// Reads what pinentry answered so far.
    func poll() -> State {
        guard !finished else { return .cancelled }
        var buffer = [UInt8](repeating: 0, count: 1024)
        defer { Sodium.wipe(&buffer) }
        while true {
            let n = read(output, &buffer, buffer.count)
            if n > 0 {
                received += buffer[0..<n]
                continue
            }
            if n == 0 { break }   // pinentry closed its end
            if errno == EAGAIN || errno == EINTR { return settled() ?? .waiting }
            break
        }
        let state = settled() ?? .cancelled
        stop()
        return state
    }

    /// The answer to GETPIN once it is complete: a `D` line then `OK`, or `ERR`.
    private func settled() -> State? {
        // The answers to SETTITLE, SETDESC, SETPROMPT (and OPTION, SETERROR) come first.
        let lines = received.split(separator: 0x0A, omittingEmptySubsequences: false)
        guard received.last == 0x0A || lines.count > 1 else { return nil }
        var data: [UInt8]?
        for line in lines.dropLast() {
            if line.starts(with: Array("D ".utf8)) { data = Self.unescaped(Array(line.dropFirst(2))) }
            if line.starts(with: Array("ERR".utf8)) { return .cancelled }
            if line.starts(with: Array("OK".utf8)), let pin = data {
                stop()
                return .entered(pin)
            }
        }
        if var pin = data { Sodium.wipe(&pin) }
        return nil
    }

    /// Assuan's escaping of a parameter: `%`, CR and LF as `%XX`.
    static func escaped(_ text: String) -> String {
        var out = ""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "%": out += "%25"
            case "\r": out += "%0D"
            case "\n": out += "%0A"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }

    /// Assuan's `%XX` decoded.
    static func unescaped(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            if bytes[i] == 0x25, i + 2 < bytes.count, let v = UInt8(String(decoding: bytes[(i + 1)...(i + 2)], as: UTF8.self), radix: 16) {
                out.append(v)
                i += 3
            } else {
                out.append(bytes[i])
                i += 1
            }
        }
        return out
    }
}
