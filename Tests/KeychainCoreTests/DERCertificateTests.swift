import Foundation
import Testing
import KCTestSupport
@testable import KeychainCore

/// All helpers are static members of this namespace suite (and the suites are nested in it)
/// so nothing here can clash with helpers declared in other test files of the module.
@Suite struct DERCertificateTests {
    // Test vectors live in Tests/Vectors/, next to this file's directory.
    // The certificates were generated with OpenSSL 3.0:
    //   cert-rsa-v3.der: openssl req -x509 -newkey rsa:2048 -subj "/C=US/O=kc Test/CN=kc RSA v3 Test"
    //                    -set_serial 0x80ABCDEF01  (v3, SKID + AKID + basicConstraints critical)
    //   cert-ec-v3.der:  openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1
    //                    -subj "/CN=kc EC Test/O=kc"  (v3, random 20-byte serial, SKID + AKID)
    //   cert-v1.der:     openssl x509 -req (no extensions) -subj "/CN=kc v1 Test" -set_serial 7,
    //                    signed by cert-rsa-v3 (so its issuer is cert-rsa-v3's subject)
    // Every expected value below was obtained independently of the code under test:
    //   serial:          openssl x509 -noout -serial
    //   issuer/subject:  byte ranges reported by `openssl asn1parse` (offset, hl + l), dumped with xxd
    //   publicKeyHash:   openssl x509 -pubkey | openssl pkey -pubin -outform DER, then the BIT STRING
    //                    found by `openssl asn1parse` minus its unused-bits byte, piped to sha1sum
    //   subjectKeyID:    openssl x509 -noout -ext subjectKeyIdentifier
    //   SHA-1 vectors:   FIPS 180-4 examples and sha1sum

    static let vectorsDirectory: String = {
        // .../Tests/KeychainCoreTests/DERCertificateTests.swift -> .../Tests/Vectors
        let testsDirectory = URL(fileURLWithPath: #filePath)
            .deletingLastPathComponent()
            .deletingLastPathComponent()
        return testsDirectory.appendingPathComponent("Vectors").path
    }()

    static func loadVector(_ name: String) throws -> [UInt8] {
        let path = vectorsDirectory + "/" + name
        let data = try #require(FileManager.default.contents(atPath: path), "missing test vector \(path)")
        return [UInt8](data)
    }

    static func hex(_ bytes: [UInt8]) -> String {
        let digits: [Character] = Array("0123456789abcdef")
        var result = ""
        for byte in bytes {
            result.append(digits[Int(byte >> 4)])
            result.append(digits[Int(byte & 0x0F)])
        }
        return result
    }

    // MARK: - SHA-1

    @Suite struct SHA1Tests {
        @Test func emptyString() {
            #expect(hex(SHA1.hash([])) == "da39a3ee5e6b4b0d3255bfef95601890afd80709")
        }

        @Test func abc() {
            #expect(hex(SHA1.hash(Array("abc".utf8))) == "a9993e364706816aba3e25717850c26c9cd0d89d")
        }

        @Test func fips448BitMessage() {
            let message = Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)
            #expect(message.count == 56)
            #expect(hex(SHA1.hash(message)) == "84983e441c3bd26ebaae4aa1f95129e5e54670f1")
        }

        @Test func fips896BitMessage() {
            let message = Array(
                "abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu".utf8)
            #expect(message.count == 112)
            #expect(hex(SHA1.hash(message)) == "a49b2446a02c645bf419f995b67091253a04a259")
        }

        @Test func oneMillionA() {
            let message = [UInt8](repeating: UInt8(ascii: "a"), count: 1_000_000)
            #expect(hex(SHA1.hash(message)) == "34aa973cd4c4daa4f61eeb2bdbad27316534016f")
        }

        /// Lengths around the padding boundaries; message i -> byte (i & 0xff). Expected values from sha1sum.
        @Test(arguments: [
            (55, "8ae2d46729cfe68ff927af5eec9c7d1b66d65ac2"),
            (56, "636e2ec698dac903498e648bd2f3af641d3c88cb"),
            (57, "7cb1330f35244b57437539253304ea78a6b7c443"),
            (63, "6d942da0c4392b123528f2905c713a3ce28364bd"),
            (64, "c6138d514ffa2135bfce0ed0b8fac65669917ec7"),
            (65, "69bd728ad6e13cd76ff19751fde427b00e395746"),
            (119, "41c89d06001bab4ab78736b44efe7ce18ce6ae08"),
            (120, "d3dbd653bd8597b7475321b60a36891278e6a04a"),
            (128, "e6434bc401f98603d7eda504790c98c67385d535"),
            (1000, "af0b191c2de46fe13fe0908f5a6a4e90e0cafc46")
        ])
        func paddingBoundaries(length: Int, expected: String) {
            let message = (0..<length).map { UInt8(truncatingIfNeeded: $0) }
            #expect(hex(SHA1.hash(message)) == expected)
        }

        @Test func digestIsAlwaysTwentyBytes() {
            for length in 0..<130 {
                #expect(SHA1.hash([UInt8](repeating: 0xFF, count: length)).count == 20)
            }
        }
    }

