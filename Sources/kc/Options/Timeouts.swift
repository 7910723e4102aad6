import ArgumentParser
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

/// Timeouts given on the command line are 1 s to one year (the core's bounds). They are
/// parsed as signed numbers so that `-t -5` is told it must be positive, not that '-5'
/// is "invalid".
func validateTimeouts(_ values: (flag: String, seconds: Int64?)...) throws {
    for (flag, value) in values {
        guard let value else { continue }
        if value < 1 { throw ValidationError("\(flag) must be a positive number of seconds (1 to \(Keychain.maxTimeout), one year)") }
        if UInt64(value) > Keychain.maxTimeout {
            throw ValidationError("\(flag) is at most \(Keychain.maxTimeout) seconds (one year)")
        }
    }
}
