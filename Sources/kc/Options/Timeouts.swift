import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Timeouts given on the command line are 1 s to one year (the core's bounds).
func validateTimeouts(_ values: UInt64?...) throws {
    for value in values.compactMap({ $0 }) where value == 0 || value > Keychain.maxTimeout {
        throw ValidationError("timeouts are 1 to \(Keychain.maxTimeout) seconds (one year)")
    }
}
