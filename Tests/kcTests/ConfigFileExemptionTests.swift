import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// What a configuration file kc refuses does not stop (docs/config.md, docs/security.md
/// "The configuration file"): `kc lock` in every form and `kc status`, which a screen-lock
/// or logout hook runs, help (so the error's hint answers), and the exempt commands however
/// the keychain is given before them. And an empty `KC_KEYCHAIN` is taken as unset, so a
/// script's `KC_KEYCHAIN="$UNSET"` does not pass over the file's keychain for login.
@Suite struct ConfigFileExemptionTests {
    /// The two ways a file is refused: a malformed line, and a file another account owns
    /// (when the tests run as root, which can give it away).
    static func refusedFiles() -> [String] { geteuid() == 0 ? ["malformed", "other account's"] : ["malformed"] }

    /// Writes the refused file of `kind` into `h`; returns the start of kc's message for it.
    static func refuse(_ kind: String, in h: KCHome) throws -> String {
        let path = ConfigTests.file(h)
        if kind == "malformed" {
            try ConfigTests.write("idle-timeout = 600\nkdf interactive\n", in: h)
            return "\(path):2: "
        }
        try ConfigTests.write("idle-timeout = 600\n", in: h)
        #expect(chmod(path, 0o644) == 0 && chown(path, OtherUser.uid, OtherUser.uid) == 0)
        return "the configuration file \(path) belongs to uid \(OtherUser.uid)"
    }

