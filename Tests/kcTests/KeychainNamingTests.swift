import Foundation
import Testing
import KeychainCore
import AgentWire
import KCTestSupport

/// Issue 21: how a user names a keychain — before or after the command, by name or by path,
/// in `kc status`, and a second `kc unlock` — run the way the user ran it.
@Suite struct KeychainNamingTests {
    /// `kc -k work backup …`, as the backup help and docs wrote it, said "Unknown option '-k'".
    @Test func theKeychainOptionsMayComeBeforeTheCommand() throws {
        let h = try KCHome()
        #expect(try h.kc(["-k", "work", "create", "--kdf", "interactive"], password: KCHome.password).status == 0)
        var out = try h.kc(["-k", "work", "add", "-s", "svc", "-a", "me", "-w", "s3cret"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        // The fast path of find, after the rewrite, and the password from stdin given first.
        out = try h.kc(["-k", "work", "--password-stdin", "find", "-s", "svc", "-w"], stdin: Data(KCHome.password.utf8))
        #expect(out.status == 0 && out.stdout == "s3cret", "\(out.stderr)")
        out = try h.kc(["--keychain=work", "backup", h.directory + "/copy.keychain-db"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.contains("backed up 1 item of \(h.directory)/data/kc/work.keychain-db"), "\(out.stderr)")
        // The default keychain does not exist: a -k before the command was not lost.
        #expect(try h.kc(["find", "-s", "svc"], password: KCHome.password).status == 50)
        // Options with no command after them: a usage error that says what to add.
        out = try h.kc(["-k", "work"])
        #expect(out.status == 2 && out.stderr.contains("give the command after it"), "\(out.stderr)")
        out = try h.kc(["-k"])
        #expect(out.status == 2 && out.stderr.contains("missing value for '-k'"), "\(out.stderr)")
        // A value that is an option name stays a value, as after the command.
        #expect(try h.kc(["-k", "-s", "find", "-s", "svc"], password: KCHome.password).status == 50)
    }

    /// `kc status -k X` was refused although every command takes -k.
    @Test func statusTakesOneKeychain() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["create", "work", "--kdf", "interactive"], password: KCHome.password).status == 0)
        var out = try h.kc(["status", "-k", "work"])
        #expect(out.status == 0 && out.stdout == "\(h.directory)/data/kc/work.keychain-db: locked\n", "\(out.stdout)\(out.stderr)")
        #expect(try h.kc(["unlock", "-k", "work"], password: KCHome.password).status == 0)
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        out = try h.kc(["-k", "work", "status"])
        #expect(out.status == 0 && out.stdout.hasPrefix("\(h.directory)/data/kc/work.keychain-db: unlocked, locks in "), "\(out.stdout)")
        #expect(!out.stdout.contains("login.keychain-db"), "only the keychain asked about")
        out = try h.kc(["status", "-k", "work", "--json"])
        #expect(out.stdout.hasPrefix("[{\"path\":\"\(h.directory)/data/kc/work.keychain-db\",\"idle\":"), "\(out.stdout)")
        #expect(try h.kc(["lock", "-k", "work"]).status == 0)
        #expect(try h.kc(["status", "-k", "work", "--json"]).stdout == "[]\n")
        out = try h.kc(["status", "-k", "wrok"])
        #expect(out.status == 50 && out.stderr.hasPrefix("kc: no keychain at "), "\(out.stderr)")
    }

    /// `kc unlock` on a keychain the agent holds asked for the password again.
    @Test func unlockingAHeldKeychainSaysSo() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        // No password anywhere and no terminal: before, exit 36; now it is already unlocked.
        var out = try h.kc(["unlock"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("login.keychain-db is already unlocked; it locks in "), "\(out.stderr)")
        // Changing the timers still needs the password; a script's password is still checked.
        out = try h.kc(["unlock", "--timeout", "60"])
        #expect(out.status == 36, "\(out.stderr)")
        out = try h.kc(["unlock"], password: "wrong password")
        #expect(out.status == 51, "\(out.stderr)")
        #expect(try h.kc(["unlock", "--timeout", "60"], password: KCHome.password).status == 0)
        out = try h.kc(["status", "--json"])
        #expect(out.stdout.contains("\"idle\":60") || out.stdout.contains("\"idle\":59"), "\(out.stdout)")
        // Once locked, unlock asks again (exit 36 without a way to ask).
        #expect(try h.kc(["lock"]).status == 0)
        #expect(try h.kc(["unlock"]).status == 36)
    }

