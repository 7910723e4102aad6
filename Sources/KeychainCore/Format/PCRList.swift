import KeychainStatus

/// `--pcrs LIST`: PCR numbers of the SHA-256 bank, comma-separated ("0,2,7"), as a mask
/// with bit n for PCR n.
public enum PCRList {
    /// The mask for `text`.
    /// - Throws: errSecParam for an empty list, a word that is not a number from 0 to 23,
    ///   or a PCR named twice.
    public static func mask(_ text: String) throws(KeychainError) -> UInt32 {
        var mask: UInt32 = 0
        for word in text.split(separator: ",", omittingEmptySubsequences: false) {
            guard let n = UInt32(word), n < 24 else {
                throw KeychainError(errSecParam, "--pcrs takes PCR numbers from 0 to 23, comma-separated, such as 0,7")
            }
            guard mask & 1 << n == 0 else { throw KeychainError(errSecParam, "--pcrs names PCR \(n) twice") }
            mask |= 1 << n
        }
        return mask
    }

    /// The PCRs of a mask, in order.
    public static func numbers(_ mask: UInt32) -> [Int] { (0..<24).filter { mask & 1 << $0 != 0 } }
}
