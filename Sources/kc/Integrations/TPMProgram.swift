import KeychainClient
import KeychainCore
import POSIXSupport
#if canImport(Glibc)
import Glibc
#endif

/// kc-tpm, installed beside kc, run for a TPM2 key slot (`docs/tpm.md`): kc links no
/// tpm2-tss. The secret and the sealed blob travel on sockets (stdin, stdout), the PIN on
/// descriptor 3 (`--pin-fd 3`), never in argv or the environment, and only once kc-tpm has
/// said (`--handshake`) that it is non-dumpable and not traced: until then a process of the
/// same user could reach its descriptors through /proc, and a pipe can be opened again
/// there, a socket cannot. kc-tpm never prompts (kc asks for the PIN itself); its messages
/// become kc's error; and it runs under a deadline after which its process group is killed.
///
///     let blob = try TPMProgram.seal(secret, pin: pin, pcrs: "7")
///     let secret = try TPMProgram.unseal(blob, pin: nil)
enum TPMProgram {
    /// kc-tpm's name beside kc.
    static let programName = "kc-tpm"

    /// kc-tpm's path: beside this kc.
    static var programPath: String { AgentClient.besideOwnExecutable(programName) }

    /// The seconds kc-tpm gives the TPM (its `--timeout`); kc kills it `grace` seconds later.
    static let tpmTimeout = 30
    /// What kc adds to kc-tpm's own deadline before killing it.
    static let grace = 10.0

    /// Seals `secret` (32 bytes) to the TPM, with `pin` when given and bound to `pcrs`
    /// (kc-tpm's `--pcrs`) when given. - Returns: kc-tpm's blob.
    /// - Throws: what kc-tpm says, with its status (`docs/tpm.md`, "Status codes").
    static func seal(_ secret: borrowing SecureBytes, pin: borrowing SecureBytes?, pcrs: String?) throws -> [UInt8] {
        var arguments = ["seal", "--handshake", "--timeout", String(tpmTimeout)]
        if pin != nil { arguments += ["--pin-fd", "3"] }
        if let pcrs { arguments += ["--pcrs", pcrs] }
        let out = try secret.withUnsafeBytes { input in
            try withPIN(pin) { pinBytes in try run(arguments, input: input, pin: pinBytes, limit: TPM2Sealing.maxBlob) }
        }
        return out.withUnsafeBytes { Array($0) }
    }

    /// The 32 bytes `blob` holds sealed, from the TPM that sealed it (`pin` for a blob that
    /// needs one). - Throws: what kc-tpm says, with its status.
    static func unseal(_ blob: [UInt8], pin: borrowing SecureBytes?) throws -> SecureBytes {
        var arguments = ["unseal", "--handshake", "--no-prompt", "--timeout", String(tpmTimeout)]
        if pin != nil { arguments += ["--pin-fd", "3"] }
        let sealed = try SecureBytes(copying: blob)
        let secret = try sealed.withUnsafeBytes { input in
            try withPIN(pin) { pinBytes in try run(arguments, input: input, pin: pinBytes, limit: 32) }
        }
        guard secret.count == 32 else { throw KeychainError(errSecInternalError, "kc-tpm gave \(secret.count) bytes, not a 32-byte key") }
        return secret
    }

    /// `body` with the PIN's bytes, or nil.
    private static func withPIN<R: ~Copyable>(_ pin: borrowing SecureBytes?, _ body: (UnsafeRawBufferPointer?) throws -> R) throws -> R {
        switch pin {
        case .some(let p): return try p.withUnsafeBytes { try body($0) }
        case .none: return try body(nil)
        }
    }

