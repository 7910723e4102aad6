import Testing
import KeychainCore
@testable import kc_team

/// The order in which a `kc team` command chooses its team keychain (`TeamChoice.resolve`):
/// `-k`, then `KC_KEYCHAIN` when it names a team, then the configured default team, then
/// the only team joined. The command-line paths run the real binaries in
/// `TeamFirstHourTests.theOnlyTeamJoinedNeedsNoDashK`; the configured value enters here.
@Suite struct TeamChoiceTests {
    static func resolve(_ flag: String?, _ environment: String?, _ configured: String?, _ joined: [String]) throws -> String {
        try TeamChoice.resolve(flag: flag, environment: environment, configured: { configured }, joined: { joined })
    }

    @Test func theFlagThenTheEnvironmentThenTheConfiguredTeamThenTheOnlyOneJoined() throws {
        #expect(try Self.resolve("team:a", "team:b", "c", ["d"]) == "a")
        #expect(try Self.resolve("a", nil, nil, []) == "a", "a bare NAME is a team name too")
        #expect(try Self.resolve(nil, "team:b", "c", ["d"]) == "b")
        #expect(try Self.resolve(nil, "/home/x/login.keychain-db", "c", ["d"]) == "c", "a file keychain in KC_KEYCHAIN chooses no team")
        #expect(try Self.resolve(nil, nil, "team:c", ["d", "e"]) == "c")
        #expect(try Self.resolve(nil, nil, nil, ["d"]) == "d")
        #expect(try Self.resolve(nil, nil, "", ["d"]) == "d", "an empty configured value is none")
    }

    @Test func severalOrNoneJoinedAreErrorsThatSayWhatToDo() throws {
        let several = try #require(throws: TeamChoice.SeveralJoined.self) { try Self.resolve(nil, nil, nil, ["d", "e"]) }
        #expect(several.message.contains("(team:d, team:e)") && several.hint.contains("-k team:NAME"), "\(several.message) \(several.hint)")
        let none = try #require(throws: KeychainError.self) { try Self.resolve(nil, nil, nil, []) }
        #expect(none.status == errSecNoSuchKeychain)
        let bad = try #require(throws: KeychainError.self) { try Self.resolve("team:Not Valid", nil, nil, ["d"]) }
        #expect(bad.status == errSecParam)
    }
}
