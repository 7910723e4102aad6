import KeychainCore
import AgentWire
import SSHAgent
#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Entry points for fuzzing the decoders that read bytes an attacker can choose: the query
/// dictionary decoder (a value from the agent's codec, then `ItemQuery`'s rules), the agent
/// protocol decoder (`AgentProtocol.parse`, `AgentRequest.decode`) and the database row
/// decoder (`RowCodec.open` on a row built from the bytes, and the metadata codec), and the
/// DER readers of what an item holds (`DistinguishedName` for a certificate's issuer and
/// subject as `kc find` prints them, `KeyBlob` for a key's size), and the SSH agent's message
/// decoder (`SSHAgentRequest.decode`: what any client of `ssh-agent.sock` sends). Each
/// takes any bytes and must return: no crash, no hang, no sanitizer report.
/// `make fuzz` runs them under libFuzzer with AddressSanitizer (`fuzz/`); FuzzTests in
/// `make test` replays the kept corpus, the seeds and a seeded random run through them.
public enum FuzzTargets {
    /// The decoders that can be fuzzed.
    public enum Target: String, CaseIterable, Sendable {
        case query, agent, row, der, ssh
    }

    /// Feeds `bytes` to one decoder. - Returns: whether the decoder accepted them (every
    /// refusal is an expected answer).
    @discardableResult
    public static func run(_ target: Target, _ bytes: [UInt8]) -> Bool {
        switch target {
        case .query: return query(bytes)
        case .agent: return agent(bytes)
        case .row: return row(bytes)
        case .der: return der(bytes)
        case .ssh: return ssh(bytes)
        }
    }

    /// Valid inputs for a target, to start a corpus from.
    public static func seeds(_ target: Target) -> [[UInt8]] {
        let queries: [[String: Any]] = [
            [kSecClass: kSecClassGenericPassword, kSecAttrService: "svc", kSecAttrAccount: "me", kSecReturnData: true],
            [
                kSecClass: kSecClassInternetPassword, kSecAttrServer: "example.com", kSecAttrPort: 443,
                kSecAttrProtocol: kSecAttrProtocolHTTPS, kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true
            ],
            [
                kSecClass: kSecClassGenericPassword, kSecAttrService: "s", kSecValueData: Data([0, 1, 2]),
                kSecAttrSynchronizable: kSecAttrSynchronizableAny, kSecAttrCreationDate: Date(timeIntervalSinceReferenceDate: 0)
            ],
            [
                kSecClass: kSecClassKey, kSecAttrApplicationTag: Data("tag".utf8), kSecAttrKeyType: kSecAttrKeyTypeEC,
                kSecAttrKeySizeInBits: 256, kSecAttrCanSign: true, kSecMatchLimit: 2
            ],
            // Format 3: a Secret Service map (a dictionary inside the query) and content type.
            [
                kSecClass: kSecClassGenericPassword, kcAttrSecretServiceAttributes: ["service": "svc", "username": "me"],
                kcAttrContentType: "text/plain", kSecMatchLimit: kSecMatchLimitAll, kSecReturnAttributes: true
            ]
        ]
        switch target {
        case .der:
            return derSeeds
        case .ssh:
            return sshSeeds
        case .query:
            return queries.enumerated().compactMap { i, q in
                var w = ByteWriter(capacity: 256)
                w.u8(i == 2 ? 0 : 1)   // the one with data is for add, the rest for copy
                guard (try? ValueCodec.encode(q, into: &w)) != nil else { return nil }
                return w.bytes
            }
        case .agent:
            var seeds: [[UInt8]] = []
            for q in queries {
                var w = ByteWriter(capacity: 256)
                w.lengthPrefixed(Array("/home/me/.local/share/kc/login.keychain-db".utf8))
                w.u8(AgentProtocol.Operation.copyMatching.rawValue)
                guard (try? ValueCodec.encode(q, into: &w)) != nil, (try? ValueCodec.encode(nil, into: &w)) != nil else { continue }
                seeds.append(Array(AgentProtocol.frame(type: AgentProtocol.Request.operation.rawValue, body: w.bytes).dropFirst(4)))
            }
            var unlock = ByteWriter(capacity: 64)
            unlock.lengthPrefixed(Array("/k".utf8))
            unlock.lengthPrefixed(Array("password".utf8))
            unlock.u64(300)
            unlock.u64(3600)
            seeds.append(Array(AgentProtocol.frame(type: AgentProtocol.Request.unlock.rawValue, body: unlock.bytes).dropFirst(4)))
            var lock = ByteWriter(capacity: 16)
            lock.u8(0)
            lock.lengthPrefixed(Array("/k".utf8))
            seeds.append(Array(AgentProtocol.frame(type: AgentProtocol.Request.lock.rawValue, body: lock.bytes).dropFirst(4)))
            seeds.append(Array(AgentProtocol.frame(type: AgentProtocol.Request.status.rawValue, body: []).dropFirst(4)))
            return seeds
        case .row:
            guard let codec = fixedCodec else { return [] }
            var attributes: [String: AttributeValue] = [
                "svce": .string("svc"), "acct": .string("me"), "sync": .int(0),
                "cdat": .date(0), "gena": .data([1, 2, 3])
            ]
            var withMap = attributes
            if let map = try? AttributeMap(parsing: ["service": "svc", "username": "me"], key: kcAttrSecretServiceAttributes) {
                withMap[kcAttrSecretServiceAttributes] = .map(map)
                withMap[kcAttrContentType] = .string("text/plain")
            }
            return [Data("s3cret".utf8), nil, Data(), Data("with a map".utf8)].compactMap { data -> [UInt8]? in
                if data == Data("with a map".utf8) { attributes = withMap }
                let id = [UInt8](repeating: 7, count: 16)
                let sealed: ItemRow?
                if let data {
                    sealed = try? Array(data).withUnsafeBytes {
                        try codec.seal(
                            itemID: id, itemClass: .genericPassword, rowVersion: 1,
                            attributes: attributes, data: $0)
                    }
                } else {
                    sealed = try? codec.seal(itemID: id, itemClass: .genericPassword, rowVersion: 1, attributes: attributes, data: nil)
                }
                guard let row = sealed else { return nil }
                var w = ByteWriter(capacity: 512)
                w.lengthPrefixed(row.itemID)
                w.lengthPrefixed(Array(row.classCode.utf8))
                w.u64(row.rowVersion)
                w.lengthPrefixed(row.primaryKey)
                w.u8(UInt8(row.indexes.count))
                for (column, value) in row.indexes.sorted(by: { $0.key.rawValue < $1.key.rawValue }) {
                    w.lengthPrefixed(Array(column.rawValue.utf8))
                    w.lengthPrefixed(value)
                }
                w.lengthPrefixed(row.wrappedKey)
                w.lengthPrefixed(row.metadata)
                w.u8(row.data == nil ? 0 : 1)
                if let d = row.data { w.lengthPrefixed(d) }
                // Format 3: the row's pair fingerprints, only when it has some (older corpus
                // entries end before them).
                if !row.pairs.isEmpty {
                    w.u8(UInt8(row.pairs.count))
                    for pair in row.pairs { w.lengthPrefixed(pair) }
                }
                return w.bytes
            }
        }
    }

