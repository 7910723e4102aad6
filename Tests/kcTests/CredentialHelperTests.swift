import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// git-credential-kc and docker-credential-kc through the real binary started under those
/// names, real git (clone, fetch, push over HTTP with Basic auth against `git http-backend`),
/// and the agent.
@Suite struct CredentialHelperTests {
    static let server = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("git_http_server.py").path

    /// A home with kc, git-credential-kc and docker-credential-kc on PATH (links to the
    /// binary, as `make install` makes them), git configured to use kc, and an unlocked keychain.
    func home(unlock: Bool = true) throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        let bin = h.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        for name in ["kc", "git-credential-kc", "docker-credential-kc"] {
            try FileManager.default.createSymbolicLink(atPath: bin + "/" + name, withDestinationPath: KCBinary.path)
        }
        h.environment["PATH"] = bin + ":/usr/bin:/bin"
        h.environment["GIT_CONFIG_NOSYSTEM"] = "1"
        h.environment["GIT_TERMINAL_PROMPT"] = "0"
        let out = try sh(h, "git config --global credential.helper kc && git config --global user.email t@example.com && git config --global user.name t")
        #expect(out.status == 0, "\(out.stderr)")
        if unlock { #expect(try h.kc(["unlock"], password: KCHome.password).status == 0) }
        return h
    }

    /// A shell script in the home with its PATH (kc's links first), no password.
    func sh(_ h: KCHome, _ script: String) throws -> KCBinary.Output {
        try Spawn.run(["/bin/sh", "-c", "cd '\(h.directory)' || exit 99\n" + script], environment: h.environment)
    }

    /// `git credential <action>` with the helper configured, `input` on stdin.
    func credential(_ h: KCHome, _ action: String, _ input: String, config: [String] = []) throws -> KCBinary.Output {
        let flags = config.map { "-c '\($0)'" }.joined(separator: " ")
        return try Spawn.run(
            ["/bin/sh", "-c", "cd '\(h.directory)' && git \(flags) credential \(action)"], environment: h.environment,
            stdin: Data(input.utf8))
    }

    /// The helper itself: `git-credential-kc <operation>`.
    func helper(_ h: KCHome, _ operation: String, _ input: String) throws -> KCBinary.Output {
        try Spawn.run([h.directory + "/bin/git-credential-kc", operation], environment: h.environment, stdin: Data(input.utf8))
    }

