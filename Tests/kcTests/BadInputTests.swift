import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Bad input: each gives its documented exit code and a clear message on stderr, and
/// leaves the keychain unchanged.
@Suite struct BadInputTests {
    /// Runs a bad command and checks the exit code, a `kc:` or usage message, and that the
    /// keychain's single item is unchanged.
    func expectRefused(
        _ arguments: [String], status: Int32, message: String, stdin: Data? = nil,
        sourceLocation: SourceLocation = #_sourceLocation
    ) throws {
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
        try expectRefused(
            ["add", "-s", "x", "-d", "CORP", "-w", "v"], status: 41,
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

    /// Issue 21: `kc find -k /etc/passwd` suggested `chmod 600 /etc/passwd`: a file that is
    /// not a keychain is exit 93, "not a kc keychain", never a chmod hint.
    @Test func aFileThatIsNotAKeychainGetsNoChmodHint() throws {
        let h = try KCHome()
        let notes = h.directory + "/passwd-like"
        try Data("root:x:0:0:root:/root:/bin/bash\n".utf8).write(to: URL(fileURLWithPath: notes))
        chmod(notes, 0o644)
        let out = try h.kc(["find", "-k", notes, "-s", "x"], password: "pw")
        #expect(out.status == 93, "\(out.stderr)")
        #expect(out.stderr.contains("is not a kc keychain") && !out.stderr.contains("chmod"), "\(out.stderr)")
        // A real keychain made readable by others still gets the chmod advice.
        try h.createKeychain()
        chmod(h.defaultKeychain, 0o644)
        let shared = try h.kc(["find", "-s", "x"], password: KCHome.password)
        #expect(shared.status == 206 && shared.stderr.contains("chmod 600"), "\(shared.stderr)")
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
        let hugeFD = open(huge, O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        #expect(hugeFD >= 0 && ftruncate(hugeFD, off_t(17 << 20)) == 0)
        close(hugeFD)
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

    // The catalogue of issue 7: every kind of bad value, the documented exit code and
    // message, and the keychain unchanged (docs/reliability.md).

    @Test func missingValues() throws {
        for (arguments, flag) in [
            (["find", "-s"], "-s"), (["find", "-k"], "-k"), (["add", "-s", "x", "-w"], "-w"),
            (["find", "--class"], "--class"), (["find", "--limit"], "--limit"),
            (["add", "-s", "x", "--data-file"], "--data-file"), (["find", "--password-file"], "--password-file")
        ] {
            try expectRefused(arguments, status: 2, message: "missing value for '\(flag)")
        }
    }

    @Test func emptyValues() throws {
        try expectRefused(["find", "--class", ""], status: 2, message: "--class")
        try expectRefused(["find", "--limit", ""], status: 2, message: "--limit")
        try expectRefused(["add", "--class", "internet", "-s", "h", "-P", "", "-w", "v"], status: 2, message: "-P")
        try expectRefused(["add", "-s", "h", "-c", "", "-w", "v"], status: 2, message: "-c")
        // An empty -k is a script's unset variable: refused, never the default keychain.
        try expectRefused(["add", "-k", "", "-s", "x", "-w", "v"], status: 2, message: "-k/--keychain is empty")
        try expectRefused(["find", "-k", "", "-s", "keep", "-w"], status: 2, message: "-k/--keychain is empty")
    }

    @Test func hugeValues() throws {
        // The largest single argument Linux passes is 128 KiB; 100 KiB is over kc's 64 KiB.
        try expectRefused(["add", "-s", String(repeating: "s", count: 100 << 10), "-w", "v"], status: 42, message: "at most 65536")
        // A 100 MiB secret from a file, and 17 MiB on stdin: refused at 16 MiB, before the rest is read.
        let folder = try KCHome()
        let file = folder.directory + "/100MiB.bin"
        #expect(FileManager.default.createFile(atPath: file, contents: nil))
        #expect(truncate(file, 100 << 20) == 0)
        try expectRefused(["add", "-s", "huge", "--data-file", file], status: 42, message: "larger than 16777216 bytes")
        try expectRefused(["add", "-s", "huge"], status: 42, message: "larger than 16777216 bytes", stdin: Data(count: 17 << 20))
    }

    /// Keychain paths that are not keychain files: no hang (a FIFO is never opened for
    /// reading), a clear message, an exit code from docs/errors.md.
    @Test func keychainPathsThatAreNotFiles() throws {
        let h = try KCHome()
        try h.createKeychain()
        let script = """
            mkfifo fifo.keychain-db && chmod 600 fifo.keychain-db
            mkdir -m 700 folder.keychain-db
            for path in "$PWD/fifo.keychain-db" "$PWD/folder.keychain-db" /dev/null; do
              timeout 10 kc find -k "$path" -s x; echo "find $path: $?"
              timeout 10 kc add -k "$path" -s x -w y; echo "add $path: $?"
            done
            """
        let out = try h.sh(script)
        for path in ["fifo.keychain-db", "folder.keychain-db"] {
            #expect(out.stdout.contains("find \(h.directory)/\(path): 93"), "\(out.stdout)")
            #expect(out.stdout.contains("add \(h.directory)/\(path): 93"), "\(out.stdout)")
            #expect(out.stderr.contains("\(path) is not a regular file, so not a kc keychain"))
        }
        #expect(out.stdout.contains("find /dev/null: 93") && out.stdout.contains("add /dev/null: 93"), "\(out.stdout)")
        #expect(!out.stdout.contains(": 124"), "nothing timed out")
    }

    @Test(.enabled(if: geteuid() == 0, "needs root to make a file another user owns"))
    func anotherUsersFileOrALinkToIt() throws {
        let h = try KCHome()
        try h.createKeychain()
        let theirs = h.directory + "/theirs.keychain-db"
        #expect(FileManager.default.createFile(atPath: theirs, contents: Data("theirs".utf8), attributes: [.posixPermissions: 0o600]))
        #expect(chown(theirs, 65534, 65534) == 0)
        try FileManager.default.createSymbolicLink(atPath: h.directory + "/link.keychain-db", withDestinationPath: theirs)
        var out = try h.kc(["find", "-k", theirs, "-s", "x"], password: KCHome.password)
        #expect(out.status == 206 && out.stderr.contains("belongs to uid 65534, not to you"), "\(out.stderr)")
        out = try h.kc(["add", "-k", h.directory + "/link.keychain-db", "-s", "x", "-w", "y"], password: KCHome.password)
        #expect(out.status == 206 && out.stderr.contains("is a symbolic link"), "\(out.stderr)")
        #expect(FileManager.default.contents(atPath: theirs) == Data("theirs".utf8), "their file is untouched")
    }
}
