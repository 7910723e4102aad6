import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// docs/team.md: "keeps showing an old head (a freeze) — with KC_TEAM_MAX_STALENESS, a
/// head older than that is refused". The limit is checked in the team agent, which kc
/// starts with an allow-listed environment: the setting must reach it, or the defence
/// silently does nothing from the command line.
@Suite struct FreezeEndToEndTests {
    @Test func kcTeamMaxStalenessReachesTheTeamAgent() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let home = try KCHome()
        let env = ["KC_TEAM_MAX_STALENESS": "8"]
        try TeamCommandTests.run(home, ["team", "create", "infra", "--dsn", dsn, "--member", "admin", "--kdf", "interactive"])
        try TeamCommandTests.run(home, ["unlock", "-k", "team:infra"], extra: env)   // starts the team agent
        // No writer sends a heartbeat: the newest signed entry (the creation) grows old.
        sleep(9)
        let frozen = try TeamCommandTests.run(
            home, ["list", "-k", "team:infra"], password: nil,
            expect: Int32(UInt8(truncatingIfNeeded: errSecInvalidKeychain)), extra: env)
        #expect(frozen.stderr.contains("KC_TEAM_MAX_STALENESS"), "\(frozen.stderr)")
    }
}
