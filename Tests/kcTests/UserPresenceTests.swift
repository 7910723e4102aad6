import Foundation
import Testing
import KeychainCore
import AgentWire
import KeychainClient
import KCTestSupport
import POSIXSupport

/// Issue 18, user presence, through the real `kc`: an item added with --user-presence gives
/// its secret only to the keychain password typed on a terminal for that command, with the
/// agent holding the keychain or not; scripts (no terminal, or a password from KC_PASSWORD)
/// get errSecInteractionNotAllowed, exit 36.
@Suite struct UserPresenceTests {
    /// A home with a protected item "bank" (secret pin-4711) and a plain item "news".
    static func home() throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        var out = try h.kc(["add", "-s", "bank", "-a", "me", "--user-presence", "-w", "pin-4711"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        out = try h.kc(["add", "-s", "news", "-a", "me", "-w", "plain"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        return h
    }

    func drive(_ h: KCHome, _ arguments: [String], _ steps: [[String]]) throws -> TerminalTests.Session {
        try TerminalTests().drive(h, arguments, steps)
    }

    @Test func findShowsTheFlagAndAttributesNeedNoProof() throws {
        let h = try Self.home()
        let out = try h.kc(["find", "-s", "bank"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("access-control: user-presence\n"), "\(out.stdout)")
        #expect(!out.stdout.contains("pin-4711"))
        let plain = try h.kc(["find", "-s", "news"], password: KCHome.password)
        #expect(!plain.stdout.contains("access-control"), "\(plain.stdout)")
    }

    @Test func aScriptGetsExit36WithAndWithoutTheAgent() throws {
        let h = try Self.home()
        // No agent: KC_PASSWORD opens the keychain but proves nobody is there.
        var out = try h.kc(["find", "-s", "bank", "-w"], password: KCHome.password)
        #expect(out.status == 36 && out.stdout.isEmpty, "\(out.stderr)")
        #expect(out.stderr.contains("requires user presence") && out.stderr.contains("no terminal"), "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "news", "-w"], password: KCHome.password).stdout == "plain")
        // The agent holds the keychain: the same.
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        for arguments in [
            ["find", "-s", "bank", "-w"], ["read", "kc://bank/me"], ["run", "--env", "PIN=kc://bank/me", "--", "/bin/true"],
            ["find", "-s", "bank", "-g"], ["update", "-s", "bank", "--no-user-presence"]
        ] {
            out = try h.kc(arguments)
            #expect(out.status == 36 && !out.stdout.contains("pin-4711"), "\(arguments): \(out.stderr)")
            #expect(out.stderr.contains("requires user presence"), "\(arguments): \(out.stderr)")
        }
        #expect(try h.kc(["find", "-s", "bank"]).stdout.contains("access-control: user-presence"), "the flag is still there")
        #expect(try h.kc(["find", "-s", "news", "-w"]).stdout == "plain", "other items are read as before")
        #expect(try h.kc(["lock"]).status == 0)
    }

    @Test func theAgentAsksForAProofAtTheTerminalEvenWhileUnlocked() throws {
        let h = try Self.home()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        var s = try drive(
            h, ["find", "-s", "bank", "-w", "--prompt", "Show the PIN of the bank"],
            [
                ["expect", "Show the PIN of the bank (this releases the secret of \"bank\" (account \"me\")). Password for keychain"],
                ["send", KCHome.password + "\n"]
            ])
        #expect(s.status == 0 && s.echo_off == [true], "\(s.screen)")
        #expect(s.screen.hasSuffix("pin-4711\r\n"), "\(s.screen)")
        s = try drive(
            h, ["find", "-s", "bank", "-w"],
            [
                ["expect", "Reading the secret of \"bank\" (account \"me\") requires your presence. Password for keychain"], ["send", "wrong\n"]
            ])
        #expect(s.status == 51 && !s.screen.contains("pin-4711"), "\(s.screen)")
        #expect(s.screen.contains("user presence was not confirmed"), "\(s.screen)")
        // The plain item asks nothing.
        s = try drive(h, ["find", "-s", "news", "-w"], [])
        #expect(s.status == 0 && s.screen == "plain\r\n", "\(s.screen)")
        #expect(try h.kc(["lock"]).status == 0)
    }

    /// A same-uid process at the agent's socket that claims the keychain and asks for a
    /// proof gets none: kc asks on the terminal and reads the item in its own process with
    /// the password typed; nothing goes back to the socket (issue 29, item 8; before, kc
    /// sent the password as the proof to any peer that passed the visible checks).
    @Test func aProofGoesOnlyToTheRealAgent() throws {
        let h = try Self.home()
        let item = Array("\"bank\" (account \"me\")".utf8)
        let body = withUnsafeBytes(of: UInt32(1).bigEndian, Array.init) + withUnsafeBytes(of: UInt32(item.count).bigEndian, Array.init) + item
        let log = try AgentImpostor.start(h, holds: h.defaultKeychain, operationReply: body, operationReplyType: 0x83, version: AgentProtocol.version)
        let s = try drive(
            h, ["find", "-s", "bank", "-w"],
            [
                ["expect", "requires your presence. Password for keychain"], ["send", KCHome.password + "\n"]
            ])
        #expect(s.status == 0 && s.screen.hasSuffix("pin-4711\r\n"), "read here: \(s.screen)")
        #expect(!AgentImpostor.received(log).isEmpty, "kc spoke to it first")
        #expect(!AgentImpostor.received(log, KCHome.password), "the impostor received the password: \(AgentImpostor.received(log))")
        #expect(!AgentImpostor.received(log, "pin-4711"))
    }

    /// Issue 29, item 10: a prompt names what the password releases, how many items and
    /// which (label or service, and account), for an export and with `--prompt` alike; one
    /// prompt for a batch names the batch.
    @Test func aPromptNamesEveryItemItReleases() throws {
        let h = try Self.home()
        #expect(try h.kc(["add", "-s", "safe", "-a", "you", "--user-presence", "-w", "combo"], password: KCHome.password).status == 0)
        #expect(
            try h.kc(
                ["add", "--class", "internet", "-s", "web.example.com", "-a", "me", "--user-presence", "-w", "web"],
                password: KCHome.password
            ).status == 0)
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let both = "the secrets of 2 items: \"bank\" (account \"me\"), \"safe\" (account \"you\")"
        // An export: one prompt for every class, naming all three.
        var s = try drive(
            h, ["export", "-o", h.directory + "/all.json"],
            [
                [
                    "expect",
                    "Reading the secrets of 3 items: \"bank\" (account \"me\"), \"safe\" (account \"you\"), \"web.example.com\" (account \"me\") requires your presence. Password for keychain"
                ],
                ["send", KCHome.password + "\n"]
            ])
        #expect(s.status == 0 && s.echo_off == [true], "one prompt, naming all: \(s.screen) \(s.error ?? "")")
        s = try drive(
            h, ["find", "-a", "me", "-w", "--prompt", "Pay the rent"],
            [
                ["expect", "Pay the rent (this releases the secret of \"bank\" (account \"me\")). Password for keychain"],
                ["send", KCHome.password + "\n"]
            ])
        #expect(s.status == 0 && s.screen.contains("pin-4711"), "\(s.screen)")
        s = try drive(
            h, ["run", "--env", "A=kc://bank/me", "--env", "B=kc://safe/you", "--", "/bin/true"],
            [
                ["expect", "Reading \(both) requires your presence. Password for keychain"], ["send", KCHome.password + "\n"]
            ])
        #expect(s.status == 0 && s.echo_off == [true], "one prompt for the batch, naming it: \(s.screen)")
        // Many items: five named, the rest counted.
        #expect(try h.kc(["lock"]).status == 0)
        for n in 1...6 {
            #expect(try h.kc(["add", "-s", "vault\(n)", "-a", "me", "--user-presence", "-w", "v\(n)"], password: KCHome.password).status == 0)
        }
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        s = try drive(
            h, ["export", "-o", h.directory + "/more.json"],
            [
                ["expect", "Reading the secrets of 9 items: "], ["expect", " and 4 more requires your presence."], ["send", KCHome.password + "\n"]
            ])
        #expect(s.status == 0, "\(s.screen)")
        #expect(try h.kc(["lock"]).status == 0)
    }

    @Test func oneCommandAsksOnceForSeveralProtectedItems() throws {
        let h = try Self.home()
        #expect(try h.kc(["add", "-s", "safe", "-a", "me", "--user-presence", "-w", "combo"], password: KCHome.password).status == 0)
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let s = try drive(
            h,
            [
                "run", "--env", "A=kc://bank/me", "--env", "B=kc://safe/me", "--env", "C=kc://news/me", "--",
                "/bin/sh", "-c", "echo \"$A+$B+$C\" | tr a-z A-Z"
            ],
            [
                ["expect", "Password for keychain"], ["send", KCHome.password + "\n"]
            ])
        #expect(s.status == 0 && s.echo_off == [true], "asked once: \(s.screen)")
        #expect(s.screen.contains("PIN-4711+COMBO+PLAIN"), "\(s.screen)")
        #expect(try h.kc(["lock"]).status == 0)
    }

    @Test func withoutTheAgentThePasswordTypedToOpenIsTheProof() throws {
        let h = try Self.home()
        let s = try drive(
            h, ["find", "-s", "bank", "-w"],
            [
                ["expect", "Password for keychain"], ["send", KCHome.password + "\n"]
            ])
        #expect(s.status == 0 && s.echo_off == [true], "one prompt: \(s.screen)")
        #expect(s.screen.hasSuffix("pin-4711\r\n"), "\(s.screen)")
        // KC_PASSWORD opens it; the proof is then asked for on the terminal.
        let t = try TerminalTests().drive(
            h, ["find", "-s", "bank", "-w"],
            [
                ["expect", "requires your presence. Password for keychain"], ["send", KCHome.password + "\n"]
            ], env: ["KC_PASSWORD": KCHome.password])
        #expect(t.status == 0 && t.screen.hasSuffix("pin-4711\r\n"), "\(t.screen)")
    }

    /// `kc find -w` looks at two matches (to warn about the second): a protected second
    /// match must not fail a script that reads an unprotected first one.
    @Test func onlyThePrintedMatchNeedsAProof() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "api", "-a", "alice", "-w", "open"], password: KCHome.password).status == 0)
        #expect(try h.kc(["add", "-s", "api", "-a", "bob", "--user-presence", "-w", "guarded"], password: KCHome.password).status == 0)
        #expect(try h.kc(["add", "-s", "vault", "-a", "carol", "--user-presence", "-w", "guarded-too"], password: KCHome.password).status == 0)
        #expect(try h.kc(["add", "-s", "vault", "-a", "dave", "-w", "open-too"], password: KCHome.password).status == 0)
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        var out = try h.kc(["find", "-s", "api", "-w"])
        #expect(out.status == 0 && out.stdout == "open", "\(out.stderr)")
        #expect(out.stderr.contains("more than one item matches"), "the second match is still reported: \(out.stderr)")
        out = try h.kc(["find", "-s", "vault", "-w"])
        #expect(out.status == 36 && out.stdout.isEmpty, "the first match is protected: \(out.stderr)")
        let s = try drive(h, ["find", "-s", "vault", "-w"], [["expect", "Password for keychain"], ["send", KCHome.password + "\n"]])
        #expect(s.status == 0 && s.screen.contains("guarded-too\r\n") && s.screen.contains("more than one item matches"), "\(s.screen)")
        #expect(try h.kc(["lock"]).status == 0)
    }

    @Test func updateAddsAndRemovesTheFlag() throws {
        let h = try Self.home()
        #expect(try h.kc(["update", "-s", "news", "--user-presence"], password: KCHome.password).status == 0, "adding needs no proof")
        #expect(try h.kc(["find", "-s", "news", "-w"], password: KCHome.password).status == 36)
        let s = try drive(
            h, ["update", "-s", "news", "--no-user-presence"],
            [
                ["expect", "Password for keychain"], ["send", KCHome.password + "\n"]
            ])
        #expect(s.status == 0, "\(s.screen)")
        #expect(try h.kc(["find", "-s", "news", "-w"], password: KCHome.password).stdout == "plain")
    }

    /// Another process of the same user talks to the agent directly: without a proof it is
    /// told that one is needed, with a wrong one it gets errSecAuthFailed, never the secret.
    @Test func aSameUserProcessGetsNoSecretWithoutAProof() throws {
        let h = try Self.home()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let agent = AgentClient(paths: AgentPaths(directory: h.directory + "/agent"))
        let query: [String: Any] = [kSecClass: kSecClassGenericPassword, kSecAttrService: "bank", kSecReturnData: true]
        #expect(throws: UserPresenceRequired(item: "\"bank\" (account \"me\")")) { _ = try agent.perform(path: h.defaultKeychain, .copyMatching(query)) }
        var fail = query
        fail[kSecUseAuthenticationUI] = kSecUseAuthenticationUIFail
        #expect(throws: KeychainError.self) { _ = try agent.perform(path: h.defaultKeychain, .copyMatching(fail)) }
        // Version 4's proof request (the password before the operation) is refused: the
        // agent takes no proof at all, right or wrong, and answers with no secret.
        for password in ["guess", KCHome.password] {
            var body: [UInt8] = withUnsafeBytes(of: UInt32(password.utf8.count).bigEndian, Array.init) + Array(password.utf8)
            body += try AgentRequest.operationBody(path: h.defaultKeychain, .copyMatching(query)).bytes
            let socket = try #require(try UnixSocket.connect(to: h.directory + "/agent/agent.sock"))
            try socket.writeAll(AgentProtocol.frame(type: 7, body: body), until: .after(seconds: 10))
            let reply = try AgentReply.decode(try socket.readFrame(until: .after(seconds: 10)))
            guard case .error(let error) = reply else { Issue.record("type 7 was answered: \(reply)"); continue }
            #expect(error.status == errSecParam && error.message.contains("unknown agent request 7"), "\(error)")
        }
        // KeychainSession: Skip leaves the item out; with no way to ask, errSecInteractionNotAllowed.
        let session = try KeychainSession(path: h.defaultKeychain, agent: agent) { _ in throw KeychainError(errSecInteractionNotAllowed) }
        let all: [String: Any] = [
            kSecClass: kSecClassGenericPassword, kSecAttrAccount: "me", kSecReturnAttributes: true, kSecReturnData: true,
            kSecMatchLimit: kSecMatchLimitAll, kSecUseAuthenticationUI: kSecUseAuthenticationUISkip
        ]
        let items = try session.copyMatching(all) as? [[String: Any]] ?? []
        #expect(items.map { $0[kSecAttrService] as? String } == ["news"])
        do {
            _ = try session.copyMatching(query)
            Issue.record("no proof, yet a secret")
        } catch let error as KeychainError {
            #expect(error.status == errSecInteractionNotAllowed && error.message.contains("requires user presence"), "\(error)")
        }
        var asked: [PresencePrompt] = []
        session.presence = { prompt in
            asked.append(prompt)
            return try SecureBytes(copying: Array(KCHome.password.utf8))
        }
        var prompted = query
        prompted[kSecUseOperationPrompt] = "Pay the rent"
        #expect(try session.copyMatching(prompted) as? Data == Data("pin-4711".utf8))
        #expect(asked == [PresencePrompt(path: h.defaultKeychain, item: "\"bank\" (account \"me\")", reason: "Pay the rent")])
        #expect(try h.kc(["lock"]).status == 0)
    }
}
