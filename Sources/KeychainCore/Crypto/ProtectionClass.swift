/// The protection class of an item (`docs/format.md` §2, §3): which class key wraps its
/// data key and seals its attributes, derived from its accessibility (`kSecAttrAccessible`)
/// as Apple's class keys are. Stored in the row (`kc_items.pclass`, format 4) and bound into
/// its associated data and accumulator term through its index digest.
///
///     ProtectionClass(accessible: "cku")   // .afterFirstUnlock
///
/// See Apple's "Restricting keychain item accessibility" and `SecDbKeychainItem.m`.
package enum ProtectionClass: UInt8, Sendable, CaseIterable {
    /// `ak`, `aku`, `akpu` (and anything unknown): readable only while the keychain is
    /// unlocked. Its keys are K_meta and K_wrap, so rows of formats 1–3 keep them.
    case whenUnlocked = 0
    /// `ck`, `cku`, and the deprecated `dk`, `dku`: readable from the first unlock until the
    /// agent stops or the machine restarts, even after `kc lock` and auto-lock.
    case afterFirstUnlock = 1

    /// The class of an accessibility value (`pdmn`).
    package init(accessible: String?) {
        switch accessible {
        case "ck", "cku", "dk", "dku": self = .afterFirstUnlock
        default: self = .whenUnlocked
        }
    }

    /// The class of an item's stored attributes.
    init(_ attributes: [String: AttributeValue]) {
        if case .string(let s)? = attributes["pdmn"] { self.init(accessible: s) } else { self.init(accessible: nil) }
    }

    /// Whether an accessibility value keeps its item on this machine (`…ThisDeviceOnly`:
    /// `aku`, `cku`, `dku`, `akpu`): exports leave such items out.
    package static func isThisDeviceOnly(_ accessible: String?) -> Bool {
        ["aku", "cku", "dku", "akpu"].contains(accessible ?? "")
    }

    /// Whether an accessibility value is one Apple deprecated (`kSecAttrAccessibleAlways…`):
    /// kc stores it with after-first-unlock's protection and warns.
    package static func isDeprecated(_ accessible: String?) -> Bool {
        accessible == "dk" || accessible == "dku"
    }
}
