import KeychainCore
import POSIXSupport

/// What the agent process does before it serves: leave its caller behind.
public enum AgentProcess {
    /// Leaves the caller's session, folder and files behind (`Detach.fromCaller`):
    /// `$(kc unlock)` returns at once and no pipe of the caller stays open in the agent.
    public static func detach() { Detach.fromCaller() }
}