    // MARK: - Real certificates

    static let rsaName =
        "3038310b30090603550406130255533110300e060355040a0c076b6320546573743117301506035504030c0e6b63205253412076332054657374"
    static let ecName = "30223113301106035504030c0a6b632045432054657374310b3009060355040a0c026b63"
    static let v1SubjectName = "30153113301106035504030c0a6b632076312054657374"

    @Suite struct DERCertificateParsingTests {
        @Test func rsaV3Certificate() throws {
            let der = try loadVector("cert-rsa-v3.der")
            let certificate = try #require(DERCertificate(der: der))
            #expect(certificate.version == 3)
            // openssl: serial=80ABCDEF01 (high bit set, so DER prepends 0x00)
            #expect(hex(certificate.serialNumber) == "0080abcdef01")
            #expect(hex(certificate.issuer) == rsaName)
            #expect(hex(certificate.subject) == rsaName)
            #expect(certificate.subjectKeyID.map(hex) == "68d12e8912db2db8c0b2ccd8b3d130281434c9a9")
            #expect(hex(certificate.publicKeyHash) == "68d12e8912db2db8c0b2ccd8b3d130281434c9a9")
        }

        @Test func ecV3Certificate() throws {
            let der = try loadVector("cert-ec-v3.der")
            let certificate = try #require(DERCertificate(der: der))
            #expect(certificate.version == 3)
            // openssl: serial=59663133B2560B1D963C76FAE1947794C8B9B4E4
            #expect(hex(certificate.serialNumber) == "59663133b2560b1d963c76fae1947794c8b9b4e4")
            #expect(hex(certificate.issuer) == ecName)
            #expect(hex(certificate.subject) == ecName)
            #expect(certificate.subjectKeyID.map(hex) == "0cfe22f314268a73ae595f75be49a6c78ace639a")
            #expect(hex(certificate.publicKeyHash) == "0cfe22f314268a73ae595f75be49a6c78ace639a")
        }

        @Test func v1Certificate() throws {
            let der = try loadVector("cert-v1.der")
            let certificate = try #require(DERCertificate(der: der))
            #expect(certificate.version == 1)
            // openssl: serial=07
            #expect(hex(certificate.serialNumber) == "07")
            #expect(hex(certificate.issuer) == rsaName)
            #expect(hex(certificate.subject) == v1SubjectName)
            #expect(certificate.subjectKeyID == nil)
            #expect(hex(certificate.publicKeyHash) == "a583f56c4948ad25993bc8123bc8aae3ce07cb09")
        }

        @Test func issuerOfChildIsSubjectOfSigner() throws {
            let signer = try #require(DERCertificate(der: try loadVector("cert-rsa-v3.der")))
            let child = try #require(DERCertificate(der: try loadVector("cert-v1.der")))
            #expect(child.issuer == signer.subject)
            #expect(child.subject != signer.subject)
        }

        @Test func parsingIsDeterministic() throws {
            let der = try loadVector("cert-ec-v3.der")
            #expect(DERCertificate(der: der) == DERCertificate(der: der))
            #expect(DERCertificate(der: der) != DERCertificate(der: try loadVector("cert-rsa-v3.der")))
        }
    }

    // MARK: - Malformed real certificates

    static let vectorNames = ["cert-rsa-v3.der", "cert-ec-v3.der", "cert-v1.der"]

    @Suite struct DERCertificateMalformedTests {
        @Test func emptyInput() {
            #expect(DERCertificate(der: []) == nil)
            #expect(DERCertificate(der: [0x30]) == nil)
            #expect(DERCertificate(der: [0x30, 0x00]) == nil)
            #expect(DERCertificate(der: [0x00, 0x00]) == nil)
        }

        @Test(arguments: vectorNames)
        func everyTruncationIsRejected(name: String) throws {
            let der = try loadVector(name)
            #expect(DERCertificate(der: der) != nil)
            for length in 0..<der.count {
                #expect(DERCertificate(der: Array(der[0..<length])) == nil, "prefix of length \(length)")
            }
        }

        @Test(arguments: vectorNames)
        func trailingBytesAreRejected(name: String) throws {
            let der = try loadVector(name)
            #expect(DERCertificate(der: der + [0x00]) == nil)
            #expect(DERCertificate(der: der + [0x00, 0x00]) == nil)
            #expect(DERCertificate(der: der + [0xFF]) == nil)
            #expect(DERCertificate(der: der + der) == nil)
        }

