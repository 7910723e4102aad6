/// The blind-indexed attributes: each has a column of keyed fingerprints in the store.
/// Only high-entropy attributes get one (`docs/format.md` §5); the rest are matched after
/// decryption. A certificate's public-key hash shares the key label's column and key, so
/// an identity is a join on equal fingerprints.
package enum IndexColumn: String, CaseIterable, Sendable {
    case account = "acct"
    case service = "svce"
    case server = "srvr"
    case label = "labl"
    case securityDomain = "sdmn"
    case path = "path"
    case accessGroup = "agrp"
    case applicationTag = "atag"
    case applicationLabel = "klbl"
}

extension IndexColumn {
    /// Hashes the case by its place, not its raw value (a String): a row's index columns
    /// are a dictionary keyed by this type, built and read for every row a team keychain's
    /// first open scans. Equal cases hash equally, as `Hashable` asks.
    package func hash(into hasher: inout Hasher) {
        let place: UInt8 =
            switch self {
            case .account: 0
            case .service: 1
            case .server: 2
            case .label: 3
            case .securityDomain: 4
            case .path: 5
            case .accessGroup: 6
            case .applicationTag: 7
            case .applicationLabel: 8
            }
        hasher.combine(place)
    }
}
