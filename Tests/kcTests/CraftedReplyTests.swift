import Foundation
import KCTestSupport
import AgentWire
import KeychainClient
import KeychainCore
import Testing

/// Replies of the wrong shape from a process posing as the agent (review of issue 16):
/// docs/security.md lets such a process answer lookups with values of its choosing, but
/// kc must reject or print them, never trap on them.
@Suite struct CraftedReplyTests {
    /// A value as the agent protocol encodes it (ValueCodec).
    static func encoded(_ value: Any?) throws -> [UInt8] {
        var w = ByteWriter()
        try ValueCodec.encode(value, into: &w)
        return w.bytes
    }

    /// Starts a non-dumpable `AgentImpostor` that says it holds `keychain` and answers every
    /// operation with `operationReply`.
    func startImpostor(_ h: KCHome, holding keychain: String, operationReply: [UInt8], asUser: String = "") throws -> String {
        try AgentImpostor.start(
            h, kind: .nondumpable, holds: keychain, operationReply: operationReply,
            version: AgentProtocol.version, asUser: asUser)
    }

    /// A lookup answered with a date no calendar holds (1e300 s, NaN): `kc find` traps in
    /// the date formatter (exit 132/133 by SIGILL/SIGTRAP). Dates come from the agent as
    /// raw IEEE-754 bits, so anything can arrive; it must print, not crash.
    @Test(arguments: [1e300, Double.nan, -Double.infinity])
    func aLookupAnsweredWithAnAbsurdDateDoesNotCrashFind(_ seconds: Double) throws {
        let h = try KCHome()
        try h.createKeychain()
        let date = Date(timeIntervalSinceReferenceDate: seconds)
        let item: [String: Any] = ["class": "genp", "svce": "svc", "acct": "me", "cdat": date, "mdat": date]
        _ = try startImpostor(h, holding: h.defaultKeychain, operationReply: try Self.encoded([item] as [Any]))
        for arguments in [["find", "-s", "svc"], ["find", "-s", "svc", "--json"], ["find", "--all"]] {
            let out = try h.kc(arguments)
            #expect(!out.stderr.contains("Fatal error") && ![132, 133, 134, 139].contains(out.status), "\(arguments): crashed: \(out.stderr)")
        }
    }

    /// The same date stored for real: a key item whose start date is 1e300 s, added through
    /// the agent (as any program using the Security module may). Afterwards every
    /// `kc find --all` and `kc export` of that keychain trapped.
    @Test func anAbsurdStoredDateDoesNotCrashFindOrExport() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let agent = AgentClient(paths: AgentPaths(directory: h.directory + "/agent"))
        let added = try agent.perform(
            path: h.defaultKeychain,
            .add([
                kSecClass: kSecClassKey, kSecAttrLabel: "far-key", kSecAttrStartDate: Date(timeIntervalSinceReferenceDate: 1e300),
                kSecValueData: Data("k".utf8)
            ]))
        guard case .result = added else { Issue.record("the agent did not hold the keychain"); return }
        for arguments in [["find", "--class", "key", "--all"], ["find", "--class", "key", "--all", "--json"], ["export", "--force"]] {
            let out = try h.kc(arguments)
            #expect(out.status == 0, "\(arguments): \(out.status) \(out.stderr)")
        }
    }

    /// An import answered with an outcome that names an "earlier item" past the end of the
    /// import (`of`: 7 for a one-item import): `kc import` indexed its list with it and
    /// trapped. The reply is malformed, and must be refused as such (errSecIO).
    /// Run as a normal user, for whom a non-dumpable impostor passes the peer check.
    @Test(.enabled(if: geteuid() == 0, "needs root to run kc as another user"))
    func anImportOutcomeNamingAnItemThatDoesNotExistIsRefused() throws {
        let h = try NobodyHome()
        let reply = try Self.encoded([["outcome": "updated", "of": 7] as [String: Any]] as [Any])
        _ = try startImpostor(h.home, holding: h.home.defaultKeychain, operationReply: reply, asUser: NobodyHome.setpriv)
        let csv = h.home.directory + "/one.csv"
        try "name,url,username,password\nsite,https://site.example,me,pw1\n".write(toFile: csv, atomically: true, encoding: .utf8)
        #expect(chown(csv, 65534, 65534) == 0)
        let out = try h.kc(["import", csv])
        #expect(!out.stderr.contains("Fatal error") && ![132, 133, 134, 139].contains(out.status), "kc import crashed: \(out.stderr)")
        #expect(out.status != 0, "a malformed reply is not a successful import: \(out.stdout)")
        #expect(out.stderr.contains("malformed import reply"), "\(out.stderr)")
    }
}
