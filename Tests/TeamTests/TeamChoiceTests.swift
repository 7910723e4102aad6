import Foundation
import Testing
import KeychainCore
import KCTestSupport
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

    /// A malformed `team:…` in `KC_KEYCHAIN` is an error, never passed over for the
    /// configured or only joined team (where `kc team remove` would re-key another team);
    /// a word naming a file keychain (`TEAM:x` is one) still leaves the choice to what follows.
    @Test func aMalformedTeamInTheEnvironmentIsAnError() throws {
        for word in ["team:other team", "team:", "team:../rt2", "team:Infra"] {
            let bad = try #require(throws: KeychainError.self, "\(word)") { try Self.resolve(nil, word, "c", ["d"]) }
            #expect(bad.status == errSecParam, "\(word)")
        }
        #expect(try Self.resolve(nil, "TEAM:other", nil, ["d"]) == "d", "TEAM:other names a file keychain")
    }

    /// The same through the real binaries: with team:infra joined, `KC_KEYCHAIN='team:bad
    /// name' kc team head` exits with the parameter error naming the bad name, not infra's head.
    @Test func kcTeamRefusesAMalformedTeamInTheEnvironment() throws {
        let (admin, _) = try TeamCommandTests.admin(try TestPostgres.shared.newDatabase())
        let out = try TeamCommandTests.run(
            admin, ["team", "head"], expect: Int32(UInt8(truncatingIfNeeded: errSecParam)), extra: ["KC_KEYCHAIN": "team:bad name"])
        #expect(out.stdout.isEmpty, "\(out.stdout)")
        #expect(out.stderr.contains("\"bad name\" is not a team name"), "\(out.stderr)")
    }
}
