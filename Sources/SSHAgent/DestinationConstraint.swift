/// One hop of a destination constraint (OpenSSH PROTOCOL.agent §2): a user (only on the
/// "to" side), a host name, and the host keys that identify it.
public struct ConstraintHop: Sendable, Equatable {
    /// A user name pattern (`*`, `?`), nil for any.
    public var user: String?
    /// The host's name as `ssh-add -h` gave it, nil for the origin (this machine).
    public var hostname: String?
    /// The host keys (public blobs); `isCA` keys sign host certificates, which kc does not
    /// check, so they match nothing.
    public var keys: [(blob: [UInt8], isCA: Bool)]

    public static func == (a: ConstraintHop, b: ConstraintHop) -> Bool {
        a.user == b.user && a.hostname == b.hostname && a.keys.map(\.blob) == b.keys.map(\.blob)
            && a.keys.map(\.isCA) == b.keys.map(\.isCA)
    }

    /// Decodes `string user, string hostname, string reserved, (string key, bool is_ca)*`.
    init(decoding bytes: [UInt8]) throws {
        var reader = SSHReader(bytes)
        let user = try reader.text()
        let hostname = try reader.text()
        guard try reader.string().isEmpty else { throw SSHWireError("a destination hop with extensions") }
        self.user = user.isEmpty ? nil : user
        self.hostname = hostname.isEmpty ? nil : hostname
        keys = []
        while !reader.isAtEnd {
            let blob = try reader.string()
            let isCA = try reader.bool()
            guard keys.count < 64 else { throw SSHWireError("too many keys in a destination hop") }
            keys.append((blob, isCA))
        }
    }

    /// Whether `key` (a host key blob) is one of this hop's plain keys.
    func matches(_ key: [UInt8]) -> Bool {
        keys.contains { !$0.isCA && $0.blob == key }
    }
}

/// A key's permission to be used from one hop to another (`ssh-add -h [user@]host` or
/// `-h from>to`), checked against the session bindings (`SessionBinding`) of the connection
/// a request arrives on, as OpenSSH's ssh-agent does.
public struct DestinationConstraint: Sendable, Equatable {
    /// Where the connection comes from: no hostname and no keys for this machine.
    public var from: ConstraintHop
    /// Where the key may be used.
    public var to: ConstraintHop

    /// Most constraints one key may carry (OpenSSH's AGENT_MAX_DEST_CONSTRAINTS).
    static let maximum = 1024

    /// Decodes the body of the `restrict-destination-v00@openssh.com` constraint: a string
    /// holding a sequence of `string (string from, string to, string reserved)`.
    public static func decodeList(_ reader: inout SSHReader) throws -> [DestinationConstraint] {
        var list = SSHReader(try reader.string())
        var constraints: [DestinationConstraint] = []
        while !list.isAtEnd {
            guard constraints.count < maximum else { throw SSHWireError("too many destination constraints") }
            var one = SSHReader(try list.string())
            let from = try ConstraintHop(decoding: try one.string())
            let to = try ConstraintHop(decoding: try one.string())
            guard try one.string().isEmpty, one.isAtEnd else { throw SSHWireError("a destination constraint with extensions") }
            guard (from.hostname == nil) == from.keys.isEmpty, from.user == nil else {
                throw SSHWireError("an inconsistent \"from\" in a destination constraint")
            }
            guard to.hostname != nil, !to.keys.isEmpty else { throw SSHWireError("an incomplete \"to\" in a destination constraint") }
            constraints.append(DestinationConstraint(from: from, to: to))
        }
        return constraints
    }

    /// Whether this constraint lets the key go from `fromKey` (nil: this machine) to
    /// `toKey` (nil: anywhere after it) as `user` (nil: not asked).
    func permits(from fromKey: [UInt8]?, to toKey: [UInt8]?, user: String?) -> Bool {
        if let fromKey {
            guard from.matches(fromKey) else { return false }
        } else {
            guard from.hostname == nil, from.keys.isEmpty else { return false }
        }
        if let toKey, !to.matches(toKey) { return false }
        if let pattern = to.user, let user, !Glob.matches(user, pattern) { return false }
        return true
    }
}

/// OpenSSH's `match_pattern`: `*` any run, `?` any one character, case-sensitive.
enum Glob {
    static func matches(_ text: String, _ pattern: String) -> Bool {
        matches(Array(text.unicodeScalars), 0, Array(pattern.unicodeScalars), 0)
    }

    private static func matches(_ t: [Unicode.Scalar], _ i: Int, _ p: [Unicode.Scalar], _ j: Int) -> Bool {
        var i = i, j = j
        var star: (Int, Int)?
        while i < t.count {
            if j < p.count && (p[j] == "?" || p[j] == t[i]) {
                i += 1; j += 1
            } else if j < p.count && p[j] == "*" {
                star = (j, i); j += 1
            } else if let (sj, si) = star {
                j = sj + 1; i = si + 1; star = (sj, si + 1)
            } else {
                return false
            }
        }
        while j < p.count && p[j] == "*" { j += 1 }
        return j == p.count
    }
}