    /// The attack (F1): a file kc refuses stopped `kc lock` with 206, so the hook that locks
    /// at the screen lock or logout failed and the keychain stayed unlocked. Now `kc lock --all`,
    /// `kc -k login lock` and a bare `kc lock` lock it (the bare one, whose keychain would be
    /// the file's, locks every keychain and says why on stderr), and `kc status` answers.
    @Test(arguments: Self.refusedFiles())
    func lockAndStatusWorkWhateverTheFile(_ kind: String) throws {
        let h = try ConfigTests.home(nil)
        let elsewhere = ["XDG_CONFIG_HOME": h.directory + "/elsewhere"]
        try h.createKeychain()
        #expect(try h.kc(["create", "--kdf", "interactive", "work"], password: KCHome.password, extra: elsewhere).status == 0)
        let message = try Self.refuse(kind, in: h)
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 206, "the file is refused")
        for lock in [["lock", "--all"], ["lock"], ["-k", "login", "lock"], ["lock", "--keychain=login"]] {
            for name in ["login", "work"] {
                let unlock = try h.kc(["unlock", "-k", name], password: KCHome.password, extra: elsewhere)
                #expect(unlock.status == 0, "\(unlock.stderr)")
            }
            let status = try h.kc(["status", "--json"])
            #expect(status.status == 0 && status.stdout.contains("login.keychain-db"), "kc status: \(status.stderr)")
            let out = try h.kc(lock)
            #expect(out.status == 0, "kc \(lock): \(out.stderr)")
            let after = try h.kc(["status", "--json"])
            #expect(after.status == 0 && !after.stdout.contains("login.keychain-db"), "kc \(lock): \(after.stdout)\(after.stderr)")
            if lock == ["lock"] {
                // Every keychain, and the file's error as a warning.
                #expect(after.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]", "\(after.stdout)")
                #expect(out.stderr.hasPrefix("kc: warning: \(message)") && out.stderr.contains("locking every keychain"), "\(out.stderr)")
            }
            #expect(try h.kc(["status"]).stdout.contains(lock.contains("--all") || lock == ["lock"] ? "no keychain is unlocked" : "work.keychain-db"))
        }
    }

    /// The error's hint names `kc config --help`, which answers (F4); so does any command's
    /// help, in each spelling, while the command itself still stops at the file.
    @Test func helpAnswersWhateverTheFile() throws {
        let h = try ConfigTests.home(nil)
        _ = try Self.refuse("malformed", in: h)
        let refused = try h.kc(["config"])
        #expect(refused.status == 206 && refused.stderr.contains("kc: hint: `kc config --help`"), "\(refused.stderr)")
        for help in [["config", "--help"], ["find", "--help"], ["find", "-s", "x", "-h"], ["help", "unlock"], ["-k", "work", "find", "--help"]] {
            let out = try h.kc(help)
            #expect(out.status == 0 && out.stdout.contains("USAGE: "), "kc \(help): \(out.stderr)")
        }
        #expect(try h.kc(["config", "--help"]).stdout.contains("idle-timeout"), "the help lists the keys")
        // What runs still stops: a word after `--` is no help.
        let run = try h.kc(["run", "--", "true", "--help"])
        #expect(run.status == 206, "\(run.stderr)")
    }

    /// `--help` after the credential helpers' subcommands is no help (they print none, they
    /// run): `kc git-credential get --help` and `kc docker-credential store --help` skipped
    /// the file's check deferred for help, so they ran against login although the file
    /// (keychain = work and a bad line) is refused, and `store` wrote into the wrong keychain.
    @Test func aCredentialHelperWithHelpStillStopsAtTheFile() throws {
        let h = try ConfigTests.home(nil)
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        try ConfigTests.write("keychain = work\nkdf interactive\n", in: h)
        let git = "protocol=https\nhost=example.com\nusername=u\npassword=stored-pw\n\n"
        let docker = #"{"ServerURL":"example.com","Username":"u","Secret":"stored-pw"}"#
        for (args, input) in [
            (["git-credential", "get", "--help"], git), (["git-credential", "store", "-h"], git),
            (["docker-credential", "get", "--help"], "example.com\n"), (["docker-credential", "store", "--help"], docker)
        ] {
            let out = try h.kc(args, stdin: Data(input.utf8))
            #expect(out.status == 206 && out.stderr.contains(ConfigTests.file(h) + ":2: "), "kc \(args): \(out.status) \(out.stderr)")
        }
        let elsewhere = ["XDG_CONFIG_HOME": h.directory + "/elsewhere"]
        let dump = try h.kc(["list", "-k", "login"], extra: elsewhere)
        #expect(!dump.stdout.contains("example.com"), "nothing was stored in login: \(dump.stdout)\(dump.stderr)")
    }

    /// The exempt commands go on when a keychain option comes first (F5): the choice used
    /// to look at argv[1] only, before the options were moved after the command, so these
    /// stopped at the file (206). Now `kc -k login status` answers, and the agent and
    /// `kc error`, which take no keychain, say so (a usage error, 2), not the file's.
    @Test func aLeadingKeychainOptionHidesNoExemption() throws {
        let h = try ConfigTests.home(nil)
        try h.createKeychain()
        _ = try Self.refuse("malformed", in: h)
        let status = try h.kc(["-k", "login", "status"])
        #expect(status.status == 0 && status.stdout.hasSuffix("login.keychain-db: locked\n"), "\(status.stdout)\(status.stderr)")
        for arguments in [["--keychain=login", "error", "51"], ["-k", "login", "agent", "--stop"]] {
            let out = try h.kc(arguments)
            #expect(out.status == 2 && !out.stderr.contains(ConfigTests.file(h)), "kc \(arguments): \(out.stderr)")
        }
        #expect(try h.kc(["-k", "login", "find", "-s", "x"]).status == 206, "a command that uses the file still stops")
    }

    /// An empty `KC_KEYCHAIN` is taken as unset (F6): the file's keychain is used, by the
    /// fast path (`kc find -w`) and by ArgumentParser's commands, and `kc config` says the
    /// file chose it. Before, it selected login, silently.
    @Test func anEmptyKCKeychainIsUnset() throws {
        let h = try ConfigTests.home(nil)
        try h.createKeychain()
        #expect(try h.kc(["create", "--kdf", "interactive", "work"], password: KCHome.password).status == 0)
        #expect(try h.kc(["add", "-k", "work", "-s", "svc", "-a", "a", "-w", "in-work"], password: KCHome.password).status == 0)
        try ConfigTests.write("keychain = work\n", in: h)
        let empty = ["KC_KEYCHAIN": ""]
        let fast = try h.kc(["find", "-s", "svc", "-w"], password: KCHome.password, extra: empty)
        #expect(fast.status == 0 && fast.stdout == "in-work", "\(fast.stdout.debugDescription) \(fast.stderr)")
        let slow = try h.kc(["list"], password: KCHome.password, extra: empty)
        #expect(slow.status == 0 && slow.stdout.contains("svc"), "\(slow.stderr)")
        let config = try h.kc(["config"], extra: empty)
        #expect(ConfigTests.row("keychain", config.stdout).last == ConfigTests.file(h) + ":1", "\(config.stdout)")
    }
}
