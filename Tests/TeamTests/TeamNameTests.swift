import Testing
import KeychainCore
import TeamCore

/// `team:NAME` locations: which names are team keychains and which are refused.
@Suite struct TeamNameTests {
    @Test func aTeamLocationNamesItsTeam() throws {
        #expect(try TeamName.parse("team:infra") == "infra")
        #expect(try TeamName.parse("team:ci-prod_2") == "ci-prod_2")
        #expect(try TeamName.parse("login") == nil)
        #expect(try TeamName.parse("/home/me/team:x.keychain-db") == nil)
    }

    @Test(arguments: ["team:", "team:-x", "team:Infra", "team:a/b", "team:" + String(repeating: "a", count: 65), "team:a b"])
    func aMalformedTeamNameIsRefused(_ location: String) {
        #expect(throws: KeychainError.self) { try TeamName.parse(location) }
        do { _ = try TeamName.parse(location) } catch let e as KeychainError { #expect(e.status == errSecParam) } catch {}
    }
}
