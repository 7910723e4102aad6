import ArgumentParser
import KeychainCore

/// The item classes by their command-line names.
enum CLIClass: String, ExpressibleByArgument, CaseIterable {
    case generic, internet, certificate, key

    /// The kSecClass value.
    var secClass: String {
        switch self {
        case .generic: return kSecClassGenericPassword
        case .internet: return kSecClassInternetPassword
        case .certificate: return kSecClassCertificate
        case .key: return kSecClassKey
        }
    }
}
