// kc-loadgen: a load generator for the concurrency tests and `make stress`; not installed.
//
//   KC_PASSWORD=... kc-loadgen PATH PREFIX COUNT
//       adds COUNT generic passwords PREFIX-0 … PREFIX-(COUNT-1) (account "load", data
//       "secret-NAME"), unlocking the keychain in-process. With KC_LOADGEN_ACK=1 it writes
//       each NAME to stdout as soon as its add has returned (committed), so a test that kills
//       it knows which adds were acknowledged.
//   KC_PASSWORD=... kc-loadgen verify PATH
//       opens the keychain and checks every row against the header's count and accumulator
//       (Keychain.verify); prints the item count.
//
// Exits 0 when everything succeeded, else with the failing status's low byte.
import KeychainCore
#if canImport(Glibc)
import Glibc
#endif

func warn(_ message: String) {
    let bytes = Array(message.utf8)
    _ = bytes.withUnsafeBytes { write(2, $0.baseAddress, $0.count) }
}

func say(_ message: String) {
    let bytes = Array(message.utf8)
    _ = bytes.withUnsafeBytes { write(1, $0.baseAddress, $0.count) }
}

let arguments = CommandLine.arguments
guard let password = getenv("KC_PASSWORD") else {
    warn("kc-loadgen: KC_PASSWORD is not set\n")
    exit(2)
}
do {
    let secret = try SecureBytes(copying: Array(String(cString: password).utf8))
    if arguments.count == 3, arguments[1] == "verify" {
        let keychain = try Keychain.open(at: arguments[2], password: secret)
        try keychain.verify()
        say("\(try keychain.itemCount())\n")
        exit(0)
    }
    guard arguments.count == 4, let count = Int(arguments[3]), count >= 0 else {
        warn("usage: KC_PASSWORD=... kc-loadgen PATH PREFIX COUNT | kc-loadgen verify PATH\n")
        exit(2)
    }
    let acknowledge = getenv("KC_LOADGEN_ACK") != nil
    let keychain = try Keychain.open(at: arguments[1], password: secret)
    for i in 0..<count {
        let name = "\(arguments[2])-\(i)"
        try keychain.add([
            kSecClass: kSecClassGenericPassword, kSecAttrService: name, kSecAttrAccount: "load",
            kSecValueData: Array("secret-\(name)".utf8)
        ])
        if acknowledge { say(name + "\n") }
    }
} catch let error as KeychainError {
    warn("kc-loadgen: \(error)\n")
    exit(exitCode(for: error.status))
}
