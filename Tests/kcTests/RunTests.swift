import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// `kc read`, `kc run` and `kc inject` through the real binary and the agent.
@Suite struct RunTests {
    /// A home with an unlocked keychain holding a few secrets.
    func home(unlock: Bool = true) throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        for args in [
            ["-s", "db", "-a", "app", "-w", "hunter2-secret"],
            ["--class", "internet", "-s", "api.example.com", "-a", "ci", "-w", "tok/ABC?"],
            ["-s", "team/x?y", "-a", "100%", "-w", "escaped-name-secret"],
            ["-s", "short", "-a", "s", "-w", "ab"],
            ["-s", "multi", "-a", "line", "-w", "line1\nline2"]
        ] {
            #expect(try h.kc(["add"] + args, password: KCHome.password).status == 0)
        }
        if unlock { #expect(try h.kc(["unlock"], password: KCHome.password).status == 0) }
        return h
    }

    @Test func readPrintsTheSecretOfAReference() throws {
        let h = try home()
        #expect(try h.kc(["read", "kc://db/app"]).stdout == "hunter2-secret")
        #expect(try h.kc(["read", "kc://api.example.com/ci?class=internet"]).stdout == "tok/ABC?")
        #expect(try h.kc(["read", "kc://team%2Fx%3Fy/100%25"]).stdout == "escaped-name-secret")
        #expect(try h.kc(["read", "kc://db"]).stdout == "hunter2-secret", "no account: any account")
        // Another keychain by name.
        let other = h.directory + "/data/kc/other.keychain-db"
        #expect(try h.kc(["create", "--kdf", "interactive", other], password: KCHome.password).status == 0)
        #expect(try h.kc(["add", "-k", "other", "-s", "db", "-a", "app", "-w", "from-other"], password: KCHome.password).status == 0)
        #expect(try h.kc(["read", "--allow-keychain", "other", "kc://db/app?keychain=other"], password: KCHome.password).stdout == "from-other")
        #expect(try h.kc(["read", "-k", "other", "kc://db/app?keychain=other"], password: KCHome.password).stdout == "from-other")
        for bad in ["kc://", "http://db/app", "kc://db/app/extra", "kc://db/app?class=certificate", "kc://db/app?x=1", "kc://db/app?keychain="] {
            let out = try h.kc(["read", bad])
            #expect(out.status == 206 && out.stderr.contains("malformed kc reference \"\(bad)\""), "\(bad): \(out.stderr)")
        }
        let missing = try h.kc(["read", "kc://db/nobody"])
        #expect(missing.status == 44 && missing.stderr.contains("kc://db/nobody"), "\(missing.stderr)")
    }

    @Test func runPassesExactArgumentsAndExitStatus() throws {
        let h = try home()
        var out = try h.kc(["run", "--", "/usr/bin/printf", "[%s]", "a b", "", "q\"x'y", "$HOME", "*"])
        #expect(out.status == 0 && out.stdout == "[a b][][q\"x'y][$HOME][*]", "\(out.stdout)")
        for code in [0, 1, 42] {
            out = try h.kc(["run", "--", "/bin/sh", "-c", "exit \(code)"])
            #expect(out.status == Int32(code))
        }
        out = try h.kc(["run", "--", "/bin/sh", "-c", "kill -TERM $$"])
        #expect(out.status == 143, "death by SIGTERM is 128+15")
        out = try h.kc(["run", "--", "/no/such/command"])
        #expect(out.status == 127 && out.stderr.contains("cannot run /no/such/command"), "issue 21: the shell's 127: \(out.stderr)")
        out = try h.kc(["run", "--", "nosuchcommand-kc-test"])
        #expect(out.status == 127, "\(out.stderr)")
        out = try h.kc(["run", "--", h.directory])   // a folder: found, cannot be run
        #expect(out.status == 126 && out.stderr.contains("cannot run"), "\(out.stderr)")
        out = try h.kc(["run", "echo"])
        #expect(out.status == 2, "the command comes after --")
    }

