// kc-loadgen: adds COUNT generic passwords named PREFIX-0 … PREFIX-(COUNT-1) to the keychain
// at PATH, unlocking it in-process with the password in KC_PASSWORD. A load generator for the
// concurrency tests (`Tests/KeychainCoreTests/ConcurrencyTests.swift`) and `make stress`;
// not installed. Exits 0 when every add succeeded, else with the failing status's low byte.
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

func warn(_ message: String) {
    let bytes = Array(message.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
guard arguments.count == 4, let count = Int(arguments[3]), count >= 0 else {
    warn("usage: KC_PASSWORD=... kc-loadgen PATH PREFIX COUNT\n")
    exit(2)
}
guard let password = getenv("KC_PASSWORD") else {
    warn("kc-loadgen: KC_PASSWORD is not set\n")
    exit(2)
}
do {
    let secret = try SecureBytes(copying: Array(String(cString: password).utf8))
    let keychain = try Keychain.open(at: arguments[1], password: secret)
    for i in 0..<count {
        let name = "\(arguments[2])-\(i)"
        try keychain.add([kSecClass: kSecClassGenericPassword, kSecAttrService: name, kSecAttrAccount: "load",
                          kSecValueData: Array("secret-\(name)".utf8)])
    }
} catch let error as KeychainError {
    warn("kc-loadgen: \(error)\n")
    exit(exitCode(for: error.status))
}
