import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Each command and flag through the built `kc`, comparing stdout, stderr and exit codes.
@Suite struct CommandTests {
    @Test func addFindUpdateDelete() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        var out = try h.kc(
            ["add", "-s", "github.com", "-a", "alice", "-l", "GitHub", "-j", "work", "-D", "token", "-G", "gen"],
            password: pw, stdin: Data("ghp_1".utf8))
        #expect(out.status == 0 && out.stdout == "" && out.stderr == "")
        out = try h.kc(["find", "-s", "github.com", "-a", "alice", "-w"], password: pw)
        #expect(out.status == 0)
        #expect(out.stdoutBytes == Array("ghp_1".utf8), "exact bytes, no newline when stdout is not a terminal")
        out = try h.kc(["find", "-s", "github.com"], password: pw)
        #expect(out.status == 0)
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(
            Array(lines.prefix(8)) == [
                "class: generic", "service: github.com", "account: alice", "label: GitHub",
                "kind: token", "comment: work", "generic: gen", "created: \(lines[7].dropFirst(9))"
            ])
        #expect(!out.stdout.contains("ghp_1"), "find without -w never prints the secret")
        #expect(lines.contains("synchronizable: false") && lines.contains("accessible: when-unlocked"))
        out = try h.kc(["find", "-s", "github.com", "-g"], password: pw)
        #expect(out.stdout.hasSuffix("secret: ghp_1\n"))
        out = try h.kc(["update", "-s", "github.com", "-a", "alice"], password: pw, stdin: Data("ghp_2".utf8))
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "github.com", "-w"], password: pw).stdout == "ghp_2")
        out = try h.kc(["update", "-s", "github.com", "--new-label", "Personal"], password: pw)
        #expect(out.status == 0, "attributes only: no secret is read")
        #expect(try h.kc(["find", "-l", "Personal", "-w"], password: pw).stdout == "ghp_2", "the secret is kept")
        out = try h.kc(["delete", "-s", "github.com", "-a", "alice"], password: pw)
        #expect(out.status == 0 && out.stdout == "")
        out = try h.kc(["find", "-s", "github.com", "-a", "alice"], password: pw)
        #expect(out.status == 44)
        #expect(out.stderr == "kc: no item matches service=github.com account=alice in \(h.defaultKeychain)\nkc: hint: list what is there with `kc list`\n")
        out = try h.kc(["delete", "-s", "github.com"], password: pw)
        #expect(out.status == 44)
    }

    @Test func outputForms() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        _ = try h.kc(["add", "-s", "api", "-a", "a1"], password: pw, stdin: Data([0x00, 0xFF, 0x41]))
        _ = try h.kc(["add", "-s", "api", "-a", "a2"], password: pw, stdin: Data("two".utf8))
        var out = try h.kc(["find", "-s", "api", "-a", "a1", "-w", "--hex"], password: pw)
        #expect(out.stdout == "00ff41\n")
        out = try h.kc(["find", "-s", "api", "-a", "a1", "-w", "--base64"], password: pw)
        #expect(out.stdout == "AP9B\n")
        out = try h.kc(["find", "-s", "api", "--all", "--json", "-g"], password: pw)
        let array = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]])
        #expect(array.count == 2)
        #expect(array.map { $0["class"] as? String } == ["generic", "generic"])
        #expect(array.map { ($0["attributes"] as? [String: Any])?["account"] as? String } == ["a1", "a2"])
        #expect(array.map { $0["data"] as? String } == ["AP9B", "dHdv"], "data is base64 in JSON")
        out = try h.kc(["find", "-s", "api", "-a", "a2", "--json"], password: pw)
        let object = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
        #expect(object["data"] == nil, "no secret without -g")
        #expect((object["attributes"] as? [String: Any])?["service"] as? String == "api")
        out = try h.kc(["find", "-s", "api", "--limit", "1", "--json"], password: pw)
        #expect((try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [Any])?.count == 1)
        out = try h.kc(["find", "-s", "API", "--ignore-case", "--all"], password: pw)
        #expect(out.status == 0 && out.stdout.components(separatedBy: "class: generic").count == 3)
        out = try h.kc(["find", "-s", "API"], password: pw)
        #expect(out.status == 44, "exact by default")
        out = try h.kc(["find", "-s", "api", "-a", "a1", "-g"], password: pw)
        #expect(out.stdout.hasSuffix("secret: 0x00ff41\n"), "binary secrets print as hex with -g")
    }

    @Test func updateAndDeleteRefuseManyWithoutAll() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        for a in ["x", "y", "z"] { _ = try h.kc(["add", "-s", "shared", "-a", a, "-w", "s-\(a)"], password: pw) }
        var out = try h.kc(["delete", "-s", "shared"], password: pw)
        #expect(out.status == 206)
        #expect(out.stderr.hasPrefix("kc: 3 items match service=shared; kc delete changes one unless --all is given\n"))
        out = try h.kc(["update", "-s", "shared", "-w", "new"], password: pw)
        #expect(out.status == 206 && out.stderr.contains("3 items match"))
        out = try h.kc(["update", "-s", "shared", "--all", "-w", "new"], password: pw)
        #expect(out.status == 0)
        for a in ["x", "y", "z"] { #expect(try h.kc(["find", "-s", "shared", "-a", a, "-w"], password: pw).stdout == "new") }
        out = try h.kc(["delete", "-s", "shared", "--all"], password: pw)
        #expect(out.status == 0)
        #expect(try h.kc(["find", "--all"], password: pw).status == 44)
    }

    /// Issue 21: `kc delete --all` with no attribute deleted every generic password without a
    /// word. In a script it now needs --yes, and --all always says how many went.
    @Test func deleteAllWithoutAFilterNeedsYesInAScript() throws {
        let h = try KCHome()
        try h.createKeychain()
        for name in ["a", "b", "c"] {
            #expect(try h.kc(["add", "-s", name, "-a", "me", "-w", "s-" + name], password: KCHome.password).status == 0)
        }
        var out = try h.kc(["delete", "--all"], password: KCHome.password)
        #expect(out.status == 206, "\(out.stderr)")
        #expect(out.stderr.contains("would delete all 3 generic items") && out.stderr.contains("--yes"), "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "a", "-w"], password: KCHome.password).stdout == "s-a", "nothing was deleted")
        // An attribute narrows it: no question, and the count is reported.
        out = try h.kc(["delete", "-s", "a", "--all"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr == "kc: deleted 1 item\n", "\(out.stderr)")
        out = try h.kc(["delete", "--all", "--yes"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr == "kc: deleted 2 items\n", "\(out.stderr)")
        #expect(try h.kc(["find", "--all"], password: KCHome.password).status == 44)
    }

    @Test func addUpdateIfExists() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        #expect(try h.kc(["add", "-s", "s", "-a", "a", "-w", "one"], password: pw).status == 0)
        let dup = try h.kc(["add", "-s", "s", "-a", "a", "-w", "two"], password: pw)
        #expect(dup.status == 45)
        #expect(dup.stderr.hasPrefix("kc: an item matching service=s account=a already exists in "))
        #expect(try h.kc(["add", "-U", "-s", "s", "-a", "a", "-w", "two", "-j", "rotated"], password: pw).status == 0)
        #expect(try h.kc(["find", "-s", "s", "-w"], password: pw).stdout == "two")
        #expect(try h.kc(["find", "-s", "s"], password: pw).stdout.contains("comment: rotated"))
    }

    @Test func internetPasswords() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        var out = try h.kc(
            [
                "add", "--class", "internet", "-s", "example.com", "-a", "bob", "-r", "https", "-P", "8443",
                "-p", "/api", "-d", "CORP", "-w", "pw1"
            ], password: pw)
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["find", "--class", "internet", "-s", "example.com", "--json"], password: pw)
        let attrs = try #require((try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])?["attributes"] as? [String: Any])
        #expect(attrs["server"] as? String == "example.com")
        #expect(attrs["protocol"] as? String == "htps")
        #expect(attrs["port"] as? Int == 8443)
        #expect(attrs["auth-type"] as? String == "dflt", "the default authentication type, as git's helper uses")
        #expect(attrs["security-domain"] as? String == "CORP")
        #expect(try h.kc(["find", "--class", "internet", "-s", "example.com", "-r", "htps", "-t", "default", "-w"], password: pw).stdout == "pw1")
        #expect(try h.kc(["find", "--class", "internet", "-s", "example.com", "-P", "443"], password: pw).status == 44)
        #expect(try h.kc(["find", "-s", "example.com"], password: pw).status == 44, "generic is the default class")
    }

    /// `kc find github.com` (as pass `show NAME`, rbw `get NAME`, `kc totp github.com`), and
    /// short options with their value attached, as getopt reads them (issue 32).
    @Test func findTakesTheServiceAsAnArgumentAndValuesAttachedToShortOptions() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        #expect(try h.kc(["add", "-sgithub.com", "-aalice", "-wghp_9"], password: pw).status == 0)
        var out = try h.kc(["find", "github.com", "-w"], password: pw)
        #expect(out.status == 0 && out.stdout == "ghp_9", "\(out.stderr)")
        out = try h.kc(["find", "-w", "github.com", "-a", "alice"], password: pw)
        #expect(out.status == 0 && out.stdout == "ghp_9", "anywhere among the options")
        out = try h.kc(["find", "github.com"], password: pw)
        #expect(out.status == 0 && out.stdout.contains("service: github.com\naccount: alice\n") && !out.stdout.contains("ghp_9"))
        out = try h.kc(["find", "gitlab.com", "-w"], password: pw)
        #expect(out.status == 44 && out.stderr.hasPrefix("kc: no item matches service=gitlab.com in"), "\(out.stderr)")
        // The service given both ways, or two arguments: usage errors.
        out = try h.kc(["find", "github.com", "-s", "github.com"], password: pw)
        #expect(out.status == 2 && out.stderr.contains("give the service once"), "\(out.stderr)")
        out = try h.kc(["find", "github.com", "extra"], password: pw)
        #expect(out.status == 2 && out.stdout.isEmpty, "\(out.stderr)")
        // -sVALUE, -aVALUE, -kNAME, grouped flags before an attached value, before or after
        // the subcommand; -k=NAME as before.
        out = try h.kc(["find", "-sgithub.com", "-aalice", "-w"], password: pw)
        #expect(out.status == 0 && out.stdout == "ghp_9", "\(out.stderr)")
        #expect(try h.kc(["create", "work", "--kdf", "interactive"], password: pw).status == 0)
        #expect(try h.kc(["add", "-kwork", "-sdb", "-wwork-secret"], password: pw).status == 0)
        for arguments in [["find", "-kwork", "-sdb", "-w"], ["-kwork", "find", "db", "-w"], ["find", "-wkwork", "db"], ["find", "-k=work", "-sdb", "-w"]] {
            out = try h.kc(arguments, password: pw)
            #expect(out.status == 0 && out.stdout == "work-secret", "\(arguments): \(out.stderr)")
        }
        #expect(try h.kc(["find", "db"], password: pw).status == 44, "not in login")
        // -kNAME is a keychain choice: twice is refused, however spelled.
        out = try h.kc(["-kwork", "find", "-klogin", "db", "-w"], password: pw)
        #expect(out.status == 2 && out.stderr.contains("-k/--keychain is given twice"), "\(out.stderr)")
        out = try h.kc(["find", "-kwork", "--keychain", "login", "db"], password: pw)
        #expect(out.status == 2 && out.stderr.contains("-k/--keychain is given twice"), "\(out.stderr)")
        for twice in [
            ["-kwork", "update", "-s", "github.com", "-klogin", "-w", "CHANGED"],
            ["add", "-kwork", "-s", "github.com", "-a", "alice", "-Uklogin", "-w", "CHANGED"]
        ] {
            out = try h.kc(twice, password: pw)
            #expect(out.status == 2 && out.stderr.contains("-k/--keychain is given twice"), "\(twice): \(out.stderr)")
        }
        #expect(try h.kc(["find", "github.com", "-w"], password: pw).stdout == "ghp_9", "login's secret untouched")
        // A number attached to -P, a negative one refused by the port's own check; a value
        // that is a dash stays a value.
        #expect(try h.kc(["add", "--class", "internet", "-sexample.com", "-P8443", "-rhttps", "-wx"], password: pw).status == 0)
        out = try h.kc(["find", "--class", "internet", "-P8443", "-w"], password: pw)
        #expect(out.status == 0 && out.stdout == "x", "\(out.stderr)")
        out = try h.kc(["find", "--class", "internet", "-P-1"], password: pw)
        #expect(out.status == 2 && out.stderr.contains("between 0 and 65535"), "\(out.stderr)")
        #expect(try h.kc(["add", "-s-", "-a-x", "-wdash"], password: pw).status == 0)
        out = try h.kc(["find", "-s", "-", "-a", "-x", "-w"], password: pw)
        #expect(out.stdout == "dash", "\(out.stderr)")
    }

    /// A URL pasted as an internet password's server is split as kc import splits one; git
    /// then finds it (CredentialHelperTests) and an export writes the URL once (issue 32).
    @Test func aPastedURLIsSplitIntoServerProtocolPortAndPath() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        var out = try h.kc(["add", "--class", "internet", "-s", "https://github.com/x", "-a", "alice", "-w", "tok"], password: pw)
        #expect(out.status == 0 && out.stderr == "kc: stored as server github.com, protocol https, path /x\n", "\(out.stderr)")
        out = try h.kc(["find", "--class", "internet", "-s", "github.com", "--json"], password: pw)
        let attrs = try #require((try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])?["attributes"] as? [String: Any])
        #expect(attrs["server"] as? String == "github.com" && attrs["protocol"] as? String == "htps" && attrs["path"] as? String == "/x")
        #expect(attrs["label"] as? String == "github.com", "the label defaults to the server")
        // A query given the same URL finds it, as -s or as find's argument.
        out = try h.kc(["find", "--class", "internet", "-s", "https://github.com/x", "-w"], password: pw)
        #expect(out.status == 0 && out.stdout == "tok" && out.stderr.isEmpty, "\(out.stderr)")
        #expect(try h.kc(["find", "--class", "internet", "https://github.com/x", "-w"], password: pw).stdout == "tok")
        #expect(try h.kc(["find", "--class", "internet", "-s", "http://github.com/x"], password: pw).status == 44, "another protocol")
        #expect(try h.kc(["find", "--class", "internet", "-s", "https://github.com/y"], password: pw).status == 44, "another path")
        // The export writes the address once.
        out = try h.kc(["export", "--format", "csv", "--force"], password: pw)
        #expect(out.stdout.contains(",https://github.com/x,alice,tok,") && !out.stdout.contains("https://https://"), "\(out.stdout)")
        // A port and a user name in the URL; flags that agree, or fill what the URL leaves out.
        out = try h.kc(["add", "--class", "internet", "-s", "https://bob@git.example.com:8443/a.git", "-r", "https", "-w", "t2"], password: pw)
        #expect(out.status == 0 && out.stderr == "kc: stored as server git.example.com, protocol https, port 8443, path /a.git, account bob\n", "\(out.stderr)")
        #expect(try h.kc(["find", "--class", "internet", "-s", "git.example.com", "-a", "bob", "-P", "8443", "-w"], password: pw).stdout == "t2")
        // Flags that say otherwise are refused, showing what the URL stands for.
        out = try h.kc(["add", "--class", "internet", "-s", "https://github.com:8443/x", "-r", "ssh", "-P", "443", "-w", "t"], password: pw)
        #expect(out.status == 2, "\(out.stderr)")
        #expect(
            out.stderr.contains("-s https://github.com:8443/x stands for -s github.com -r https -P 8443 -p /x, and -r ssh -P 443 says otherwise"),
            "\(out.stderr)")
        out = try h.kc(["add", "--class", "internet", "-s", "https://github.com/x", "-p", "/y", "-w", "t"], password: pw)
        #expect(out.status == 2 && out.stderr.contains("and -p /y says otherwise"), "\(out.stderr)")
        // A password in the URL, a scheme with no protocol, a bad port: refused, nothing stored.
        out = try h.kc(["add", "--class", "internet", "-s", "https://u:hunter2@github.com/z", "-w", "t"], password: pw)
        #expect(out.status == 2 && out.stderr.contains("holds a password") && !out.stderr.contains("hunter2"), "\(out.stderr)")
        // Found attacking the split: a URL that does not parse quoted its password in the
        // message, and a password that does not decode (%FF) passed, silently dropped.
        for url in ["https://alice:hunter2@github.com:99999/x", "https://alice:%FFhunter2@github.com/x", "https://a:b:hunter2@[::1/x"] {
            out = try h.kc(["add", "--class", "internet", "-s", url, "-w", "t"], password: pw)
            #expect(out.status == 2 && out.stderr.contains("holds a password") && !out.stderr.contains("hunter2"), "\(url): \(out.stderr)")
        }
        out = try h.kc(["add", "--class", "internet", "-s", "gopher://github.com/z", "-w", "t"], password: pw)
        #expect(out.status == 2 && out.stderr.contains("the scheme \"gopher\" has no internet-password protocol"), "\(out.stderr)")
        out = try h.kc(["add", "--class", "internet", "-s", "https://github.com:99999/z", "-w", "t"], password: pw)
        #expect(out.status == 2 && out.stderr.contains("is not a URL kc can split"), "\(out.stderr)")
        #expect(try h.kc(["find", "--class", "internet", "-s", "github.com", "-p", "/z"], password: pw).status == 44)
        // A generic password keeps its service as typed.
        out = try h.kc(["add", "-s", "https://intranet/x", "-w", "g"], password: pw)
        #expect(out.status == 0 && out.stderr.isEmpty)
        #expect(try h.kc(["find", "-s", "https://intranet/x", "-w"], password: pw).stdout == "g")
        // update and delete take the URL as a query; --new-service as a new address.
        out = try h.kc(["update", "--class", "internet", "-s", "https://github.com/x", "--new-service", "https://gitlab.com:444/x"], password: pw)
        #expect(out.status == 0 && out.stderr == "kc: changed to server gitlab.com, protocol https, port 444, path /x\n", "\(out.stderr)")
        #expect(try h.kc(["find", "--class", "internet", "-s", "gitlab.com", "-P", "444", "-p", "/x", "-w"], password: pw).stdout == "tok")
        #expect(try h.kc(["delete", "--class", "internet", "-s", "https://gitlab.com:444/x"], password: pw).status == 0)
        #expect(try h.kc(["find", "--class", "internet", "-s", "gitlab.com"], password: pw).status == 44)
    }

    @Test func certificatesAndKeysFromFiles() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        let certPath = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/cert-rsa-v3.der").path
        var out = try h.kc(["add", "--class", "certificate", "--data-file", certPath, "-l", "my cert"], password: pw)
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["find", "--class", "certificate", "-l", "my cert", "-w"], password: pw)
        #expect(out.stdoutBytes == Array(try Data(contentsOf: URL(fileURLWithPath: certPath))))
        out = try h.kc(["find", "--class", "certificate"], password: pw)
        #expect(out.stdout.contains("certificate-type: x509v3") && out.stdout.contains("serial-number: 0x"))
        let keyFile = h.directory + "/key.bin"
        try Data([1, 2, 3, 4]).write(to: URL(fileURLWithPath: keyFile))
        out = try h.kc(["add", "--class", "key", "--tag", "com.example.k", "--data-file", keyFile], password: pw)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try h.kc(["find", "--class", "key", "--tag", "com.example.k", "--hex", "-w"], password: pw).stdout == "01020304\n")
        out = try h.kc(["add", "--class", "key", "--tag", "t"], password: pw)
        #expect(out.status == 2, "a key needs --data-file")
    }

    @Test func createAndPasswd() throws {
        let h = try KCHome()
        var out = try h.kc(["create", "work", "--kdf", "interactive"], password: "first")
        #expect(out.status == 0)
        #expect(out.stderr == "kc: created the keychain \(h.directory)/data/kc/work.keychain-db\n")
        out = try h.kc(["create", "work", "--kdf", "interactive"], password: "first")
        #expect(out.status == 48)
        #expect(try h.kc(["add", "-k", "work", "-s", "s", "-w", "v"], password: "first").status == 0)
        out = try h.kc(["passwd", "-k", "work"], password: "first", extra: ["KC_NEW_PASSWORD": "second"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try h.kc(["find", "-k", "work", "-s", "s", "-w"], password: "first").status == 51)
        #expect(try h.kc(["find", "-k", "work", "-s", "s", "-w"], password: "second").stdout == "v")
        let newFile = h.directory + "/new.txt"
        try Data("third\n".utf8).write(to: URL(fileURLWithPath: newFile))
        chmod(newFile, 0o600)
        out = try h.kc(["passwd", "-k", "work", "--rekey", "--new-password-file", newFile], password: "second")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try h.kc(["find", "-k", "work", "-s", "s", "-w"], password: "third").stdout == "v", "one trailing newline dropped")
        // Paths work as well as names, and KC_KEYCHAIN chooses too.
        let path = h.directory + "/data/kc/work.keychain-db"
        #expect(try h.kc(["find", "-k", path, "-s", "s", "-w"], password: "third").stdout == "v")
        #expect(try h.kc(["find", "-s", "s", "-w"], password: "third", extra: ["KC_KEYCHAIN": path]).stdout == "v")
    }

    @Test func firstAddCreatesTheDefaultKeychain() throws {
        let h = try KCHome()
        let out = try h.kc(["add", "-s", "s", "-a", "a", "-w", "v", "--kdf", "interactive"], password: "pw")
        #expect(out.status == 0)
        #expect(out.stderr == "kc: created the keychain \(h.defaultKeychain)\n")
        var st = stat()
        #expect(stat(h.defaultKeychain, &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(stat(h.directory + "/data/kc", &st) == 0 && st.st_mode & 0o777 == 0o700)
        #expect(try h.kc(["find", "-s", "s", "-w"], password: "pw").stdout == "v")
        // An explicitly named keychain that does not exist is not created.
        let missing = try h.kc(["add", "-k", "other", "-s", "s", "-w", "v"], password: "pw")
        #expect(missing.status == 50)
    }

    @Test func passwordSources() throws {
        let h = try KCHome()
        try h.createKeychain()
        _ = try h.kc(["add", "-s", "s", "-w", "v"], password: KCHome.password)
        var out = try h.kc(["find", "-s", "s", "-w", "--password-stdin"], stdin: Data((KCHome.password + "\n").utf8))
        #expect(out.stdout == "v")
        let file = h.directory + "/pw"
        try Data(KCHome.password.utf8).write(to: URL(fileURLWithPath: file))
        chmod(file, 0o644)
        out = try h.kc(["find", "-s", "s", "-w", "--password-file", file])
        #expect(out.stdout == "v")
        #expect(out.stderr.contains("can be read by other users"), "a shared password file is warned about")
        out = try h.kc(["find", "-s", "s", "-w", "--password-stdin", "--password-file", file])
        #expect(out.status == 2)
        out = try h.kc(["find", "-s", "s", "-w"], password: "wrong")
        #expect(out.status == 51)
        #expect(out.stderr.hasPrefix("kc: wrong password for ") && !out.stderr.contains("wrong\n"))
    }

    @Test func errorCommand() throws {
        let h = try KCHome()
        var out = try h.kc(["error", "-25300", "0xFFFF9D2D", "-25293"])
        #expect(out.status == 0)
        #expect(
            out.stdout == """
                Error: 0xFFFF9D2C -25300 The specified item could not be found in the keychain.
                Error: 0xFFFF9D2D -25299 The specified item already exists in the keychain.
                Error: 0xFFFF9D33 -25293 The user name or passphrase you entered is not correct.

                """)
        out = try h.kc(["error", "44"])
        #expect(out.stdout.contains("as a kc exit code: -25300 The specified item could not be found in the keychain."))
        out = try h.kc(["error", "banana"])
        #expect(out.status == 2)
    }

    @Test func helpHasExamplesAndExitCodes() throws {
        let h = try KCHome()
        let out = try h.kc(["--help"])
        #expect(out.status == 0)
        for needle in ["kc add -s github.com -a alice", "44 no item matches", "36 locked", "51 wrong password", "2 usage error"] {
            #expect(out.stdout.contains(needle), "\(needle)")
        }
        for command in ["add", "find", "update", "delete", "create", "passwd", "error"] {
            let help = try h.kc([command, "--help"])
            #expect(help.status == 0 && help.stdout.contains("Examples:"), "\(command)")
        }
    }

    @Test func exportWritesEveryClassWithSecretsToAPrivateFile() throws {
        let h = try KCHome()
        try h.createKeychain()
        for args in [["-s", "svc", "-a", "me", "-w", "généric ✓"], ["--class", "internet", "-s", "example.com", "-a", "me", "-w", "web"]] {
            #expect(try h.kc(["add"] + args, password: KCHome.password).status == 0)
        }
        let file = h.directory + "/export.json"
        var out = try h.kc(["export", "-o", file], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.contains("exported 2 items"), "\(out.stderr)")
        var st = stat()
        #expect(lstat(file, &st) == 0 && st.st_mode & 0o777 == 0o600)
        let json = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        #expect(json["format"] as? String == "kc-export" && json["version"] as? Int == 1 && json["exported"] is String)
        let items = try #require(json["items"] as? [[String: Any]])
        let secrets = items.compactMap { ($0["data"] as? String).flatMap { Data(base64Encoded: $0) } }
        #expect(Set(items.compactMap { $0["class"] as? String }) == ["generic", "internet"])
        #expect(Set(secrets) == [Data("généric ✓".utf8), Data("web".utf8)])
        #expect(items.allSatisfy { (($0["attributes"] as? [String: Any])?["created"] as? String)?.hasSuffix("Z") == true })
        // Never over an existing file without --force; --force makes it private again.
        out = try h.kc(["export", "-o", file], password: KCHome.password)
        #expect(out.status == 45 && out.stderr.contains("already exists"), "\(out.stderr)")
        #expect(chmod(file, 0o644) == 0)
        // --force never writes into the old file: another name for it (a hard link, or a
        // file someone else owns and holds open) does not receive the secrets.
        #expect(link(file, h.directory + "/other-name") == 0)
        out = try h.kc(["export", "-o", file, "--force"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try String(contentsOfFile: h.directory + "/other-name", encoding: .utf8).contains("\"version\":1"), "the old content")
        var other = stat(), replaced = stat()
        #expect(lstat(h.directory + "/other-name", &other) == 0 && lstat(file, &replaced) == 0 && other.st_ino != replaced.st_ino, "a new file")
        #expect(chmod(file, 0o644) == 0)
        // Through the agent, filtered: only the internet password.
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        out = try h.kc(["export", "--class", "internet", "-o", file, "--force"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(lstat(file, &st) == 0 && st.st_mode & 0o777 == 0o600)
        let filtered = try #require(try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: file))) as? [String: Any])
        #expect((filtered["items"] as? [Any])?.count == 1)
        // To a pipe (not a terminal) it goes to stdout.
        out = try h.kc(["export", "-s", "svc"])
        #expect(out.status == 0 && out.stdout.contains("\"service\":\"svc\""), "\(out.stderr)")
        // Binary attributes keep their type: always base64, even where find prints text.
        let der = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Vectors/cert-v1.der").path
        #expect(try h.kc(["add", "--class", "certificate", "--data-file", der]).status == 0)
        out = try h.kc(["export", "--class", "certificate"])
        #expect(out.stdout.contains("\"issuer\":{\"base64\":"), "\(out.stdout)")
    }

    @Test func backupMakesACheckedCopyThatOpensWithKcK() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "svc", "-a", "me", "-w", "s3cret"], password: KCHome.password).status == 0)
        // In-process with the password, to an absolute path.
        var out = try h.kc(["backup", h.directory + "/one.keychain-db"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("backed up 1 item of"))
        #expect(try h.kc(["find", "-k", h.directory + "/one.keychain-db", "-s", "svc", "-w"], password: KCHome.password).stdout == "s3cret")
        // Never over an existing file without --force: exit 48, file untouched.
        out = try h.kc(["backup", h.directory + "/one.keychain-db"], password: KCHome.password)
        #expect(out.status == 48 && out.stderr.contains("already exists"), "\(out.stderr)")
        // Through the agent, a relative DEST (resolved in kc's folder, not the agent's).
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        out = try h.sh("kc backup two.keychain-db && kc backup two.keychain-db --force", password: nil)
        #expect(out.status == 0, "\(out.stderr)")
        var st = stat()
        #expect(lstat(h.directory + "/two.keychain-db", &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(
            try h.sh("kc find -k two.keychain-db -s svc -w").stdout == "s3cret",
            "a value ending in .keychain-db is a path, for -k as for backup's DEST (one rule)")
        #expect(try h.kc(["find", "-k", h.directory + "/two.keychain-db", "-s", "svc", "-w"], password: KCHome.password).stdout == "s3cret")
        // Not onto the keychain itself.
        out = try h.kc(["backup", h.defaultKeychain, "--force"])
        #expect(out.status == 206 && out.stderr.contains("DEST is the keychain itself"), "\(out.stderr)")
    }
}

