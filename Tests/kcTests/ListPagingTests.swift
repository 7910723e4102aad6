import Foundation
import Testing
import KeychainCore
import AgentWire
import KCTestSupport

/// `kc list` goes page by page through the agent (`copyPage`, docs/protocol.md): a keychain
/// whose listing is larger than one agent message (17 MiB) lists in full, and the agent's
/// memory does not grow with the listing (issue 31, "Scale").
@Suite struct ListPagingTests {
    /// 320 items, each with a Secret Service attribute of 60,000 bytes: a listing of about
    /// 19 MB, past the 17 MiB frame that a single reply had to fit before pages.
    @Test func kcListWorksOnAKeychainLargerThanOneMessage() throws {
        let home = try KCHome()
        try home.createKeychain()
        let filler = String(repeating: "x", count: 60_000)
        do {
            let keychain = try Keychain.open(at: home.defaultKeychain, password: try SecureBytes(copying: Array(KCHome.password.utf8)))
            defer { keychain.lock() }
            try keychain.addAll(
                (0..<320).lazy.map { i -> [String: Any] in
                    [
                        kSecClass: kSecClassGenericPassword, kSecAttrService: "svc-\(i)", kSecAttrAccount: "user-\(i)",
                        kSecValueData: Data("pw-\(i)".utf8),
                        kcAttrSecretServiceAttributes: ["service": "svc-\(i)", "username": "user-\(i)", "filler": filler]
                    ]
                })
        }
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        // The agent's peak memory from here on (the unlock's key derivation left out).
        let agent = try #require(
            Int32(String(contentsOfFile: home.directory + "/agent/agent.lock", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)))
        // (The agent is non-dumpable: only root may reset its peak; others skip that check.)
        let measured = (try? "5".write(toFile: "/proc/\(agent)/clear_refs", atomically: false, encoding: .utf8)) != nil
        let relay = try AgentRelay.start(home)
        defer { relay.stop() }
        let out = try home.kc(["list"])
        #expect(out.status == 0, "\(out.stderr)")
        let lines = out.stdout.split(separator: "\n")
        #expect(lines.count == 320, "\(lines.prefix(3))")
        #expect(lines.first?.hasPrefix("generic\tsvc-0\tuser-0\t") == true, "\(lines.first ?? "")")
        // Page by page: about 17 items of 60 KB each in a page of at most 1 MiB.
        let pages = relay.operations.filter { $0 == 10 }.count
        #expect(pages >= 18, "\(relay.operations)")
        #expect(relay.replySizes.allSatisfy { $0 < 2 << 20 }, "\(relay.replySizes.max() ?? 0) bytes in one reply")
        let status = try String(contentsOfFile: "/proc/\(agent)/status", encoding: .utf8)
        let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
        if measured { #expect(peak > 0 && peak < 48 * 1024, "the agent's peak memory: \(peak) kB") }
    }

    /// An agent of protocol 5 (before pages) is never misread: `kc list` stops at the first
    /// frame, saying to restart the agent.
    @Test func anAgentOfTheVersionBeforePagesIsRefusedClearly() throws {
        let h = try KCHome()
        try h.createKeychain()
        var w = ByteWriter()
        try ValueCodec.encode([["class": "genp", "svce": "svc", "acct": "me"]] as [Any], into: &w)
        _ = try AgentImpostor.start(h, holds: h.defaultKeychain, operationReply: w.bytes, version: 5)
        let out = try h.kc(["list"])
        #expect(out.status != 0 && out.stdout.isEmpty, "\(out.stdout)")
        #expect(out.stderr.contains("another protocol version (5)") && out.stderr.contains("kc agent --stop && kc unlock"), "\(out.stderr)")
    }

    /// A page whose next place does not move on (a forged or broken agent) is refused: kc
    /// never asks for the same page for ever.
    @Test func aPageThatDoesNotMoveOnIsRefused() throws {
        let h = try KCHome()
        try h.createKeychain()
        var w = ByteWriter()
        try ValueCodec.encode(["items": [["class": "genp", "svce": "svc", "acct": "me"]] as [Any], "next": 5] as [String: Any], into: &w)
        _ = try AgentImpostor.start(h, holds: h.defaultKeychain, operationReply: w.bytes, version: AgentProtocol.version)
        let out = try h.kc(["list"])
        #expect(out.status != 0 && out.stdout.isEmpty, "\(out.stdout)")
        #expect(out.stderr.contains("malformed answer from the kc agent"), "\(out.stderr)")
    }

    /// Pages that each move on but never end (a forged agent answering every page with as
    /// many items as asked and a next place one further) stop at the listing's bound: kc
    /// exits with an error instead of asking (and keeping rows) for ever.
    @Test func anImpostorWhosePagesNeverEndIsRefused() throws {
        let h = try KCHome()
        try h.createKeychain()
        var item = ByteWriter()
        try ValueCodec.encode([:] as [String: Any], into: &item)
        _ = try AgentImpostor.start(
            h, holds: h.defaultKeychain, version: AgentProtocol.version, endlessPages: (SearchPage.maxLimit, item.bytes))
        let env = h.environment.merging(["KC_PAGE_ITEMS": "\(SearchPage.maxLimit)"]) { _, b in b }
        let out = try KCBinary.run(["list", "--class", "generic"], environment: env, timeout: 20)
        #expect(out.status != 0 && out.stdout.isEmpty, "\(out.stdout.prefix(200))")
        #expect(out.stderr.contains("the agent's pages do not end"), "\(out.stderr)")
    }

    /// Pages of one item that is not a dictionary (`true`), each moving on: the listing's
    /// bound counted rows, filled only by dictionaries, so kc asked about 5,800 pages a
    /// second for ever. A page of attributes holding anything else is malformed, and a
    /// listing takes at most `SearchPage.maxListingSeconds` whatever its pages hold.
    @Test func anImpostorPagingItemsThatAreNotDictionariesIsRefused() throws {
        let h = try KCHome()
        try h.createKeychain()
        var item = ByteWriter()
        try ValueCodec.encode(true, into: &item)
        _ = try AgentImpostor.start(h, holds: h.defaultKeychain, version: AgentProtocol.version, endlessPages: (1, item.bytes))
        let out = try KCBinary.run(["list"], environment: h.environment, timeout: 20)
        #expect(out.status != 0 && out.stdout.isEmpty, "\(out.stdout.prefix(200))")
        #expect(out.stderr.contains("malformed answer from the kc agent"), "\(out.stderr)")
    }

    /// A page larger than a page may be (more than `SearchPage.maxBytes` before its last
    /// item) is refused: a forged agent cannot send 17 MiB frames as pages.
    @Test func aPageLargerThanAPageMayBeIsRefused() throws {
        let h = try KCHome()
        try h.createKeychain()
        // 2,000 items of about 1 KB: a page of 2 MB.
        var item = ByteWriter()
        try ValueCodec.encode(["class": "genp", "svce": "svc", "labl": String(repeating: "x", count: 1000)] as [String: Any], into: &item)
        _ = try AgentImpostor.start(h, holds: h.defaultKeychain, version: AgentProtocol.version, endlessPages: (2000, item.bytes))
        let out = try h.kc(["list"], extra: ["KC_PAGE_ITEMS": "\(SearchPage.maxLimit)"])
        #expect(out.status != 0 && out.stdout.isEmpty, "\(out.stdout.prefix(200))")
        #expect(out.stderr.contains("malformed answer from the kc agent"), "\(out.stderr)")
    }
}
