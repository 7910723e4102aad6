import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// `kc import` and the export formats through the real binary, with a hand-written fixture
/// per format (Tests/kcTests/Fixtures/import, written from each format's documented header
/// or schema), a real pass store and gpg, and the agent.
@Suite struct ImportTests {
    static let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/import").path

    /// Every item of the keychain as `kc export` writes it: (class, attributes, secret).
    static func export(_ h: KCHome, keychain: String? = nil) throws -> [(cls: String, attributes: [String: Any], secret: String)] {
        let out = try h.kc(["export"] + (keychain.map { ["-k", $0] } ?? []), password: KCHome.password)
        guard out.status == 0 else { throw KeychainError(OSStatus(out.status), "export failed: \(out.stderr)") }
        let json = try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any]
        return (json?["items"] as? [[String: Any]] ?? []).map { item in
            let data = (item["data"] as? String).flatMap { Data(base64Encoded: $0) } ?? Data()
            return (item["class"] as? String ?? "", item["attributes"] as? [String: Any] ?? [:], String(decoding: data, as: UTF8.self))
        }
    }

    /// The one exported item with this class and service/server and account.
    static func item(_ items: [(cls: String, attributes: [String: Any], secret: String)], _ cls: String, _ name: String, _ account: String)
        -> (attributes: [String: Any], secret: String)?
    {
        let key = cls == "internet" ? "server" : "service"
        let found = items.filter { $0.cls == cls && $0.attributes[key] as? String == name && $0.attributes["account"] as? String == account }
        return found.count == 1 ? (found[0].attributes, found[0].secret) : nil
    }

    func importing(_ fixture: String, _ extra: [String] = []) throws -> (KCHome, KCBinary.Output) {
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.kc(["import"] + extra + [Self.fixtures + "/" + fixture], password: KCHome.password)
        return (h, out)
    }

    @Test func bitwardenCSV() throws {
        let (h, out) = try importing("bitwarden.csv")
        // The second GitHub row repeats the first's key with another password: skipped, exit 1.
        #expect(out.status == 1, "\(out.stderr)")
        #expect(out.stdout.contains("line 9: skipped internet github.com alice") && out.stdout.contains("(as line 2 of the input)"), "\(out.stdout)")
        #expect(out.stderr.contains("5 created, 0 updated, 0 unchanged, 1 skipped"), "\(out.stderr)")
        let items = try Self.export(h)
        #expect(items.count == 5)
        let github = try #require(Self.item(items, "internet", "github.com", "alice"))
        #expect(github.secret == "p,a\"ss")
        #expect(github.attributes["path"] as? String == "/login" && github.attributes["protocol"] as? String == "htps")
        #expect(github.attributes["kind"] as? String == "Work" && github.attributes["label"] as? String == "GitHub")
        #expect(
            github.attributes["comment"] as? String
                == "Line one, with comma\nline two \"quoted\"\nurl: https://gist.github.com\nrecovery: abc-123\npin: 42")
        let otp = try #require(Self.item(items, "generic", "otpauth/github.com", "alice"))
        #expect(otp.secret == "otpauth://totp/GitHub?secret=JBSWY3DPEHPK3PXP" && otp.attributes["kind"] as? String == "otpauth")
        let router = try #require(Self.item(items, "internet", "192.168.1.1", ""))
        #expect(router.attributes["port"] as? Int == 8080 && router.attributes["protocol"] as? String == "http" && router.secret == "r0uter!")
        let note = try #require(Self.item(items, "generic", "Wi-Fi at home", ""))
        #expect(note.secret == "SSID: home\nkey: hunter2" && note.attributes["kind"] as? String == "secure note")
        #expect(Self.item(items, "generic", "Mail ✉", "bob@example.com")?.secret == "m@il-ünïcode")
        // What has no home is listed.
        #expect(out.stdout.contains("line 2: created internet github.com alice; not kept: favorite"), "\(out.stdout)")
    }

    @Test func onePasswordCSV() throws {
        let (h, out) = try importing("1password.csv")
        #expect(out.status == 0, "\(out.stderr)")
        let items = try Self.export(h)
        let example = try #require(Self.item(items, "internet", "example.com", "carol"))
        #expect(example.secret == "c@rol \"quoted\"" && example.attributes["port"] as? Int == 8443)
        #expect(example.attributes["path"] as? String == "/sso?next=%2Fhome" && example.attributes["comment"] as? String == "multi\nline note")
        #expect(example.attributes["label"] as? String == "Example, Inc." && example.attributes["kind"] as? String == "work")
        #expect(Self.item(items, "generic", "otpauth/example.com", "carol")?.secret.hasPrefix("otpauth://totp/Example:carol?secret=") == true)
        #expect(Self.item(items, "generic", "Database", "dbadmin")?.secret == "s3cr3t")
    }

    @Test func keepassxcCSVKeepsDates() throws {
        let (h, out) = try importing("keepassxc.csv")
        #expect(out.status == 0, "\(out.stderr)")
        let items = try Self.export(h)
        let gmail = try #require(Self.item(items, "internet", "mail.google.com", "dave@gmail.com"))
        #expect(gmail.attributes["created"] as? String == "2023-01-15T08:30:00Z" && gmail.attributes["modified"] as? String == "2024-03-01T12:00:00Z")
        #expect(gmail.attributes["kind"] as? String == "Root/Email" && gmail.secret == "d4ve")
        let ssh = try #require(Self.item(items, "internet", "box.example.org", "root"))
        #expect(ssh.attributes["protocol"] as? String == "ssh " && ssh.attributes["port"] as? Int == 2222)
        #expect(Self.item(items, "internet", "nouser.example.com", "")?.secret == "nouser")
    }

    @Test func browserCSVs() throws {
        var (h, out) = try importing("chrome.csv")
        #expect(out.status == 0, "\(out.stderr)")
        var items = try Self.export(h)
        #expect(Self.item(items, "internet", "accounts.google.com", "erin@gmail.com")?.secret == "er,in")
        #expect(Self.item(items, "internet", "example.net", "")?.attributes["comment"] as? String == "note with \"quotes\"")

        (h, out) = try importing("firefox.csv")
        #expect(out.status == 0, "\(out.stderr)")
        items = try Self.export(h)
        let frank = try #require(Self.item(items, "internet", "www.mozilla.org", "frank"))
        #expect(frank.attributes["created"] as? String == "2023-11-14T22:13:20Z" && frank.attributes["modified"] as? String == "2023-11-14T22:15:00Z")
        #expect(Self.item(items, "internet", "intranet.example.com", "grace")?.attributes["security-domain"] as? String == "Intranet Realm")
        #expect(out.stdout.contains("not kept: formActionOrigin, guid, timeLastUsed"), "\(out.stdout)")

        (h, out) = try importing("apple.csv")
        #expect(out.status == 0, "\(out.stderr)")
        items = try Self.export(h)
        #expect(Self.item(items, "internet", "example.org", "heidi")?.attributes["comment"] as? String == "Notes, with comma")
        #expect(Self.item(items, "internet", "apps.apple.com", "heidi@icloud.com")?.secret == "pa\"ss")
        #expect(Self.item(items, "generic", "otpauth/apps.apple.com", "heidi@icloud.com") != nil)
    }

    @Test func gitCredentialsBecomeInternetPasswords() throws {
        let (h, out) = try importing("git-credentials")
        #expect(out.status == 0, "\(out.stderr)")
        let items = try Self.export(h)
        #expect(Self.item(items, "internet", "git.example.com", "ivan")?.secret == "p@ss:word")
        let judy = try #require(Self.item(items, "internet", "github.com", "judy"))
        #expect(judy.attributes["port"] as? Int == 443 && judy.attributes["path"] as? String == "/judy/repo.git")
        #expect(judy.attributes["auth-type"] as? String == "dflt")
        let ken = try #require(Self.item(items, "internet", "localhost", "ken"))
        #expect(ken.secret == "kén" && ken.attributes["protocol"] as? String == "http" && ken.attributes["port"] as? Int == 3000)
        // No secret in what kc prints.
        #expect(!out.stdout.contains("tok3n") && !out.stderr.contains("tok3n"))
    }

    @Test func bitwardenJSON() throws {
        let (h, out) = try importing("bitwarden.json")
        #expect(out.status == 1, "a card is unsupported: \(out.stderr)")
        #expect(out.stdout.contains("entry 3: unsupported Visa: a Bitwarden card has no keychain class"), "\(out.stdout)")
        #expect(out.stdout.contains("not kept: favorite, hidden field recovery code"), "\(out.stdout)")
        #expect(!out.stdout.contains("rc-1234") && !out.stdout.contains("4111"))
        let items = try Self.export(h)
        let mastodon = try #require(Self.item(items, "internet", "mastodon.social", "liz"))
        #expect(mastodon.secret == "m@st0d0n" && mastodon.attributes["kind"] as? String == "Social")
        #expect(mastodon.attributes["comment"] as? String == "toot toot\nhandle: @liz")
        #expect(mastodon.attributes["created"] as? String == "2023-05-01T10:00:00Z" && mastodon.attributes["modified"] as? String == "2024-06-01T11:22:33Z")
        #expect(Self.item(items, "generic", "Safe combination", "")?.secret == "12-34-56")
        #expect(Self.item(items, "generic", "No URL login", "")?.secret == "bare")
        #expect(Self.item(items, "generic", "otpauth/mastodon.social", "liz") != nil)
    }

    @Test func formatIsDetectedOrNamed() throws {
        let h = try KCHome()
        try h.createKeychain()
        let expected = [
            "bitwarden.csv": "bitwarden-csv", "1password.csv": "1password-csv", "keepassxc.csv": "keepassxc-csv",
            "chrome.csv": "chrome-csv", "firefox.csv": "firefox-csv", "apple.csv": "apple-csv",
            "git-credentials": "git-credentials", "bitwarden.json": "bitwarden-json"
        ]
        for (file, format) in expected {
            let out = try h.kc(["import", "--dry-run", "--json", Self.fixtures + "/" + file], password: KCHome.password)
            let json = try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any]
            #expect(json?["format"] as? String == format, "\(file): \(out.stdout) \(out.stderr)")
        }
        // An unknown shape: exit 206 and the list of formats.
        try "foo,bar\n1,2\n".write(toFile: h.directory + "/odd.csv", atomically: true, encoding: .utf8)
        let out = try h.kc(["import", h.directory + "/odd.csv"], password: KCHome.password)
        #expect(out.status == 206 && out.stderr.contains("cannot tell the format") && out.stderr.contains("keepassxc-csv, chrome-csv"), "\(out.stderr)")
        // From stdin.
        let piped = try h.kc(["import", "-"], password: KCHome.password, stdin: try Data(contentsOf: URL(fileURLWithPath: Self.fixtures + "/chrome.csv")))
        #expect(piped.status == 0 && piped.stderr.contains("2 created"), "\(piped.stderr)")
    }

    /// Malformed input fails the whole import with its line number and changes nothing;
    /// --skip-invalid imports the rest and reports each skipped row.
    @Test func malformedInputChangesNothing() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "before", "-a", "me", "-w", "x"], password: KCHome.password).status == 0)
        let before = try h.kc(["export"], password: KCHome.password).stdout.replacing(/"exported":"[^"]*"/, with: "")
        let header = "name,url,username,password,note\n"
        let good = "ok,https://ok.example.com,u,p,\n"
        var cases: [(String, [UInt8], String)] = [
            ("bad quoting", Array((header + good + "x\"y,https://b.example.com,u,p,\n").utf8), "line 3: a quote inside field 1"),
            ("text after a closing quote", Array((header + good + "\"x\"y,https://b.example.com,u,p,\n").utf8), "line 3: text after the closing quote"),
            ("wrong column count", Array((header + good + "a,https://b.example.com,u\n").utf8), "line 3: 3 fields where the header has 5"),
            (
                "invalid UTF-8", Array((header + good).utf8) + [0x61, 0xFF, 0xFE] + Array(",https://b.example.com,u,p,\n".utf8),
                "line 3: field 1 is not valid UTF-8"
            ),
            ("unterminated quote", Array((header + good + "\"never ends,https://b.example.com,u,p,\nmore\n").utf8), "line 3: a quoted field that never ends")
        ]
        // A 100 MiB field.
        var huge = Array((header + good + "big,https://b.example.com,u,").utf8)
        huge += [UInt8](repeating: UInt8(ascii: "A"), count: 100 << 20)
        huge += Array(",\n".utf8)
        cases.append(("a 100 MiB field", huge, "line 3: field 4 is longer than 1048576 bytes"))
        for (name, bytes, message) in cases {
            let file = h.directory + "/in.csv"
            try Data(bytes).write(to: URL(fileURLWithPath: file))
            var out = try h.kc(["import", file], password: KCHome.password)
            #expect(out.status == 206 && out.stderr.contains(message) && out.stderr.contains("nothing was imported"), "\(name): \(out.stderr)")
            let after = try h.kc(["export"], password: KCHome.password).stdout.replacing(/"exported":"[^"]*"/, with: "")
            #expect(after == before, "\(name): the keychain changed")
            out = try h.kc(["import", "--skip-invalid", "--dry-run", file], password: KCHome.password)
            #expect(out.status == 1 && out.stdout.contains("line 3: invalid") && out.stdout.contains("line 2: created"), "\(name): \(out.stdout)")
        }
        // --skip-invalid for real: the good row is imported, the bad one reported, exit 1.
        let out = try h.kc(["import", "--skip-invalid", Self.fixtures + "/malformed.csv"], password: KCHome.password)
        #expect(out.status == 1 && out.stdout.contains("line 3: invalid"), "\(out.stdout)")
        #expect(out.stderr.contains("2 created, 0 updated, 0 unchanged, 0 skipped, 1 invalid"), "\(out.stderr)")
        // An item the keychain itself refuses (an attribute over 64 KiB) fails the import too.
        let long = header + "long,https://l.example.com,u,p," + String(repeating: "n", count: 70_000) + "\n"
        try long.write(toFile: h.directory + "/long.csv", atomically: true, encoding: .utf8)
        let refused = try h.kc(["import", h.directory + "/long.csv"], password: KCHome.password)
        #expect(refused.status == 42 && refused.stderr.contains("line 2:"), "\(refused.stderr)")
    }

    /// --dry-run reports every entry and changes nothing; a second import changes nothing;
    /// --update replaces what differs and keeps the creation date.
    @Test func dryRunRerunAndUpdate() throws {
        let h = try KCHome()
        try h.createKeychain()
        var out = try h.kc(["import", "--dry-run", "--json", Self.fixtures + "/chrome.csv"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any])
        #expect(report["dryRun"] as? Bool == true)
        #expect((report["entries"] as? [[String: Any]])?.map { $0["result"] as? String } == ["created", "created"])
        #expect((report["summary"] as? [String: Int])?["created"] == 2)
        #expect(try Self.export(h).isEmpty, "a dry run changes nothing")

        out = try h.kc(["import", Self.fixtures + "/chrome.csv"], password: KCHome.password)
        #expect(out.status == 0)
        let first = try h.kc(["export"], password: KCHome.password).stdout.replacing(/"exported":"[^"]*"/, with: "")
        out = try h.kc(["import", Self.fixtures + "/chrome.csv"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.contains("0 created, 0 updated, 2 unchanged"), "\(out.stderr)")
        #expect(try h.kc(["export"], password: KCHome.password).stdout.replacing(/"exported":"[^"]*"/, with: "") == first)

        // A changed password: skipped (exit 1) without --update, replaced with it.
        let changed = try String(contentsOfFile: Self.fixtures + "/chrome.csv", encoding: .utf8).replacing("\"er,in\"", with: "new-pass")
        try changed.write(toFile: h.directory + "/changed.csv", atomically: true, encoding: .utf8)
        out = try h.kc(["import", h.directory + "/changed.csv"], password: KCHome.password)
        #expect(out.status == 1 && out.stdout.contains("line 2: skipped internet accounts.google.com erin@gmail.com"), "\(out.stdout)")
        #expect(Self.item(try Self.export(h), "internet", "accounts.google.com", "erin@gmail.com")?.secret == "er,in")
        let created = Self.item(try Self.export(h), "internet", "accounts.google.com", "erin@gmail.com")?.attributes["created"] as? String
        out = try h.kc(["import", "--update", h.directory + "/changed.csv"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.contains("0 created, 1 updated, 1 unchanged"), "\(out.stderr)")
        let updated = try #require(Self.item(try Self.export(h), "internet", "accounts.google.com", "erin@gmail.com"))
        #expect(updated.secret == "new-pass" && updated.attributes["created"] as? String == created)
        #expect(try h.kc(["find", "--class", "internet", "-s", "accounts.google.com", "-w"], password: KCHome.password).stdout == "new-pass")
    }

    /// kc's own JSON: export → import into a new keychain → export is byte-identical apart
    /// from the export time, for every class (certificates, keys, binary attributes, dates).
    @Test func kcJSONRoundTripIsByteIdentical() throws {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        let vectors = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("Vectors").path
        let keyFile = h.directory + "/key.bin"
        try Data([0, 1, 2, 0xFF]).write(to: URL(fileURLWithPath: keyFile))
        for args in [
            ["-s", "svc", "-a", "me", "-w", "généric ✓", "-j", "comment\nwith line", "-G", "raw"],
            ["--class", "internet", "-s", "example.com", "-a", "me", "-w", "web", "-r", "https", "-P", "8443", "-p", "/x"],
            ["--class", "certificate", "--data-file", vectors + "/cert-rsa-v3.der", "-l", "cert"],
            ["--class", "key", "--tag", "com.example.k", "--data-file", keyFile]
        ] {
            let out = try h.kc(["add"] + args, password: pw)
            #expect(out.status == 0, "\(args): \(out.stderr)")
        }
        #expect(try h.kc(["import", Self.fixtures + "/bitwarden.json"], password: pw).status == 1)
        let first = try h.kc(["export"], password: pw)
        try first.stdout.write(toFile: h.directory + "/first.json", atomically: true, encoding: .utf8)
        let copy = h.directory + "/copy.keychain-db"
        #expect(try h.kc(["create", "--kdf", "interactive", copy], password: pw).status == 0)
        var out = try h.kc(["import", "-k", copy, h.directory + "/first.json"], password: pw)
        #expect(out.status == 0 && out.stderr.contains("(from json)"), "\(out.stderr)")
        let second = try h.kc(["export", "-k", copy], password: pw)
        let strip = { (s: String) in s.replacing(/"exported":"[^"]*"/, with: "") }
        #expect(strip(first.stdout) == strip(second.stdout))
        #expect(first.stdout.contains("\"class\":\"certificate\"") && first.stdout.contains("\"class\":\"key\""))
        // Importing it again changes nothing.
        out = try h.kc(["import", "-k", copy, h.directory + "/first.json"], password: pw)
        let count = (try JSONSerialization.jsonObject(with: Data(first.stdout.utf8)) as? [String: Any])?["items"] as? [Any]
        #expect(count?.count == 8)
        #expect(out.status == 0 && out.stderr.contains("0 created, 0 updated, 8 unchanged"), "\(out.stderr)")
        // A newer version of the format is refused.
        try first.stdout.replacing("\"version\":1", with: "\"version\":2").write(toFile: h.directory + "/v2.json", atomically: true, encoding: .utf8)
        out = try h.kc(["import", "-k", copy, h.directory + "/v2.json"], password: pw)
        #expect(out.status == 34 && out.stderr.contains("version 2"), "\(out.stderr)")
    }

    /// Bitwarden JSON and CSV exports carry logins, notes and one-time codes to another
    /// manager; kc reads both back to the same items.
    @Test func bitwardenExportsRoundTrip() throws {
        let (h, _) = try importing("bitwarden.csv")
        let pw = KCHome.password
        let original = try Self.export(h)
        for format in ["bitwarden-json", "csv"] {
            let file = h.directory + "/out-\(format)"
            var out = try h.kc(["export", "--format", format, "-o", file], password: pw)
            #expect(out.status == 0, "\(out.stderr)")
            var st = stat()
            #expect(lstat(file, &st) == 0 && st.st_mode & 0o777 == 0o600)
            let copy = h.directory + "/\(format).keychain-db"
            #expect(try h.kc(["create", "--kdf", "interactive", copy], password: pw).status == 0)
            out = try h.kc(["import", "-k", copy, file], password: pw)
            #expect(out.status == 0 && out.stderr.contains("5 created"), "\(format): \(out.stderr)")
            let back = try Self.export(h, keychain: copy)
            #expect(back.count == original.count)
            for item in original {
                let key = item.cls == "internet" ? "server" : "service"
                let match = Self.item(back, item.cls, item.attributes[key] as? String ?? "", item.attributes["account"] as? String ?? "")
                #expect(match?.secret == item.secret, "\(format): \(item.attributes[key] ?? "")")
                #expect(match?.attributes["comment"] as? String == item.attributes["comment"] as? String)
            }
        }
        // Certificates and keys have no place there: left out and said so.
        let keyFile = h.directory + "/key.bin"
        try Data([1, 2]).write(to: URL(fileURLWithPath: keyFile))
        #expect(try h.kc(["add", "--class", "key", "--tag", "t", "--data-file", keyFile], password: pw).status == 0)
        let out = try h.kc(["export", "--format", "csv"], password: pw)
        #expect(out.status == 0 && out.stderr.contains("left out 1 item that csv has no place for"), "\(out.stderr)")
    }

    /// A real pass store: a throwaway gpg key with no passphrase in its own GNUPGHOME, entries
    /// made with `pass insert`. gpg gets no kc password variable; no plaintext file is left.
    @Test func passStoreThroughGpg() throws {
        let h = try KCHome()
        try h.createKeychain()
        let gnupg = h.directory + "/gnupg", store = h.directory + "/store", tmp = h.directory + "/tmp", bin = h.directory + "/bin"
        for dir in [gnupg, tmp, bin] {
            try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        }
        // A gpg on PATH that records its environment, then runs the real one.
        try "#!/bin/sh\nenv > '\(h.directory)/gpg-env'\nexec /usr/bin/gpg \"$@\"\n".write(toFile: bin + "/gpg", atomically: true, encoding: .utf8)
        #expect(chmod(bin + "/gpg", 0o700) == 0)
        let env = "export GNUPGHOME='\(gnupg)' PASSWORD_STORE_DIR='\(store)' TMPDIR='\(tmp)'\n"
        var out = try h.sh(
            env + """
                gpg --batch --quiet --passphrase '' --quick-gen-key 'kc test <kc@test.invalid>' default default never 2>/dev/null || exit 10
                fpr=$(gpg --list-keys --with-colons | awk -F: '/^fpr/ {print $10; exit}')
                pass init "$fpr" >/dev/null || exit 11
                printf 'hunter2\\nlogin: mallory\\nurl: https://shop.example.com/login\\notpauth://totp/Shop:mallory?secret=JBSWY3DPEHPK3PXP\\npin: 1234\\nfree text\\n' | pass insert -m email/shop >/dev/null || exit 12
                printf 'db-pass\\n' | pass insert -m servers/db >/dev/null || exit 13
                """)
        #expect(out.status == 0, "making the store: \(out.status) \(out.stderr)")
        out = try h.sh(env + "PATH='\(bin)':$PATH KC_NEW_PASSWORD=other kc import '\(store)'")
        #expect(out.status == 0 && out.stderr.contains("3 created") && out.stderr.contains("(from pass)"), "\(out.stderr)")
        let items = try Self.export(h)
        let shop = try #require(Self.item(items, "internet", "shop.example.com", "mallory"))
        #expect(shop.secret == "hunter2" && shop.attributes["path"] as? String == "/login")
        #expect(shop.attributes["label"] as? String == "email/shop" && shop.attributes["comment"] as? String == "free text\npin: 1234")
        #expect(Self.item(items, "generic", "otpauth/shop.example.com", "mallory")?.secret.hasPrefix("otpauth://totp/Shop:mallory") == true)
        #expect(Self.item(items, "generic", "servers/db", "")?.secret == "db-pass")
        let gpgEnv = try String(contentsOfFile: h.directory + "/gpg-env", encoding: .utf8)
        #expect(gpgEnv.contains("GNUPGHOME=") && !gpgEnv.contains("KC_PASSWORD") && !gpgEnv.contains("KC_NEW_PASSWORD"), "\(gpgEnv)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: tmp).isEmpty, "no temporary files")
        // A folder that is not a pass store.
        out = try h.kc(["import", tmp], password: KCHome.password)
        #expect(out.status == 206 && out.stderr.contains("not a pass store"), "\(out.stderr)")
    }

    /// Crafted input (from the security review): escape sequences never reach the terminal
    /// raw; a password in a URL is not printed; a dry run creates no keychain; --skip-invalid
    /// skips only invalid items, never a damaged keychain.
    @Test func craftedInputIsReportedSafely() throws {
        let h = try KCHome()
        let pw = KCHome.password
        try "name,url,username,password\n\u{1B}]52;c;aGk=\u{07}evil,https://x.example.com,\u{1B}[2Jacct,p\n,myapp://bob:hunter2@host/x,,pw2\n"
            .write(toFile: h.directory + "/esc.csv", atomically: true, encoding: .utf8)
        // No keychain yet: a dry run reports what the import would do (into an empty
        // keychain in memory) and creates none, not even its folder; a named one is exit 50.
        var out = try h.kc(["import", "--dry-run", h.directory + "/esc.csv"], password: pw)
        #expect(out.status == 0 && out.stderr.contains("does not exist yet"), "\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: h.directory + "/data"), "no keychain, no folder")
        out = try h.kc(["import", "--dry-run", "-k", "work", h.directory + "/esc.csv"], password: pw)
        #expect(out.status == 50, "\(out.stderr)")
        try h.createKeychain()
        out = try h.kc(["import", "--dry-run", h.directory + "/esc.csv"], password: pw)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(!out.stdoutBytes.contains(0x1B) && !out.stdoutBytes.contains(0x07), "\(out.stdout)")
        #expect(out.stdout.contains("\\u001b[2Jacct"), "escaped, still readable: \(out.stdout)")
        #expect(!out.stdout.contains("hunter2") && out.stdout.contains("generic myapp://host/x"), "\(out.stdout)")
        #expect(try h.kc(["import", h.directory + "/esc.csv"], password: pw).status == 0)
        #expect(try h.kc(["find", "-s", "myapp://host/x", "-w"], password: pw).stdout == "pw2")
        // A row whose stored metadata is damaged: an import that reaches it fails (93), even
        // with --skip-invalid, and changes nothing.
        #expect(try h.kc(["add", "--class", "internet", "-s", "dup.example.com", "-a", "u", "-r", "https", "-w", "old"], password: pw).status == 0)
        let sql = "UPDATE kc_items SET metadata = zeroblob(length(metadata)) WHERE rowid = (SELECT max(rowid) FROM kc_items);"
        #expect(try Spawn.run(["/usr/bin/sqlite3", h.defaultKeychain, sql], environment: [:]).status == 0)
        try "name,url,username,password\nd,https://dup.example.com,u,new\n".write(toFile: h.directory + "/dup.csv", atomically: true, encoding: .utf8)
        out = try h.kc(["import", "--update", "--skip-invalid", h.directory + "/dup.csv"], password: pw)
        #expect(out.status == 93, "\(out.status) \(out.stdout) \(out.stderr)")
    }

    /// A pass store's file that is not a regular UTF-8-named .gpg file is reported, not
    /// silently left out.
    @Test func passStoreOddFilesAreReported() throws {
        let h = try KCHome()
        try h.createKeychain()
        let store = h.directory + "/store"
        try FileManager.default.createDirectory(atPath: store, withIntermediateDirectories: true)
        try Data().write(to: URL(fileURLWithPath: h.directory + "/elsewhere.gpg"))
        #expect(symlink(h.directory + "/elsewhere.gpg", store + "/link.gpg") == 0)
        var raw = Array((store + "/bad").utf8) + [0xFF] + Array(".gpg".utf8) + [0]
        let fd = raw.withUnsafeMutableBufferPointer {
            open(UnsafeRawPointer($0.baseAddress!).assumingMemoryBound(to: CChar.self), O_CREAT | O_WRONLY | O_CLOEXEC, 0o600)
        }
        #expect(fd >= 0)
        close(fd)
        let out = try h.kc(["import", "--dry-run", store], password: KCHome.password)
        #expect(out.status == 1, "\(out.stdout) \(out.stderr)")
        #expect(out.stdout.contains("link.gpg: unsupported") && out.stdout.contains("symbolic link"), "\(out.stdout)")
        #expect(out.stdout.contains("not UTF-8"), "\(out.stdout)")
    }

    /// With the agent holding the keychain, import needs no password: one request.
    @Test func importThroughTheAgent() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        var out = try h.kc(["import", Self.fixtures + "/keepassxc.csv"])
        #expect(out.status == 0 && out.stderr.contains("3 created"), "\(out.stderr)")
        out = try h.kc(["import", "--dry-run", Self.fixtures + "/keepassxc.csv"])
        #expect(out.status == 0 && out.stderr.contains("3 unchanged") && out.stdout.contains("line 2: unchanged"), "\(out.stdout)\(out.stderr)")
        #expect(try h.kc(["find", "--class", "internet", "-s", "mail.google.com", "-w"]).stdout == "d4ve")
        // Locked and no password: fails at once, nothing asked.
        #expect(try h.kc(["lock"]).status == 0)
        out = try h.kc(["import", Self.fixtures + "/chrome.csv"])
        #expect(out.status == 36, "\(out.stderr)")
    }
}
