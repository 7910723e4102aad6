import Foundation
import Testing
@testable import KeychainCore
import KeychainClient
import AgentWire
import KCTestSupport

/// Format 3's Secret Service map and content type end to end (issue 17): stored through the
/// real agent as the Secret Service provider will (it is a client of the agent), searched by
/// pair through it, and shown, exported and imported by the real `kc`.
@Suite struct SecretServiceAgentTests {
    static let map = kcAttrSecretServiceAttributes
    static let pairs = ["xdg:schema": "org.git.Password", "server": "github.com", "user": "alice"]

    /// A home whose default keychain the agent holds, with a git credential stored as
    /// git's libsecret helper does, and a plain item beside it.
    static func heldKeychain() throws -> (KCHome, AgentClient) {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let agent = AgentClient(paths: AgentPaths(directory: h.directory + "/agent"))
        let added = try agent.perform(
            path: h.defaultKeychain,
            .add([
                kSecClass: kSecClassGenericPassword, kSecAttrService: "git", kSecAttrAccount: "alice", Self.map: Self.pairs,
                kcAttrContentType: "text/plain", kSecAttrLabel: "Git: https://github.com/", kSecValueData: Data("gh-token".utf8)
            ]))
        guard case .result = added else { throw KeychainError(errSecNotAvailable, "the agent did not hold the keychain") }
        #expect(try h.kc(["add", "-s", "git", "-a", "plain", "-w", "plain-token"]).status == 0)
        return (h, agent)
    }

    /// The agent's answer to one request on the default keychain.
    static func ask(_ h: KCHome, _ agent: AgentClient, _ request: KeychainRequest) throws -> KeychainReply {
        guard case .result(let reply) = try agent.perform(path: h.defaultKeychain, request) else {
            throw KeychainError(errSecNotAvailable, "the agent did not hold the keychain")
        }
        return reply
    }

    @Test func aMapTravelsToTheAgentAndBack() throws {
        let (h, agent) = try Self.heldKeychain()
        let query: [String: Any] = [
            kSecClass: kSecClassGenericPassword, Self.map: ["server": "github.com", "user": "alice"],
            kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true, kSecReturnData: true
        ]
        let items = try #require(try Self.ask(h, agent, .copyMatching(query)).value() as? [[String: Any]])
        #expect(items.count == 1)
        #expect(items.first?[Self.map] as? [String: String] == Self.pairs)
        #expect(items.first?[kcAttrContentType] as? String == "text/plain")
        #expect(items.first?[kSecValueData] as? Data == Data("gh-token".utf8))
        // [:] finds the items without a map; a pair nobody has finds nothing.
        var plain = query
        plain[Self.map] = [String: String]()
        let plainItems = try #require(try Self.ask(h, agent, .copyMatching(plain)).value() as? [[String: Any]])
        #expect(plainItems.map { $0[kSecAttrAccount] as? String } == ["plain"])
        plain[Self.map] = ["server": "gitlab.com"]
        #expect(throws: KeychainError(errSecItemNotFound)) { _ = try Self.ask(h, agent, .copyMatching(plain)) }
        // The deepest reply: several items with maps inside a batch of results.
        let batch = try Self.ask(h, agent, .copyMany(BatchRequest(queries: [query, plain])))
        guard case .results(let results) = batch else { Issue.record("not results: \(batch)"); return }
        #expect(((try? results[0].get()) as? [[String: Any]])?.first?[Self.map] as? [String: String] == Self.pairs)
        // Update and delete through the agent find the item by its pairs too.
        #expect(
            try Self.ask(
                h, agent,
                .update(
                    [kSecClass: kSecClassGenericPassword, Self.map: ["user": "alice"]],
                    attributes: [Self.map: ["server": "github.com", "user": "alicia"]])
            ).count() == 1)
        #expect(try h.kc(["find", "-s", "git", "-a", "alice", "-w"]).stdout == "gh-token")
        #expect(try Self.ask(h, agent, .delete([kSecClass: kSecClassGenericPassword, Self.map: ["user": "alicia"]])).count() == 1)
        #expect(try h.kc(["find", "-s", "git", "-a", "alice"]).status == 44)
    }

    @Test func findShowsTheMapAndContentType() throws {
        let (h, _) = try Self.heldKeychain()
        let json = try h.kc(["find", "-s", "git", "-a", "alice", "--json"])
        #expect(json.status == 0, "\(json.stderr)")
        #expect(json.stdout.contains(#""secret-service-attributes":{"server":"github.com","user":"alice","xdg:schema":"org.git.Password"}"#), "\(json.stdout)")
        #expect(json.stdout.contains(#""content-type":"text/plain""#), "\(json.stdout)")
        let text = try h.kc(["find", "-s", "git", "-a", "alice"])
        #expect(text.status == 0, "\(text.stderr)")
        let lines = text.stdout.split(separator: "\n").map(String.init)
        #expect(lines.contains(#"secret-service-attributes: {"server":"github.com","user":"alice","xdg:schema":"org.git.Password"}"#), "\(text.stdout)")
        #expect(lines.contains("content-type: text/plain"), "\(text.stdout)")
        // A plain item shows neither.
        let plain = try h.kc(["find", "-s", "git", "-a", "plain"])
        #expect(!plain.stdout.contains("secret-service") && !plain.stdout.contains("content-type"), "\(plain.stdout)")
    }

    /// kc's export keeps the map and content type, and an import into another keychain puts
    /// them back: the pairs are indexed there, and a second import finds the items unchanged.
    @Test func exportAndImportKeepTheMap() throws {
        let (h, agent) = try Self.heldKeychain()
        let file = h.directory + "/export.json"
        var out = try h.kc(["export", "-o", file])
        #expect(out.status == 0, "\(out.stderr)")
        let exported = try String(contentsOfFile: file, encoding: .utf8)
        #expect(exported.contains(#""secret-service-attributes":{"server":"github.com","user":"alice","xdg:schema":"org.git.Password"}"#), "\(exported)")
        let other = h.directory + "/other.keychain-db"
        #expect(try h.kc(["create", "--kdf", "interactive", other], password: "other").status == 0)
        out = try h.kc(["import", "-k", other, file], password: "other")
        #expect(out.status == 0, "\(out.stdout)\(out.stderr)")
        out = try h.kc(["import", "-k", other, file, "--json"], password: "other")
        #expect(out.status == 0 && out.stdout.contains(#""unchanged":2"#), "a second import adds nothing: \(out.stdout)")
        #expect(try h.kc(["unlock", "-k", other], password: "other").status == 0)
        guard
            case .result(let reply) = try agent.perform(
                path: other,
                .copyMatching([
                    kSecClass: kSecClassGenericPassword, Self.map: ["xdg:schema": "org.git.Password", "user": "alice"],
                    kSecReturnAttributes: true, kSecReturnData: true
                ]))
        else { Issue.record("the agent does not hold \(other)"); return }
        let item = try #require(try reply.value() as? [String: Any])
        #expect(item[Self.map] as? [String: String] == Self.pairs)
        #expect(item[kcAttrContentType] as? String == "text/plain")
        #expect(item[kSecValueData] as? Data == Data("gh-token".utf8))
        #expect(try h.kc(["verify", "-k", other]).status == 0)
    }
}
