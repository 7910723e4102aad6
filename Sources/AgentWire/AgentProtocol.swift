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
    public static let version: UInt16 = 4
    /// The largest frame either side accepts: the largest secret plus room for a query.
    package static let maxFrame = (16 << 20) + (1 << 20)

    /// Request types.
    package enum Request: UInt8 {
        case unlock = 1, lock = 2, status = 3, operation = 4, stop = 5
        /// Unlock (or create and unlock) a keychain with a password that a held keychain
        /// keeps as an item: the password never leaves the agent.
        case unlockWithKept = 6
        /// An operation with a proof of user presence: `lp(password) ‖` an operation's body.
        case operationWithProof = 7
    }

    /// Operations on an unlocked keychain. `backup` takes `["destination": String,
    /// "replacing": Bool]` as its query and answers the item count; `importItems` takes
    /// `ImportRequest.encode`'s dictionary and answers one outcome per item; `copyMany`
    /// takes `BatchRequest.encode`'s and answers one result or error per query; `verify`
    /// takes an empty query and answers the item count of a whole-keychain check.
    public enum Operation: UInt8, Sendable {
        case add = 1, copyMatching = 2, update = 3, delete = 4, count = 5, backup = 6, importItems = 7, copyMany = 8, verify = 9
    }

    /// Response types.
    package enum Response: UInt8 {
        /// Success; the body is one value (ValueCodec).
        case ok = 0x80
        /// Failure: i32 status ‖ lp(message) ‖ lp(hint).
        case error = 0x81
        /// The agent does not hold that keychain unlocked.
        case notHeld = 0x82
        /// The operation reads an item protected by user presence and came without a proof:
        /// `lp(the item's name)`. The client asks the user and sends `operationWithProof`.
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
