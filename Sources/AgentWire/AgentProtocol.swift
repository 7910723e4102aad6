import KeychainCore
import POSIXSupport
/// The messages between `kc` and `kc agent` (`docs/protocol.md`). Every frame is
/// `u32 length ‖ u16 version ‖ u8 type ‖ body` and carries the protocol version, so a
/// client and an agent of different versions notice on the first message.
public enum AgentProtocol {
    /// Raised by hand whenever a message's layout changes.
    /// 2: the `verify` operation, and agents that re-verify a file changed under them.
    /// 3: keychain format 3 (Secret Service maps inside queries and results, values nested
    /// one level deeper); an agent of version 2 would refuse such queries and take the
    /// pairs of a migrated file for tampering.
    /// 4: user presence (`operationWithProof`, `presenceRequired`); an agent of version 3
    /// would hand out the secrets of items that require it without a proof.
    /// 5: no proof crosses the socket (issue 29): `operationWithProof` (type 7), whose proof
    /// was the keychain's password, is gone and refused; `presenceRequired` names every
    /// protected item the request would release. A client of version 4 would send the
    /// password to whatever answered "presence required".
    /// 6: `copyPage` (operation 10, issue 31): listings go page by page, so no reply has to
    /// hold a whole keychain. An agent of version 5 would refuse the operation as malformed.
    /// 7: `unlockWithSlot` (type 8, issue 35): unlock with a key slot's secret (a recovery
    /// key). An agent of version 6 would refuse the type as unknown.
    public static let version: UInt16 = 7
    /// The largest frame either side accepts: the largest secret plus room for a query.
    package static let maxFrame = (16 << 20) + (1 << 20)

    /// Request types.
    package enum Request: UInt8 {
        case unlock = 1, lock = 2, status = 3, operation = 4, stop = 5
        /// Unlock (or create and unlock) a keychain with a password that a held keychain
        /// keeps as an item: the password never leaves the agent.
        case unlockWithKept = 6
        // 7 was `operationWithProof` (version 4: the keychain's password as a proof of
        // presence). Never reused: an agent refuses it as an unknown request.
        /// Unlock a keychain with the secret of one of its key slots (a recovery key).
        case unlockWithSlot = 8
    }

    /// Operations on an unlocked keychain. `backup` takes `["destination": String,
    /// "replacing": Bool]` as its query and answers the item count; `importItems` takes
    /// `ImportRequest.encode`'s dictionary and answers one outcome per item; `copyMany`
    /// takes `BatchRequest.encode`'s and answers one result or error per query; `verify`
    /// takes an empty query and answers the item count of a whole-keychain check;
    /// `copyPage` takes `{query, after?, limit}` and answers `{items, next?}`.
    public enum Operation: UInt8, Sendable {
        case add = 1, copyMatching = 2, update = 3, delete = 4, count = 5, backup = 6, importItems = 7, copyMany = 8, verify = 9
        case copyPage = 10
    }

    /// Response types.
    package enum Response: UInt8 {
        /// Success; the body is one value (ValueCodec).
        case ok = 0x80
        /// Failure: i32 status ‖ lp(message) ‖ lp(hint).
        case error = 0x81
        /// The agent does not hold that keychain unlocked.
        case notHeld = 0x82
        /// The operation reads items protected by user presence: `u32 count ‖ lp(name)…`, every
        /// protected item it would release, named. The client asks the user, naming them, and
        /// performs the operation in its own process (no proof is ever sent to the agent).
        case presenceRequired = 0x83
    }

    /// A frame's bytes: length ‖ version ‖ type ‖ body.
    package static func frame(type: UInt8, body: [UInt8]) -> [UInt8] {
        var w = ByteWriter(capacity: body.count + 7)
        w.u32(UInt32(body.count + 3))
        w.u16(version)
        w.u8(type)
        w.raw(body)
        return w.bytes
    }

    /// Splits a received frame (without its length prefix) into version, type and body.
    package static func parse(_ payload: [UInt8]) throws -> (version: UInt16, type: UInt8, body: [UInt8]) {
        guard payload.count >= 3 else { throw KeychainError(errSecParam, "truncated agent message") }
        let version = UInt16(payload[0]) << 8 | UInt16(payload[1])
        return (version, payload[2], Array(payload[3...]))
    }
}

extension ByteWriter {
    mutating func u16(_ v: UInt16) {
        u8(UInt8(v >> 8))
        u8(UInt8(v & 0xFF))
    }
}
