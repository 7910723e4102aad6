import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Bad input: each gives its documented exit code and a clear message on stderr, and
/// leaves the keychain unchanged.
@Suite struct BadInputTests {
    /// Runs a bad command and checks the exit code, a `kc:` or usage message, and that the
    /// keychain's single item is unchanged.
    func expectRefused(_ arguments: [String], status: Int32, message: String, stdin: Data? = nil,
                       sourceLocation: SourceLocation = #_sourceLocation) throws {
        let h = try KCHome()
        try h.createKeychain()
        _ = try h.kc(["add", "-s", "keep", "-a", "me", "-w", "kept"], password: KCHome.password)
        let before = try h.kc(["find", "--all", "--json", "-g"], password: KCHome.password).stdout
        let out = try h.kc(arguments, password: KCHome.password, stdin: stdin)
        #expect(out.status == status, "\(arguments): \(out.stderr)", sourceLocation: sourceLocation)
        #expect(out.stderr.contains(message), "\(arguments): \(out.stderr)", sourceLocation: sourceLocation)
        #expect(out.stdout.isEmpty, sourceLocation: sourceLocation)
        #expect(!out.stderr.contains("kept") && !out.stderr.contains(KCHome.password), "no secret in a message", sourceLocation: sourceLocation)
        let after = try h.kc(["find", "--all", "--json", "-g"], password: KCHome.password).stdout
        #expect(before == after, "the keychain is unchanged", sourceLocation: sourceLocation)
    }

    @Test func unknownClass() throws {
        try expectRefused(["find", "--class", "apls"], status: 2, message: "--class")
    }

    @Test func attributeNotValidForTheClass() throws {
        try expectRefused(["add", "-s", "x", "-d", "CORP", "-w", "v"], status: 41,
                          message: "kc: -d/--security-domain is not an attribute of generic items")
        try expectRefused(["find", "--class", "certificate", "-a", "x"], status: 41, message: "-a/--account is not an attribute of certificate items")
    }

    @Test func portThatIsNotANumber() throws {
        try expectRefused(["add", "--class", "internet", "-s", "h", "-P", "https", "-w", "v"], status: 2, message: "-P")
        try expectRefused(["add", "--class", "internet", "-s", "h", "-P", "70000", "-w", "v"], status: 2, message: "port")
    }

    @Test func emptyAccountAndService() throws {
        try expectRefused(["add", "-s", "", "-a", "", "-w", "v"], status: 206, message: "an item needs a service (-s) or an account (-a)")
        try expectRefused(["add", "-w", "v"], status: 206, message: "an item needs a service")
    }

    @Test func unreadableDataFile() throws {
        try expectRefused(["add", "-s", "x", "--data-file", "/nonexistent/secret"], status: 206, message: "cannot read data file /nonexistent/secret")
        try expectRefused(["add", "-s", "x", "--data-file", "/"], status: 206, message: "is a folder")
    }

    @Test func keychainInAMissingFolderOrNotAKeychain() throws {
        let h = try KCHome()
        var out = try h.kc(["find", "-k", "/nonexistent/folder/k.keychain-db", "-s", "x"], password: "pw")
        #expect(out.status == 50)
        #expect(out.stderr.hasPrefix("kc: no keychain at /nonexistent/folder/k.keychain-db\n"))
        let notKeychain = h.directory + "/notes.txt"
        try Data("just some notes\n".utf8).write(to: URL(fileURLWithPath: notKeychain))
        chmod(notKeychain, 0o600)
        out = try h.kc(["find", "-k", notKeychain, "-s", "x"], password: "pw")
        #expect(out.status == 93)
        #expect(out.stderr.contains("is not a kc keychain"))
        #expect(try Data(contentsOf: URL(fileURLWithPath: notKeychain)) == Data("just some notes\n".utf8), "not rewritten")
    }

    @Test func tenMebibyteSecret() throws {
        // 10 MiB is within the 16 MiB limit: stored and read back intact.
        let h = try KCHome()
        try h.createKeychain()
        let big = Data((0..<(10 << 20)).map { UInt8(truncatingIfNeeded: $0 &* 31 >> 3) })
        let file = h.directory + "/big.bin"
        try big.write(to: URL(fileURLWithPath: file))
        var out = try h.kc(["add", "-s", "big", "--data-file", file], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["find", "-s", "big", "-w"], password: KCHome.password)
        #expect(out.stdoutBytes.count == big.count && Data(out.stdoutBytes) == big)
        // Over the limit: refused before it is all read, exit 42.
        let huge = h.directory + "/huge.bin"
        FileManager.default.createFile(atPath: huge, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: huge))
        try handle.truncate(atOffset: UInt64(17 << 20))
        try handle.close()
        out = try h.kc(["add", "-s", "huge", "--data-file", huge], password: KCHome.password)
        #expect(out.status == 42)
        #expect(out.stderr.contains("larger than 16777216 bytes"))
        out = try h.kc(["add", "-s", "huge"], password: KCHome.password, stdin: Data(count: 17 << 20))
        #expect(out.status == 42)
    }

    @Test func invalidUTF8InAttributeValues() throws {
        // Arguments with invalid UTF-8 are refused rather than silently repaired.
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.sh("kc add -s \"$(printf 'bad\\377name')\" -w v")
        #expect(out.status == 206)
        #expect(out.stderr.contains("is not valid UTF-8"))
        #expect(try h.kc(["find", "--all"], password: KCHome.password).status == 44, "nothing was added")
    }

    @Test func conflictingFlags() throws {
        try expectRefused(["find", "-s", "keep", "-w", "--all"], status: 2, message: "-w prints one secret")
        try expectRefused(["find", "-s", "keep", "--hex"], status: 2, message: "--hex and --base64 go with -w")
        try expectRefused(["add", "-s", "x", "-w", "a", "--data-file", "/etc/hostname"], status: 2, message: "two sources")
    }
}
