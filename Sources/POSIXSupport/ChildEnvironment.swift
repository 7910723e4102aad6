#if canImport(Glibc)
import Glibc
#endif

/// The environment kc passes on to the programs it runs for the user (`kc run`'s command,
/// gpg): its own, in order, without kc's password variables and the runner token
/// (DESIGN.md: removed from every child's environment). The agent gets a short allow-list instead (`AgentClient.agentEnvironment`).
package enum ChildEnvironment {
    package static let withheld = ["KC_PASSWORD", "KC_NEW_PASSWORD", "KC_TEAM_TOKEN"]

    /// (name, value) pairs.
    package static func inherited() -> [(String, String)] {
        var out: [(String, String)] = []
        var p = environ
        while let entry = p.pointee {
            let s = String(cString: entry)
            if let eq = s.firstIndex(of: "=") {
                let name = String(s[..<eq])
                if !withheld.contains(name) { out.append((name, String(s[s.index(after: eq)...]))) }
            }
            p += 1
        }
        return out
    }
}
