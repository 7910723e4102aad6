import KeychainCore
import POSIXSupport
/// A minimal JSON writer with a stable field order.
public enum JSON {
    /// `s` as a JSON string: `"` and `\` escaped, and every character a terminal may act on
    /// (`TerminalSafe.isControl`: C0, DEL, C1, bidi formatting) as `\uXXXX`, so kc's JSON
    /// is as safe to show on a terminal as its text.
    public static func string(_ s: String) -> String {
        "\"" + TerminalSafe.escaped(s, .json) + "\""
    }

    public static func object(_ fields: [(String, String)]) -> String {
        "{" + fields.map { "\(string($0.0)):\($0.1)" }.joined(separator: ",") + "}"
    }

    public static func array(_ elements: [String]) -> String {
        "[" + elements.joined(separator: ",") + "]"
    }
}
