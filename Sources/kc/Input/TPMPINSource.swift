import KeychainCore

/// Where a TPM2 slot's PIN comes from: `--pin-file FILE` (its bytes, passed to kc-tpm as
/// they are: kc-tpm drops one final line ending, LF or CRLF, once), else kc's own prompt on
/// the terminal, echo off. Never an argument or a variable, which other
/// processes of the user can read. kc-tpm gets it on a pipe (`TPMProgram`).
enum TPMPINSource {
    /// The longest PIN read.
    static let maxPIN = 1024

    /// The PIN for a new slot (`kc keyslot add --tpm2 --pin`): the file, else asked twice.
    /// - Throws: errSecParam for an empty PIN or two that differ; errSecInteractionNotAllowed
    ///   with neither a file nor a terminal.
    static func forNewSlot(file: String?, path: String) throws -> SecureBytes {
        if let file { return try nonEmpty(read(file)) }
        guard Terminal.isAvailable else {
            throw KeychainError(
                errSecInteractionNotAllowed, "a TPM2 slot with a PIN needs the PIN and there is no terminal to ask on",
                hint: "pass --pin-file PATH")
        }
        return try Terminal.readNewSecret(prompt: "New TPM PIN for keychain \(path): ", again: "Retype the TPM PIN: ") { first in
            guard first.count > 0 else { throw KeychainError(errSecParam, "the TPM PIN is empty") }
        }
    }

    /// The PIN to unseal a slot of the keychain at `path` with: the file, else a prompt when
    /// `prompt` allows one and a terminal is there; nil when there is no way to ask.
    static func forUnlock(file: String?, prompt: Bool, path: String) throws -> SecureBytes? {
        if let file { return try nonEmpty(read(file)) }
        guard prompt, Terminal.isAvailable else { return nil }
        return try nonEmpty(Terminal.readSecret(prompt: "TPM PIN for keychain \(path): "))
    }

    private static func read(_ file: String) throws -> SecureBytes {
        try Readers.readFile(file, limit: maxPIN, what: "PIN file", warnIfShared: true)
    }

    /// The PIN, refused when it is empty once kc-tpm has dropped its line ending.
    private static func nonEmpty(_ pin: consuming SecureBytes) throws -> SecureBytes {
        let length = pin.withUnsafeBytes { bytes in
            var n = bytes.count
            if n > 0 && bytes[n - 1] == 0x0A { n -= 1 }
            if n > 0 && bytes[n - 1] == 0x0D { n -= 1 }
            return n
        }
        guard length > 0 else { throw KeychainError(errSecParam, "the TPM PIN is empty", hint: "a TPM2 slot's PIN has at least one character") }
        return pin
    }
}
