/// The process exit code for a status, as macOS `security` uses: the status's low byte
/// (item not found exits 44, duplicate 45, wrong password 51, interaction not allowed 36).
///
/// kc's rule, not Apple's name: it lives here rather than in SecurityVocabulary so that the
/// Security module, which re-exports the vocabulary whole, does not hand it to Apple code.
public func exitCode(for status: OSStatus) -> Int32 {
    Int32(UInt32(bitPattern: status) & 0xFF)
}