    @Test func runPutsSecretsInTheEnvironment() throws {
        let h = try home()
        try "# a comment\nexport FROM_FILE=kc://db/app\nPLAIN='not a ref'\nQUOTED=\"kc://team%2Fx%3Fy/100%25\"\n"
            .write(toFile: h.directory + "/.env.kc", atomically: true, encoding: .utf8)
        let arguments = [
            "--no-masking", "--env-file", h.directory + "/.env.kc", "--env", "TOKEN=kc://api.example.com/ci?class=internet",
            "--", "/bin/sh", "-c",
            "printf '%s|%s|%s|%s|%s|%s' \"$INHERITED\" \"$FROM_FILE\" \"$TOKEN\" \"$PLAIN\" \"$QUOTED\" \"${KC_PASSWORD-unset}${KC_NEW_PASSWORD-unset}\""
        ]
        // The inherited reference only with --resolve-env (issue 15, item 9: CraftedInputTests).
        let out = try h.kc(["run", "--resolve-env"] + arguments, password: KCHome.password, extra: ["INHERITED": "kc://db/app", "KC_NEW_PASSWORD": "x"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "hunter2-secret|hunter2-secret|tok/ABC?|not a ref|escaped-name-secret|unsetunset", "\(out.stdout)")
        let plain = try h.kc(["run"] + arguments, password: KCHome.password, extra: ["INHERITED": "kc://db/app"])
        #expect(plain.stdout == "kc://db/app|hunter2-secret|tok/ABC?|not a ref|escaped-name-secret|unsetunset", "\(plain.stdout)")
    }

    /// The hand parser for the plain forms and ArgumentParser give the same run.
    @Test func fastPathAndArgumentParserAgree() throws {
        let h = try home()
        let script = "printf '%s|%s' \"$A\" \"$B\""
        let fast = try h.kc(["run", "-k", h.defaultKeychain, "--env", "A=kc://db/app", "--env", "B=plain", "--no-masking", "--", "/bin/sh", "-c", script])
        let parsed = try h.kc(["run", "--keychain=\(h.defaultKeychain)", "--env=A=kc://db/app", "--env=B=plain", "--no-masking", "--", "/bin/sh", "-c", script])
        #expect(fast.status == 0 && fast.stdout == "hunter2-secret|plain", "\(fast.stderr)")
        #expect(parsed.status == fast.status && parsed.stdout == fast.stdout, "\(parsed.stderr)")
        // What the hand parser leaves alone still gets ArgumentParser's messages.
        for bad in [["run", "--mask", "--no-masking", "--", "true"], ["run", "--env", "1X=y", "--", "true"], ["run", "--"]] {
            #expect(try h.kc(bad).status == 2, "\(bad)")
        }
    }

    /// A reference that fails: CMD never starts, the error names the variable.
    @Test func aMissingReferenceStartsNothing() throws {
        let h = try home()
        var out = try h.kc(["run", "--env", "GOOD=kc://db/app", "--env", "BAD=kc://db/nobody", "--", "/usr/bin/touch", h.directory + "/started"])
        #expect(out.status == 44 && out.stderr.contains("BAD (kc://db/nobody)"), "\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: h.directory + "/started"))
        out = try h.kc(["run", "--env", "X=kc://", "--", "/usr/bin/touch", h.directory + "/started"])
        #expect(out.status == 206 && out.stderr.contains("X: malformed kc reference"), "\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: h.directory + "/started"))
    }

    /// Locked, no terminal, no password: every integration fails at once (under timeout).
    @Test func lockedWithoutATerminalFailsAtOnce() throws {
        let h = try home(unlock: false)
        let out = try h.sh(
            """
            setsid -w timeout 10 kc run --env A=kc://db/app -- touch started < /dev/null; echo "run $?"
            setsid -w timeout 10 kc read kc://db/app < /dev/null; echo "read $?"
            echo 'x={{ kc://db/app }}' > t && setsid -w timeout 10 kc inject -i t < /dev/null; echo "inject $?"
            """, password: nil)
        #expect(out.stdout == "run 36\nread 36\ninject 36\n", "\(out.stdout) \(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: h.directory + "/started"))
    }

    /// Masking in a log (stdout and stderr are pipes): a secret printed whole, or split across
    /// two writes, is concealed; --no-masking turns it off; a short secret is warned about.
    @Test func maskingConcealsSecretsInLogs() throws {
        let h = try home()
        let script = "echo \"out $DB\"; echo \"err $DB\" >&2; printf 'hunter2-'; sleep 0.02; printf 'secret done\\n'; echo \"token $T\""
        var out = try h.kc(["run", "--env", "DB=kc://db/app", "--env", "T=kc://api.example.com/ci?class=internet", "--", "/bin/sh", "-c", script])
        #expect(out.status == 0)
        #expect(out.stdout == "out <concealed by kc>\n<concealed by kc> done\ntoken <concealed by kc>\n", "\(out.stdout)")
        #expect(out.stderr == "err <concealed by kc>\n", "\(out.stderr)")
        out = try h.kc(["run", "--no-masking", "--env", "DB=kc://db/app", "--", "/bin/sh", "-c", "echo $DB"])
        #expect(out.stdout == "hunter2-secret\n")
        // Bytes that only start like a secret come out once later bytes or the end decide them.
        out = try h.kc(["run", "--env", "DB=kc://db/app", "--", "/bin/sh", "-c", "printf 'hunter2-sec'; sleep 0.2; printf 'ond\\n'"])
        #expect(out.stdout == "hunter2-second\n", "\(out.stdout)")
        out = try h.kc(["run", "--env", "S=kc://short/s", "--", "/bin/sh", "-c", "echo $S"])
        #expect(out.stdout == "ab\n" && out.stderr.contains("S is shorter than 4 bytes; it is not masked"), "\(out.stderr)")
    }

    /// From the security review: a background grandchild that keeps the pipe open does not
    /// keep kc running; signals ignored when kc started stay ignored (nohup); CRLF counts as
    /// a line end in env files and in dotenv values.
    @Test func runEdgeCases() throws {
        let h = try home()
        var out = try h.sh(
            """
            timeout 10 kc run --mask -- /bin/sh -c '(while :; do echo x; sleep 0.01; done) & echo $! > gc.pid; exit 3' > /dev/null; echo "bg $?"
            kill $(cat gc.pid) 2>/dev/null
            /bin/sh -c 'trap "" HUP; kc run --no-masking -- /bin/sh -c "kill -HUP \\$\\$; echo alive"'; echo "nohup $?"
            """, password: nil)
        #expect(out.stdout == "bg 3\nalive\nnohup 0\n", "\(out.stdout) \(out.stderr)")
        try "A=kc://db/app\r\nB=plain\r\n".write(toFile: h.directory + "/crlf.env", atomically: true, encoding: .utf8)
        out = try h.kc(["run", "--no-masking", "--env-file", h.directory + "/crlf.env", "--", "/bin/sh", "-c", "printf '%s|%s' \"$A\" \"$B\""])
        #expect(out.stdout == "hunter2-secret|plain", "\(out.stdout) \(out.stderr)")
        #expect(try h.kc(["add", "-s", "crlf", "-a", "x", "-w", "line1\r\nEVIL=injected"], password: KCHome.password).status == 0)
        try "A={{ kc://crlf/x }}\n".write(toFile: h.directory + "/c.tmpl", atomically: true, encoding: .utf8)
        out = try h.kc(["inject", "-i", h.directory + "/c.tmpl", "--format", "dotenv"])
        #expect(out.status == 206 && out.stdout.isEmpty, "\(out.stdout)")
    }

    /// A signal sent to kc reaches the child; kc exits with the child's status.
    @Test func signalsReachTheChild() throws {
        let h = try home()
        let out = try h.sh(
            """
            kc run --no-masking -- /bin/sh -c 'trap "echo got-usr1; exit 7" USR1; echo ready > ready; while :; do sleep 0.05; done' > usr1.out &
            pid=$!
            for i in $(seq 100); do [ -e ready ] && break; sleep 0.05; done
            kill -USR1 $pid; wait $pid; echo "usr1 $?"
            rm -f ready
            kc run --no-masking -- /bin/sh -c 'echo ready > ready; while :; do sleep 0.05; done' &
            pid=$!
            for i in $(seq 100); do [ -e ready ] && break; sleep 0.05; done
            kill -TERM $pid; wait $pid; echo "term $?"
            cat usr1.out
            """, password: nil)
        #expect(out.stdout == "usr1 7\nterm 143\ngot-usr1\n", "\(out.stdout) \(out.stderr)")
    }

    /// Nothing of a secret in kc's own argv or environment, nor on disk.
    @Test func noSecretInKcsArgvEnvironmentOrDisk() throws {
        let h = try home()
        let out = try h.kc(
            [
                "run", "--env", "DB=kc://db/app", "--", "/bin/sh", "-c",
                "cat /proc/$PPID/cmdline > '\(h.directory)/kc-cmdline'; cat /proc/$PPID/environ > '\(h.directory)/kc-environ'; test -n \"$DB\""
            ],
            password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        let cmdline = try Data(contentsOf: URL(fileURLWithPath: h.directory + "/kc-cmdline"))
        let environ = try Data(contentsOf: URL(fileURLWithPath: h.directory + "/kc-environ"))
        #expect(String(decoding: cmdline, as: UTF8.self).contains("kc://db/app"), "it is kc's own argv")
        #expect(!cmdline.contains(Data("hunter2-secret".utf8)) && !environ.contains(Data("hunter2-secret".utf8)))
        #expect(
            environ.contains(Data("KC_PASSWORD=".utf8)) && !environ.contains(Data(KCHome.password.utf8)),
            "KC_PASSWORD's value was wiped in place at start")
        let grep = try Spawn.run(["/bin/grep", "-rl", "hunter2-secret", h.directory], environment: [:])
        #expect(grep.stdout.isEmpty, "no file holds the secret: \(grep.stdout)")
    }

    @Test func injectWritesAPrivateFile() throws {
        let h = try home()
        try "db: {{ kc://db/app }}\ntoken: {{kc://api.example.com/ci?class=internet}}\nkept: {{ not.a.ref }}\n"
            .write(toFile: h.directory + "/t.tmpl", atomically: true, encoding: .utf8)
        var out = try h.kc(["inject", "-i", h.directory + "/t.tmpl", "-o", h.directory + "/out.yml"])
        #expect(out.status == 0, "\(out.stderr)")
        var st = stat()
        #expect(lstat(h.directory + "/out.yml", &st) == 0 && st.st_mode & 0o777 == 0o600)
        #expect(try String(contentsOfFile: h.directory + "/out.yml", encoding: .utf8) == "db: hunter2-secret\ntoken: tok/ABC?\nkept: {{ not.a.ref }}\n")
        out = try h.kc(["inject", "-i", h.directory + "/t.tmpl", "-o", h.directory + "/out.yml"])
        #expect(out.status == 45, "never over an existing file without --force")
        // dotenv: quoted where a reader would misread; refused where no quoting holds.
        try "A={{ kc://db/app }}\nB={{ kc://api.example.com/ci?class=internet }}\n".write(toFile: h.directory + "/e.tmpl", atomically: true, encoding: .utf8)
        out = try h.kc(["inject", "-i", h.directory + "/e.tmpl", "--format", "dotenv"])
        #expect(out.stdout == "A=hunter2-secret\nB='tok/ABC?'\n", "\(out.stdout)")
        try "M={{ kc://multi/line }}\n".write(toFile: h.directory + "/m.tmpl", atomically: true, encoding: .utf8)
        out = try h.kc(["inject", "-i", h.directory + "/m.tmpl", "--format", "dotenv", "-o", h.directory + "/m.env"])
        #expect(out.status == 206 && out.stderr.contains("kc://multi/line"), "\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: h.directory + "/m.env"), "nothing written")
        // A missing reference writes nothing.
        try "X={{ kc://db/nobody }}\n".write(toFile: h.directory + "/x.tmpl", atomically: true, encoding: .utf8)
        out = try h.kc(["inject", "-i", h.directory + "/x.tmpl", "-o", h.directory + "/x.out"])
        #expect(out.status == 44 && !FileManager.default.fileExists(atPath: h.directory + "/x.out"))
    }
}