extension CommandTests {
    /// `kc backup` while four writers add items through the agent: the copy opens with
    /// `kc -k` and holds every item whose add was acknowledged before the backup started.
    @Test func backupWhileFourWritersAddHoldsEveryAcknowledgedItem() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let out = try h.sh(
            """
            for w in 1 2 3 4; do
              ( i=0; while [ ! -e stop ]; do kc add -s "w$w" -a "$i" -w "v$i" && echo "$i" >> "ack$w"; i=$((i+1)); done ) &
            done
            sleep 2
            for w in 1 2 3 4; do cp "ack$w" "before$w"; done
            kc backup "$PWD/copy.keychain-db"; rc=$?
            sleep 1
            touch stop; wait
            exit $rc
            """, password: nil)
        #expect(out.status == 0, "\(out.stderr)")
        let exported = try h.kc(["export", "-k", h.directory + "/copy.keychain-db"], password: KCHome.password)
        #expect(exported.status == 0, "\(exported.stderr)")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(exported.stdout.utf8)) as? [String: Any])
        let held = Set(
            (json["items"] as? [[String: Any]] ?? []).compactMap { item -> String? in
                let a = item["attributes"] as? [String: Any]
                guard let s = a?["service"] as? String, let acct = a?["account"] as? String else { return nil }
                return s + "/" + acct
            })
        var acknowledged = 0
        for w in 1...4 {
            let lines = try String(contentsOfFile: h.directory + "/before\(w)", encoding: .utf8).split(separator: "\n")
            #expect(!lines.isEmpty, "writer \(w) added items before the backup")
            for i in lines { #expect(held.contains("w\(w)/\(i)"), "w\(w)/\(i) acknowledged before the backup") }
            acknowledged += lines.count
        }
        #expect(acknowledged >= 8)
        let later = try String(contentsOfFile: h.directory + "/ack1", encoding: .utf8).split(separator: "\n").count
        #expect(
            later > (try String(contentsOfFile: h.directory + "/before1", encoding: .utf8).split(separator: "\n").count),
            "the writers went on during and after the backup")
    }
}
