import Foundation
import Testing
import KCTestSupport

/// Issue 21: completion of keychain names, and of services and accounts when the keychain
/// is unlocked. Driven through the bash script `kc --generate-completion-script bash`
/// prints, sourced in a real bash, its completion function called as bash calls it at a Tab.
@Suite struct CompletionTests {
    @Test(arguments: ["bash", "zsh", "fish"])
    func completionScripts(shell: String) throws {
        let h = try KCHome()
        let out = try h.kc(["--generate-completion-script", shell])
        #expect(out.status == 0)
        for word in ["add", "find", "update", "delete", "create", "passwd", "keychain"] {
            #expect(out.stdout.contains(word), "\(shell): \(word)")
        }
        if shell == "bash" {
            let file = h.directory + "/kc.bash"
            try Data(out.stdout.utf8).write(to: URL(fileURLWithPath: file))
            #expect(try h.sh("bash -n \(file) && echo syntax-ok").stdout == "syntax-ok\n")
        }
    }

    /// Runs bash with kc's completion script loaded and prints, for each command line
    /// (completing its last word; a line ending in a space completes an empty word), what
    /// the Tab offers: `[candidate]` lines after a `== LINE` header.
    func complete(_ h: KCHome, _ lines: [String], env: [String: String] = [:]) throws -> (offers: [String: [String]], seconds: Double) {
        var script = """
            source <(kc --generate-completion-script bash) || exit 99
            offer() {
                COMP_LINE="$1"; COMP_POINT=${#COMP_LINE}
                read -r -a COMP_WORDS <<< "$COMP_LINE"
                [[ "$COMP_LINE" == *" " ]] && COMP_WORDS+=("")
                COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
                COMPREPLY=()
                printf '== %s\\n' "$COMP_LINE"
                _kc kc "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
                [[ ${#COMPREPLY[@]} -eq 0 ]] || printf '[%s]\\n' "${COMPREPLY[@]}"
            }
            cd "$HOME" || exit 98

            """
        for line in lines { script += "offer '\(line)'\n" }
        var environment = h.environment.merging(env) { _, b in b }
        environment["PATH"] = URL(fileURLWithPath: KCBinary.path).deletingLastPathComponent().path + ":/usr/bin:/bin"
        let start = Date()
        let out = try Spawn.run(["/bin/bash", "-c", script], environment: environment, timeout: 30)
        let seconds = Date().timeIntervalSince(start)
        #expect(out.status == 0 && out.stderr.isEmpty, "status \(out.status): \(out.stderr)")
        var offers: [String: [String]] = [:]
        var current = ""
        for line in out.stdout.split(separator: "\n").map(String.init) {
            if line.hasPrefix("== ") {
                current = String(line.dropFirst(3))
                offers[current] = []
            } else if line.hasPrefix("["), line.hasSuffix("]") {
                offers[current, default: []].append(String(line.dropFirst().dropLast()))
            } else {
                Issue.record("unexpected output: \(line)")
            }
        }
        return (offers, seconds)
    }

