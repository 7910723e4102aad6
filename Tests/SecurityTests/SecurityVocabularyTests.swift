import Foundation
import Security
import Testing

/// The Security module re-exports SecurityVocabulary whole (Sources/Security/Exports.swift;
/// LayerTests allows it that one re-export and no other), so code written against
/// `import Security` sees exactly the Apple names declared there. These tests keep the two
/// halves of that true: every Apple name kc knows is declared in the vocabulary (none left
/// behind in a module Security does not re-export, where Apple code would not find it), and
/// the vocabulary declares Apple's names only (so a program's own `KeychainError`,
/// `ItemClass` or `Keychain` does not collide with kc's). And this file, which imports
/// Security alone of kc's modules, builds with Apple's names and reads Apple's values.
@Suite struct SecurityVocabularyTests {
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// (file, kind, name) of each `public` declaration at the start of a line in a target.
    private static func publicDeclarations(_ target: String) throws -> [(file: String, kind: String, name: String)] {
        let base = root + "/Sources/" + target
        let files = (FileManager.default.enumerator(atPath: base)?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }
        let pattern = try NSRegularExpression(pattern: "^\\s*public\\s+(?:final\\s+)?(\\w+)\\s+(\\w+)", options: .anchorsMatchLines)
        var out: [(String, String, String)] = []
        for file in files {
            let text = try String(contentsOfFile: base + "/" + file, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                guard let kind = Range(match.range(at: 1), in: text), let name = Range(match.range(at: 2), in: text) else { continue }
                out.append((file, String(text[kind]), String(text[name])))
            }
        }
        return out
    }

    /// Whether a name is one of Apple's (or kc's `kcAttr…` extension keys, which Apple-style
    /// code passes in the same dictionaries).
    private static func isAppleName(_ name: String) -> Bool {
        ["kSec", "errSec", "kcAttr"].contains { name.hasPrefix($0) } || ["OSStatus", "SecCopyErrorMessageString"].contains(name)
    }

    @Test func everyAppleNameKcKnowsIsInTheVocabulary() throws {
        let targets = try FileManager.default.contentsOfDirectory(atPath: Self.root + "/Sources")
        #expect(targets.contains("SecurityVocabulary") && targets.contains("KeychainCore"))
        // Security declares the rest of SecBase.h itself (SecBaseStatusCodes.swift): its own names.
        for target in targets where !["SecurityVocabulary", "Security"].contains(target) {
            for (file, _, name) in try Self.publicDeclarations(target) where Self.isAppleName(name) {
                Issue.record("\(target)/\(file) declares \(name): Apple's names belong in SecurityVocabulary, where `import Security` sees them")
            }
        }
        let vocabulary = try Self.publicDeclarations("SecurityVocabulary")
        #expect(vocabulary.filter { $0.name.hasPrefix("kSec") }.count > 150)
        #expect(vocabulary.filter { $0.name.hasPrefix("errSec") }.count > 25)
    }

    @Test func theVocabularyHoldsOnlyAppleNames() throws {
        let declarations = try Self.publicDeclarations("SecurityVocabulary")
        #expect(!declarations.isEmpty)
        for (file, kind, name) in declarations {
            #expect(
                ["let", "func", "typealias"].contains(kind) && Self.isAppleName(name),
                "SecurityVocabulary/\(file) declares \(kind) \(name), which Security would hand to Apple code: keep kc's own names above the vocabulary")
        }
    }

    @Test func appleNamesAndValuesThroughImportSecurityAlone() {
        let status: OSStatus = errSecItemNotFound
        #expect(status == -25300 && errSecDuplicateItem == -25299 && errSecAuthFailed == -25293)
        #expect(errSecInteractionNotAllowed == -25308 && errSecCSReqFailed == -67050 && errSecSuccess == 0)
        #expect(SecCopyErrorMessageString(status, nil) == "The specified item could not be found in the keychain.")
        #expect(SecCopyErrorMessageString(-1, nil) == "OSStatus -1")
        #expect(
            [kSecClass, kSecClassGenericPassword, kSecClassInternetPassword, kSecAttrAccount, kSecAttrService]
                == ["class", "genp", "inet", "acct", "svce"])
        #expect(
            [kSecValueData, kSecReturnData, kSecReturnAttributes, kSecMatchLimit, kSecMatchLimitAll, kSecUseAuthenticationUI]
                == ["v_Data", "r_Data", "r_Attributes", "m_Limit", "m_LimitAll", "u_AuthUI"])
        #expect([kSecAttrAccessibleWhenUnlocked, kSecAttrProtocolHTTPS, kSecAttrKeyTypeEC] == ["ak", "htps", "73"])
        #expect([kcAttrContentType, kcAttrSecretServiceAttributes, kcAttrAccessControlFlags] == ["kcct", "kcsa", "kcac"])
    }
}
