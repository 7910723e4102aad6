import KeychainCore
import KeychainClient

/// A password typed at kc's own prompt, as a person at a terminal meets it
/// (docs/security.md, "A typed password unlocks the agent"): a wrong one is asked for again,
/// three tries in all as sudo gives; a right one also unlocks the keychain in the kc agent
/// for its idle timeout, as `kc unlock` would, so the next command asks nothing. Passwords
/// from `KC_PASSWORD`, `--password-file` or `--password-stdin` get neither: a script
/// decides for itself.
enum UnlockOnPrompt {
    /// Tries at the prompt before the wrong password is an error (exit 51).
    static let tries = 3

    /// Whether to ask again after `wrong` wrong passwords (saying so on the terminal).
    static func askAgain(typed: Bool, wrong: Int) -> Bool {
        guard typed, wrong < tries else { return false }
        Report.note("wrong password, try again")
        return true
    }

    /// Hands a password typed at the prompt, which has just opened the keychain at `path`
    /// here, to the kc agent (started if none runs) through `kc unlock`'s own path: only a
    /// peer established as the real kc agent gets it (`AgentClient.unlock`), with the
    /// configuration file's timeouts, else the keychain's own. Unless `KC_UNLOCK_ON_PROMPT=0`
    /// (or `unlock-on-prompt = no` in the file), or the agent holds it
    /// already (a write of a presence-protected secret opens the keychain here even so):
    /// an agent that says so wrongly only keeps the password. When the agent cannot be
    /// reached or refuses, the command goes on with the keychain opened here, and one note
    /// says why it stays locked in the agent.
    static func hand(path: String, password: borrowing SecureBytes) {
        guard Environment.unlockOnPrompt else { return }
        // kc's own client: the agent must be this very program (`isKC`), for the status
        // below as for the password; a plain client checks only uids and tracing.
        var agent = AgentClient()
        agent.isKC = true
        // "Held" believed only from a peer that passes the checks (as `kc unlock` does): an
        // impostor saying so would otherwise silence the note below.
        if let held = try? agent.checkedStatus(), held.contains(where: { $0.path == path }) { return }
        do {
            // Never stops an agent it cannot check to start its own, as `kc unlock` may: that
            // agent may keep other keychains' after-first-unlock items while locked, which a
            // password typed for another keychain must not cost.
            try agent.unlock(
                path: path, password: password, idle: Configuration.idleTimeout, maximum: Configuration.maxTimeout,
                replacingAnUncheckable: false)
        } catch let error as KeychainError {
            Report.note("note: not unlocked in the kc agent (\(error.message)); the next command asks again")
        } catch {
            Report.note("note: not unlocked in the kc agent; the next command asks again")
        }
    }
}