    /// `kc -k NAME` resolved under the data folder while `kc backup NAME` wrote to the working
    /// folder. One rule now: a `/` or a `.keychain-db` ending makes a path, else a NAME.
    @Test func namesAndPathsFollowOneRule() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "svc", "-a", "me", "-w", "s3cret"], password: KCHome.password).status == 0)
        // A NAME: into the data folder, and it opens by the same name.
        var out = try h.sh("kc backup work-copy")
        #expect(out.status == 0 && out.stderr.contains("to \(h.directory)/data/kc/work-copy.keychain-db"), "\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: h.directory + "/work-copy"))
        #expect(try h.kc(["find", "-k", "work-copy", "-s", "svc", "-w"], password: KCHome.password).stdout == "s3cret")
        // A .keychain-db ending: a file in the working folder, for backup, -k and create alike.
        out = try h.sh("kc backup here.keychain-db && kc find -k here.keychain-db -s svc -w")
        #expect(out.status == 0 && out.stdout == "s3cret", "\(out.stderr)")
        #expect(FileManager.default.fileExists(atPath: h.directory + "/here.keychain-db"))
        out = try h.sh("kc create new.keychain-db --kdf interactive && kc status -k ./new.keychain-db")
        #expect(out.status == 0 && out.stdout == "\(h.directory)/new.keychain-db: locked\n", "\(out.stdout)\(out.stderr)")
    }

    /// From the review of these changes: `kc backup NAME --force` would replace the keychain
    /// NAME in the data folder (a script's `kc backup "$NAME" --force` destroying a keychain).
    /// A backup never replaces a keychain by name; a path still may be replaced with --force.
    @Test func aBackupNeverReplacesAKeychainByName() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "svc", "-a", "me", "-w", "login-secret"], password: KCHome.password).status == 0)
        #expect(try h.kc(["create", "personal", "--kdf", "interactive"], password: "other password").status == 0)
        #expect(try h.kc(["-k", "personal", "add", "-s", "svc", "-a", "me", "-w", "personal-secret"], password: "other password").status == 0)
        let out = try h.kc(["backup", "personal", "--force"], password: KCHome.password)
        #expect(out.status == 48 && out.stderr.contains("never replaces a keychain by name"), "\(out.stderr)")
        #expect(try h.kc(["find", "-k", "personal", "-s", "svc", "-w"], password: "other password").stdout == "personal-secret")
        #expect(
            try h.kc(["backup", h.directory + "/data/kc/personal.keychain-db", "--force"], password: KCHome.password).status == 0,
            "a path is replaced with --force, as documented")
    }

    /// From the review: an impostor at the agent socket that says "held" must not turn
    /// `kc unlock` (which refuses it with exit 22 when it sends the password) into a quiet
    /// "already unlocked".
    @Test func anImpostorSayingHeldDoesNotSilenceUnlock() throws {
        let h = try KCHome()
        try h.createKeychain()
        _ = try AgentImpostor.start(h, kind: .dumpable, holds: h.defaultKeychain, version: AgentProtocol.version)
        let out = try h.kc(["unlock"])
        #expect(out.status != 0 && !out.stderr.contains("already unlocked"), "\(out.stderr)")
    }

    /// From the review: a -k before the command and another after it, or a password option
    /// before a credential helper, were silently overridden or ignored.
    @Test func conflictingLeadingOptionsAreRefused() throws {
        let h = try KCHome()
        try h.createKeychain()
        var out = try h.kc(["-k", "work", "find", "-k", "login", "-s", "svc"], password: KCHome.password)
        #expect(out.status == 2 && out.stderr.contains("given twice"), "\(out.stderr)")
        out = try h.kc(["-k", "login", "find", "-s", "-k"], password: KCHome.password)
        #expect(out.status == 44, "-k as the value of -s is a service: \(out.stderr)")
        out = try h.kc(["--password-stdin", "git-credential", "get"], stdin: Data("protocol=https\nhost=x\n\n".utf8))
        #expect(out.status == 2 && out.stderr.contains("takes no keychain password"), "\(out.stderr)")
    }

    /// Command lines that choose the keychain twice, each spelled another way.
    static let keychainChosenTwice: [[String]] = [
        ["-k", "work", "find", "-k=login", "-s", "svc", "-w"],
        ["-k", "work", "update", "-s", "svc", "-a", "acc", "-k=login", "-w", "CHANGED"],
        ["-k", "work", "find", "-s", "-s", "-k", "login", "-w"],
        ["-k", "work", "find", "-s", "--", "-k", "login", "-w"],
        ["-k", "work", "-k", "login", "find", "-s", "svc", "-w"],
        ["find", "-k", "work", "-s", "svc", "-k", "login", "-w"],
        ["find", "-k", "work", "-s", "svc", "-wk", "login"],
        ["update", "--keychain=work", "-s", "svc", "-a", "acc", "--keychain", "login", "-w", "CHANGED"],
        ["-k", "work", "run", "-k=login", "--env", "A=kc://svc/acc", "--", "/bin/true"]
    ]

    /// From the attack on the one grammar: the check above looked for `-k`, `--keychain` and
    /// `--keychain=` after the subcommand only, took the word after any value-taking option
    /// for a value and stopped at a `--` that was one; ArgumentParser then let the last
    /// keychain win, so `kc -k work update -k=login …` wrote to login. A keychain chosen twice
    /// is refused however it is spelled, and the secret of the other keychain is untouched.
    @Test(arguments: Self.keychainChosenTwice)
    func aKeychainChosenTwiceIsRefusedHoweverSpelled(_ arguments: [String]) throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "svc", "-a", "acc", "-w", "LOGIN"], password: KCHome.password).status == 0)
        let out = try h.kc(arguments, password: KCHome.password)
        #expect(out.status == 2 && out.stderr.contains("given twice"), "\(arguments): \(out.status) \(out.stderr)")
        let login = try h.kc(["find", "-s", "svc", "-a", "acc", "-w"], password: KCHome.password)
        #expect(login.status == 0 && login.stdout == "LOGIN", "\(login.stdout)\(login.stderr)")
    }

    /// What is not a second keychain stays allowed: `-k` as another option's value, and a
    /// child's own `-k` after `kc run`'s `--` (the child prints the secret's length: kc run masks
    /// the secret itself in its output).
    @Test func aKeychainWordThatIsAValueIsNotASecondKeychain() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "svc", "-a", "acc", "-w", "LOGIN"], password: KCHome.password).status == 0)
        var out = try h.kc(["-k", "login", "find", "-s", "-k", "-a", "-k"], password: KCHome.password)
        #expect(out.status == 44, "service and account spelled -k: \(out.stderr)")
        out = try h.kc(
            ["run", "-k", "login", "--env", "A=kc://svc/acc", "--", "/bin/sh", "-c", "printf %s \"${#A} $1 $2\"", "sh", "-k", "y"],
            password: KCHome.password)
        #expect(out.status == 0 && out.stdout == "5 -k y", "\(out.stdout)\(out.stderr)")
    }

    /// `kc lock -k wrok` (a typo) exited 0 while the real keychain stayed unlocked.
    @Test func lockingAKeychainThatDoesNotExistIsExit50() throws {
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.kc(["lock", "-k", "wrok"])
        #expect(out.status == 50, "\(out.stderr)")
        #expect(out.stderr.hasPrefix("kc: no keychain at "), "\(out.stderr)")
        #expect(try h.kc(["lock"]).status == 0, "the existing keychain still locks")
    }
}
