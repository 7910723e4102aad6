import SSHAgent

extension FuzzTargets {
    /// The SSH agent's message decoder on any bytes (a message's payload, as read from
    /// `ssh-agent.sock` after its length). - Returns: whether it decoded.
    static func ssh(_ bytes: [UInt8]) -> Bool {
        (try? SSHAgentRequest.decode(bytes)) != nil
    }

    /// One message of each kind the decoder accepts: identities, a sign request, an add of
    /// an Ed25519 key with every constraint (lifetime, confirm, a destination), remove,
    /// remove all, lock, unlock, query, session-bind.
    static var sshSeeds: [[UInt8]] {
        func string(_ b: [UInt8]) -> [UInt8] { u32(UInt32(b.count)) + b }
        func text(_ t: String) -> [UInt8] { string(Array(t.utf8)) }
        func u32(_ n: UInt32) -> [UInt8] { [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] }
        let a = [UInt8](repeating: 7, count: 32)
        let publicBlob = text("ssh-ed25519") + string(a)
        let privateKey = text("ssh-ed25519") + string(a) + string([UInt8](repeating: 1, count: 32) + a)
        let hop = { (user: String, host: String, keys: [[UInt8]]) -> [UInt8] in
            text(user) + text(host) + string([]) + keys.flatMap { string($0) + [0] }
        }
        let constraint = string(string(hop("", "", [])) + string(hop("me", "host", [publicBlob])) + string([]))
        return [
            [11],
            [13] + string(publicBlob) + text("data") + u32(0),
            [17] + privateKey + text("comment"),
            [25] + privateKey + text("comment") + [1] + u32(60) + [2] + [255] + text("restrict-destination-v00@openssh.com")
                + string(constraint),
            [18] + string(publicBlob),
            [19],
            [22] + text("pass"),
            [23] + text("pass"),
            [27] + text("query"),
            [27] + text("session-bind@openssh.com") + string(publicBlob) + text("sid") + text("sig") + [0]
        ]
    }
}
