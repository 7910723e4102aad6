import POSIXSupport
internal import CSodium
#if canImport(Glibc)
import Glibc
#endif

/// Asks the user before a signature with a key added with `ssh-add -c`, or a keychain key
/// stored with `--user-presence`. The agent runs detached, without a terminal, so it asks
/// as OpenSSH's agent does: through an askpass program on the user's display
/// (`SSH_ASKPASS_PROMPT=confirm`; `SSH_ASKPASS`, else /usr/bin/ssh-askpass). Where nobody
/// can answer (no DISPLAY or WAYLAND_DISPLAY, no askpass program) the signature is refused
/// at once, never waited for; an unanswered question is refused after `timeout` seconds.
public struct SignatureConfirmation: Sendable {
    /// The askpass program, nil when there is none or no display.
    public let program: String?
    /// The environment it runs with (display variables, XAUTHORITY, HOME); a confirmation
    /// adds `SSH_ASKPASS_PROMPT=confirm`, a password question does not.
    let environment: [String]
    /// How long a question waits for an answer.
    let timeout: Double

    /// From the agent's environment at start.
    public static func fromEnvironment(timeout: Double = 60) -> SignatureConfirmation {
        func env(_ name: String) -> String? { getenv(name).map { String(cString: $0) }.flatMap { $0.isEmpty ? nil : $0 } }
        let display = env("DISPLAY") != nil || env("WAYLAND_DISPLAY") != nil
        let candidates = [env("SSH_ASKPASS"), "/usr/bin/ssh-askpass", "/usr/lib/ssh/ssh-askpass"].compactMap { $0 }
        let program = display ? candidates.first { $0.hasPrefix("/") && access($0, X_OK) == 0 } : nil
        let kept = ["DISPLAY", "WAYLAND_DISPLAY", "XAUTHORITY", "HOME", "PATH", "XDG_RUNTIME_DIR"].compactMap { name in
            env(name).map { "\(name)=\($0)" }
        }
        return SignatureConfirmation(program: program, environment: kept, timeout: timeout)
    }

    /// Nobody to ask: every question is refused.
    public static let nobody = SignatureConfirmation(program: nil, environment: [], timeout: 0)

    /// Why no one can be asked, nil when someone can.
    public var nobodyToAsk: String? {
        program == nil ? "no display and askpass program to confirm on (DISPLAY or WAYLAND_DISPLAY, and SSH_ASKPASS)" : nil
    }

    /// Asks whether the key `comment` (fingerprint `fingerprint`) may sign.
    /// - Returns: true only when the user said yes in time.
    public func confirm(comment: String, fingerprint: String) -> Bool {
        guard let program else { return false }
        let question = "Allow use of key \(TerminalSafe.escaped(comment))?\nKey fingerprint \(fingerprint)."
        let environment = environment + ["SSH_ASKPASS_PROMPT=confirm"]
        guard case .success(let pid) = DetachedChild.spawn(program, arguments: [program, question], environment: environment) else {
            return false
        }
        let deadline = Deadline.after(seconds: timeout)
        var status: Int32 = 0
        while true {
            let rc = waitpid(pid, &status, WNOHANG)
            if rc == pid { return status & 0x7f == 0 && (status >> 8) & 0xff == 0 }
            if rc < 0 && errno != EINTR { return false }
            if Deadline.now >= deadline {
                kill(pid, SIGKILL)
                while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
                return false
            }
            usleep(50_000)
        }
    }

    /// `SHA256:…` as `ssh-add -l` prints it (unpadded base64 of the blob's SHA-256).
    public static func fingerprint(_ blob: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        crypto_hash_sha256(&digest, blob, UInt64(blob.count))
        let variant = sodium_base64_VARIANT_ORIGINAL_NO_PADDING
        var text = [CChar](repeating: 0, count: sodium_base64_encoded_len(32, variant))
        _ = sodium_bin2base64(&text, text.count, digest, digest.count, variant)
        return "SHA256:" + String(cString: text)
    }
}