        /// All three vectors start 30 82 hh ll (two-byte long-form length).
        @Test(arguments: vectorNames)
        func outerLengthMismatch(name: String) throws {
            let der = try loadVector(name)
            try #require(der.count > 4 && der[0] == 0x30 && der[1] == 0x82)
            let declared = Int(der[2]) << 8 | Int(der[3])
            try #require(declared == der.count - 4)

            // Claims one byte more than is present.
            var longer = der
            longer[2] = UInt8((declared + 1) >> 8)
            longer[3] = UInt8((declared + 1) & 0xFF)
            #expect(DERCertificate(der: longer) == nil)

            // Claims far more than is present.
            var huge = der
            huge[2] = 0xFF
            huge[3] = 0xFF
            #expect(DERCertificate(der: huge) == nil)

            // Claims one byte less: the last byte becomes trailing garbage.
            var shorter = der
            shorter[2] = UInt8((declared - 1) >> 8)
            shorter[3] = UInt8((declared - 1) & 0xFF)
            #expect(DERCertificate(der: shorter) == nil)

            // Maximal 4-byte length.
            let fourBytes: [UInt8] = [0x30, 0x84, 0xFF, 0xFF, 0xFF, 0xFF] + der[4...]
            #expect(DERCertificate(der: fourBytes) == nil)

            // Five length bytes are not supported.
            let fiveBytes: [UInt8] = [0x30, 0x85, 0x00, 0x00, 0x00] + der[2...]
            #expect(DERCertificate(der: fiveBytes) == nil)

            // Same length, non-minimally encoded (3 bytes with a leading zero).
            let nonMinimal: [UInt8] = [0x30, 0x83, 0x00] + der[2...]
            #expect(DERCertificate(der: nonMinimal) == nil)
        }

        @Test(arguments: vectorNames)
        func indefiniteLengthIsRejected(name: String) throws {
            let der = try loadVector(name)
            // Outer SEQUENCE re-encoded with the BER indefinite form plus end-of-contents.
            let outer: [UInt8] = [0x30, 0x80] + der[4...] + [0x00, 0x00]
            #expect(DERCertificate(der: outer) == nil)
            // The tbsCertificate (30 82 hh ll at offset 4) made indefinite; the outer length adjusted.
            try #require(der[4] == 0x30 && der[5] == 0x82)
            let tbsLength = Int(der[6]) << 8 | Int(der[7])
            let tbsContent = der[8..<(8 + tbsLength)]
            let rest = der[(8 + tbsLength)...]
            let inner: [UInt8] = [0x30, 0x80] + tbsContent + [0x00, 0x00] + rest
            let wrapped: [UInt8] = [0x30, 0x82, UInt8(inner.count >> 8), UInt8(inner.count & 0xFF)] + inner
            #expect(DERCertificate(der: wrapped) == nil)
        }

        @Test func innerLengthRunningPastParent() throws {
            let der = try loadVector("cert-rsa-v3.der")
            // Offset 36: issuer SEQUENCE, short-form length 0x38.
            try #require(der[36] == 0x30 && der[37] == 0x38)
            var tooLong = der
            tooLong[37] = 0x7F
            #expect(DERCertificate(der: tooLong) == nil)
            // Offset 13: serial INTEGER, length 6. Claiming more swallows the following fields.
            try #require(der[13] == 0x02 && der[14] == 0x06)
            var serialTooLong = der
            serialTooLong[14] = 0x7F
            #expect(DERCertificate(der: serialTooLong) == nil)
            // Length byte 0x80 (indefinite) on an inner element.
            var indefinite = der
            indefinite[37] = 0x80
            #expect(DERCertificate(der: indefinite) == nil)
            // Long form with a length that should have used the short form.
            var longFormSmall = der
            longFormSmall[14] = 0x81   // followed by 0x00 (first serial byte): leading zero, and < 128
            #expect(DERCertificate(der: longFormSmall) == nil)
        }

        /// Offsets of the identifier octets of cert-rsa-v3.der's structural elements, from
        /// `openssl asn1parse -i`: Certificate, tbsCertificate, [0], version INTEGER, serial,
        /// signature AlgorithmIdentifier + its OID, issuer + first SET/SEQUENCE/OID, validity
        /// + both UTCTimes, subject, SubjectPublicKeyInfo + algorithm + OID + BIT STRING, [3],
        /// Extensions, each Extension's SEQUENCE/OID/(BOOLEAN)/OCTET STRING, signatureAlgorithm
        /// + OID, signature BIT STRING.
        private static let rsaStructuralTagOffsets = [
            0, 4, 8, 10, 13, 21, 23, 36, 38, 40, 42, 94, 96, 111, 126, 184, 188, 190, 203,
            478, 480, 482, 484, 489, 513, 515, 520, 546, 548, 553, 556, 563, 565, 578
        ]

