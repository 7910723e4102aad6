import Foundation
import Testing
import KeychainCore
import KCTestSupport
@testable import TeamStore

/// The SecItem conformance scenarios run on both backends, a keychain file and a team
/// keychain on PostgreSQL, with identical statuses and results (TEAM.md: the command line
/// and the Apple query model do not change).
@Suite struct SecItemConformanceTests {
    /// One scenario: SecItem calls on a keychain, writing what each answered.
    typealias Scenario = (Keychain, inout [String]) throws -> Void

    nonisolated(unsafe) static let scenarios: [(String, Scenario)] = [
        (
            "add, find, duplicate, update, delete",
            { k, out in
                out.append(describe { try k.add(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice", kSecValueData: Data("tok".utf8)])) })
                out.append(describe { try k.add(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice", kSecValueData: Data("other".utf8)])) })
                out.append(describe { try k.copyMatching(genp([kSecAttrService: "github.com", kSecAttrAccount: "alice", kSecReturnData: true])) })
                out.append(describe { try k.update(genp([kSecAttrService: "github.com"]), [kSecValueData: Data("new".utf8), kSecAttrLabel: "L"]) })
                out.append(describe { try k.copyMatching(genp([kSecAttrService: "github.com", kSecReturnAttributes: true, kSecReturnData: true])) })
                out.append(describe { try k.delete(genp([kSecAttrService: "github.com"])) })
                out.append(describe { try k.delete(genp([kSecAttrService: "github.com"])) })
                out.append(describe { try k.copyMatching(genp([kSecAttrService: "github.com"])) })
                out.append(describe { try k.update(genp([kSecAttrService: "github.com"]), [kSecAttrLabel: "l"]) })
            }
        ),
        (
            "match limits and filters",
            { k, out in
                for i in 0..<5 {
                    out.append(
                        describe {
                            try k.add(
                                genp([
                                    kSecAttrService: "svc", kSecAttrAccount: "acct-\(i)", kSecAttrLabel: i % 2 == 0 ? "even" : "odd",
                                    kSecValueData: Data("s\(i)".utf8)
                                ]))
                        })
                }
                out.append(describe { try k.copyMatching(genp([kSecAttrService: "svc", kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true])) })
                out.append(describe { try k.copyMatching(genp([kSecAttrLabel: "even", kSecMatchLimit: kSecMatchLimitAll, kSecReturnData: true])) })
                out.append(describe { try k.copyMatching(genp([kSecAttrService: "svc"])) })
                out.append(describe { try k.copyMatching(genp([kSecAttrAccount: "ACCT-3", kSecMatchCaseInsensitive: true, kSecReturnData: true])) })
                out.append(describe { try k.delete(genp([kSecAttrLabel: "odd"])) })
                out.append(describe { try k.itemCount() })
            }
        ),
        (
            "internet passwords and bad queries",
            { k, out in
                let attrs: [String: Any] = [
                    kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com", kSecAttrAccount: "bob",
                    kSecAttrProtocol: kSecAttrProtocolHTTPS, kSecAttrPort: 8443, kSecValueData: Data("pw".utf8)
                ]
                out.append(describe { try k.add(attrs) })
                var other = attrs
                other[kSecAttrPort] = 443
                out.append(describe { try k.add(other) })
                out.append(describe { try k.add(other) })
                out.append(
                    describe {
                        try k.copyMatching([
                            kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com", kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true
                        ])
                    })
                out.append(describe { try k.add([kSecClass: "nonsense", kSecValueData: Data()]) })
                out.append(describe { try k.copyMatching([kSecAttrService: "no class"]) })
                out.append(describe { try k.add(genp([kSecAttrService: "s", "zzzz": "unknown attribute"])) })
            }
        ),
        (
            "secret service maps and accessibility",
            { k, out in
                out.append(
                    describe {
                        try k.add(
                            genp([kSecAttrService: "ss", kcAttrSecretServiceAttributes: ["xdg:schema": "org.test", "user": "a"], kSecValueData: Data("1".utf8)])
                        )
                    })
                out.append(
                    describe {
                        try k.add(
                            genp([kSecAttrService: "ss", kcAttrSecretServiceAttributes: ["xdg:schema": "org.test", "user": "b"], kSecValueData: Data("2".utf8)])
                        )
                    })
                out.append(describe { try k.copyMatching(genp([kcAttrSecretServiceAttributes: ["user": "b"], kSecReturnData: true])) })
                out.append(
                    describe {
                        try k.add(genp([kSecAttrService: "afu", kSecAttrAccessible: kSecAttrAccessibleAfterFirstUnlock, kSecValueData: Data("c".utf8)]))
                    })
                out.append(describe { try k.copyMatching(genp([kSecAttrService: "afu", kSecReturnAttributes: true])) })
            }
        )
    ]

    @Test(arguments: 0..<SecItemConformanceTests.scenarios.count)
    func bothBackendsAnswerAlike(_ index: Int) throws {
        let (name, scenario) = Self.scenarios[index]
        let folder = NSTemporaryDirectory() + "/kc-conformance-" + UUID().uuidString
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: folder) }
        let file = try Keychain.create(at: folder + "/file.keychain-db", password: SecureBytes(copying: Array("pw".utf8)), profile: .interactive)
        var onFile: [String] = []
        try scenario(file, &onFile)
        let team = try TeamFixture()
        var onTeam: [String] = []
        try scenario(team.admin.keychain, &onTeam)
        #expect(onFile.count == onTeam.count)
        for (i, (a, b)) in zip(onFile, onTeam).enumerated() {
            #expect(a == b, "\(name), call \(i + 1): file answered \(a), team answered \(b)")
        }
        #expect(try team.admin.keychain.check() == (try file.itemCount()))
    }
}

/// What a call answered, comparable across backends: the status, and the result with its
/// dates, ids and references left out (they differ by nature).
func describe(_ body: () throws -> Any?) -> String {
    do {
        return "ok " + canonical(try body())
    } catch let e as KeychainError {
        return "status \(e.status)"
    } catch {
        return "error \(error)"
    }
}

func canonical(_ value: Any?) -> String {
    switch value {
    case nil: return "nil"
    case let d as Data: return "data(\(String(decoding: d, as: UTF8.self)))"
    case let list as [Any]: return "[" + list.map(canonical).sorted().joined(separator: ", ") + "]"
    case let dict as [String: Any]:
        let skip: Set<String> = ["cdat", "mdat", kSecValuePersistentRef, "v_Ref"]
        return "{" + dict.keys.filter { !skip.contains($0) }.sorted().map { "\($0)=\(canonical(dict[$0]))" }.joined(separator: ", ") + "}"
    case let v?: return "\(v)"
    }
}
