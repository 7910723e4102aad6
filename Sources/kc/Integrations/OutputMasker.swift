import KeychainCore
/// Replaces every occurrence of the secrets in a byte stream with `<concealed by kc>`
/// (`kc run`'s masking for CI logs). A secret split across writes is still found, however
/// long the pause between the parts: bytes that could start a secret are held back until
/// later bytes show they do not (they are written then) or complete it (it is replaced),
/// or the stream ends (`flush`). Never on a timer: a child that writes `tok-`, waits, then
/// writes `123` must not get `tok-` out before `123` arrives (issue 15, item 14).
///
/// The bound is in bytes, not time: at most the longest secret's length − 1 bytes are held
/// per stream, since a longer run either contains a whole secret or starts none. The cost
/// is latency, not a leak: output whose last bytes could begin a secret (an unfinished
/// line ending in `t` when a secret starts with `t`) appears only once more output or the
/// end of the stream decides it.
/// Exact bytes only: this stops accidental echo, not a child that encodes a secret.
struct OutputMasker {
    static let replacement = Array("<concealed by kc>".utf8)

    /// Longest first, so a secret that contains another is replaced whole.
    private let secrets: [[UInt8]]
    private var pending: [UInt8] = []

    init(secrets: [[UInt8]]) {
        self.secrets = secrets.filter { !$0.isEmpty }.sorted { $0.count > $1.count }
    }

    /// The bytes of `chunk` (after what was held back) that can be written now.
    mutating func feed(_ chunk: ArraySlice<UInt8>) -> [UInt8] {
        pending += chunk
        var out: [UInt8] = []
        out.reserveCapacity(pending.count)
        var i = 0
        scan: while i < pending.count {
            for secret in secrets where secret[0] == pending[i] {
                let available = pending.count - i
                if available >= secret.count {
                    if pending[i..<(i + secret.count)].elementsEqual(secret) {
                        out += Self.replacement
                        i += secret.count
                        continue scan
                    }
                } else if secret[0..<available].elementsEqual(pending[i...]) {
                    break scan   // could be the start of a secret: wait for more
                }
            }
            out.append(pending[i])
            i += 1
        }
        wipe(&pending, upTo: i)
        pending.removeFirst(i)
        return out
    }

    /// Whatever is held back, as it is (the stream ended: no later byte can complete a secret).
    mutating func flush() -> [UInt8] {
        let out = pending
        wipe(&pending, upTo: pending.count)
        pending.removeAll()
        return out
    }

    private func wipe(_ bytes: inout [UInt8], upTo n: Int) {
        for j in 0..<n { bytes[j] = 0 }
    }
}