    /// The first push asks (GIT_ASKPASS) and stores through kc; then fetch, push and clone
    /// ask nothing. The stored item is what `kc find` shows.
    @Test func realGitOverHTTPStoresOnceThenNeverAsks() throws {
        let h = try home()
        let srv = h.directory + "/srv"
        var out = try sh(h, "git init -q --bare '\(srv)/repo.git' && git -C '\(srv)/repo.git' config http.receivepack true")
        #expect(out.status == 0, "\(out.stderr)")
        let portFile = h.directory + "/port"
        // Started by a shell in the background (Foundation's Process would reap Spawn's children).
        out = try sh(h, "nohup python3 '\(Self.server)' '\(srv)' alice 'pa55 word' '\(portFile)' >/dev/null 2>&1 & echo $! > server.pid")
        #expect(out.status == 0)
        defer {
            if let pid = Int32(
                (try? String(contentsOfFile: h.directory + "/server.pid", encoding: .utf8))?.trimmingCharacters(in: .whitespacesAndNewlines) ?? "")
            {
                kill(pid, SIGTERM)
            }
        }
        var port = ""
        for _ in 0..<100 where port.isEmpty {
            port = (try? String(contentsOfFile: portFile, encoding: .utf8)) ?? ""
            if port.isEmpty { usleep(50_000) }
        }
        try #require(!port.isEmpty, "the test server started")
        let url = "http://127.0.0.1:\(port)/repo.git"
        let askpass = h.directory + "/askpass"
        try "#!/bin/sh\necho \"$1\" >> '\(h.directory)/asked'\ncase \"$1\" in Username*) echo alice;; Password*) echo 'pa55 word';; esac\n"
            .write(toFile: askpass, atomically: true, encoding: .utf8)
        #expect(chmod(askpass, 0o700) == 0)
        h.environment["GIT_ASKPASS"] = askpass
        out = try sh(h, "git init -q work && cd work && echo one > f && git add f && git commit -qm one && git push -q '\(url)' HEAD:main")
        #expect(out.status == 0, "first push: \(out.stderr)")
        let asked = { (try? String(contentsOfFile: h.directory + "/asked", encoding: .utf8))?.split(separator: "\n").count ?? 0 }
        #expect(asked() == 2, "the first push asked for the user name and the password")
        // Stored as git's macOS helper stores it: an internet password, port split off, no path.
        out = try h.kc(["find", "--class", "internet", "-s", "127.0.0.1", "-a", "alice", "--json"])
        #expect(
            out.stdout.contains("\"protocol\":\"http\"") && out.stdout.contains("\"port\":\(port)") && out.stdout.contains("\"path\":\"\""),
            "\(out.stdout)")
        #expect(try h.kc(["find", "--class", "internet", "-s", "127.0.0.1", "-a", "alice", "-w"]).stdout == "pa55 word")
        out = try sh(
            h,
            "cd work && echo two >> f && git commit -qam two && git push -q '\(url)' HEAD:main && git fetch -q '\(url)' main && cd .. && git clone -q -b main '\(url)' copy && cat copy/f"
        )
        #expect(out.status == 0 && out.stdout == "one\ntwo\n", "\(out.stderr)")
        #expect(asked() == 2, "nothing asked after the first push")
        // A wrong stored password: that command fails and git rejects it (the helper erases
        // it); the next command asks again and stores the right one.
        #expect(try h.kc(["update", "--class", "internet", "-s", "127.0.0.1", "-a", "alice", "-w", "stale"]).status == 0)
        out = try sh(h, "git ls-remote -q '\(url)' >/dev/null")
        #expect(out.status != 0 && asked() == 2, "\(out.stderr)")
        #expect(try h.kc(["find", "--class", "internet", "-s", "127.0.0.1", "-a", "alice"]).status == 44, "rejected: erased")
        out = try sh(h, "git ls-remote -q '\(url)' >/dev/null")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(asked() == 4, "asked again once the stored password failed")
        #expect(try h.kc(["find", "--class", "internet", "-s", "127.0.0.1", "-a", "alice", "-w"]).stdout == "pa55 word")
    }

    /// The protocol's rules, through `git credential fill/approve/reject` and the helper.
    @Test func gitCredentialProtocolRules() throws {
        let h = try home()
        // approve stores; fill gives it back; unknown attributes are ignored.
        var out = try credential(h, "approve", "protocol=https\nhost=git.example.com\nusername=bob\npassword=tok1\nwwwauth[]=Basic realm=x\nfuture=1\n")
        #expect(out.status == 0 && out.stdout.isEmpty, "\(out.stderr)")
        out = try credential(h, "fill", "protocol=https\nhost=git.example.com\n")
        #expect(out.stdout.contains("username=bob\n") && out.stdout.contains("password=tok1\n"), "\(out.stdout) \(out.stderr)")
        // What a user adds with kc add --class internet is what git gets.
        #expect(try h.kc(["add", "--class", "internet", "-s", "added.example.com", "-a", "carol", "-r", "https", "-w", "by-hand"]).status == 0)
        out = try helper(h, "get", "protocol=https\nhost=added.example.com\n")
        #expect(out.stdout == "username=carol\npassword=by-hand\n", "\(out.stdout)")
        // A URL pasted as the server is split (issue 32): git, which sends no path for
        // https by default, finds it; stored whole, it matched nothing.
        out = try h.kc(["add", "--class", "internet", "-s", "https://pasted.example.com/team/repo.git", "-a", "erin", "-w", "pasted"])
        #expect(out.status == 0 && out.stderr == "kc: stored as server pasted.example.com, protocol https, path /team/repo.git\n", "\(out.stderr)")
        out = try credential(h, "fill", "protocol=https\nhost=pasted.example.com\n")
        #expect(out.status == 0 && out.stdout.contains("username=erin\n") && out.stdout.contains("password=pasted\n"), "\(out.stdout) \(out.stderr)")
        out = try helper(h, "get", "protocol=http\nhost=pasted.example.com\n")
        #expect(out.stdout.isEmpty, "the URL's protocol was kept: http is another credential")
        // The helper's -k takes its value attached too, as getopt does (issue 32).
        let input = Data("protocol=https\nhost=pasted.example.com\n".utf8)
        out = try Spawn.run([h.directory + "/bin/git-credential-kc", "-klogin", "get"], environment: h.environment, stdin: input)
        #expect(out.stdout.contains("password=pasted\n"), "\(out.stdout) \(out.stderr)")
        out = try Spawn.run([h.directory + "/bin/git-credential-kc", "-knothere", "get"], environment: h.environment, stdin: input)
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.contains("nothere.keychain-db"), "\(out.stderr)")
        // No match: nothing on stdout, exit 0. Unknown operation: ignored.
        out = try helper(h, "get", "protocol=https\nhost=nothing.example.com\n")
        #expect(out.status == 0 && out.stdout.isEmpty)
        out = try helper(h, "frobnicate", "protocol=https\nhost=git.example.com\n")
        #expect(out.status == 0 && out.stdout.isEmpty)
        // useHttpPath: with it, path is stored and must match; without, git sends no path.
        out = try credential(
            h, "approve", "protocol=https\nhost=paths.example.com\npath=team/a.git\nusername=dan\npassword=pa\n",
            config: ["credential.useHttpPath=true"])
        out = try credential(
            h, "approve", "protocol=https\nhost=paths.example.com\npath=team/b.git\nusername=dan\npassword=pb\n",
            config: ["credential.useHttpPath=true"])
        out = try credential(h, "fill", "protocol=https\nhost=paths.example.com\npath=team/b.git\n", config: ["credential.useHttpPath=true"])
        #expect(out.stdout.contains("password=pb\n"), "\(out.stdout)")
        out = try credential(h, "fill", "protocol=https\nhost=paths.example.com\npath=team/b.git\n")
        #expect(out.stdout.contains("password=pa\n") || out.stdout.contains("password=pb\n"), "no path sent: any path matches")
        #expect(try h.kc(["find", "--class", "internet", "-s", "paths.example.com", "-p", "team/a.git", "-w"]).stdout == "pa")
        // An empty user name is a user name.
        out = try helper(h, "store", "protocol=https\nhost=empty.example.com\nusername=\npassword=anon\n")
        out = try helper(h, "get", "protocol=https\nhost=empty.example.com\nusername=\n")
        #expect(out.stdout == "password=anon\n", "\(out.stdout)")
        // erase with a password removes only the items whose password matches.
        out = try helper(h, "store", "protocol=https\nhost=erase.example.com\nusername=u1\npassword=keep\n")
        out = try helper(h, "store", "protocol=https\nhost=erase.example.com\nusername=u2\npassword=drop\n")
        out = try credential(h, "reject", "protocol=https\nhost=erase.example.com\npassword=drop\n")
        #expect(out.status == 0 && out.stdout.isEmpty)
        #expect(try h.kc(["find", "--class", "internet", "-s", "erase.example.com", "-a", "u1", "-w"]).stdout == "keep")
        #expect(try h.kc(["find", "--class", "internet", "-s", "erase.example.com", "-a", "u2"]).status == 44)
        out = try helper(h, "erase", "protocol=https\nhost=erase.example.com\n")
        #expect(try h.kc(["find", "--class", "internet", "-s", "erase.example.com"]).status == 44, "erase without password removes all")
        // An incomplete credential is not stored; a protocol kc has no code for is ignored.
        out = try helper(h, "store", "protocol=https\nhost=partial.example.com\npassword=nouser\n")
        out = try helper(h, "store", "protocol=gopher\nhost=partial.example.com\nusername=x\npassword=y\n")
        #expect(try h.kc(["find", "--class", "internet", "-s", "partial.example.com"]).status == 44)
    }

    /// password_expiry_utc and oauth_refresh_token are kept with the password (as git's macOS
    /// helper keeps them) and given back; an expired credential is not returned; state[] lets
    /// an unchanged credential skip its write; an ephemeral one is never stored.
    @Test func expiryRefreshTokenStateAndEphemeral() throws {
        let h = try home()
        var out = try helper(
            h, "store", "protocol=https\nhost=oauth.example.com\nusername=eve\npassword=access\npassword_expiry_utc=4102444800\noauth_refresh_token=refresh-1\n"
        )
        #expect(out.status == 0)
        out = try helper(h, "get", "protocol=https\nhost=oauth.example.com\n")
        #expect(out.stdout == "username=eve\npassword=access\npassword_expiry_utc=4102444800\noauth_refresh_token=refresh-1\n", "\(out.stdout)")
        // git itself passes them on from git 2.41; Debian 12's git 2.39 passes the password.
        out = try credential(h, "fill", "protocol=https\nhost=oauth.example.com\n")
        #expect(out.stdout.contains("password=access\n"), "\(out.stdout)")
        // Expired in 2001: not returned.
        out = try helper(h, "store", "protocol=https\nhost=old.example.com\nusername=eve\npassword=gone\npassword_expiry_utc=1000000000\n")
        out = try helper(h, "get", "protocol=https\nhost=old.example.com\n")
        #expect(out.status == 0 && out.stdout.isEmpty, "\(out.stdout)")
        // state[]: only with the capability; storing what get returned writes nothing.
        out = try helper(h, "get", "capability[]=state\nprotocol=https\nhost=oauth.example.com\n")
        #expect(out.stdout.hasPrefix("capability[]=state\n"), "\(out.stdout)")
        let state = try #require(out.stdout.split(separator: "\n").first { $0.hasPrefix("state[]=kc:seen=") })
        let before = try h.kc(["find", "--class", "internet", "-s", "oauth.example.com", "--json"]).stdout
        sleep(1)
        out = try helper(
            h, "store",
            "capability[]=state\n\(state)\nprotocol=https\nhost=oauth.example.com\nusername=eve\npassword=access\npassword_expiry_utc=4102444800\noauth_refresh_token=refresh-1\n"
        )
        #expect(out.status == 0)
        #expect(try h.kc(["find", "--class", "internet", "-s", "oauth.example.com", "--json"]).stdout == before, "no write: modified unchanged")
        // A new password with the old state is written.
        out = try helper(h, "store", "capability[]=state\n\(state)\nprotocol=https\nhost=oauth.example.com\nusername=eve\npassword=access-2\n")
        #expect(try h.kc(["find", "--class", "internet", "-s", "oauth.example.com", "-w"]).stdout == "access-2")
        // Ephemeral: never stored.
        out = try helper(h, "store", "capability[]=authtype\nprotocol=https\nhost=eph.example.com\nusername=x\npassword=y\nephemeral=true\n")
        #expect(try h.kc(["find", "--class", "internet", "-s", "eph.example.com"]).status == 44)
    }

    /// From the security review: values that would add lines to git's protocol are never
    /// returned; a store replaces only the item with its exact key; Docker's registries on
    /// other ports stay apart; the state git sees holds nothing derived from the password.
    @Test func helpersStayExact() throws {
        let h = try home()
        // An account with a line break (a crafted import, say) never reaches git.
        #expect(try h.kc(["add", "--class", "internet", "-s", "inj.example.com", "-a", "bob\nhost=evil.example", "-r", "https", "-w", "pw"]).status == 0)
        var out = try helper(h, "get", "protocol=https\nhost=inj.example.com\n")
        #expect(out.status == 0 && out.stdout.isEmpty, "\(out.stdout)")
        let docker = { (op: String, input: String) throws -> KCBinary.Output in
            try Spawn.run([h.directory + "/bin/docker-credential-kc", op], environment: h.environment, stdin: Data(input.utf8))
        }
        out = try docker("store", #"{"ServerURL":"inj2.example.com","Username":"bob\nhost=evil","Secret":"s"}"#)
        #expect(out.status == 1 && out.stdout.contains("line break"), "\(out.stdout)")
        // store for plain host h2 replaces only that item, not :5000 nor the one with a path.
        for extra in ["host=h2.example.com:5000\n", "host=h2.example.com\npath=team/repo.git\n", "host=h2.example.com\n"] {
            out = try helper(h, "store", "protocol=https\n\(extra)username=alice\npassword=first\n")
        }
        out = try helper(h, "store", "protocol=https\nhost=h2.example.com\nusername=alice\npassword=second\n")
        #expect(try h.kc(["find", "--class", "internet", "-s", "h2.example.com", "-P", "5000", "-w"]).stdout == "first")
        #expect(try h.kc(["find", "--class", "internet", "-s", "h2.example.com", "-p", "team/repo.git", "-w"]).stdout == "first")
        #expect(try h.kc(["find", "--class", "internet", "-s", "h2.example.com", "-P", "0", "-p", "", "-w"]).stdout == "second")
        // Docker: a registry on another port is another registry.
        out = try docker("store", #"{"ServerURL":"reg.example.com:5000","Username":"u","Secret":"on-5000"}"#)
        out = try docker("store", #"{"ServerURL":"reg.example.com","Username":"u","Secret":"on-443"}"#)
        #expect(try docker("get", "reg.example.com").stdout.contains("\"Secret\":\"on-443\""))
        #expect(try docker("erase", "reg.example.com").status == 0)
        #expect(try docker("get", "reg.example.com:5000").stdout.contains("\"Secret\":\"on-5000\""))
        // state[]: the item and its version, no digest of the password.
        out = try helper(h, "get", "capability[]=state\nprotocol=https\nhost=h2.example.com:5000\n")
        let state = try #require(out.stdout.split(separator: "\n").first { $0.hasPrefix("state[]=kc:seen=") })
        #expect(state.split(separator: "=").last?.split(separator: ".").first?.count == 40, "\(state)")
    }

    /// Locked, no terminal (setsid), no password: the documented behaviour at once, no hang.
    @Test func lockedKeychainInAJobWithoutATerminal() throws {
        let h = try home(unlock: false)
        let out = try sh(
            h,
            """
            printf 'protocol=https\\nhost=example.com\\n\\n' | setsid -w timeout 10 git-credential-kc get > git.out 2> git.err; echo "git $?"
            printf 'protocol=https\\nhost=example.com\\nusername=a\\npassword=b\\n' | setsid -w timeout 10 git-credential-kc store > store.out 2> store.err; echo "store $?"
            echo example.com | setsid -w timeout 10 docker-credential-kc get > docker.out 2>&1; echo "docker $?"
            """)
        #expect(out.stdout == "git 0\nstore 0\ndocker 1\n", "\(out.stdout) \(out.stderr)")
        let read = { (name: String) in (try? String(contentsOfFile: h.directory + "/" + name, encoding: .utf8)) ?? "?" }
        #expect(read("git.out").isEmpty && read("store.out").isEmpty)
        #expect(read("git.err").split(separator: "\n").count == 1 && read("git.err").contains("locked"), "\(read("git.err"))")
        #expect(read("docker.out").contains("locked"), "\(read("docker.out"))")
    }

    /// Docker's protocol: store → list → get → erase → get fails with Docker's message;
    /// identity tokens; the exact error strings; items labelled as Docker's helper labels them.
    @Test func dockerCredentialHelperRoundTrip() throws {
        let h = try home()
        let docker = { (op: String, input: String) throws -> KCBinary.Output in
            try Spawn.run([h.directory + "/bin/docker-credential-kc", op], environment: h.environment, stdin: Data(input.utf8))
        }
        var out = try docker("store", #"{"ServerURL":"https://registry.example.com:5000/v2/","Username":"bob","Secret":"s3cret \"quoted\""}"#)
        #expect(out.status == 0 && out.stdout.isEmpty, "\(out.stdout)")
        out = try docker("store", #"{"ServerURL":"https://index.docker.io/v1/","Username":"<token>","Secret":"identity-token"}"#)
        #expect(out.status == 0)
        #expect(try h.kc(["add", "--class", "internet", "-s", "not-docker.example.com", "-a", "x", "-w", "y"]).status == 0)
        out = try docker("list", "")
        let list = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: String])
        #expect(list == ["https://registry.example.com:5000/v2/": "bob", "https://index.docker.io/v1/": "<token>"], "\(out.stdout)")
        out = try docker("get", "https://registry.example.com:5000/v2/")
        let got = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: String])
        #expect(got == ["ServerURL": "https://registry.example.com:5000/v2/", "Username": "bob", "Secret": "s3cret \"quoted\""])
        out = try docker("get", "https://index.docker.io/v1/")
        #expect(out.stdout.contains("\"Username\":\"<token>\"") && out.stdout.contains("\"Secret\":\"identity-token\""))
        // kc sees them: internet passwords labelled "Docker Credentials".
        out = try h.kc(["find", "--class", "internet", "-l", "Docker Credentials", "--all"])
        #expect(out.stdout.contains("server: registry.example.com") && out.stdout.contains("port: 5000"), "\(out.stdout)")
        out = try docker("erase", "https://registry.example.com:5000/v2/")
        #expect(out.status == 0)
        out = try docker("get", "https://registry.example.com:5000/v2/")
        #expect(out.status == 1 && out.stdout == "credentials not found in native keychain\n")
        out = try docker("erase", "https://registry.example.com:5000/v2/")
        #expect(out.status == 1 && out.stdout == "credentials not found in native keychain\n")
        out = try docker("store", #"{"ServerURL":"","Username":"x","Secret":"y"}"#)
        #expect(out.status == 1 && out.stdout == "no credentials server URL\n")
        out = try docker("store", #"{"ServerURL":"r.example.com","Username":"","Secret":"y"}"#)
        #expect(out.status == 1 && out.stdout == "no credentials username\n")
        out = try docker("version", "")
        #expect(out.status == 0 && out.stdout.hasPrefix("docker-credential-kc"))
        // The hidden subcommand is the same helper.
        out = try Spawn.run([KCBinary.path, "docker-credential", "list"], environment: h.environment, stdin: Data())
        #expect(out.stdout == "{\"https://index.docker.io/v1/\":\"<token>\"}\n", "\(out.stdout)")
    }
}
