import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Issue 32, "A configuration file": `$XDG_CONFIG_HOME/kc/config` (else `~/.config/kc/config`)
/// chooses the default keychain, the agent's timeouts, unlock-on-prompt, what `--clip`
/// alone means, the KDF of new keychains and the team; a flag beats the environment, which
/// beats the file, which beats kc's default (docs/config.md); `kc config` says which is in
/// force and where it came from. Each test runs the real kc with XDG_CONFIG_HOME in its own
/// home. The malformed and unsafe files are ConfigFileErrorTests'.
@Suite struct ConfigTests {
    /// A home whose configuration file (`XDG_CONFIG_HOME/kc/config`, 0600) holds `text`; no
    /// file when `text` is nil.
    static func home(_ text: String?) throws -> KCHome {
        let h = try KCHome()
        h.environment["XDG_CONFIG_HOME"] = h.directory + "/config"
        if let text { try write(text, in: h) }
        return h
    }

    /// The configuration file of `h`.
    static func file(_ h: KCHome) -> String { h.directory + "/config/kc/config" }

    /// Writes the configuration file of `h` (0600 in a 0700 folder).
    static func write(_ text: String, in h: KCHome) throws {
        try FileManager.default.createDirectory(atPath: h.directory + "/config/kc", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let path = file(h)
        try? FileManager.default.removeItem(atPath: path)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(text.utf8), attributes: [.posixPermissions: 0o600]))
    }

    /// `kc config`'s rows after its first line, each as [key, value, source].
    static func rows(_ output: String) -> [[String]] {
        output.split(separator: "\n").dropFirst().map { line in
            line.components(separatedBy: "  ").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        }
    }

    /// The row of `key` in `kc config`'s output.
    static func row(_ key: String, _ output: String) -> [String] { rows(output).first { $0.first == key } ?? [] }

    /// `kc status --json`'s entry for `path`: seconds until it locks when idle, and at most.
    static func timers(_ h: KCHome, _ path: String) throws -> (idle: Int, maximum: Int)? {
        let out = try h.kc(["status", "--json"])
        let list = try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [[String: Any]] ?? []
        guard let entry = list.first(where: { $0["path"] as? String == path }),
            let idle = entry["idle"] as? Int, let maximum = entry["maximum"] as? Int
        else { return nil }
        return (idle, maximum)
    }

    @Test func withoutAFileEveryValueIsKcsDefault() throws {
        let h = try Self.home(nil)
        let out = try h.kc(["config"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.hasPrefix("configuration file: \(Self.file(h)) (not there: kc's defaults)\n"), "\(out.stdout)")
        #expect(Self.rows(out.stdout).map { $0.first ?? "" } == ConfigFile.keys)
        #expect(Self.rows(out.stdout).allSatisfy { $0.last == "default" }, "\(out.stdout)")
        #expect(Self.row("keychain", out.stdout) == ["keychain", h.defaultKeychain, "default"])
        #expect(Self.row("unlock-on-prompt", out.stdout) == ["unlock-on-prompt", "yes", "default"])
        #expect(Self.row("clip-seconds", out.stdout) == ["clip-seconds", "45", "default"])
        #expect(Self.row("kdf", out.stdout) == ["kdf", "moderate", "default"])
        let json = try h.kc(["config", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(json.stdout.utf8)) as? [String: Any], "\(json.stdout)")
        #expect(object["file"] as? String == Self.file(h) && object["exists"] as? Bool == false)
        // Without XDG_CONFIG_HOME (or with a relative one, which the XDG spec says to
        // ignore): ~/.config/kc/config.
        for xdg in [nil, "relative/config"] {
            var env = h.environment
            env["XDG_CONFIG_HOME"] = xdg
            let fallback = try KCBinary.run(["config"], environment: env)
            #expect(fallback.stdout.hasPrefix("configuration file: \(h.directory)/.config/kc/config (not there"), "\(fallback.stdout)")
        }
    }

    /// The file's keychain is the default one, for the fast path of `kc find` and for the
    /// rest; KC_KEYCHAIN beats it, and -k beats both. `kc config` names each source.
    @Test func theKeychainOfTheFileAndFlagBeatsEnvironmentBeatsFile() throws {
        let h = try Self.home("# which keychain\nkeychain = work\n")
        for (name, account) in [("login", "l"), ("work", "w"), ("third", "t")] {
            #expect(try h.kc(["create", name, "--kdf", "interactive"], password: KCHome.password).status == 0)
            let add = try h.kc(["add", "-k", name, "-s", "shared", "-a", account, "-w", "from-\(name)"], password: KCHome.password)
            #expect(add.status == 0, "\(add.stderr)")
        }
        let work = h.directory + "/data/kc/work.keychain-db"
        let third = h.directory + "/data/kc/third.keychain-db"
        func find(_ arguments: [String] = [], env: [String: String] = [:]) throws -> String {
            let out = try h.kc(["find", "-s", "shared", "-w"] + arguments, password: KCHome.password, extra: env)
            #expect(out.status == 0, "\(out.stderr)")
            return out.stdout
        }
        // `kc find -s x -w` is parsed by the fast path; `kc read` and `kc list` by others.
        #expect(try find() == "from-work")
        #expect(try h.kc(["read", "kc://shared/w"], password: KCHome.password).stdout == "from-work")
        #expect(try h.kc(["list"], password: KCHome.password).stdout.contains("\tshared\tw\t"))
        #expect(try find(env: ["KC_KEYCHAIN": "login"]) == "from-login")
        #expect(try find(["-k", "third"], env: ["KC_KEYCHAIN": "login"]) == "from-third")

        var out = try h.kc(["config"])
        #expect(Self.row("keychain", out.stdout) == ["keychain", work, Self.file(h) + ":2"], "\(out.stdout)")
        out = try h.kc(["config"], extra: ["KC_KEYCHAIN": "login"])
        #expect(Self.row("keychain", out.stdout) == ["keychain", h.defaultKeychain, "env KC_KEYCHAIN"], "\(out.stdout)")
        out = try h.kc(["-k", "third", "config"], extra: ["KC_KEYCHAIN": "login"])
        #expect(Self.row("keychain", out.stdout) == ["keychain", third, "flag -k/--keychain"], "\(out.stdout)")
    }

    /// A keychain the file names is named, as with -k: `kc add` does not create it when it
    /// is missing (a typo there must not start a new keychain), and says where to look.
    @Test func aMissingKeychainTheFileNamesIsNotCreated() throws {
        let h = try Self.home("keychain = ~/secrets/typo.keychain-db\n")
        let out = try h.kc(["add", "-s", "x", "-w", "y"], password: KCHome.password)
        #expect(out.status == 50, "\(out.stderr)")
        #expect(out.stderr.contains("no keychain at \(h.directory)/secrets/typo.keychain-db"), "~/ is the home folder: \(out.stderr)")
        #expect(out.stderr.contains("the config file (`kc config`)"), "\(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: h.defaultKeychain))
    }

    /// A runner token names its team and wins over the file's keychain, where -k and
    /// KC_KEYCHAIN naming a keychain file are refused with it: the token is read (here a
    /// malformed one, so no team server is needed) instead of "-k or KC_KEYCHAIN chose…".
    @Test func aRunnerTokenWinsOverTheKeychainOfTheFile() throws {
        let h = try Self.home("keychain = work\n")
        let token = h.directory + "/token"
        #expect(FileManager.default.createFile(atPath: token, contents: Data("kcr1:garbage\n".utf8), attributes: [.posixPermissions: 0o600]))
        let malformed = "kc: the runner token is malformed"
        var out = try h.kc(["unlock", "--team-token-file", token])
        #expect(out.status == 206 && out.stderr.hasPrefix(malformed), "\(out.stderr)")
        out = try h.kc(["unlock"], extra: ["KC_TEAM_TOKEN": "kcr1:garbage"])
        #expect(out.status == 206 && out.stderr.hasPrefix(malformed), "\(out.stderr)")
        out = try h.kc(["unlock", "--team-token-file", token], extra: ["KC_KEYCHAIN": "work"])
        #expect(out.status == 206 && out.stderr.contains("but -k or KC_KEYCHAIN chose"), "\(out.stderr)")
    }

    /// The agent kc starts gets the file's timeouts (`kc unlock` sends them with the
    /// password); --timeout and --max still win.
    @Test func theTimeoutsOfTheFileReachTheAgentAndFlagsWin() throws {
        let h = try Self.home("idle-timeout = 77\nmax-timeout = 500\n")
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        var timers = try #require(try Self.timers(h, h.defaultKeychain))
        #expect((60...77).contains(timers.idle) && (480...500).contains(timers.maximum), "\(timers)")
        #expect(try h.kc(["lock"]).status == 0)
        #expect(try h.kc(["unlock", "--timeout", "300"], password: KCHome.password).status == 0)
        timers = try #require(try Self.timers(h, h.defaultKeychain))
        #expect((280...300).contains(timers.idle) && (480...500).contains(timers.maximum), "\(timers)")
        #expect(try h.kc(["lock"]).status == 0)
        #expect(try h.kc(["unlock", "--max", "4000"], password: KCHome.password).status == 0)
        timers = try #require(try Self.timers(h, h.defaultKeychain))
        #expect((60...77).contains(timers.idle) && (3980...4000).contains(timers.maximum), "\(timers)")
        let out = try h.kc(["config"])
        #expect(Self.row("idle-timeout", out.stdout) == ["idle-timeout", "77", Self.file(h) + ":1"], "\(out.stdout)")
        #expect(Self.row("max-timeout", out.stdout) == ["max-timeout", "500", Self.file(h) + ":2"], "\(out.stdout)")
        #expect(try h.kc(["lock"]).status == 0)
    }

    /// `unlock-on-prompt = no` keeps a typed password out of the agent; KC_UNLOCK_ON_PROMPT
    /// beats it; and the keychain a typed password unlocks gets the file's idle timeout.
    @Test func unlockOnPromptOfTheFileAndTheEnvironmentBeatsIt() throws {
        let h = try Self.home("unlock-on-prompt = no\nidle-timeout = 77\n")
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "github.com", "-a", "alice", "-w", "s3cret"], password: KCHome.password).status == 0)
        let find = ["find", "-s", "github.com", "-a", "alice", "-w"]
        var s = try TerminalTests().drive(h, find, UnlockOnPromptTests.typeThePassword)
        #expect(s.status == 0 && s.screen.hasSuffix("s3cret\r\n"), "\(s.screen)")
        #expect(try h.kc(["status"]).stdout == "no keychain is unlocked\n", "the file said no")
        var out = try h.kc(["config"])
        #expect(Self.row("unlock-on-prompt", out.stdout) == ["unlock-on-prompt", "no", Self.file(h) + ":1"], "\(out.stdout)")

        s = try TerminalTests().drive(h, find, UnlockOnPromptTests.typeThePassword, env: ["KC_UNLOCK_ON_PROMPT": "1"])
        #expect(s.status == 0 && s.screen.hasSuffix("s3cret\r\n"), "\(s.screen)")
        let timers = try #require(try Self.timers(h, h.defaultKeychain), "the environment said yes")
        #expect((60...77).contains(timers.idle), "the file's idle timeout: \(timers)")
        out = try h.kc(["config"], extra: ["KC_UNLOCK_ON_PROMPT": "1"])
        #expect(Self.row("unlock-on-prompt", out.stdout) == ["unlock-on-prompt", "yes", "env KC_UNLOCK_ON_PROMPT"], "\(out.stdout)")
        #expect(try h.kc(["lock"]).status == 0)
    }

    /// `clip-seconds` is what `--clip` alone means (a real X server and xclip); `--clip N`
    /// beats it.
    @Test func clipSecondsOfTheFileAndTheFlagBeatsIt() throws {
        let x = try ClipboardTests.XServer()
        let h = try Self.home("clip-seconds = 12\n")
        defer { for pid in ClipboardTests.keepers(for: x.display) { kill(pid, SIGKILL) } }
        var out = try h.kc(["generate", "--clip"], extra: ["DISPLAY": x.display])
        #expect(out.status == 0 && out.stderr.contains("cleared in 12 s"), "\(out.stderr)")
        out = try h.kc(["generate", "--clip", "3"], extra: ["DISPLAY": x.display])
        #expect(out.status == 0 && out.stderr.contains("cleared in 3 s"), "\(out.stderr)")
        out = try h.kc(["config"])
        #expect(Self.row("clip-seconds", out.stdout) == ["clip-seconds", "12", Self.file(h) + ":1"], "\(out.stdout)")
    }

    /// The profile of the file makes new keychains (`kc create`, and the default keychain
    /// `kc add` creates); --kdf beats it.
    @Test func theKDFOfTheFileMakesNewKeychainsAndTheFlagBeatsIt() throws {
        func profile(_ path: String) throws -> KDFProfile? {
            try Keychain.open(at: path, password: try SecureBytes(copying: Array(KCHome.password.utf8))).kdfProfile()
        }
        let h = try Self.home("kdf = interactive\n")
        #expect(try h.kc(["add", "-s", "x", "-w", "y"], password: KCHome.password).status == 0)
        #expect(try profile(h.defaultKeychain) == .interactive)
        #expect(try h.kc(["create", "work"], password: KCHome.password).status == 0)
        #expect(try profile(h.directory + "/data/kc/work.keychain-db") == .interactive)
        try Self.write("kdf = moderate\n", in: h)
        #expect(try h.kc(["create", "fast", "--kdf", "interactive"], password: KCHome.password).status == 0)
        #expect(try profile(h.directory + "/data/kc/fast.keychain-db") == .interactive, "the flag beats the file")
        let out = try h.kc(["config"])
        #expect(Self.row("kdf", out.stdout) == ["kdf", "moderate", Self.file(h) + ":1"], "\(out.stdout)")
    }

    /// `team` is read, checked and shown; `ConfigFile.load()` gives it to kc-team (which
    /// applies it), written with or without `team:`.
    @Test func theTeamIsReadCheckedAndShown() throws {
        let h = try Self.home("team = infra\n")
        var out = try h.kc(["config"])
        #expect(Self.row("team", out.stdout) == ["team", "infra", Self.file(h) + ":1"], "\(out.stdout)")
        out = try h.kc(["config", "--json"])
        let object = try #require(try JSONSerialization.jsonObject(with: Data(out.stdout.utf8)) as? [String: Any], "\(out.stdout)")
        let team = (object["settings"] as? [[String: Any]])?.first { $0["key"] as? String == "team" }
        #expect(team?["value"] as? String == "infra" && team?["source"] as? String == "file" && team?["line"] as? Int == 1, "\(out.stdout)")
        #expect(try ConfigFile.load(path: Self.file(h)).team?.value == "infra")
        try Self.write("team = team:infra\n", in: h)
        #expect(try ConfigFile.load(path: Self.file(h)).team?.value == "infra")
        #expect(try ConfigFile.load(path: h.directory + "/nothing-here").team == nil)
    }

    /// Comments (whole-line, and after a space at the end of one), blank lines, CRLF, no
    /// spaces around `=`, `~/` in a path, and a `#` inside a word.
    @Test func commentsBlankLinesAndSpacing() throws {
        let h = try Self.home("# kc\r\n\r\n   \nidle-timeout=600   # ten minutes\r\n\tkdf\t=\tinteractive\nkeychain = ~/k#1/work.keychain-db\n# end")
        let out = try h.kc(["config"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(Self.row("idle-timeout", out.stdout) == ["idle-timeout", "600", Self.file(h) + ":4"], "\(out.stdout)")
        #expect(Self.row("kdf", out.stdout) == ["kdf", "interactive", Self.file(h) + ":5"], "\(out.stdout)")
        #expect(Self.row("keychain", out.stdout) == ["keychain", h.directory + "/k#1/work.keychain-db", Self.file(h) + ":6"], "\(out.stdout)")
    }
}
