import Foundation
import Testing
import KeychainCore
import KCTestSupport
import AgentWire

/// Issue 32, "Type the password once" and "One try at a password prompt": a password typed
/// at kc's own prompt also unlocks the keychain in the kc agent (unless
/// `KC_UNLOCK_ON_PROMPT=0`), never for a password a script gave, never into an impostor;
/// a wrong one typed is asked for again, three tries in all, as sudo gives.
@Suite struct UnlockOnPromptTests {
    /// A home with the default keychain holding "github.com" / "alice" = "s3cret", added
    /// with KC_PASSWORD (which unlocks nothing).
    static func home() throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.kc(["add", "-s", "github.com", "-a", "alice", "-w", "s3cret"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        return h
    }

    static let typeThePassword = [["expect", "Password for keychain"], ["send", KCHome.password + "\n"]]

    /// `kc find` without a password and without a terminal: 36 while the agent does not
    /// hold the keychain.
    static func findWithoutPassword(_ h: KCHome) throws -> KCBinary.Output {
        try h.kc(["find", "-s", "github.com", "-a", "alice", "-w"])
    }

    @Test func aPasswordTypedAtThePromptUnlocksTheAgent() throws {
        let h = try Self.home()
        #expect(try Self.findWithoutPassword(h).status == 36, "locked before")
        let s = try TerminalTests().drive(h, ["find", "-s", "github.com", "-a", "alice", "-w"], Self.typeThePassword)
        #expect(s.error == nil && s.status == 0 && s.screen.hasSuffix("s3cret\r\n"), "\(s.screen)")
        #expect(!s.screen.contains("note:"), "nothing to say when the agent took it: \(s.screen)")
        // The next command, in a script without any password, finds it unlocked.
        let out = try Self.findWithoutPassword(h)
        #expect(out.status == 0 && out.stdout == "s3cret", "\(out.stderr)")
        let status = try h.kc(["status"])
        #expect(status.stdout.hasPrefix("\(h.defaultKeychain): unlocked, locks in "), "\(status.stdout)")
        // And the next command on the terminal asks nothing.
        let again = try TerminalTests().drive(h, ["list"], [["expect", "github.com"]])
        #expect(again.status == 0 && !again.screen.contains("Password for keychain"), "\(again.screen)")
        #expect(try h.kc(["lock"]).status == 0)
    }

    /// Every spelling of "off" turns it off; a value that is neither on nor off is taken as
    /// off with a warning (someone who wrote it meant to change something).
    static let offValues = ["0", "off", "False", " no ", "nope"]

    @Test(arguments: Self.offValues)
    func unlockOnPromptOffKeepsTheKeychainLockedInTheAgent(_ value: String) throws {
        let h = try Self.home()
        let s = try TerminalTests().drive(
            h, ["find", "-s", "github.com", "-a", "alice", "-w"], Self.typeThePassword, env: ["KC_UNLOCK_ON_PROMPT": value])
        #expect(s.status == 0 && s.screen.hasSuffix("s3cret\r\n"), "\(s.screen)")
        #expect(s.screen.contains("KC_UNLOCK_ON_PROMPT=") == (value == "nope"), "a warning only for a value that means nothing: \(s.screen)")
        #expect(try Self.findWithoutPassword(h).status == 36, "the agent does not hold it")
        #expect(try h.kc(["status"]).stdout == "no keychain is unlocked\n")
    }

    /// A password typed to open one keychain proves presence for that keychain only: `kc run`
    /// reading login's item (typed) and a presence-protected item of `work` (held by the
    /// agent, the same password) asked once, and the login password released work's item
    /// without a prompt naming it (found attacking the typed-once change).
    @Test func aPasswordTypedForOneKeychainIsNoProofForAnother() throws {
        let h = try Self.home()
        #expect(try h.kc(["create", "work", "--kdf", "interactive"], password: KCHome.password).status == 0)
        let add = try h.kc(["add", "-k", "work", "-s", "bank", "-a", "me", "--user-presence", "-w", "pin-4711"], password: KCHome.password)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(try h.kc(["unlock", "-k", "work"], password: KCHome.password).status == 0)
        let s = try TerminalTests().drive(
            h,
            [
                "run", "--allow-keychain", "work", "--env", "A=kc://github.com/alice", "--env", "B=kc://bank/me?keychain=work", "--",
                "/bin/sh", "-c", "echo lengths ${#A} ${#B}"
            ],
            Self.typeThePassword + [["expect", "requires your presence"], ["send", KCHome.password + "\n"], ["expect", "lengths 6 8"]],
            env: ["KC_UNLOCK_ON_PROMPT": "0"])
        #expect(s.error == nil && s.status == 0, "\(s.screen)")
    }

    /// A password a script gave (KC_PASSWORD, --password-stdin, --password-file) opens the
    /// keychain in that process only, on a terminal too.
    @Test func aPasswordFromAScriptUnlocksNothing() throws {
        let h = try Self.home()
        let file = h.directory + "/pw"
        #expect(FileManager.default.createFile(atPath: file, contents: Data(KCHome.password.utf8), attributes: [.posixPermissions: 0o600]))
        var s = try TerminalTests().drive(h, ["find", "-s", "github.com", "-w"], [["expect", "s3cret"]], env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 0, "\(s.screen)")
        s = try TerminalTests().drive(h, ["find", "-s", "github.com", "-w", "--password-file", file], [["expect", "s3cret"]])
        #expect(s.status == 0, "\(s.screen)")
        let out = try h.kc(["find", "-s", "github.com", "-w", "--password-stdin"], stdin: Data(KCHome.password.utf8))
        #expect(out.status == 0 && out.stdout == "s3cret", "\(out.stderr)")
        #expect(try Self.findWithoutPassword(h).status == 36, "the agent does not hold it")
        #expect(try h.kc(["status"]).stdout == "no keychain is unlocked\n")
    }

    /// A same-uid impostor at the agent's socket (it says it holds nothing, so kc opens the
    /// keychain here with the typed password) gets no password: the hand-over is `kc
    /// unlock`'s, which sends it only to a peer established as the real kc agent. The
    /// command still succeeds, with one note.
    @Test func aPasswordTypedAtThePromptIsNotSentToAnImpostor() throws {
        let h = try Self.home()
        let log = try AgentImpostor.start(h, operationReply: [], operationReplyType: AgentProtocol.Response.notHeld.rawValue, version: AgentProtocol.version)
        let s = try TerminalTests().drive(h, ["find", "-s", "github.com", "-a", "alice", "-w"], Self.typeThePassword)
        #expect(s.status == 0 && s.screen.hasSuffix("s3cret\r\n"), "\(s.screen)")
        #expect(s.screen.contains("kc: note: not unlocked in the kc agent") && s.screen.contains("the password was not sent"), "\(s.screen)")
        let frames = AgentImpostor.received(log)
        let password = Array(KCHome.password.utf8).map { String(format: "%02x", $0) }.joined()
        #expect(frames.count >= 1, "kc asked the impostor first: \(frames)")
        #expect(!frames.contains { $0.contains(password) }, "the impostor received the typed password: \(frames)")
    }

    /// An impostor that says it holds the keychain already: "held" is believed only from a
    /// peer that passes kc's checks (the same program), so it neither gets the password nor
    /// silences the note. Before, the hand-over asked with a plain client, which checks only
    /// uids and tracing, and skipped without a word.
    @Test func anImpostorSayingItHoldsTheKeychainSilencesNothing() throws {
        let h = try Self.home()
        let log = try AgentImpostor.start(
            h, holds: h.defaultKeychain, operationReply: [], operationReplyType: AgentProtocol.Response.notHeld.rawValue,
            version: AgentProtocol.version)
        let s = try TerminalTests().drive(h, ["find", "-s", "github.com", "-a", "alice", "-w"], Self.typeThePassword)
        #expect(s.status == 0 && s.screen.hasSuffix("s3cret\r\n"), "\(s.screen)")
        #expect(s.screen.contains("kc: note: not unlocked in the kc agent"), "\(s.screen)")
        let password = Array(KCHome.password.utf8).map { String(format: "%02x", $0) }.joined()
        #expect(!AgentImpostor.received(log).contains { $0.contains(password) }, "the impostor received the typed password")
    }

    /// As a normal user (the kernel hides the agent's program from kc): the agent kc starts
    /// for the typed password is established by its pid, as for `kc unlock`, and takes it.
    @Test(.enabled(if: geteuid() == 0, "needs root to run kc as another user"))
    func aPasswordTypedAtThePromptUnlocksTheAgentOfANormalUser() throws {
        let h = try NobodyHome()
        #expect(try h.kc(["add", "-s", "news", "-a", "me", "-w", "plain-news"], password: KCHome.password).status == 0)
        let s = try ImpostorRelayTests.drive(h, ["find", "-s", "news", "-a", "me", "-w"], Self.typeThePassword)
        #expect(s.status == 0 && s.screen.hasSuffix("plain-news\r\n") && !s.screen.contains("note:"), "\(s.screen)")
        let out = try h.kc(["find", "-s", "news", "-a", "me", "-w"])
        #expect(out.status == 0 && out.stdout == "plain-news", "\(out.stderr)")
    }

    /// The hand-over never stops an agent it cannot check to start its own: a normal user's
    /// agent, started by an earlier `kc unlock` (so non-dumpable, its program hidden from
    /// this kc), keeps a locked keychain's after-first-unlock item; a password typed for
    /// another keychain must not cost that item. The command goes on, with the note.
    @Test(.enabled(if: geteuid() == 0, "needs root to run kc as another user"))
    func theHandOverNeverStopsAnAgentItCannotCheck() throws {
        let h = try NobodyHome()
        #expect(try h.kc(["add", "-s", "news", "-a", "me", "-w", "plain-news"], password: KCHome.password).status == 0)
        #expect(try h.kc(["create", "work", "--kdf", "interactive"], password: KCHome.password).status == 0)
        let add = try h.kc(["add", "-k", "work", "-s", "cron", "-a", "me", "--accessible", "after-first-unlock", "-w", "cron-token"], password: KCHome.password)
        #expect(add.status == 0, "\(add.stderr)")
        #expect(try h.kc(["unlock", "-k", "work"], password: KCHome.password).status == 0)
        #expect(try h.kc(["lock", "-k", "work"]).status == 0)
        let before = try h.kc(["find", "-k", "work", "-s", "cron", "-a", "me", "-w"])
        #expect(before.status == 0 && before.stdout == "cron-token", "the locked keychain's after-first-unlock item reads: \(before.stderr)")
        let s = try ImpostorRelayTests.drive(h, ["find", "-s", "news", "-a", "me", "-w"], Self.typeThePassword)
        #expect(s.status == 0 && s.screen.hasSuffix("plain-news\r\n"), "\(s.screen)")
        #expect(s.screen.contains("note: not unlocked in the kc agent"), "the note says why: \(s.screen)")
        let after = try h.kc(["find", "-k", "work", "-s", "cron", "-a", "me", "-w"])
        #expect(after.status == 0 && after.stdout == "cron-token", "the agent was stopped, and the item with it: \(after.stderr)")
    }

    /// A protected secret is written in kc's own process, asking for the password even
    /// while the agent holds the keychain: that password is not handed over again (a normal
    /// user's kc could not establish an agent another kc started, and would say so).
    @Test(.enabled(if: geteuid() == 0, "needs root to run kc as another user"))
    func aPasswordTypedWhileTheAgentHoldsTheKeychainIsNotHandedOverAgain() throws {
        let h = try NobodyHome()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let s = try ImpostorRelayTests.drive(
            h, ["add", "-s", "bank", "-a", "me", "--user-presence"],
            [
                ["expect", "Password for keychain"], ["send", KCHome.password + "\n"],
                ["expect", "Secret:"], ["send", "pin-4711\n"],
                ["expect", "Retype secret:"], ["send", "pin-4711\n"]
            ])
        #expect(s.status == 0 && !s.screen.contains("note:"), "\(s.screen)")
        #expect(try h.kc(["status"]).stdout.hasPrefix("\(h.home.defaultKeychain): unlocked, locks in "))
    }

    /// The same against the relay (`AgentRelay`: non-dumpable, of the user's own uid, as a
    /// normal user whose kc cannot see the agent's program) over a real agent that holds
    /// nothing: the password typed at the prompt never reaches it, whether or not kc gets
    /// the keychain unlocked in an agent it starts itself.
    @Test(.enabled(if: geteuid() == 0, "needs root to run kc as another user"))
    func aPasswordTypedAtThePromptGivesTheRelayNothing() throws {
        let (h, relay) = try ImpostorRelayTests.relayed()
        #expect(try h.kc(["lock"]).status == 0, "the real agent, through the relay, holds nothing now")
        let s = try ImpostorRelayTests.drive(h, ["find", "-s", "news", "-a", "me", "-w"], Self.typeThePassword)
        #expect(s.status == 0 && s.screen.hasSuffix("plain-news\r\n"), "\(s.screen)")
        #expect(relay.connections >= 2, "kc went through the relay")
        #expect(!relay.received(KCHome.password), "the relay received the typed password")
    }

    @Test func twoWrongPasswordsThenTheRightOne() throws {
        let h = try Self.home()
        let s = try TerminalTests().drive(
            h, ["find", "-s", "github.com", "-a", "alice", "-w"],
            [
                ["expect", "Password for keychain"], ["send", "wrong-one\n"],
                ["expect", "kc: wrong password, try again"],
                ["expect", "Password for keychain"], ["send", "wrong-two\n"],
                ["expect", "kc: wrong password, try again"],
                ["expect", "Password for keychain"], ["send", KCHome.password + "\n"]
            ])
        #expect(s.error == nil && s.status == 0 && s.screen.hasSuffix("s3cret\r\n"), "\(s.screen)")
        #expect(s.echo_off == [true, true, true], "echo off at every try")
        #expect(try Self.findWithoutPassword(h).stdout == "s3cret", "the right one unlocked the agent")
        #expect(try h.kc(["lock"]).status == 0)
    }

    @Test func threeWrongPasswordsExit51() throws {
        let h = try Self.home()
        let s = try TerminalTests().drive(
            h, ["delete", "-s", "github.com", "-a", "alice"],
            [
                ["expect", "Password for keychain"], ["send", "wrong-one\n"],
                ["expect", "Password for keychain"], ["send", "wrong-two\n"],
                ["expect", "Password for keychain"], ["send", "wrong-three\n"]
            ])
        #expect(s.status == 51, "\(s.screen)")
        #expect(s.screen.components(separatedBy: "try again").count == 3, "said twice: \(s.screen)")
        #expect(s.screen.contains("kc: wrong password for"), "\(s.screen)")
        #expect(try h.kc(["find", "-s", "github.com", "-w"], password: KCHome.password).stdout == "s3cret", "nothing deleted")
        #expect(try h.kc(["status"]).stdout == "no keychain is unlocked\n")
    }

    /// KC_PASSWORD gets one try, as before.
    @Test func aWrongPasswordFromAScriptGetsOneTry() throws {
        let h = try Self.home()
        let s = try TerminalTests().drive(h, ["find", "-s", "github.com", "-w"], [["expect", "wrong password"]], env: ["KC_PASSWORD": "wrong"])
        #expect(s.status == 51 && !s.screen.contains("try again") && !s.screen.contains("Password for keychain"), "\(s.screen)")
    }
}
