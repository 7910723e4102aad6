import Foundation
import KCTestSupport
import KeychainCore
import POSIXSupport
import Testing

/// "A silent client pins nothing": however many idle connections a same-uid process (or a
/// host the agent is forwarded to) holds open, a new client is served; the connection idle
/// longest is the one closed to make room.
@Suite struct IdleConnectionTests {
    @Test func seventyIdleConnectionsDoNotLockSshAddOut() throws {
        let f = try SSHAgentFixture()
        let key = try f.makeKey("served", type: "ed25519")
        #expect(try f.sshAdd([key]).status == 0)
        var idle: [UnixSocket] = []
        for _ in 0..<70 {
            let c = try #require(try UnixSocket.connect(to: f.socket))
            // Each one answered once, then silent (a REQUEST_IDENTITIES keeps it fresh).
            #expect(try f.exchange([11], on: c)?.first == 12)
            idle.append(c)
        }
        let listed = try f.sshAdd(["-l"])
        #expect(listed.status == 0, "\(listed.stderr)")
        #expect(listed.stdout.contains("served"))
        // The first connections, idle longest, were closed to make room; the last still work.
        #expect(((try? f.exchange([11], on: idle[0])) ?? nil) == nil)
        #expect(try f.exchange([11], on: idle[69])?.first == 12)
    }
}
