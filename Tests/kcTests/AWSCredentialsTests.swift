import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// `kc aws-credentials` as AWS's `credential_process`, through Debian's awscli (a request
/// signed for a local endpoint that records the key it was signed with) and boto3, on a
/// fresh HOME with kc on the PATH as `make install` puts it.
@Suite struct AWSCredentialsTests {
    static let client = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("aws_client.py").path
    static let keyID = "AKIAKCTESTPROD000001"
    static let secret = "wJalrXUtnFEMI/K7MDENG/bPxRfiCYKCTESTSECRET"

    /// A home with kc on PATH, its keychain, unlocked unless asked not to be.
    func home(unlock: Bool = true) throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        let bin = h.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: bin + "/kc", withDestinationPath: KCBinary.path)
        h.environment["PATH"] = bin + ":/usr/bin:/bin"
        h.environment["AWS_EC2_METADATA_DISABLED"] = "true"
        if unlock { #expect(try h.kc(["unlock"], password: KCHome.password).status == 0) }
        return h
    }

    /// `aws_client.py MODE PROFILE` in the home, its JSON line.
    func client(_ h: KCHome, _ mode: String, _ profile: String) throws -> [String: Any] {
        let out = try Spawn.run(["/usr/bin/python3", Self.client, mode, profile], environment: h.environment, timeout: 50)
        #expect(out.status == 0, "\(out.stderr)")
        let line = out.stdout.split(separator: "\n").last.map(String.init) ?? ""
        return (try? JSONSerialization.jsonObject(with: Data(line.utf8))) as? [String: Any] ?? ["unreadable": out.stdout + out.stderr]
    }

    func write(_ text: String, _ path: String, mode: Int = 0o600) throws {
        try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        try text.write(toFile: path, atomically: false, encoding: .utf8)
        #expect(chmod(path, mode_t(mode)) == 0)
    }

    func read(_ path: String) -> String { (try? String(contentsOfFile: path, encoding: .utf8)) ?? "" }

    func mode(_ path: String) -> Int { ((try? FileManager.default.attributesOfItem(atPath: path)[.posixPermissions]) as? Int) ?? -1 }

    /// `--import` moves the keys out of ~/.aws/credentials (other profiles and settings kept),
    /// writes `credential_process`, and a second run changes nothing; then awscli signs with
    /// the key from kc and boto3 gets the same keys; `kc find` shows the item.
    @Test func importThenAWSCLIAndBoto3UseKC() throws {
        let h = try home()
        let aws = h.directory + "/.aws"
        try write(
            """
            [default]
            aws_access_key_id = AKIAKCTESTDEFAULT001
            aws_secret_access_key = default-secret-stays

            [prod]
            aws_access_key_id = \(Self.keyID)
            aws_secret_access_key = \(Self.secret)
            # a comment that stays
            region = eu-west-1

            """, aws + "/credentials")
        try write("[default]\nregion = us-east-1\n\n[profile prod]\noutput = json\n", aws + "/config", mode: 0o644)
        var out = try h.kc(["aws-credentials", "--import", "prod"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(!out.stderr.contains(Self.secret) && out.stdout.isEmpty, "\(out.stdout) \(out.stderr)")
        let credentials = read(aws + "/credentials")
        let config = read(aws + "/config")
        // No plaintext secret left, anywhere in the folder; nothing else touched.
        #expect(!credentials.contains(Self.secret) && !credentials.contains(Self.keyID), "\(credentials)")
        #expect(credentials.contains("default-secret-stays") && credentials.contains("[prod]\n# a comment that stays\nregion = eu-west-1"), "\(credentials)")
        #expect(config == "[default]\nregion = us-east-1\n\n[profile prod]\noutput = json\ncredential_process = kc aws-credentials prod\n", "\(config)")
        #expect(mode(aws + "/credentials") == 0o600 && mode(aws + "/config") == 0o644)
        #expect(try FileManager.default.contentsOfDirectory(atPath: aws).sorted() == ["config", "credentials"])
        // A second run: nothing changes.
        out = try h.kc(["aws-credentials", "--import", "prod"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(read(aws + "/credentials") == credentials && read(aws + "/config") == config)
        #expect(try FileManager.default.contentsOfDirectory(atPath: aws).sorted() == ["config", "credentials"])
        // An ordinary item: kc find shows it (without the secret).
        out = try h.kc(["find", "-s", "aws:prod"])
        #expect(out.status == 0 && out.stdout.contains(Self.keyID) && !out.stdout.contains(Self.secret), "\(out.stdout) \(out.stderr)")
        // What AWS runs.
        out = try h.kc(["aws-credentials", "prod"])
        #expect(out.stdout == "{\"Version\":1,\"AccessKeyId\":\"\(Self.keyID)\",\"SecretAccessKey\":\"\(Self.secret)\"}\n", "\(out.stdout) \(out.stderr)")
        // Debian's awscli resolves the keys from kc and signs its request with them.
        let cli = try client(h, "cli", "prod")
        let exported = cli["exported"] as? [String: Any]
        #expect(exported?["AccessKeyId"] as? String == Self.keyID && exported?["SecretAccessKey"] as? String == Self.secret, "\(cli)")
        #expect(cli["status"] as? Int == 0 && cli["key"] as? String == Self.keyID, "\(cli)")
        // boto3 gets both keys from the credential process.
        let boto = try client(h, "boto3", "prod")
        #expect(boto["method"] as? String == "custom-process" && boto["key"] as? String == Self.keyID && boto["secret"] as? String == Self.secret, "\(boto)")
        // The default profile still has its own keys from the file.
        #expect(try client(h, "boto3", "default")["key"] as? String == "AKIAKCTESTDEFAULT001")
    }

    /// `--store` from stdin with a session token and expiration, into the files that
    /// AWS_SHARED_CREDENTIALS_FILE and AWS_CONFIG_FILE name; `default` is `[default]` in the
    /// config; a keychain given with -k is in the config line; awscli sends the token.
    @Test func storeWithSessionTokenHonoursTheFileVariables() throws {
        let h = try home()
        #expect(try h.kc(["create", "-k", "work", "--kdf", "interactive"], password: "work pw").status == 0)
        #expect(try h.kc(["unlock", "-k", "work"], password: "work pw").status == 0)
        h.environment["AWS_CONFIG_FILE"] = h.directory + "/elsewhere/aws-config"
        h.environment["AWS_SHARED_CREDENTIALS_FILE"] = h.directory + "/elsewhere/aws-credentials"
        try write(
            "[default]\naws_access_key_id = AKIAOLDDEFAULT000001\naws_secret_access_key = old-default-secret\n", h.directory + "/elsewhere/aws-credentials")
        let expiration = "2099-01-01T00:00:00Z"
        let json =
            #"{"Version": 1, "AccessKeyId": "ASIAKCTESTTEMP000001", "SecretAccessKey": "temp-secret", "SessionToken": "tok/en+=", "Expiration": "\#(expiration)"}"#
        var out = try h.kc(["aws-credentials", "-k", "work", "--store", "default"], stdin: Data(json.utf8))
        #expect(out.status == 0, "\(out.stderr)")
        #expect(read(h.directory + "/elsewhere/aws-config") == "[default]\ncredential_process = kc aws-credentials -k work default\n")
        #expect(!FileManager.default.fileExists(atPath: h.directory + "/.aws"))
        out = try h.kc(["aws-credentials", "-k", "work", "default"])
        #expect(
            out.stdout
                == #"{"Version":1,"AccessKeyId":"ASIAKCTESTTEMP000001","SecretAccessKey":"temp-secret","SessionToken":"tok/en+=","Expiration":"\#(expiration)"}"#
                + "\n", "\(out.stdout) \(out.stderr)")
        // The credentials file's static keys win over credential_process (AWS's order):
        // --import then moves them into kc, replacing the stored ones.
        out = try h.kc(["aws-credentials", "-k", "work", "--import", "default"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(!read(h.directory + "/elsewhere/aws-credentials").contains("old-default-secret"))
        var boto = try client(h, "boto3", "default")
        #expect(boto["key"] as? String == "AKIAOLDDEFAULT000001" && boto["secret"] as? String == "old-default-secret" && boto["token"] is NSNull, "\(boto)")
        out = try h.kc(["aws-credentials", "-k", "work", "--store", "default"], stdin: Data(json.utf8))
        #expect(out.status == 0, "\(out.stderr)")
        let cli = try client(h, "cli", "default")
        let exported = cli["exported"] as? [String: Any]
        #expect(exported?["SessionToken"] as? String == "tok/en+=" && exported?["Expiration"] != nil, "\(cli)")
        #expect(cli["status"] as? Int == 0 && cli["key"] as? String == "ASIAKCTESTTEMP000001" && cli["token"] as? String == "tok/en+=", "\(cli)")
        boto = try client(h, "boto3", "default")
        #expect(boto["secret"] as? String == "temp-secret" && boto["token"] as? String == "tok/en+=", "\(boto)")
        // Bad input: one line, nothing stored.
        out = try h.kc(["aws-credentials", "--store", "x"], stdin: Data(#"{"AccessKeyId": "A"}"#.utf8))
        #expect(out.status == 206 && out.stderr.split(separator: "\n").count == 1, "\(out.stderr)")
        out = try h.kc(["aws-credentials", "nosuchprofile"])
        #expect(out.status == 44 && out.stdout.isEmpty && out.stderr.split(separator: "\n").count == 1, "\(out.stderr)")
    }

    /// Locked keychain, no terminal: kc fails at once with one line saying to run
    /// `kc unlock`, and awscli and boto3 report it; nothing secret on stderr.
    @Test func lockedKeychainWithoutATerminalFailsAtOnce() throws {
        let h = try home(unlock: false)
        var out = try h.kc(
            ["aws-credentials", "--store", "prod"], password: KCHome.password,
            stdin: Data(#"{"Version":1,"AccessKeyId":"AKIALOCKED","SecretAccessKey":"locked-secret"}"#.utf8))
        #expect(out.status == 0, "\(out.stderr)")
        let start = Date()
        out = try Spawn.run(["/usr/bin/setsid", "-w", h.directory + "/bin/kc", "aws-credentials", "prod"], environment: h.environment, timeout: 5)
        let took = Date().timeIntervalSince(start)
        #expect(out.status == 36 && out.stdout.isEmpty, "\(out.status) \(out.stdout) \(out.stderr)")
        #expect(out.stderr.split(separator: "\n").count == 1 && out.stderr.contains("kc unlock"), "\(out.stderr)")
        #expect(took < 1, "\(took) s")
        let cli = try client(h, "cli", "prod")
        #expect(cli["status"] as? Int != 0 && (cli["stderr"] as? String ?? "").contains("kc unlock") && cli["key"] is NSNull, "\(cli)")
        #expect(cli["exported"] is NSNull && (cli["export_stderr"] as? String ?? "").contains("kc unlock"), "\(cli)")
        #expect(!(cli["stderr"] as? String ?? "").contains("locked-secret"))
        let boto = try client(h, "boto3", "prod")
        #expect((boto["error"] as? String ?? "").contains("kc unlock"), "\(boto)")
    }

    /// Locked, on a terminal: kc asks for the keychain's password, then prints the keys.
    @Test func lockedKeychainOnATerminalAsks() throws {
        let h = try home(unlock: false)
        let json = #"{"Version":1,"AccessKeyId":"AKIAONATERMINAL","SecretAccessKey":"terminal-secret"}"#
        #expect(try h.kc(["aws-credentials", "--store", "prod"], password: KCHome.password, stdin: Data(json.utf8)).status == 0)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("pty_session.py").path
        let spec: [String: Any] = [
            "argv": [KCBinary.path, "aws-credentials", "prod"], "env": h.environment.merging(["TERM": "dumb"]) { a, _ in a },
            "steps": [["expect", "assword"], ["send", KCHome.password + "\n"]], "answers": [], "timeout": 30
        ]
        let file = h.directory + "/session.json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(["/usr/bin/python3", script, file], environment: ["PATH": "/usr/bin:/bin"], timeout: 40)
        let session = try JSONSerialization.jsonObject(with: Data(out.stdoutBytes)) as? [String: Any] ?? [:]
        let screen = session["screen"] as? String ?? ""
        #expect(session["status"] as? Int == 0 && screen.contains(json), "\(screen) \(out.stderr)")
        #expect(session["echo_off"] as? [Bool] == [true], "\(session)")
    }

    /// Found by attacking the import: a linked credentials file (a dotfile manager's) was
    /// replaced by a regular file while its target kept the key; a line break in a profile
    /// name wrote a `[default]` section with its own credential_process; `key: value` (as
    /// botocore reads it) and an indented key stayed in plaintext. Each is now refused with
    /// the files untouched, or moved.
    @Test func importRefusesWhatItCannotRewriteSafely() throws {
        let h = try home()
        let aws = h.directory + "/.aws"
        let target = h.directory + "/dotfiles/aws-creds"
        let text = "[prod]\naws_access_key_id = \(Self.keyID)\naws_secret_access_key = \(Self.secret)\n"
        try write(text, target)
        try FileManager.default.createDirectory(atPath: aws, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: aws + "/credentials", withDestinationPath: target)
        let linked = try h.kc(["aws-credentials", "--import", "prod"])
        #expect(linked.status == 206 && linked.stderr.contains("is a link"), "\(linked.stderr)")
        #expect(!linked.stderr.contains(Self.secret))
        #expect((try? FileManager.default.destinationOfSymbolicLink(atPath: aws + "/credentials")) == target)
        #expect(read(target) == text)
        try FileManager.default.removeItem(atPath: aws + "/credentials")

        let injected = try h.kc(
            ["aws-credentials", "--store", "z\n[default]\ncredential_process=sh -c id"],
            stdin: Data("{\"AccessKeyId\":\"AKIAX\",\"SecretAccessKey\":\"S\"}".utf8))
        #expect(injected.status == 206, "\(injected.stderr)")
        #expect(!FileManager.default.fileExists(atPath: aws + "/config"), "\(read(aws + "/config"))")

        try write("[col]\naws_access_key_id = AKIACOL\naws_secret_access_key = SECRETCOL\naws_session_token: TOKENCOL\n", aws + "/credentials")
        let colon = try h.kc(["aws-credentials", "--import", "col"])
        #expect(colon.status == 0, "\(colon.stderr)")
        #expect(!read(aws + "/credentials").contains("TOKENCOL") && !read(aws + "/credentials").contains("SECRETCOL"), "\(read(aws + "/credentials"))")
        #expect(try h.kc(["aws-credentials", "col"]).stdout.contains("TOKENCOL"))

        let indented =
            "[ind]\n  aws_access_key_id = AKIAIND\n  aws_secret_access_key = SECRETIND\naws_access_key_id = AKIAIND\naws_secret_access_key = SECRETIND\n"
        try write(indented, aws + "/credentials")
        let kept = try h.kc(["aws-credentials", "--import", "ind"])
        #expect(kept.status == 206 && kept.stderr.contains("given twice"), "\(kept.stderr)")
        #expect(read(aws + "/credentials") == indented)
        let leftovers = (try? FileManager.default.contentsOfDirectory(atPath: aws)) ?? []
        #expect(Set(leftovers).isSubset(of: ["credentials", "config"]), "\(leftovers)")
    }

    /// Found by attacking the import: keys for the profile in both ~/.aws/credentials and
    /// `[profile P]` of ~/.aws/config were mixed (the config's session token joined the
    /// credentials file's pair, which AWS never sends together). botocore takes all of a
    /// profile's keys from the credentials file when it names an aws_access_key_id (as boto3
    /// shows here); kc refuses when the two files differ, changing nothing, and moves the
    /// keys out of both when they agree.
    @Test func importRefusesKeysThatDifferBetweenTheFiles() throws {
        let h = try home()
        let aws = h.directory + "/.aws"
        let credentials = "[mix]\naws_access_key_id = AKIAFROMCREDENTIALS1\naws_secret_access_key = secret-from-credentials\n"
        let config =
            "[profile mix]\naws_access_key_id = AKIAFROMCONFIG000001\naws_secret_access_key = secret-from-config\naws_session_token = token-from-config\n"
        try write(credentials, aws + "/credentials")
        try write(config, aws + "/config")
        let before = try client(h, "boto3", "mix")
        #expect(
            before["key"] as? String == "AKIAFROMCREDENTIALS1" && before["secret"] as? String == "secret-from-credentials" && before["token"] is NSNull,
            "\(before)")
        var out = try h.kc(["aws-credentials", "--import", "mix"])
        #expect(out.status == 45 && out.stderr.contains("different keys") && out.stderr.split(separator: "\n").count == 1, "\(out.status) \(out.stderr)")
        #expect(!out.stderr.contains("secret-from") && !out.stderr.contains("token-from"), "\(out.stderr)")
        #expect(read(aws + "/credentials") == credentials && read(aws + "/config") == config)
        #expect(try h.kc(["find", "-s", "aws:mix"]).status == 44)
        #expect(try FileManager.default.contentsOfDirectory(atPath: aws).sorted() == ["config", "credentials"])

        let same = "aws_access_key_id = AKIASAMEINBOTH000001\naws_secret_access_key = secret-in-both\n"
        try write("[both]\n" + same, aws + "/credentials")
        try write("[profile both]\n" + same + "region = eu-west-1\n", aws + "/config")
        out = try h.kc(["aws-credentials", "--import", "both"])
        #expect(out.status == 0, "\(out.stderr)")
        let files = read(aws + "/credentials") + read(aws + "/config")
        #expect(!files.contains("secret-in-both") && !files.contains("AKIASAMEINBOTH000001"), "\(files)")
        #expect(read(aws + "/config") == "[profile both]\nregion = eu-west-1\ncredential_process = kc aws-credentials both\n", "\(read(aws + "/config"))")
        let boto = try client(h, "boto3", "both")
        #expect(
            boto["method"] as? String == "custom-process" && boto["key"] as? String == "AKIASAMEINBOTH000001" && boto["secret"] as? String == "secret-in-both",
            "\(boto)")
        let cli = try client(h, "cli", "both")
        #expect((cli["exported"] as? [String: Any])?["SecretAccessKey"] as? String == "secret-in-both", "\(cli)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: aws).sorted() == ["config", "credentials"])
    }

    /// Found by attacking the import: a SIGKILL in the middle of the rewrite left a 0600
    /// `.credentials.kc-…` beside the file, holding the rest of it (the other profiles'
    /// keys). strace kills kc at the syscall that gives the written file its mode: the file
    /// is unnamed then, and nothing is left. Killed at the rename, the only instant the new
    /// file has a name, the next run removes what was left.
    @Test func aKilledRewriteLeavesNoCopyBehind() throws {
        let h = try home()
        let aws = h.directory + "/.aws"
        let text =
            "[other]\naws_access_key_id = AKIAOTHER00000000001\naws_secret_access_key = other-secret\n\n[prod]\naws_access_key_id = \(Self.keyID)\naws_secret_access_key = \(Self.secret)\n"
        try write(text, aws + "/credentials")
        func killed(at calls: String) throws -> KCBinary.Output {
            try Spawn.run(
                [
                    "/usr/bin/strace", "-f", "-o", "/dev/null", "-e", "trace=\(calls)", "-e", "inject=\(calls):signal=KILL", KCBinary.path, "aws-credentials",
                    "--import", "prod"
                ],
                environment: h.environment, timeout: 30)
        }
        var out = try killed(at: "fchmod")
        #expect(out.status == 137, "\(out.status) \(out.stderr)")
        let listing = try FileManager.default.contentsOfDirectory(atPath: aws)
        #expect(listing == ["credentials"], "\(listing)")
        #expect(read(aws + "/credentials") == text)
        out = try killed(at: "rename,renameat,renameat2")
        #expect(out.status == 137, "\(out.status) \(out.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: aws).filter { $0 != "credentials" }
        #expect(left.count == 1 && left.allSatisfy { $0.hasPrefix(".credentials.kc-") }, "\(left)")
        out = try h.kc(["aws-credentials", "--import", "prod"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: aws).sorted() == ["config", "credentials"])
        #expect(read(aws + "/credentials") == "[other]\naws_access_key_id = AKIAOTHER00000000001\naws_secret_access_key = other-secret\n\n")
    }

    /// Found by attacking the import: root (sudo keeping HOME) importing into a user's
    /// files was refused, and a rewrite would have made them root's. The new files keep
    /// their owner and group (uid 65534 here, who owns the folder too) as well as their
    /// mode.
    @Test func rootKeepsTheOwnerOfAUsersFiles() throws {
        let h = try home()
        let aws = h.directory + "/.aws"
        try write("[prod]\naws_access_key_id = \(Self.keyID)\naws_secret_access_key = \(Self.secret)\n", aws + "/credentials", mode: 0o640)
        try write("[profile prod]\nregion = eu-west-1\n", aws + "/config", mode: 0o644)
        for name in ["", "/credentials", "/config"] { #expect(chown(aws + name, OtherUser.uid, OtherUser.uid) == 0) }
        // Killed at the rename: the new file already had its owner when it got a name, and
        // the next run (root's) removes it.
        let killed = try Spawn.run(
            [
                "/usr/bin/strace", "-f", "-o", "/dev/null", "-e", "inject=rename,renameat,renameat2:signal=KILL", KCBinary.path, "aws-credentials", "--import",
                "prod"
            ],
            environment: h.environment, timeout: 30)
        #expect(killed.status == 137, "\(killed.status) \(killed.stderr)")
        let left = try FileManager.default.contentsOfDirectory(atPath: aws).filter { $0.hasPrefix(".credentials.kc-") }
        var leftover = stat()
        #expect(left.count == 1 && stat(aws + "/" + (left.first ?? "-"), &leftover) == 0 && leftover.st_uid == OtherUser.uid, "\(left)")
        let out = try h.kc(["aws-credentials", "--import", "prod"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: aws).sorted() == ["config", "credentials"])
        #expect(!read(aws + "/credentials").contains(Self.secret) && read(aws + "/config").contains("credential_process"))
        for (name, mode) in [("credentials", 0o640), ("config", 0o644)] {
            var st = stat()
            #expect(stat(aws + "/" + name, &st) == 0 && st.st_uid == OtherUser.uid && st.st_gid == OtherUser.uid, "\(name): \(st.st_uid):\(st.st_gid)")
            #expect(self.mode(aws + "/" + name) == mode, "\(name)")
        }
    }

    /// Root (sudo keeping HOME) making `~/.aws` for a user whose home has root's group gives
    /// the folder and the new file the user's own primary group, as the user's own kc would,
    /// not the home's: with group 0 the user's own next rewrite, which keeps a file's group,
    /// could not, and failed (206).
    @Test func rootMakesAUsersNewFilesInTheUsersOwnGroup() throws {
        let h = try home()
        #expect(chown(h.directory, OtherUser.uid, 0) == 0)
        let json = #"{"Version": 1, "AccessKeyId": "AKIAKCTESTGROUP00001", "SecretAccessKey": "group-secret"}"#
        let out = try h.kc(["aws-credentials", "--store", "prod"], stdin: Data(json.utf8))
        #expect(out.status == 0, "\(out.stderr)")
        let primary = try #require(getpwuid(OtherUser.uid)?.pointee.pw_gid)
        #expect(primary != 0)
        for name in ["/.aws", "/.aws/config"] {
            var st = stat()
            #expect(stat(h.directory + name, &st) == 0, "\(name)")
            #expect(st.st_uid == OtherUser.uid && st.st_gid == primary, "\(name): \(st.st_uid):\(st.st_gid)")
        }
    }
}
