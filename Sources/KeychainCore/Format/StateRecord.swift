/// The changing part of the header, covered by a MAC under K_header (`kc_state`,
/// `docs/format.md` §6).
package struct StateRecord: Equatable, Sendable {
    package var minWriterVersion: UInt32
    package var generation: UInt64
    package var itemCount: UInt64
    package var accumulator: [UInt8]
    package var idleTimeout: UInt64
    package var maxTimeout: UInt64
    package var mac: [UInt8]

    /// A record of these values.
    package init(minWriterVersion: UInt32, generation: UInt64, itemCount: UInt64, accumulator: [UInt8], idleTimeout: UInt64, maxTimeout: UInt64, mac: [UInt8]) {
        self.minWriterVersion = minWriterVersion
        self.generation = generation
        self.itemCount = itemCount
        self.accumulator = accumulator
        self.idleTimeout = idleTimeout
        self.maxTimeout = maxTimeout
        self.mac = mac
    }
}
