import Foundation
import Testing
@testable import KeychainCore
import AgentWire

/// The agent protocol pinned by bytes: `Tests/Vectors/agent/*.hex` were written from
/// `docs/protocol.md` alone (make_agent_vectors.py, no kc code). Each is decoded with kc's
/// decoders into its typed request or reply, and encoded back to the very same bytes.
@Suite struct AgentVectorTests {
    static let folder = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Vectors/agent").path
    static let path = "/home/alice/.local/share/kc/login.keychain-db"

    static var names: [String] {
        ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []).filter { $0.hasSuffix(".hex") }
            .map { String($0.dropLast(4)) }.sorted()
    }

    /// A vector's frame, and its payload (version ‖ type ‖ body) checked against its length.
    static func vector(_ name: String) throws -> (frame: [UInt8], payload: [UInt8]) {
        let text = try String(contentsOfFile: folder + "/" + name + ".hex", encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)
        var bytes: [UInt8] = []
        var i = text.startIndex
        while i < text.endIndex {
            let j = text.index(i, offsetBy: 2)
            bytes.append(try #require(UInt8(text[i..<j], radix: 16), "\(name) is not hex"))
            i = j
        }
        #expect(bytes.count >= 7)
        let length = Int(bytes[0]) << 24 | Int(bytes[1]) << 16 | Int(bytes[2]) << 8 | Int(bytes[3])
        #expect(length == bytes.count - 4, "\(name): the length prefix")
        return (bytes, Array(bytes.dropFirst(4)))
    }

    @Test func everyMessageHasAVector() {
        #expect(Self.names.filter { $0.hasPrefix("request-") }.count == 17)
        #expect(Self.names.filter { $0.hasPrefix("reply-") }.count == 13)
    }

    @Test(arguments: AgentVectorTests.names.filter { $0.hasPrefix("request-") })
    func requestsDecodeAndEncodeToTheSameBytes(_ name: String) throws {
        let (frame, payload) = try Self.vector(name)
        let (version, type, body) = try AgentProtocol.parse(payload)
        #expect(version == AgentProtocol.version)
        let encoded: [UInt8]
        let decoded = try AgentRequest.decode(type: type, body: body)
        switch consume decoded {
        case .unlock(let path, let password, let idle, let maximum):
            #expect(name == "request-unlock" && path == Self.path && idle == 900 && maximum == 43200)
            #expect(password.withUnsafeBytes { Array($0) } == Array("hunter2".utf8))
            encoded = AgentRequest.unlockBody(path: path, password: password, idle: idle, maximum: maximum).bytes
        case .lock(let all, let path):
            #expect(all == (name == "request-lock-all"))
            encoded = AgentRequest.lockBody(path: all ? nil : path)
        case .status:
            #expect(name == "request-status")
            encoded = []
        case .stop:
            #expect(name == "request-stop")
            encoded = []
        case .operation(let path, let request):
            #expect(path == Self.path)
            try Self.checkMeaning(name, request)
            encoded = try AgentRequest.operationBody(path: path, request).bytes
        case .unlockWithKept(let kept):
            #expect(name == "request-unlock-with-kept")
            #expect(
                kept
                    == KeptPassword(
                        path: "/home/alice/.local/share/kc/awsvault.keychain-db", holder: Self.path,
                        service: "kc-secret-service", account: "awsvault", create: true))
            encoded = AgentRequest.unlockWithKeptBody(kept)
        case .unlockWithSlot(let path, let kind, let secret, let idle, let maximum):
            #expect(name == "request-unlock-with-slot" && path == Self.path && kind == .recovery && idle == 0 && maximum == 0)
            #expect(secret.withUnsafeBytes { Array($0) } == Array(0..<32))
            encoded = AgentRequest.unlockWithSlotBody(path: path, kind: kind, secret: secret, idle: idle, maximum: maximum).bytes
        }
        #expect(AgentProtocol.frame(type: type, body: encoded) == frame, "\(name) re-encodes to other bytes")
    }

    /// What each operation vector says, typed.
    static func checkMeaning(_ name: String, _ request: KeychainRequest) throws {
        switch (name, request) {
        case ("request-add", .add(let q)):
            #expect(q[kSecValueData] as? Data == Data("token".utf8) && q[kSecAttrAccount] as? String == "alice")
        case ("request-copy-matching", .copyMatching(let q)):
            #expect(q[kSecReturnData] as? Bool == true && q[kSecMatchLimit] as? String == kSecMatchLimitAll)
            #expect(q[kcAttrSecretServiceAttributes] as? [String: String] == ["server": "github.com", "user": "alice"])
            #expect(
                try ItemQuery(q, for: .copyMatching).attributes[kcAttrSecretServiceAttributes]
                    == .map(try AttributeMap(parsing: ["user": "alice", "server": "github.com"], key: "kcsa")))
        case ("request-update", .update(let q, let attributes)):
            #expect(q[kSecAttrService] as? String == "github.com" && attributes[kSecValueData] as? Data == Data("new token".utf8))
        case ("request-delete", .delete(let q)):
            #expect(q.count == 3)
        case ("request-count", .count(let q)):
            #expect(q[kSecAttrPort] as? Int == 443)
        case ("request-backup", .backup(let b)):
            #expect(b == BackupRequest(destination: "/home/alice/backups/login.keychain-db", replacing: false))
        case ("request-import", .importItems(let i)):
            #expect(i.items.count == 2 && i.updateExisting && !i.dryRun && i.skipInvalid)
            #expect(i.items[0].source == "line 2" && i.items[0].created == Date(timeIntervalSinceReferenceDate: 0))
            #expect(i.items[0].modified == Date(timeIntervalSinceReferenceDate: 86400.5) && i.items[1].created == nil)
        case ("request-copy-many", .copyMany(let b)):
            #expect(b.queries.count == 2 && b.queries[1][kSecAttrService] as? String == "npm")
            #expect(b.queries[1][kcAttrSecretServiceAttributes] as? [String: String] == [:], "an empty map travels as a dictionary")
        case ("request-verify", .verify):
            break
        case ("request-copy-page", .copyPage(let q, let after, let limit)):
            #expect(after == 1000 && limit == 500 && q[kSecReturnAttributes] as? Bool == true && q[kSecReturnPersistentRef] as? Bool == true)
        default:
            Issue.record("\(name) decoded as \(request.operation)")
        }
    }

    /// Version 4's `operationWithProof` (type 7: the keychain's password as a proof of user
    /// presence, before an operation's body) is no request of version 5: refused as unknown,
    /// so no agent ever takes a password as a proof again (issue 29, item 8).
    @Test func theOldProofRequestIsRefused() throws {
        var body: [UInt8] = [0, 0, 0, 7] + Array("hunter2".utf8)
        body += try AgentRequest.operationBody(path: Self.path, .copyMatching([kSecClass: kSecClassGenericPassword])).bytes
        #expect(throws: KeychainError.self) { _ = try AgentRequest.decode(type: 7, body: body) }
        #expect(AgentProtocol.Request(rawValue: 7) == nil)
    }

    @Test(arguments: AgentVectorTests.names.filter { $0.hasPrefix("reply-") })
    func repliesDecodeAndEncodeToTheSameBytes(_ name: String) throws {
        let (frame, payload) = try Self.vector(name)
        let reply = try AgentReply.decode(payload)
        #expect(reply.frame() == frame, "\(name) re-encodes to other bytes")
        switch (name, reply) {
        case ("reply-error", .error(let e)):
            #expect(e == KeychainError(errSecItemNotFound, "no item matches", hint: "list items with kc find --all"))
        case ("reply-error-no-hint", .error(let e)):
            #expect(e == KeychainError(errSecAuthFailed, "wrong password"))
        case ("reply-not-held", .notHeld):
            break
        case ("reply-presence-required", .presenceRequired(let items)):
            #expect(items == ["\"github.com\" (account \"alice\")", "\"npm\""])
        case ("reply-status", .ok(let value)):
            #expect(try HeldKeychain.list(value) == [HeldKeychain(path: Self.path, idle: 840, maximum: 43000, idleTimeout: 900)])
            #expect(AgentReply.ok(try HeldKeychain.list(value).map(\.dictionary)).frame() == frame)
        case ("reply-status-empty", .ok(let value)):
            #expect(try HeldKeychain.list(value) == [])
            #expect(AgentReply.ok(try HeldKeychain.list(value).map(\.dictionary) as [Any]).frame() == frame, "an empty list travels as a list")
            #expect(AgentReply.ok([Any]()).frame() == frame)
        case ("reply-import", .ok(let value)):
            let request = ImportRequest(
                items: Array(repeating: ImportItem(query: [:], source: "x"), count: 5),
                updateExisting: true, dryRun: false, skipInvalid: true)
            let typed = try KeychainReply(wire: value, for: .importItems(request))
            guard case .outcomes(let outcomes) = typed else { Issue.record("not outcomes"); return }
            #expect(
                outcomes == [
                    .created, .updated(duplicateOf: nil), .unchanged(duplicateOf: 0), .skipped(duplicateOf: nil),
                    .invalid(KeychainError(errSecParam, "no class"))
                ])
            #expect(AgentReply.ok(typed.wireValue).frame() == frame)
        case ("reply-copy-many", .ok(let value)):
            let typed = try KeychainReply(wire: value, for: .copyMany(BatchRequest(queries: [[:], [:], [:]])))
            guard case .results(let results) = typed else { Issue.record("not results"); return }
            #expect((try? results[0].get()) as? Data == Data("token".utf8))
            #expect(throws: KeychainError(errSecItemNotFound, "no item matches")) { try results[1].get() }
            let items = try #require((try? results[2].get()) as? [[String: Any]])
            #expect(items.first?[kcAttrSecretServiceAttributes] as? [String: String] == ["service": "npm", "username": "me"])
            #expect(AgentReply.ok(typed.wireValue).frame() == frame)
        case ("reply-page", .ok(let value)):
            let typed = try KeychainReply(wire: value, for: .copyPage([:], after: 1000, limit: 500))
            guard case .page(let page) = typed else { Issue.record("not a page"); return }
            #expect(page.next == 1234 && page.items.count == 1)
            #expect((page.items.first as? [String: Any])?[kSecValuePersistentRef] as? Data == Data("genp0123456789abcdef".utf8))
            #expect(AgentReply.ok(typed.wireValue).frame() == frame)
            // A page that does not move on, or holds more than asked for, is refused: a client
            // must never ask for the same page for ever.
            #expect(throws: KeychainError.self) { try KeychainReply(wire: value, for: .copyPage([:], after: 1234, limit: 500)) }
            #expect(throws: KeychainError.self) { try KeychainReply(wire: ["items": [1, 2]] as [String: Any], for: .copyPage([:], after: nil, limit: 1)) }
        case ("reply-ok-count", .ok(let value)):
            #expect(try KeychainReply(wire: value, for: .verify).count() == 3)
        case ("reply-ok-attributes", .ok(let value)):
            let typed = try KeychainReply(wire: value, for: .copyMatching([:]))
            let item = try #require((try typed.value() as? [[String: Any]])?.first)
            #expect(item[kcAttrSecretServiceAttributes] as? [String: String] == ["server": "github.com", "user": "alice"])
            #expect(item[kcAttrContentType] as? String == "text/plain")
            #expect(AgentReply.ok(typed.wireValue).frame() == frame)
            // What the keychain returns, a [String: String] inside, encodes to the same bytes.
            var native = item
            native[kcAttrSecretServiceAttributes] = ["user": "alice", "server": "github.com"] as [String: String]
            #expect(AgentReply.ok([native] as [Any]).frame() == frame)
        case ("reply-ok-null", .ok(let value)), ("reply-ok-data", .ok(let value)):
            let typed = try KeychainReply(wire: value, for: .copyMatching([:]))
            #expect(AgentReply.ok(typed.wireValue).frame() == frame)
        default:
            Issue.record("\(name) decoded as an unexpected reply")
        }
    }

    /// An agent built before empty lists travelled as lists answered "nothing held" with
    /// empty data (`00 00 00 00 02`): still read as an empty list, anything else refused.
    @Test func anOlderAgentsEmptyStatusReadsAsNothingHeld() throws {
        let old = AgentProtocol.frame(type: 0x80, body: [2, 0, 0, 0, 0])
        guard case .ok(let value) = try AgentReply.decode(Array(old.dropFirst(4))) else { Issue.record("not ok"); return }
        #expect(try HeldKeychain.list(value) == [])
        #expect(throws: KeychainError.self) { try HeldKeychain.list(Data([1])) }
        #expect(throws: KeychainError.self) { try HeldKeychain.list("a string") }
    }

    @Test func aReplyOfTheWrongShapeForItsRequestIsRefused() throws {
        let (_, payload) = try Self.vector("reply-ok-data")
        guard case .ok(let value) = try AgentReply.decode(payload) else { Issue.record("not ok"); return }
        #expect(throws: KeychainError.self) { try KeychainReply(wire: value, for: .count([:])) }
        #expect(throws: KeychainError.self) {
            try KeychainReply(wire: value, for: .importItems(ImportRequest(items: [], updateExisting: false, dryRun: false, skipInvalid: false)))
        }
    }
}