        @Test func flippingAnyBitOfAnyStructuralTagIsRejected() throws {
            let der = try loadVector("cert-rsa-v3.der")
            try #require(DERCertificate(der: der) != nil)
            for offset in Self.rsaStructuralTagOffsets {
                for bit in 0..<8 {
                    var mutated = der
                    mutated[offset] ^= UInt8(1) << UInt8(bit)
                    #expect(DERCertificate(der: mutated) == nil, "tag at offset \(offset), bit \(bit)")
                }
            }
        }

        @Test func flippingSubjectKeyIdentifierInnerTagIsRejected() throws {
            let der = try loadVector("cert-rsa-v3.der")
            // Offset 489: extnValue OCTET STRING (04 16), whose content starts with the inner 04 14.
            try #require(der[489] == 0x04 && der[491] == 0x04 && der[492] == 0x14)
            for bit in 0..<8 {
                var mutated = der
                mutated[491] ^= UInt8(1) << UInt8(bit)
                #expect(DERCertificate(der: mutated) == nil, "bit \(bit)")
            }
        }

        @Test func randomBuffersNeverParse() {
            var generator = SplitMix64(seed: 0x6B63_2D64_6572)
            for _ in 0..<3000 {
                let length = Int.random(in: 0...600, using: &generator)
                var buffer = (0..<length).map { _ in UInt8.random(in: 0...255, using: &generator) }
                // Half of them get a plausible outer header so parsing goes deeper.
                if Bool.random(using: &generator), length > 4 {
                    buffer[0] = 0x30
                    buffer[1] = 0x82
                    buffer[2] = UInt8((length - 4) >> 8)
                    buffer[3] = UInt8((length - 4) & 0xFF)
                    if Bool.random(using: &generator) {
                        buffer[4] = 0x30
                    }
                }
                #expect(DERCertificate(der: buffer) == nil)
            }
        }

        @Test(arguments: vectorNames)
        func randomMutationsOfRealCertificatesNeverCrash(name: String) throws {
            let der = try loadVector(name)
            var generator = SplitMix64(seed: UInt64(der.count) &* 0x1234_5678_9ABC)
            var parsed = 0
            for _ in 0..<1500 {
                var mutated = der
                switch Int.random(in: 0..<4, using: &generator) {
                case 0:   // overwrite a few bytes
                    for _ in 0..<Int.random(in: 1...4, using: &generator) {
                        mutated[Int.random(in: 0..<mutated.count, using: &generator)] =
                            UInt8.random(in: 0...255, using: &generator)
                    }
                case 1:   // delete a range
                    let start = Int.random(in: 0..<mutated.count, using: &generator)
                    let end = min(mutated.count, start + Int.random(in: 1...16, using: &generator))
                    mutated.removeSubrange(start..<end)
                case 2:   // insert random bytes
                    let at = Int.random(in: 0...mutated.count, using: &generator)
                    let inserted = (0..<Int.random(in: 1...16, using: &generator)).map { _ in
                        UInt8.random(in: 0...255, using: &generator)
                    }
                    mutated.insert(contentsOf: inserted, at: at)
                default:   // hit a length/tag-ish byte with an extreme value
                    let extremes: [UInt8] = [0x00, 0x7F, 0x80, 0x81, 0x82, 0x83, 0x84, 0x85, 0xFF, 0x1F]
                    mutated[Int.random(in: 0..<mutated.count, using: &generator)] =
                        extremes[Int.random(in: 0..<extremes.count, using: &generator)]
                }
                if let certificate = DERCertificate(der: mutated) {
                    parsed += 1
                    #expect(certificate.publicKeyHash.count == 20)
                    #expect(certificate.issuer.first == 0x30 && certificate.subject.first == 0x30)
                    #expect(!certificate.serialNumber.isEmpty)
                }
            }
            // Most mutations must be rejected (content-only changes may still parse).
            #expect(parsed < 1500)
        }
    }

    // MARK: - Synthetic certificates

    /// A tiny, independent DER encoder used only to build test certificates.
    static func tlv(_ tag: UInt8, _ content: [UInt8]) -> [UInt8] {
        let count = content.count
        var header: [UInt8] = [tag]
        if count < 0x80 {
            header.append(UInt8(count))
        } else {
            var lengthBytes: [UInt8] = []
            var remaining = count
            while remaining > 0 {
                lengthBytes.insert(UInt8(remaining & 0xFF), at: 0)
                remaining >>= 8
            }
            header.append(0x80 | UInt8(lengthBytes.count))
            header += lengthBytes
        }
        return header + content
    }

