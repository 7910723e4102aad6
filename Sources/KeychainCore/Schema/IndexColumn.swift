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
