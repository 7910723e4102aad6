import KeychainCore

/// The object paths the provider serves (Secret Service specification 0.2, "Object Paths"),
/// built from ASCII only: a collection's id comes from its keychain's name with every other
/// byte escaped, an item's from its persistent reference in hex. No attribute value, label
/// or secret ever appears in a path.
package enum ObjectPath: Equatable {
    case service
    case collection(String)
    case alias(String)
    case item(collection: String, id: String)
    case session(String)
    case prompt(String)

    package static let root = "/org/freedesktop/secrets"
    /// "No object" in the API's replies (no prompt, unknown alias).
    package static let none = "/"

    /// The path's text.
    package var text: String {
        switch self {
        case .service: return Self.root
        case .collection(let id): return Self.root + "/collection/" + id
        case .alias(let name): return Self.root + "/aliases/" + name
        case .item(let collection, let id): return Self.root + "/collection/" + collection + "/" + id
        case .session(let id): return Self.root + "/session/" + id
        case .prompt(let id): return Self.root + "/prompt/" + id
        }
    }

    /// The object a path names, or nil for anything else.
    package init?(_ text: String) {
        if text == Self.root { self = .service; return }
        guard text.hasPrefix(Self.root + "/") else { return nil }
        let parts = text.dropFirst(Self.root.count + 1).split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.allSatisfy({ !$0.isEmpty }) else { return nil }
        switch (parts.first, parts.count) {
        case ("collection", 2): self = .collection(parts[1])
        case ("collection", 3): self = .item(collection: parts[1], id: parts[2])
        case ("aliases", 2): self = .alias(parts[1])
        case ("session", 2): self = .session(parts[1])
        case ("prompt", 2): self = .prompt(parts[1])
        default: return nil
        }
    }

    /// A path element for `name`: letters and digits as they are, every other byte as
    /// `_XX` (hex), so any keychain name gives a valid, distinct, ASCII element.
    package static func element(for name: String) -> String {
        var out = ""
        for byte in name.utf8 {
            if (0x30...0x39).contains(byte) || (0x41...0x5A).contains(byte) || (0x61...0x7A).contains(byte) {
                out.append(Character(Unicode.Scalar(byte)))
            } else {
                out += "_" + hex([byte])
            }
        }
        return out.isEmpty ? "_" : out
    }

    /// Lower-case hex.
    package static func hex(_ bytes: [UInt8]) -> String { Hex.encode(bytes) }

    /// The bytes of lower-case hex `text`, or nil.
    package static func bytes(fromHex text: String) -> [UInt8]? {
        let chars = Array(text.utf8)
        guard chars.count % 2 == 0, !chars.isEmpty else { return nil }
        func nibble(_ c: UInt8) -> UInt8? {
            switch c {
            case 0x30...0x39: return c - 0x30
            case 0x61...0x66: return c - 0x61 + 10
            default: return nil
            }
        }
        var out: [UInt8] = []
        out.reserveCapacity(chars.count / 2)
        var i = 0
        while i < chars.count {
            guard let hi = nibble(chars[i]), let lo = nibble(chars[i + 1]) else { return nil }
            out.append(hi << 4 | lo)
            i += 2
        }
        return out
    }
}
