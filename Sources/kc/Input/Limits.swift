import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Size limits of the command line (the core's, so kc refuses before reading it all).
enum Limits {
    static let maxSecret = 16 << 20
}