    static func sequence(_ parts: [UInt8]...) -> [UInt8] { tlv(0x30, parts.flatMap { $0 }) }
    static let sha256WithRSA: [UInt8] = sequence(
        tlv(0x06, [0x2A, 0x86, 0x48, 0x86, 0xF7, 0x0D, 0x01, 0x01, 0x0B]), [0x05, 0x00])
    static let idEcPublicKeyP256: [UInt8] = sequence(
        tlv(0x06, [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x02, 0x01]),
        tlv(0x06, [0x2A, 0x86, 0x48, 0xCE, 0x3D, 0x03, 0x01, 0x07]))
    static let commonNameOID: [UInt8] = tlv(0x06, [0x55, 0x04, 0x03])
    static func name(_ commonName: String) -> [UInt8] {
        sequence(tlv(0x31, sequence(commonNameOID, tlv(0x0C, Array(commonName.utf8)))))
    }
    static let defaultValidity: [UInt8] = sequence(
        tlv(0x17, Array("250101000000Z".utf8)), tlv(0x18, Array("20350101000000Z".utf8)))
    static let defaultKeyBits: [UInt8] = [0x04] + (1...64).map { UInt8($0) }
    static let skidOID: [UInt8] = tlv(0x06, [0x55, 0x1D, 0x0E])

    static func skidExtension(_ keyID: [UInt8], critical: [UInt8] = []) -> [UInt8] {
        sequence(skidOID, critical, tlv(0x04, tlv(0x04, keyID)))
    }

    static func opaqueExtension(size: Int) -> [UInt8] {
        // id-ce-certificatePolicies with an arbitrary (opaque to the parser) value.
        sequence(tlv(0x06, [0x55, 0x1D, 0x20]), tlv(0x04, [UInt8](repeating: 0xAB, count: size)))
    }

    static func makeCertificate(
        version: [UInt8]? = tlv(0xA0, tlv(0x02, [0x02])),
        serial: [UInt8] = tlv(0x02, [0x01, 0x02, 0x03]),
        issuer: [UInt8] = name("Issuer"),
        validity: [UInt8] = defaultValidity,
        subject: [UInt8] = name("Subject"),
        publicKey: [UInt8] = tlv(0x03, [0x00] + defaultKeyBits),
        uniqueIDs: [UInt8] = [],
        extensions: [[UInt8]]? = nil,
        rawExtensions: [UInt8]? = nil,
        afterSignature: [UInt8] = []
    ) -> [UInt8] {
        var tbs: [UInt8] = version ?? []
        tbs += serial + sha256WithRSA + issuer + validity + subject
        tbs += sequence(idEcPublicKeyP256, publicKey)
        tbs += uniqueIDs
        if let extensions {
            tbs += tlv(0xA3, tlv(0x30, extensions.flatMap { $0 }))
        }
        if let rawExtensions {
            tbs += rawExtensions
        }
        return sequence(tlv(0x30, tbs), sha256WithRSA, tlv(0x03, [0x00, 0xDE, 0xAD, 0xBE, 0xEF]), afterSignature)
    }

    @Suite struct DERCertificateSyntheticTests {
        @Test func baselineSyntheticCertificate() throws {
            let certificate = try #require(DERCertificate(der: makeCertificate()))
            #expect(certificate.version == 3)
            #expect(certificate.serialNumber == [0x01, 0x02, 0x03])
            #expect(certificate.issuer == name("Issuer"))
            #expect(certificate.subject == name("Subject"))
            #expect(certificate.subjectKeyID == nil)
            #expect(certificate.publicKeyHash == SHA1.hash(defaultKeyBits))
        }

        @Test func versions() {
            #expect(DERCertificate(der: makeCertificate(version: nil))?.version == 1)
            #expect(DERCertificate(der: makeCertificate(version: tlv(0xA0, tlv(0x02, [0x00]))))?.version == 1)
            #expect(DERCertificate(der: makeCertificate(version: tlv(0xA0, tlv(0x02, [0x01]))))?.version == 2)
            #expect(DERCertificate(der: makeCertificate(version: tlv(0xA0, tlv(0x02, [0x02]))))?.version == 3)
            // Unknown, negative, non-minimal, empty, wrongly wrapped versions.
            #expect(DERCertificate(der: makeCertificate(version: tlv(0xA0, tlv(0x02, [0x03])))) == nil)
            #expect(DERCertificate(der: makeCertificate(version: tlv(0xA0, tlv(0x02, [0xFF])))) == nil)
            #expect(DERCertificate(der: makeCertificate(version: tlv(0xA0, tlv(0x02, [0x00, 0x02])))) == nil)
            #expect(DERCertificate(der: makeCertificate(version: tlv(0xA0, tlv(0x02, [])))) == nil)
            #expect(DERCertificate(der: makeCertificate(version: tlv(0xA0, []))) == nil)
            #expect(DERCertificate(der: makeCertificate(version: tlv(0xA0, tlv(0x02, [0x02]) + [0x05, 0x00]))) == nil)
            #expect(DERCertificate(der: makeCertificate(version: tlv(0x80, [0x02]))) == nil)
        }