    /// Runs kc-tpm with `arguments`, `input` on its stdin and `pin` on its descriptor 3,
    /// and reads at most `limit` bytes of its stdout into guarded memory.
    private static func run(_ arguments: [String], input: UnsafeRawBufferPointer, pin: UnsafeRawBufferPointer?, limit: Int) throws -> SecureBytes {
        let path = programPath
        guard access(path, X_OK) == 0 else {
            let code = errno
            throw KeychainError(
                errSecUnimplemented, "TPM2 key slots need kc-tpm, which is not installed beside kc: cannot run \(path): \(String(cString: strerror(code)))",
                hint: "install it with `make install`, which puts kc-tpm beside kc")
        }
        // [kc's end, kc-tpm's end] of stdin, stdout, stderr and descriptor 3: sockets for
        // everything that carries a secret, a pipe for the messages.
        var channels: [[Int32]] = []
        defer { for c in channels { for fd in c where fd >= 0 { close(fd) } } }
        for i in 0..<(pin == nil ? 3 : 4) {
            guard let pair = i == 2 ? CloseOnExec.pipe().map({ [$0[0], $0[1]] }) : CloseOnExec.socketPair() else {
                throw KeychainError(errSecIO, "cannot make a channel to kc-tpm")
            }
            channels.append(pair)
        }
        let environment = ChildEnvironment.inherited().map { "\($0.0)=\($0.1)" }
        let started = DetachedChild.spawn(
            path, arguments: [path] + arguments, environment: environment, stdin: channels[0][1], stdout: channels[1][1], stderr: channels[2][1],
            descriptor3: pin == nil ? nil : channels[3][1])
        for i in channels.indices {
            close(channels[i][1])
            channels[i][1] = -1
        }
        guard case .success(let pid) = started else {
            let code = if case .failure(let failure) = started { failure.code } else { EIO }
            throw KeychainError(errSecIO, "cannot run \(path): \(String(cString: strerror(code)))", cause: .errno(code))
        }
        let previous = signal(SIGPIPE, SIG_IGN)
        defer { signal(SIGPIPE, previous) }
        let deadline = Deadline.after(seconds: Double(tpmTimeout) + grace)
        let output = try SecureBytes(count: limit, guarded: true)
        var got = 0, overflowed = false, ready = false
        var message: [UInt8] = []
        var open = [channels[1][0], channels[2][0]]
        var scratch = [UInt8](repeating: 0, count: 512)
        defer { for i in scratch.indices { scratch[i] = 0 } }
        while open.contains(where: { $0 >= 0 }), deadline.remainingSeconds > 0 {
            var fds = open.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            let n = poll(&fds, 2, 250)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { continue }
            for i in 0..<2 where open[i] >= 0 && fds[i].revents != 0 {
                let r: Int
                if i == 0 && !ready {
                    // The handshake: one byte, then kc-tpm is non-dumpable and untraced, and
                    // the key and the PIN may go (at most 4 KiB each: a socket's buffer
                    // takes them without waiting for kc-tpm).
                    r = read(open[0], &scratch, 1)
                    if r == 1 {
                        // Anything else than the byte: nothing is sent, and kc-tpm's inputs end.
                        ready = scratch[0] == 0x06
                        for (c, bytes) in [(0, Optional(input)), (3, pin)] where c < channels.count && channels[c][0] >= 0 {
                            if ready, let bytes, let base = bytes.baseAddress {
                                _ = Report.writeAll(channels[c][0], UnsafeRawBufferPointer(start: base, count: bytes.count))
                            }
                            close(channels[c][0])
                            channels[c][0] = -1
                        }
                        continue
                    }
                } else if i == 0 && got < limit {
                    r = output.withUnsafeMutableBytes { room in room.baseAddress.map { read(open[0], $0 + got, limit - got) } ?? 0 }
                    if r > 0 { got += r }
                } else {
                    r = read(open[i], &scratch, scratch.count)
                    if r > 0 && i == 0 { overflowed = true }
                    if r > 0 && i == 1 && message.count < 8192 { message += scratch[0..<r] }
                }
                if r == 0 || (r < 0 && errno != EINTR && errno != EAGAIN) {
                    close(open[i])
                    open[i] = -1
                    channels[i + 1][0] = -1
                }
            }
        }
        let status = reap(pid, until: deadline)
        guard let status else {
            throw KeychainError(
                errSecNotAvailable, "kc-tpm did not finish within \(Int(Double(tpmTimeout) + grace)) s and was stopped",
                hint: "check that the TPM answers (KC_TPM_TCTI, /dev/tpmrm0)")
        }
        guard status == 0 else { throw failure(status: status, message: message) }
        guard ready else { throw KeychainError(errSecInternalError, "kc-tpm ended without taking the key") }
        guard !overflowed else { throw KeychainError(errSecInternalError, "kc-tpm wrote more than \(limit) bytes") }
        return try output.copy(prefix: got)
    }

    /// kc-tpm's exit statuses and the OSStatus each stands for (`docs/tpm.md`).
    static let statuses: [Int32: OSStatus] = [
        exitCode(for: errSecNotAvailable): errSecNotAvailable, exitCode(for: errSecAuthFailed): errSecAuthFailed,
        exitCode(for: errSecDecode): errSecDecode, exitCode(for: errSecCSReqFailed): errSecCSReqFailed,
        exitCode(for: errSecInteractionNotAllowed): errSecInteractionNotAllowed,
        exitCode(for: errSecWrongSecVersion): errSecWrongSecVersion, exitCode(for: errSecParam): errSecParam
    ]

    /// The error kc-tpm's exit `status` and stderr (`kc: message`, `kc: hint: …`) describe.
    static func failure(status: Int32, message: [UInt8]) -> KeychainError {
        let lines = String(decoding: message, as: UTF8.self).split(separator: "\n").map { line in
            line.hasPrefix("kc: ") ? String(line.dropFirst(4)) : String(line)
        }
        let hint = lines.first { $0.hasPrefix("hint: ") }.map { String($0.dropFirst(6)) }
        let text = lines.first { !$0.hasPrefix("hint: ") } ?? "kc-tpm failed (exit \(status))"
        return KeychainError(statuses[status] ?? errSecInternalError, text, hint: hint)
    }

    /// Waits for the child until the deadline; past it, kills its process group.
    /// - Returns: its exit status, or nil when it did not exit by itself in time.
    private static func reap(_ pid: pid_t, until deadline: Deadline) -> Int32? {
        var status: Int32 = 0
        while true {
            let r = waitpid(pid, &status, WNOHANG)
            if r == pid { return status & 0x7F == 0 ? (status >> 8) & 0xFF : 128 + (status & 0x7F) }
            if r < 0 && errno != EINTR { return nil }
            if deadline.remainingSeconds == 0 {
                kill(-pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return nil
            }
            usleep(5_000)
        }
    }
}