    @Test func tabOffersKeychainsServicesAndAccountsOfAnUnlockedKeychain() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["create", "work", "--kdf", "interactive"], password: KCHome.password).status == 0)
        let pwned = h.directory + "/pwned"
        let items: [[String]] = [
            ["-s", "github.com", "-a", "alice", "-w", "secret-1"],
            ["-s", "github.com", "-a", "bob", "-w", "secret-2"],
            ["-s", "gitlab.com", "-a", "carol", "-w", "secret-3"],
            // A name from an imported file: bash's compgen would run this at a Tab.
            ["-s", "evil $(touch \(pwned)) `touch \(pwned)`", "-a", "dave", "-w", "secret-4"],
            ["--class", "internet", "-s", "example.com", "-a", "erin", "-r", "https", "-w", "secret-5"],
            ["-k", "work", "-s", "work-svc", "-a", "frank", "-w", "secret-6"]
        ]
        for item in items {
            #expect(try h.kc(["add"] + item, password: KCHome.password).status == 0)
        }
        for keychain in ["login", "work"] {
            #expect(try h.kc(["unlock", "-k", keychain], password: KCHome.password).status == 0)
        }
        try FileManager.default.createDirectory(atPath: h.directory + "/backups", withIntermediateDirectories: true)
        // A team keychain this device joined (its team file; kc looks at nothing else).
        try FileManager.default.createDirectory(atPath: h.directory + "/data/kc/teams", withIntermediateDirectories: true)
        try Data("team file".utf8).write(to: URL(fileURLWithPath: h.directory + "/data/kc/teams/infra.team"))

        let (offers, _) = try complete(
            h,
            [
                "kc find -s ", "kc find -s git", "kc find -s github.com -a ", "kc delete -a ",
                "kc find --class internet -s ", "kc find -k work -s ", "kc find -k ", "kc update -k w",
                "kc read --allow-keychain ", "kc find -k ~/ba", "kc backup -k ./da", "kc find -k te"
            ])
        #expect(offers["kc find -s "] == ["evil $(touch \(pwned)) `touch \(pwned)`", "github.com", "gitlab.com"])
        #expect(!FileManager.default.fileExists(atPath: pwned), "a service name never runs as a command")
        #expect(offers["kc find -s git"] == ["github.com", "gitlab.com"])
        #expect(offers["kc find -s github.com -a "] == ["alice", "bob"], "narrowed to the service on the line")
        #expect(offers["kc delete -a "] == ["alice", "bob", "carol", "dave"])
        #expect(offers["kc find --class internet -s "] == ["example.com"], "servers, for internet passwords")
        #expect(offers["kc find -k work -s "] == ["work-svc"], "from the keychain -k chooses")
        #expect(offers["kc find -k "] == ["login", "team:infra", "work"])
        #expect(offers["kc find -k te"] == ["team:infra"], "team keychains as -k team:NAME")
        #expect(offers["kc update -k w"] == ["work"])
        #expect(offers["kc read --allow-keychain "] == ["login", "team:infra", "work"])
        #expect(offers["kc find -k ~/ba"] == ["~/backups/"])
        #expect(offers["kc backup -k ./da"] == ["./data/"])
        let everything = offers.values.joined().joined(separator: "\n")
        #expect(!everything.contains("secret-"), "never a secret")
    }

    /// Locked (no agent at all, or an agent that does not hold it): nothing, at once, and
    /// no password asked for or used, although KC_PASSWORD would open the keychain.
    @Test func aLockedKeychainOffersNothingAtOnceAndAsksForNothing() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "github.com", "-a", "alice", "-w", "secret-1"], password: KCHome.password).status == 0)
        let lines = ["kc find -s ", "kc find -a ", "kc find -k "]
        var (offers, seconds) = try complete(h, lines, env: ["KC_PASSWORD": KCHome.password])
        #expect(offers["kc find -s "] == [] && offers["kc find -a "] == [], "\(offers)")
        #expect(offers["kc find -k "] == ["login"], "keychain names need no unlocking")
        #expect(seconds < 5, "\(seconds) s")

        // The agent runs (it holds another keychain) but not this one.
        #expect(try h.kc(["create", "work", "--kdf", "interactive"], password: KCHome.password).status == 0)
        #expect(try h.kc(["unlock", "-k", "work"], password: KCHome.password).status == 0)
        (offers, seconds) = try complete(h, lines, env: ["KC_PASSWORD": KCHome.password])
        #expect(offers["kc find -s "] == [] && offers["kc find -a "] == [], "\(offers)")
        #expect(seconds < 5, "\(seconds) s")

        // At a terminal, with no password anywhere: no prompt, nothing printed.
        let session = try TerminalTests().drive(h, ["---completion", "find", "--", "--service", "3", "0", "kc", "find", "-s", ""], [])
        #expect(session.error == nil && session.status == 0, "\(session.screen)")
        #expect(session.screen.isEmpty && session.echo_off.isEmpty, "\(session.screen)")
    }

    /// An agent that accepts and never answers costs a Tab at most the completion's one
    /// second deadline (a command would wait two minutes for it).
    @Test func aSilentAgentCostsATabAtMostASecond() throws {
        let h = try KCHome()
        try h.createKeychain()
        let dir = h.directory + "/agent"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        // Listens, accepts, never answers; gone by itself after 20 s.
        let listener = """
            import os, socket, sys, time
            s = socket.socket(socket.AF_UNIX); s.bind(sys.argv[1]); s.listen(8); s.settimeout(0.2)
            open(sys.argv[2], "w").write(str(os.getpid()))
            held, end = [], time.time() + 20
            while time.time() < end:
                try: held.append(s.accept()[0])
                except socket.timeout: pass
            """
        let out = try Spawn.run(
            [
                "/bin/sh", "-c",
                """
                nohup python3 -c '\(listener)' '\(dir)/agent.sock' '\(h.directory)/ready' >/dev/null 2>&1 &
                for i in $(seq 100); do [ -s '\(h.directory)/ready' ] && exit 0; sleep 0.05; done; exit 1
                """
            ], environment: ["PATH": "/usr/bin:/bin"])
        #expect(out.status == 0, "the listener did not start: \(out.stderr)")
        let pid = try #require(pid_t(String(contentsOfFile: h.directory + "/ready", encoding: .utf8)))
        // Gone before KCHome's `kc agent --stop`, which would wait for it.
        defer { kill(pid, SIGKILL) }
        let (offers, seconds) = try complete(h, ["kc find -s "])
        #expect(offers["kc find -s "] == [], "\(offers)")
        #expect(seconds < 6, "\(seconds) s")
    }
}
