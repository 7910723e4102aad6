import KeychainCore
import KeychainFormats

/// A Terraform service hostname in the form Terraform compares and stores it (svchost's
/// `ForComparison`): labels in lower case, a non-ASCII label as `xn--` Punycode, and the
/// port kept after a colon unless it is 443, the default, without leading zeros.
/// Terraform hands its helpers this form already; a hostname typed by a person
/// (`App.Terraform.IO:443`, `bücher.example`) is brought to it, so both name one item.
/// Unlike svchost, `xn--` labels are accepted as they are (that is what Terraform sends);
/// Unicode is lower-cased but not otherwise mapped (no NFC or UTS 46 mapping).
enum TerraformHostname {
    /// - Throws: errSecParam naming what is wrong (empty, an empty label, a character a
    ///   hostname cannot hold, a port that is not a number up to 65535).
    static func normalised(_ given: String) throws -> String {
        var host = Substring(given)
        var port = ""
        if let colon = given.firstIndex(of: ":") {
            host = given[..<colon]
            let digits = given[given.index(after: colon)...]
            guard !digits.isEmpty, digits.utf8.allSatisfy({ (0x30...0x39).contains($0) }), let number = Int(digits), number <= 65535 else {
                if ["http", "https"].contains(host.lowercased()) {
                    throw KeychainError(errSecParam, "\(JSON.string(given)) is a URL; give just the hostname and optional port, as Terraform does")
                }
                throw KeychainError(errSecParam, "the port of \(JSON.string(given)) is not a number up to 65535")
            }
            if number != 443 { port = ":\(number)" }
        }
        guard !host.isEmpty else { throw KeychainError(errSecParam, "no hostname given") }
        var labels: [String] = []
        for label in host.lowercased().split(separator: ".", omittingEmptySubsequences: false) {
            guard !label.isEmpty else { throw KeychainError(errSecParam, "the hostname \(JSON.string(given)) has an empty label") }
            if label.unicodeScalars.allSatisfy(\.isASCII) {
                guard label.utf8.allSatisfy({ ("a"..."z").contains(Unicode.Scalar($0)) || ("0"..."9").contains(Unicode.Scalar($0)) || $0 == 0x2D }) else {
                    throw KeychainError(errSecParam, "the hostname \(JSON.string(given)) has a character a hostname cannot hold")
                }
                labels.append(String(label))
            } else {
                guard
                    label.unicodeScalars.allSatisfy({
                        $0.properties.isAlphabetic || $0.properties.numericType != nil || $0 == "-" || $0.properties.isDiacritic
                            || $0.properties.generalCategory == .nonspacingMark || $0.properties.generalCategory == .spacingMark
                    }),
                    let encoded = Punycode.encode(Array(label.unicodeScalars))
                else {
                    throw KeychainError(errSecParam, "the hostname \(JSON.string(given)) has a character a hostname cannot hold")
                }
                labels.append("xn--" + encoded)
            }
        }
        return labels.joined(separator: ".") + port
    }
}