    /// A distinguished name, then the key encodings `KeyBlob` reads: PKCS #1 RSA public and
    /// private, SubjectPublicKeyInfo for EC P-256, PKCS #8 for Ed25519, SEC 1 EC private, PEM.
    private static var derSeeds: [[UInt8]] {
        func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
            let n = content.count
            let length: [UInt8] = n < 0x80 ? [UInt8(n)] : n < 0x100 ? [0x81, UInt8(n)] : [0x82, UInt8(n >> 8), UInt8(n & 0xFF)]
            return [tag] + length + content
        }
        func attribute(_ oid: [UInt8], _ tag: UInt8, _ text: String) -> [UInt8] {
            tlv(0x31, tlv(0x30, tlv(0x06, oid) + tlv(tag, Array(text.utf8))))
        }
        let name = tlv(
            0x30,
            attribute([0x55, 0x04, 0x06], 0x13, "US") + attribute([0x55, 0x04, 0x0A], 0x0C, "kc, Test")
                + attribute([0x55, 0x04, 0x03], 0x0C, "#kc \\ \"seed\" ")
                + attribute([0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x09, 0x01], 0x16, "me@example.com")
                + attribute([0x2B, 0x06, 0x01, 0x04, 0x01, 0x82, 0x37, 0x3C, 0x02, 0x01, 0x03], 0x13, "DE")
                + attribute([0x2A, 0x03, 0x04], 0x1E, "odd"))
        let modulus = tlv(0x02, [0x00, 0xC3] + [UInt8](repeating: 0xA5, count: 62))
        let exponent = tlv(0x02, [0x01, 0x00, 0x01])
        let rsaPublic = tlv(0x30, modulus + exponent)
        let small = tlv(0x02, [0x35])
        let rsaPrivate = tlv(0x30, tlv(0x02, [0x00]) + modulus + exponent + small + small + small + small + small + small)
        let ecSPKI = tlv(
            0x30,
            tlv(
                0x30,
                tlv(0x06, [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01])
                    + tlv(0x06, [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]))
                + tlv(0x03, [0x00, 0x04] + [UInt8](repeating: 0x11, count: 64)))
        let ed25519 = tlv(
            0x30,
            tlv(0x02, [0x00]) + tlv(0x30, tlv(0x06, [0x2B, 0x65, 0x70]))
                + tlv(0x04, tlv(0x04, [UInt8](repeating: 0x22, count: 32))))
        let sec1 = tlv(
            0x30,
            tlv(0x02, [0x01]) + tlv(0x04, [UInt8](repeating: 0x33, count: 48))
                + tlv(0xA0, tlv(0x06, [0x2B, 0x81, 0x04, 0x00, 0x22])))
        let pem =
            Array("-----BEGIN PUBLIC KEY-----\n".utf8) + Array(Data(ecSPKI).base64EncodedString().utf8)
            + Array("\n-----END PUBLIC KEY-----\n".utf8)
        return [name, rsaPublic, rsaPrivate, ecSPKI, ed25519, sec1, pem]
    }

    private static func der(_ bytes: [UInt8]) -> Bool {
        let name = DistinguishedName.string(der: bytes)
        let key = KeyBlob(data: bytes)
        return name != nil || key != nil
    }

    private static func query(_ bytes: [UInt8]) -> Bool {
        var r = ByteReader(bytes)
        guard let selector = r.u8() else { return false }
        let operations: [KeychainCore.Operation] = [.add, .copyMatching, .update, .delete]
        guard let value = try? ValueCodec.decode(&r), let dictionary = value as? [String: Any] else { return false }
        return (try? ItemQuery(dictionary, for: operations[Int(selector) % operations.count])) != nil
    }

    private static func agent(_ bytes: [UInt8]) -> Bool {
        guard let (_, type, body) = try? AgentProtocol.parse(bytes) else { return false }
        do {
            let request = try AgentRequest.decode(type: type, body: body)
            _ = consume request
            return true
        } catch {
            return false
        }
    }

    private static func row(_ bytes: [UInt8]) -> Bool {
        _ = try? Metadata.decode(bytes)
        var r = ByteReader(bytes)
        guard let id = r.lengthPrefixed(max: 64), let classBytes = r.lengthPrefixed(max: 16), let version = r.u64(),
            let pk = r.lengthPrefixed(max: 64), let indexCount = r.u8()
        else { return false }
        var indexes: [IndexColumn: [UInt8]] = [:]
        for _ in 0..<indexCount {
            guard let name = r.lengthPrefixed(max: 16), let value = r.lengthPrefixed(max: 64) else { return false }
            if let column = IndexColumn(rawValue: String(decoding: name, as: UTF8.self)) { indexes[column] = value }
        }
        guard let wrapped = r.lengthPrefixed(max: 256),
            let metadata = r.lengthPrefixed(max: 1 << 20), let flag = r.u8()
        else { return false }
        let data = flag & 1 == 1 ? r.lengthPrefixed(max: 1 << 20) : nil
        var pairs: [[UInt8]] = []
        if let pairCount = r.u8() {
            for _ in 0..<pairCount {
                guard let pair = r.lengthPrefixed(max: 64) else { return false }
                pairs.append(pair)
            }
        }
        let row = ItemRow(
            itemID: id, classCode: String(decoding: classBytes, as: UTF8.self), rowVersion: version,
            primaryKey: pk, indexes: indexes, pairs: pairs, wrappedKey: wrapped, metadata: metadata, data: data)
        guard let codec = fixedCodec, let item = try? codec.open(row) else { return false }
        _ = item.attributes.count
        _ = try? codec.openDataCopy(row)
        return true
    }

    /// A codec under a fixed, known master key, so inputs sealed under it (the seeds) get
    /// past the tags and the fuzzer reaches the metadata parser.
    private static let fixedCodec: RowCodec? = {
        guard let secret = try? SecureBytes(copying: [UInt8](repeating: 0x6B, count: 32)) else { return nil }
        let keys = try? KeyHierarchy(
            master: SymmetricKey(secret), keychainID: [UInt8](repeating: 0, count: 16),
            keyGeneration: 1, blindKeyIDs: Schema.blindKeyIDs)
        return keys.map { RowCodec(keys: $0) }
    }()
}
