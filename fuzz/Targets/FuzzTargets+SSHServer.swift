import SSHAgent

extension FuzzTargets {
    /// The SSH agent past its decoder: the bytes are a connection's messages as framed on
    /// `ssh-agent.sock` (`uint32 length, payload`, at most 16), each handled in turn by a
    /// fresh agent (no keychain sources, nobody to confirm) on one connection, then the
    /// keys are listed: the listing must parse as OpenSSH's client reads it (type 12, a
    /// count, that many blob and comment strings, nothing after) and fit in 256 KiB; a
    /// break of that is a crash, as a sanitizer report is. LOCK and UNLOCK are left out
    /// (each derives an Argon2id hash of 64 MiB; the `ssh` target decodes them).
    /// - Returns: whether every frame was whole and every message decoded.
    static func sshServer(_ bytes: [UInt8]) -> Bool {
        let server = SSHAgentServer(directory: "/nonexistent", sources: { [] }, confirmation: .nobody)
        var session = ConnectionSession()
        var all = true
        var offset = 0
        var count = 0
        while offset + 4 <= bytes.count, count < 16 {
            let length = bytes[offset..<(offset + 4)].reduce(0) { $0 << 8 | Int($1) }
            offset += 4
            guard length > 0, length <= bytes.count - offset else {
                all = false
                break
            }
            let payload = Array(bytes[offset..<(offset + length)])
            offset += length
            count += 1
            if payload[0] == 22 || payload[0] == 23 { continue }
            if (try? SSHAgentRequest.decode(payload)) == nil { all = false }
            _ = server.handle(payload, session: &session)
        }
        let listing = server.handle([11], session: &session)
        precondition(listing.count <= 256 * 1024, "the listing is over OpenSSH's limit")
        var reader = SSHWireReader(listing, context: "the listing")
        guard (try? reader.byte()) == 12, let n = try? reader.uint32() else { preconditionFailure("the listing does not parse") }
        for _ in 0..<n {
            guard (try? reader.string()) != nil, (try? reader.string()) != nil else { preconditionFailure("a listed key does not parse") }
        }
        precondition(reader.isAtEnd, "bytes after the listing")
        return all && offset == bytes.count
    }

    /// A framed message.
    static func frame(_ payload: [UInt8]) -> [UInt8] {
        let n = UInt32(payload.count)
        return [UInt8(n >> 24), UInt8(n >> 16 & 0xff), UInt8(n >> 8 & 0xff), UInt8(n & 0xff)] + payload
    }

    /// Connections: each seed message alone (LOCK and UNLOCK left out), then an add of a
    /// real Ed25519 key followed by a sign with it and a remove; an add with constraints
    /// then a listing.
    static var sshServerSeeds: [[UInt8]] {
        let string = frame   // an SSH string is framed as a message is
        guard var key = try? SSHKeyGenerator.generate(.ed25519) else { return [] }
        defer { key.wipe() }
        let add = [UInt8(17)] + key.wire + string(Array("seed".utf8))
        let sign = [UInt8(13)] + string(key.publicBlob) + string(Array("data".utf8)) + [0, 0, 0, 0]
        let constrained = [UInt8(25)] + key.wire + string(Array("c".utf8)) + [1, 0, 0, 0, 60]
        let singles = sshSeeds.filter { $0[0] != 22 && $0[0] != 23 }.map(frame)
        return singles + [
            frame(add) + frame(sign) + frame([18] + string(key.publicBlob)),
            frame(constrained) + frame([11]) + frame([19])
        ]
    }
}
