import KeychainCore
import POSIXSupport
import Synchronization
#if canImport(Glibc)
import Glibc
#endif

/// A password typed into the askpass program on the user's display: the proof a keychain
/// key stored with `--user-presence` needs before the detached SSH agent signs with it (it
/// has no terminal). The program runs as OpenSSH runs it for a passphrase (not in confirm
/// mode: `SSH_ASKPASS_PROMPT` unset), with the prompt as its argument; what it prints on
/// its stdout, through a close-on-exec pipe, up to a newline, is the password, kept in
/// `SecureBytes` and nowhere else. One question at a time.
extension SignatureConfirmation {
    /// The most bytes read from the program: a longer answer is refused.
    static let passwordLimit = 1024

    /// Asks for a password with `prompt`.
    /// - Throws: errSecInteractionNotAllowed at once when nobody can be asked (no display or
    ///   askpass program); errSecUserCanceled when the program exits other than 0 or does
    ///   not answer within `timeout` seconds (then it is killed); errSecParam for an answer
    ///   longer than `passwordLimit`.
    public func password(prompt: String) throws -> SecureBytes {
        guard let program else {
            throw KeychainError(errSecInteractionNotAllowed, nobodyToAsk ?? "nobody can be asked for the password")
        }
        return try AskpassQuestions.oneAtATime.withLock { _ in try ask(program, prompt: prompt) }
    }

    private func ask(_ program: String, prompt: String) throws -> SecureBytes {
        guard let fds = CloseOnExec.pipe() else { throw KeychainError(errSecIO, "no descriptor left for the askpass program") }
        let (readEnd, writeEnd) = (fds[0], fds[1])
        defer { close(readEnd) }
        let spawned = DetachedChild.spawn(program, arguments: [program, prompt], environment: environment, stdout: writeEnd)
        close(writeEnd)
        guard case .success(let pid) = spawned else {
            throw KeychainError(errSecInteractionNotAllowed, "cannot run the askpass program \(program)")
        }
        let deadline = Deadline.after(seconds: timeout)
        let buffer = try SecureBytes(count: Self.passwordLimit + 1, guarded: true)
        var length = 0
        var answered = true
        // Read until the program closes its stdout (it exits), the buffer is full, or the deadline.
        while length <= Self.passwordLimit {
            var poller = pollfd(fd: readEnd, events: Int16(POLLIN), revents: 0)
            let wait = Int32(min(deadline.remainingSeconds * 1000, 1000))
            if Deadline.now >= deadline {
                answered = false
                break
            }
            let ready = poll(&poller, 1, max(wait, 50))
            if ready < 0 && errno == EINTR { continue }
            if ready <= 0 { continue }
            let n = buffer.withUnsafeMutableBytes { raw in
                read(readEnd, raw.baseAddress.map { $0 + length }, raw.count - length)
            }
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            length += n
        }
        if !answered || length > Self.passwordLimit { kill(pid, SIGKILL) }
        var status: Int32 = 0
        while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
        guard answered else { throw KeychainError(errSecUserCanceled, "the password was not given within \(Int(timeout)) s") }
        guard length <= Self.passwordLimit else { throw KeychainError(errSecParam, "the askpass program's answer is too long") }
        guard status & 0x7f == 0 && (status >> 8) & 0xff == 0 && length > 0 else {
            throw KeychainError(errSecUserCanceled, "the password was not given")
        }
        // The line the program printed, without its newline.
        let end = buffer.withUnsafeBytes { raw in
            var end = length
            while end > 0 && (raw[end - 1] == 0x0A || raw[end - 1] == 0x0D) { end -= 1 }
            return end
        }
        return try buffer.copy(prefix: end)
    }
}

/// Serialises askpass questions, so that two signature requests at once show one dialog,
/// then the other.
enum AskpassQuestions {
    static let oneAtATime = Mutex(())
}