        @Test func serialNumbers() {
            let leadingZero = makeCertificate(serial: tlv(0x02, [0x00, 0x80, 0x01]))
            #expect(DERCertificate(der: leadingZero)?.serialNumber == [0x00, 0x80, 0x01])
            let twentyBytes = (1...20).map { UInt8($0) }
            #expect(DERCertificate(der: makeCertificate(serial: tlv(0x02, twentyBytes)))?.serialNumber == twentyBytes)
            #expect(DERCertificate(der: makeCertificate(serial: tlv(0x02, []))) == nil)
            #expect(DERCertificate(der: makeCertificate(serial: tlv(0x04, [0x01]))) == nil)
        }

        @Test func names() throws {
            // An empty subject Name is structurally valid.
            let empty = try #require(DERCertificate(der: makeCertificate(subject: [0x30, 0x00])))
            #expect(empty.subject == [0x30, 0x00])
            // A multi-valued RDN with two attributes.
            let multi = sequence(
                tlv(
                    0x31,
                    sequence(commonNameOID, tlv(0x0C, [0x61])) + sequence(tlv(0x06, [0x55, 0x04, 0x0A]), tlv(0x13, [0x62]))))
            #expect(DERCertificate(der: makeCertificate(issuer: multi))?.issuer == multi)
            // Empty RDN SET, RDN not a SET, attribute without a value, extra value, bad OID.
            #expect(DERCertificate(der: makeCertificate(issuer: sequence(tlv(0x31, [])))) == nil)
            #expect(DERCertificate(der: makeCertificate(issuer: sequence(tlv(0x30, sequence(commonNameOID, tlv(0x0C, [0x61])))))) == nil)
            #expect(DERCertificate(der: makeCertificate(issuer: sequence(tlv(0x31, sequence(commonNameOID))))) == nil)
            #expect(
                DERCertificate(
                    der: makeCertificate(
                        issuer: sequence(
                            tlv(
                                0x31,
                                sequence(commonNameOID, tlv(0x0C, [0x61]), tlv(0x0C, [0x62])))))) == nil)
            #expect(
                DERCertificate(
                    der: makeCertificate(
                        issuer: sequence(
                            tlv(
                                0x31,
                                sequence(tlv(0x06, [0x55, 0x84]), tlv(0x0C, [0x61])))))) == nil)
            // High-tag-number form in an attribute value.
            #expect(
                DERCertificate(
                    der: makeCertificate(
                        subject: sequence(
                            tlv(
                                0x31,
                                sequence(commonNameOID, [0x1F, 0x81, 0x00, 0x00]))))) == nil)
            // Name that is a SET instead of a SEQUENCE.
            #expect(DERCertificate(der: makeCertificate(subject: tlv(0x31, []))) == nil)
        }

        @Test func validity() {
            #expect(
                DERCertificate(
                    der: makeCertificate(
                        validity: sequence(
                            tlv(0x18, Array("20250101000000Z".utf8)), tlv(0x18, Array("20350101000000Z".utf8))))) != nil)
            #expect(DERCertificate(der: makeCertificate(validity: sequence(tlv(0x17, Array("250101000000Z".utf8))))) == nil)
            #expect(
                DERCertificate(
                    der: makeCertificate(
                        validity: sequence(
                            tlv(0x17, [0x30]), tlv(0x17, [0x30]), tlv(0x17, [0x30])))) == nil)
            #expect(DERCertificate(der: makeCertificate(validity: sequence(tlv(0x17, [0x30]), tlv(0x04, [0x30])))) == nil)
        }

        @Test func publicKeyBitString() {
            // Hash excludes the unused-bits byte.
            let bits: [UInt8] = [0x30, 0x0A, 0x02, 0x03, 0x01, 0x00, 0x01]
            #expect(
                DERCertificate(der: makeCertificate(publicKey: tlv(0x03, [0x00] + bits)))?.publicKeyHash
                    == SHA1.hash(bits))
            // Empty bit string (only the unused-bits byte) is valid DER.
            #expect(DERCertificate(der: makeCertificate(publicKey: tlv(0x03, [0x00])))?.publicKeyHash == SHA1.hash([]))
            // Unused bits > 7, unused bits on an empty string, non-zero padding bits, missing byte.
            #expect(DERCertificate(der: makeCertificate(publicKey: tlv(0x03, [0x08, 0x00]))) == nil)
            #expect(DERCertificate(der: makeCertificate(publicKey: tlv(0x03, [0x01]))) == nil)
            #expect(DERCertificate(der: makeCertificate(publicKey: tlv(0x03, [0x03, 0xFF]))) == nil)
            #expect(
                DERCertificate(der: makeCertificate(publicKey: tlv(0x03, [0x03, 0xF8])))?.publicKeyHash
                    == SHA1.hash([0xF8]))
            #expect(DERCertificate(der: makeCertificate(publicKey: tlv(0x03, []))) == nil)
            // Constructed BIT STRING is not DER.
            #expect(DERCertificate(der: makeCertificate(publicKey: tlv(0x23, tlv(0x03, [0x00] + bits)))) == nil)
        }

        @Test func uniqueIdentifiers() {
            let v2 = tlv(0xA0, tlv(0x02, [0x01]))
            let both = tlv(0x81, [0x00, 0x01, 0x02]) + tlv(0x82, [0x00, 0x03])
            #expect(DERCertificate(der: makeCertificate(version: v2, uniqueIDs: both))?.version == 2)
            #expect(DERCertificate(der: makeCertificate(version: v2, uniqueIDs: tlv(0x82, [0x00]))) != nil)
            #expect(
                DERCertificate(der: makeCertificate(uniqueIDs: tlv(0x81, [0x00]), extensions: [skidExtension([1])]))?
                    .subjectKeyID == [1])
            // Wrong order, constructed form, invalid bit string, duplicates.
            #expect(DERCertificate(der: makeCertificate(uniqueIDs: tlv(0x82, [0x00]) + tlv(0x81, [0x00]))) == nil)
            #expect(DERCertificate(der: makeCertificate(uniqueIDs: tlv(0xA1, tlv(0x03, [0x00])))) == nil)
            #expect(DERCertificate(der: makeCertificate(uniqueIDs: tlv(0x81, [0x09, 0x00]))) == nil)
            #expect(DERCertificate(der: makeCertificate(uniqueIDs: tlv(0x81, [0x00]) + tlv(0x81, [0x00]))) == nil)
        }

        @Test func subjectKeyIdentifier() {
            let keyID: [UInt8] = Array(0..<20)
            #expect(DERCertificate(der: makeCertificate(extensions: [skidExtension(keyID)]))?.subjectKeyID == keyID)
            // Among other extensions, with critical TRUE, with explicit critical FALSE.
            #expect(
                DERCertificate(der: makeCertificate(extensions: [opaqueExtension(size: 10), skidExtension(keyID)]))?
                    .subjectKeyID == keyID)
            #expect(
                DERCertificate(der: makeCertificate(extensions: [skidExtension(keyID, critical: tlv(0x01, [0xFF]))]))?
                    .subjectKeyID == keyID)
            #expect(
                DERCertificate(der: makeCertificate(extensions: [skidExtension(keyID, critical: tlv(0x01, [0x00]))]))?
                    .subjectKeyID == keyID)
            // Empty key identifier.
            #expect(DERCertificate(der: makeCertificate(extensions: [skidExtension([])]))?.subjectKeyID == [])
            // Extensions present but no SKID; empty extension list.
            let noSKID = DERCertificate(der: makeCertificate(extensions: [opaqueExtension(size: 3)]))
            #expect(noSKID != nil && noSKID?.subjectKeyID == nil)
            #expect(DERCertificate(der: makeCertificate(extensions: [])) != nil)
        }

        @Test func malformedExtensions() {
            let keyID: [UInt8] = [1, 2, 3]
            // Duplicate SKID.
            #expect(DERCertificate(der: makeCertificate(extensions: [skidExtension(keyID), skidExtension(keyID)])) == nil)
            // SKID value not an OCTET STRING / with trailing bytes / not wrapped at all.
            #expect(DERCertificate(der: makeCertificate(extensions: [sequence(skidOID, tlv(0x04, tlv(0x03, [0x00])))])) == nil)
            #expect(DERCertificate(der: makeCertificate(extensions: [sequence(skidOID, tlv(0x04, tlv(0x04, keyID) + [0x05, 0x00]))])) == nil)
            #expect(DERCertificate(der: makeCertificate(extensions: [sequence(skidOID, tlv(0x04, keyID))])) == nil)
            // BOOLEAN not DER (0x01), wrong size; extnValue missing; extra field; extnID not an OID.
            #expect(DERCertificate(der: makeCertificate(extensions: [skidExtension(keyID, critical: tlv(0x01, [0x01]))])) == nil)
            #expect(DERCertificate(der: makeCertificate(extensions: [skidExtension(keyID, critical: tlv(0x01, [0xFF, 0xFF]))])) == nil)
            #expect(DERCertificate(der: makeCertificate(extensions: [sequence(skidOID)])) == nil)
            #expect(DERCertificate(der: makeCertificate(extensions: [sequence(skidOID, tlv(0x04, tlv(0x04, keyID)), [0x05, 0x00])])) == nil)
            #expect(DERCertificate(der: makeCertificate(extensions: [sequence(tlv(0x04, [0x55, 0x1D, 0x0E]), tlv(0x04, tlv(0x04, keyID)))])) == nil)
            // [3] not wrapping a SEQUENCE, wrapping two, primitive [3], something after [3].
            #expect(DERCertificate(der: makeCertificate(rawExtensions: tlv(0xA3, tlv(0x31, skidExtension(keyID))))) == nil)
            #expect(DERCertificate(der: makeCertificate(rawExtensions: tlv(0xA3, sequence(skidExtension(keyID)) + sequence(skidExtension(keyID))))) == nil)
            #expect(DERCertificate(der: makeCertificate(rawExtensions: tlv(0x83, sequence(skidExtension(keyID))))) == nil)
            #expect(DERCertificate(der: makeCertificate(extensions: [skidExtension(keyID)])) != nil)
            #expect(DERCertificate(der: makeCertificate(extensions: [skidExtension(keyID)], rawExtensions: [0x05, 0x00])) == nil)
            // Element of the extension list that is not a SEQUENCE.
            #expect(DERCertificate(der: makeCertificate(extensions: [tlv(0x31, [])])) == nil)
        }

        @Test func outerStructure() {
            // Extra element after the signature, missing signature, signature not a BIT STRING.
            #expect(DERCertificate(der: makeCertificate(afterSignature: [0x05, 0x00])) == nil)
            let tbs = tlv(0x30, tlv(0x02, [0x01]))
            #expect(DERCertificate(der: sequence(tbs, sha256WithRSA)) == nil)
            #expect(DERCertificate(der: sequence(tbs, sha256WithRSA, tlv(0x04, [0x00]))) == nil)
            // Signature algorithm identifiers: no OID, two parameters, empty, bad OID encoding.
            var tbsFields: [UInt8] = tlv(0x02, [0x01]) + sha256WithRSA + name("I") + defaultValidity + name("S")
            tbsFields += sequence(idEcPublicKeyP256, tlv(0x03, [0x00, 0x04]))
            #expect(DERCertificate(der: sequence(tlv(0x30, tbsFields), sha256WithRSA, tlv(0x03, [0x00]))) != nil)
            #expect(DERCertificate(der: sequence(tlv(0x30, tbsFields), sequence(tlv(0x06, [0x2A, 0x03])), tlv(0x03, [0x00]))) != nil)
            let badAlgorithms: [[UInt8]] = [
                sequence(tlv(0x05, [])),
                sequence(tlv(0x06, [0x2A, 0x03]), [0x05, 0x00], [0x05, 0x00]),
                sequence(),
                sequence(tlv(0x06, [])),
                sequence(tlv(0x06, [0x2A, 0x83]))
            ]
            for algorithm in badAlgorithms {
                #expect(DERCertificate(der: sequence(tlv(0x30, tbsFields), algorithm, tlv(0x03, [0x00]))) == nil)
            }
        }

        @Test func nonMinimalLengthsAreRejected() {
            // The serial 02 03 01 02 03 re-encoded with long-form lengths that DER forbids.
            #expect(DERCertificate(der: makeCertificate(serial: [0x02, 0x03, 0x01, 0x02, 0x03])) != nil)
            #expect(DERCertificate(der: makeCertificate(serial: [0x02, 0x81, 0x03, 0x01, 0x02, 0x03])) == nil)
            #expect(DERCertificate(der: makeCertificate(serial: [0x02, 0x82, 0x00, 0x03, 0x01, 0x02, 0x03])) == nil)
            #expect(DERCertificate(der: makeCertificate(serial: [0x02, 0x84, 0x00, 0x00, 0x00, 0x03, 0x01, 0x02, 0x03])) == nil)
            // 0x81 is fine once the length really needs it (>= 128).
            let longSerial = [UInt8](repeating: 0x11, count: 130)
            let longForm: [UInt8] = [0x02, 0x81, 0x82] + longSerial
            #expect(DERCertificate(der: makeCertificate(serial: longForm))?.serialNumber == longSerial)
            // ... but not with a leading zero length byte.
            let padded: [UInt8] = [0x02, 0x82, 0x00, 0x82] + longSerial
            #expect(DERCertificate(der: makeCertificate(serial: padded)) == nil)
            // A Name whose SEQUENCE length uses the long form needlessly.
            let issuerContent = Array(name("Issuer").dropFirst(2))
            #expect(DERCertificate(der: makeCertificate(issuer: [0x30, 0x81, UInt8(issuerContent.count)] + issuerContent)) == nil)
        }

        @Test func threeByteLengths() throws {
            // A 70,000-byte extension forces 0x83 long-form lengths on every enclosing element.
            let der = makeCertificate(extensions: [opaqueExtension(size: 70_000), skidExtension([9, 9])])
            #expect(der[0] == 0x30 && der[1] == 0x83)
            let certificate = try #require(DERCertificate(der: der))
            #expect(certificate.subjectKeyID == [9, 9])
            #expect(DERCertificate(der: Array(der.dropLast())) == nil)
            #expect(DERCertificate(der: der + [0x00]) == nil)
        }

        @Test func fourByteLengths() throws {
            // 2^24 bytes: the smallest content needing four length bytes.
            let der = makeCertificate(extensions: [opaqueExtension(size: 1 << 24), skidExtension([7])])
            #expect(der[0] == 0x30 && der[1] == 0x84)
            let certificate = try #require(DERCertificate(der: der))
            #expect(certificate.subjectKeyID == [7])
            #expect(DERCertificate(der: Array(der.dropLast())) == nil)
        }
    }
}
