/// An unkeyed BLAKE2b-256 digest in hex, for a caller that must recognise content it saw
/// before without keeping the content (the git credential helper's `state[]`).
public enum ContentDigest {
    /// 64 lowercase hex digits.
    public static func hex(_ bytes: [UInt8]) -> String {
        let digits = Array("0123456789abcdef".utf8)
        var out: [UInt8] = []
        out.reserveCapacity(64)
        for b in Hashing.blake2b(bytes) {
            out.append(digits[Int(b >> 4)])
            out.append(digits[Int(b & 15)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
