/// How hard the password is stretched when a keychain is created (Argon2id13).
///
/// | profile | opslimit | memlimit | time here |
/// |---|---|---|---|
/// | interactive | 2 | 64 MiB | ~0.1 s |
/// | moderate (default) | 3 | 256 MiB | ~0.6 s |
/// | sensitive | 4 | 1 GiB | ~3 s |
public enum KDFProfile: String, Sendable, CaseIterable {
    /// libsodium's INTERACTIVE limits: for tests and low-value keychains.
    case interactive
    /// libsodium's MODERATE limits: the default.
    case moderate
    /// libsodium's SENSITIVE limits.
    case sensitive
}
