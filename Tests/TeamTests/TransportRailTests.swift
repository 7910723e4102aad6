import Foundation
import Testing
import KeychainCore
import KCTestSupport
@testable import TeamStore

/// The verified-TLS rail (docs/team.md, "TLS") holds whatever says where the server is:
/// the DSN, the PG* variables, or a pg_service file that `service=NAME` names. "Remote" is
/// what the connection reaches, not what a name says: any address but loopback
/// (127.0.0.0/8, ::1) or a Unix socket, this machine's own non-loopback addresses
/// included. Every server here is the real test cluster, reached through a relay on an
/// address of this machine (`StalledServer.Relay`); nothing leaves the machine.
@Suite struct TransportRailTests {
    /// This machine's non-loopback address, or a recorded failure saying there is none.
    static func remoteAddress() -> String? {
        let address = StalledServer.nonLoopbackAddress()
        if address == nil { Issue.record("this machine has no non-loopback address to test a remote connection with") }
        return address
    }

    /// A pg_service file naming the cluster through `relay` without TLS.
    static func serviceFile(in home: KCHome, relay: StalledServer.Relay, database: String) throws -> String {
        let path = home.directory + "/pg_service.conf"
        try "[kcteam]\nhost=\(relay.address)\nport=\(relay.port)\ndbname=\(database)\nuser=postgres\nsslmode=disable\n"
            .write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// `kc team create --dsn service=NAME`, the service naming a non-loopback address with
    /// sslmode=disable: refused as the same host in the DSN is; `--insecure-transport` is
    /// still the way out.
    @Test func aServiceFileCannotTakeTheTeamOffThisMachineWithoutVerifiedTLS() throws {
        guard let address = Self.remoteAddress() else { return }
        let relay = try StalledServer.Relay(on: address, to: try TestPostgres.shared.port())
        defer { relay.stop() }
        let db = TestPostgres.databaseName(of: try TestPostgres.shared.newDatabase())
        let admin = try KCHome()
        let env = ["PGSERVICEFILE": try Self.serviceFile(in: admin, relay: relay, database: db)]
        let args = ["team", "create", "infra", "--dsn", "service=kcteam", "--member", "admin", "--kdf", "interactive"]
        let refused = try TeamCommandTests.run(admin, args, expect: Int32(UInt8(truncatingIfNeeded: errSecParam)), extra: env)
        #expect(refused.stderr.contains("without verified TLS"), "\(refused.stderr)")
        #expect(!refused.stdout.contains("kct1:"))
        // The same server is reachable: only the rail refused it.
        let created = try TeamCommandTests.run(admin, args + ["--insecure-transport"], extra: env)
        #expect(created.stdout.hasPrefix("kct1:"), "\(created.stderr)")
    }

    /// The check on the established connection: through a relay on the non-loopback
    /// address the connection is remote (and refused without verified TLS); through one on
    /// 127.0.0.2 it is local (loopback is 127.0.0.0/8, not only 127.0.0.1).
    @Test func theRailJudgesTheAddressTheConnectionReached() throws {
        guard let address = Self.remoteAddress() else { return }
        let port = try TestPostgres.shared.port()
        let db = TestPostgres.databaseName(of: try TestPostgres.shared.newDatabase())
        let remote = try StalledServer.Relay(on: address, to: port)
        defer { remote.stop() }
        let loopback2 = try StalledServer.Relay(on: "127.0.0.2", to: port)
        defer { loopback2.stop() }
        let remoteDSN = "host=\(remote.address) port=\(remote.port) dbname=\(db) user=postgres sslmode=disable"
        var caught: KeychainError?
        do { _ = try PostgresConnection(dsn: remoteDSN) } catch let e as KeychainError { caught = e }
        #expect(caught?.status == errSecParam)
        #expect(caught?.message.contains(address) == true, "\(String(describing: caught))")
        // With the rail off, it connects: and what it reached is remote.
        let insecure = try PostgresConnection(dsn: remoteDSN, insecureTransport: true)
        #expect(PostgresConnection.peerDescription(insecure.socket).local == false)
        #expect(throws: KeychainError.self) { try insecure.checkEstablishedTransport() }
        // 127.0.0.2 is loopback: accepted without TLS, and reached as local.
        let local = try PostgresConnection(dsn: "host=127.0.0.2 port=\(loopback2.port) dbname=\(db) user=postgres sslmode=disable")
        #expect(PostgresConnection.peerDescription(local.socket).local)
        try local.checkEstablishedTransport()
        #expect(try local.execute("SELECT 1::int4").int64(0, 0) == 1)
    }
}
