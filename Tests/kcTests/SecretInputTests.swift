import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Issue 21: an item's secret follows one rule from every source. An empty one is refused
/// (exit 206, naming the source and --allow-empty) unless --allow-empty asks for it; one
/// from stdin or a file that ends in a newline is stored with its exact bytes, and on a
/// terminal kc says so.
@Suite struct SecretInputTests {
    /// `argv` (a full command line, kc wherever it is needed) in a pseudo-terminal that is
    /// its stdin, stdout and stderr, driven by `pty_session.py` as in `TerminalTests`.
    func drive(_ h: KCHome, argv: [String], _ steps: [[String]], env: [String: String] = [:]) throws -> TerminalTests.Session {
        let spec: [String: Any] = [
            "argv": argv,
            "env": h.environment.merging(env) { _, b in b }.merging(["PATH": "/usr/bin:/bin", "TERM": "dumb"]) { a, _ in a },
            "steps": steps, "answers": [[String]](), "timeout": 30
        ]
        let file = h.directory + "/session-\(UUID().uuidString).json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(
            ["/usr/bin/env", "python3", TerminalTests.script, file],
            environment: ["PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"])
        return try JSONDecoder().decode(TerminalTests.Session.self, from: Data(out.stdoutBytes))
    }

    /// `-w ""`, an empty --data-file and an empty stdin stored an empty secret from the first
    /// two and refused the third. Now each is refused for add and update, naming its source;
    /// nothing is stored; `-w ""` is refused before any keychain password is asked for.
    @Test func anEmptySecretIsRefusedFromEverySource() throws {
        let h = try KCHome()
        try h.createKeychain()
        let empty = h.directory + "/empty"
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let cases: [([String], Data?, String)] = [
            (["-w", ""], nil, "kc: the secret given with -w is empty"),
            (["--data-file", empty], nil, "kc: the data file \(empty) is empty"),
            ([], Data(), "kc: the secret on stdin is empty")
        ]
        for (source, stdin, message) in cases {
            let out = try h.kc(["add", "-s", "svc", "-a", "me"] + source, password: KCHome.password, stdin: stdin)
            #expect(out.status == 206, "\(source): \(out.stderr)")
            #expect(out.stderr.hasPrefix(message + "\n") && out.stderr.contains("--allow-empty"), "\(source): \(out.stderr)")
        }
        #expect(try h.kc(["find", "-s", "svc"], password: KCHome.password).status == 44, "nothing was stored")
        #expect(try h.kc(["add", "-s", "svc", "-a", "me", "-w", "kept"], password: KCHome.password).status == 0)
        for (source, stdin, message) in cases {
            let out = try h.kc(["update", "-s", "svc", "-a", "me"] + source, password: KCHome.password, stdin: stdin)
            #expect(out.status == 206 && out.stderr.hasPrefix(message + "\n"), "\(source): \(out.stderr)")
        }
        #expect(try h.kc(["find", "-s", "svc", "-w"], password: KCHome.password).stdout == "kept", "the secret is unchanged")
        // No password anywhere and no terminal: the empty -w is the error, not the lock (36).
        let out = try h.kc(["add", "-s", "other", "-w", ""])
        #expect(out.status == 206 && out.stderr.hasPrefix("kc: the secret given with -w is empty\n"), "\(out.stderr)")
    }

    /// --allow-empty stores an empty secret from each source, for add and update.
    @Test func allowEmptyStoresAnEmptySecretOnPurpose() throws {
        let h = try KCHome()
        try h.createKeychain()
        let empty = h.directory + "/empty"
        #expect(FileManager.default.createFile(atPath: empty, contents: Data()))
        let sources: [(String, [String], Data?)] = [("w", ["-w", ""], nil), ("file", ["--data-file", empty], nil), ("stdin", [], Data())]
        for (name, source, stdin) in sources {
            var out = try h.kc(["add", "-s", name, "--allow-empty"] + source, password: KCHome.password, stdin: stdin)
            #expect(out.status == 0 && out.stderr.isEmpty, "\(name): \(out.stderr)")
            out = try h.kc(["find", "-s", name, "-w"], password: KCHome.password)
            #expect(out.status == 0 && out.stdoutBytes.isEmpty, "\(name): \(out.stdout)")
            #expect(try h.kc(["update", "-s", name, "-w", "full"], password: KCHome.password).status == 0)
            out = try h.kc(["update", "-s", name, "--allow-empty"] + source, password: KCHome.password, stdin: stdin)
            #expect(out.status == 0, "\(name): \(out.stderr)")
            #expect(try h.kc(["find", "-s", name, "-w"], password: KCHome.password).stdoutBytes.isEmpty, "\(name)")
        }
    }

    /// Enter at the prompt stored an empty secret after Enter again at "Retype". Now the first
    /// empty entry is refused at once; with --allow-empty it is asked twice and stored.
    @Test func enterAtThePromptIsRefusedUnlessAllowed() throws {
        let h = try KCHome()
        try h.createKeychain()
        var s = try drive(
            h, argv: [KCBinary.path, "add", "-s", "typed", "-a", "me"], [["expect", "Secret:"], ["send", "\n"]],
            env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 206, "\(s.screen)")
        #expect(s.screen.contains("kc: the secret typed at the prompt is empty; nothing was changed"), "\(s.screen)")
        #expect(s.screen.contains("--allow-empty") && !s.screen.contains("Retype"), "\(s.screen)")
        #expect(try h.kc(["find", "-s", "typed"], password: KCHome.password).status == 44)
        s = try drive(
            h, argv: [KCBinary.path, "add", "-s", "typed", "-a", "me", "--allow-empty"],
            [["expect", "Secret:"], ["send", "\n"], ["expect", "Retype secret:"], ["send", "\n"]],
            env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 0, "\(s.screen)")
        let out = try h.kc(["find", "-s", "typed", "-w"], password: KCHome.password)
        #expect(out.status == 0 && out.stdoutBytes.isEmpty)
    }

    /// `echo tok | kc add` at a terminal stored "tok\n" without a word. The bytes are still
    /// stored as given, but a person at the terminal (stderr is one) is told, for stdin and
    /// for --data-file, by add and update; `printf %s` gets no warning.
    @Test func aTrailingNewlineIsWarnedAboutOnATerminal() throws {
        let h = try KCHome()
        try h.createKeychain()
        let kc = "'\(KCBinary.path)'"
        var s = try drive(
            h, argv: ["/bin/sh", "-c", "echo tok | \(kc) add -s piped -a me; echo \"exit $?\""], [["expect", "exit"]],
            env: ["KC_PASSWORD": KCHome.password])
        #expect(s.screen.contains("exit 0"), "\(s.screen)")
        #expect(s.screen.contains("kc: warning: the secret from stdin ends in a newline, which was stored as part of it"), "\(s.screen)")
        #expect(s.screen.contains("kc: hint: echo adds one; printf %s"), "\(s.screen)")
        #expect(try h.kc(["find", "-s", "piped", "-w"], password: KCHome.password).stdout == "tok\n", "exact bytes, as documented")

        let file = h.directory + "/token.txt"
        try Data("from-editor\n".utf8).write(to: URL(fileURLWithPath: file))
        s = try drive(
            h, argv: [KCBinary.path, "update", "-s", "piped", "-a", "me", "--data-file", file], [],
            env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 0, "\(s.screen)")
        #expect(s.screen.contains("kc: warning: the data file \(file) ends in a newline, which was stored as part of the secret"), "\(s.screen)")
        #expect(s.screen.contains("truncate -s -1 \(file)"), "\(s.screen)")
        #expect(try h.kc(["find", "-s", "piped", "-w"], password: KCHome.password).stdout == "from-editor\n")

        s = try drive(
            h, argv: ["/bin/sh", "-c", "printf %s tok | \(kc) add -s exact -a me; echo \"exit $?\""], [["expect", "exit"]],
            env: ["KC_PASSWORD": KCHome.password])
        #expect(s.screen.contains("exit 0") && !s.screen.contains("warning"), "\(s.screen)")
        // A failed add stores nothing and says nothing about what it did not store.
        s = try drive(
            h, argv: ["/bin/sh", "-c", "echo tok | \(kc) add -s exact -a me; echo \"exit $?\""], [["expect", "exit"]],
            env: ["KC_PASSWORD": KCHome.password])
        #expect(s.screen.contains("exit 45") && !s.screen.contains("warning"), "\(s.screen)")
    }

    /// The rule is for what a person types. git calls `store` only after the server accepted
    /// the credential (a token as the user name with an empty password is one), and Docker
    /// refuses an empty password before its helper is called: the helpers store what they
    /// are given, an empty password included, as git's and Docker's macOS helpers do.
    @Test func credentialHelpersStoreAnEmptyPasswordTheyAreGiven() throws {
        let helpers = CredentialHelperTests()
        let h = try helpers.home()
        var out = try helpers.helper(h, "store", "protocol=https\nhost=git.example.com\nusername=tok-as-user\npassword=\n")
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        out = try helpers.helper(h, "get", "protocol=https\nhost=git.example.com\n")
        #expect(out.stdout == "username=tok-as-user\npassword=\n", "\(out.stdout) \(out.stderr)")
        out = try Spawn.run(
            [h.directory + "/bin/docker-credential-kc", "store"], environment: h.environment,
            stdin: Data(#"{"ServerURL":"reg.example.com","Username":"bob","Secret":""}"#.utf8))
        #expect(out.status == 0, "\(out.stdout)")
        out = try Spawn.run([h.directory + "/bin/docker-credential-kc", "get"], environment: h.environment, stdin: Data("reg.example.com".utf8))
        #expect(out.stdout == #"{"ServerURL":"reg.example.com","Username":"bob","Secret":""}"# + "\n", "\(out.stdout)")
    }

    /// In a script (stderr not a terminal) the same secrets are stored as given, silently.
    @Test func aTrailingNewlineIsStoredSilentlyInAScript() throws {
        let h = try KCHome()
        try h.createKeychain()
        var out = try h.kc(["add", "-s", "piped", "-a", "me"], password: KCHome.password, stdin: Data("tok\n".utf8))
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        let file = h.directory + "/token.txt"
        try Data("from-editor\n".utf8).write(to: URL(fileURLWithPath: file))
        out = try h.kc(["update", "-s", "piped", "-a", "me", "--data-file", file], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "piped", "-w"], password: KCHome.password).stdout == "from-editor\n")
    }

    /// `--password-stdin` with the secret piped in too gave "wrong password" (51) or 36:
    /// it is a usage error that says the two cannot share stdin. Nothing is stored.
    @Test func passwordStdinAndASecretOnStdinCannotShareIt() throws {
        let h = try KCHome()
        try h.createKeychain()
        let both = Data((KCHome.password + "\nthe-secret").utf8)
        var out = try h.kc(["add", "-s", "svc", "-a", "me", "--password-stdin"], stdin: both)
        #expect(out.status == 2 && out.stderr.contains("cannot share stdin"), "\(out.stderr)")
        out = try h.kc(["update", "-s", "svc", "-a", "me", "--password-stdin"], stdin: both)
        #expect(out.status == 2 && out.stderr.contains("cannot share stdin"), "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "svc"], password: KCHome.password).status == 44, "nothing was stored")
        // With the secret given another way, --password-stdin works as before.
        out = try h.kc(["add", "-s", "svc", "-a", "me", "-w", "the-secret", "--password-stdin"], stdin: Data(KCHome.password.utf8))
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["update", "-s", "svc", "-a", "me", "--new-comment", "c", "--password-stdin"], stdin: Data(KCHome.password.utf8))
        #expect(out.status == 0, "only attributes change: stdin is the password's \(out.stderr)")
    }
}
