import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// The configuration file when it is wrong (docs/config.md): every malformed line is exit
/// 206 naming the file and the line, for every command that may use it (and `kc config`),
/// never a crash or a guess; `kc error` and help still answer. A file another account owns
/// or can write is refused as ssh refuses its config (docs/security.md, "The configuration
/// file"): it could lengthen the timeouts, turn unlock-on-prompt on, or make new keychains
/// with a weaker KDF.
@Suite struct ConfigFileErrorTests {
    /// A file's bytes, the line at fault and the start of what kc says about it.
    static let malformed: [(bytes: [UInt8], line: Int, message: String)] = [
        (Array("keychain = work\nidle_timeout = 5\n".utf8), 2, "unknown key \"idle_timeout\"\nkc: hint: did you mean idle-timeout?"),
        (Array("frobnicate = 1\n".utf8), 1, "unknown key \"frobnicate\"\nkc: hint: the keys are keychain, idle-timeout,"),
        (Array("# c\n\nidle-timeout = soon\n".utf8), 3, "idle-timeout is not whole seconds, 1 to 31536000"),
        (Array("max-timeout = 0\n".utf8), 1, "max-timeout is not whole seconds"),
        (Array("idle-timeout = 31536001\n".utf8), 1, "idle-timeout is not whole seconds"),
        (Array("idle-timeout = -5\n".utf8), 1, "idle-timeout is not whole seconds"),
        (Array("unlock-on-prompt = maybe\n".utf8), 1, "unlock-on-prompt is not yes or no"),
        (Array("clip-seconds = 86401\n".utf8), 1, "clip-seconds is not whole seconds, 1 to 86400"),
        (Array("kdf = fast\n".utf8), 1, "kdf is not interactive, moderate or sensitive"),
        (Array("team = Infra!\n".utf8), 1, "team is not a team name: 1 to 64"),
        (Array("keychain = team:\n".utf8), 1, "keychain is not a NAME, an absolute path or team:NAME"),
        (Array("keychain = secrets/work.keychain-db\n".utf8), 1, "keychain is a relative path"),
        (Array("kdf interactive\n".utf8), 1, "expected KEY = VALUE; this line has no ="),
        (Array("[kc]\nkdf = interactive\n".utf8), 1, "sections are not used"),
        (Array("kdf = interactive\n\nkdf = moderate\n".utf8), 3, "kdf is given twice (lines 1 and 3)"),
        (Array("kdf =\n".utf8), 1, "kdf has no value"),
        (Array("kdf = # none\n".utf8), 1, "kdf has no value"),
        (Array("kdf = interactive\n".utf8) + [0x6b, 0x65, 0xff, 0x0a], 2, "not UTF-8 text"),
        (Array("kdf = inter\0active\n".utf8), 1, "not UTF-8 text")
    ]

    @Test(arguments: 0..<Self.malformed.count)
    func aMalformedLineIsExit206NamingTheFileAndLine(_ index: Int) throws {
        let (bytes, line, message) = Self.malformed[index]
        let h = try ConfigTests.home("")
        let path = ConfigTests.file(h)
        #expect(FileManager.default.createFile(atPath: path, contents: Data(bytes), attributes: [.posixPermissions: 0o600]))
        for arguments in [["find", "-s", "x", "-w"], ["config"], ["list"], ["unlock"], ["generate"]] {
            let out = try h.kc(arguments, password: KCHome.password)
            #expect(out.status == 206, "kc \(arguments): \(out.stderr)")
            #expect(out.stderr.hasPrefix("kc: \(path):\(line): \(message)"), "kc \(arguments): \(out.stderr)")
            #expect(out.stdout.isEmpty)
        }
        // What a user reaches for next still answers.
        let error = try h.kc(["error", "206"])
        #expect(error.status == 0 && error.stdout.contains("One or more parameters"), "\(error.stderr)")
        #expect(try h.kc(["--help"]).status == 0)
        #expect(try h.kc(["--version"]).status == 0)
        // A shell's Tab prints no error into the line being typed.
        let tab = try h.kc(["---completion", "find", "--", "--keychain", "3", "0", "kc", "find", "-k", ""])
        #expect(tab.status == 0 && tab.stderr.isEmpty, "\(tab.stderr)")
    }

    /// A file larger than 64 KiB is refused (a configuration file is a few lines).
    @Test func aHugeFileIsRefused() throws {
        let h = try ConfigTests.home(String(repeating: "# padding\n", count: 7000))
        let out = try h.kc(["config"])
        #expect(out.status == 206 && out.stderr.hasPrefix("kc: the configuration file \(ConfigTests.file(h)) is larger than 64 KiB"), "\(out.stderr)")
    }

    /// What is not a regular file is refused at once: a FIFO (which would block a plain
    /// open) and a folder.
    @Test func aFifoOrAFolderIsRefusedWithoutWaiting() throws {
        let h = try ConfigTests.home("")
        let path = ConfigTests.file(h)
        try FileManager.default.removeItem(atPath: path)
        #expect(mkfifo(path, 0o600) == 0)
        var out = try h.kc(["config"])
        #expect(out.status == 206 && out.stderr.hasPrefix("kc: the configuration file \(path) is not a regular file"), "\(out.stderr)")
        try FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        out = try h.kc(["config"])
        #expect(out.status == 206 && out.stderr.contains("is not a regular file"), "\(out.stderr)")
    }

    /// A link to a file of one's own (a dotfiles manager's) is read; others may read the
    /// file (it holds no secret).
    @Test func aLinkToYourOwnFileAndAReadableFileAreRead() throws {
        let h = try ConfigTests.home(nil)
        let target = h.directory + "/dotfiles-kc-config"
        #expect(FileManager.default.createFile(atPath: target, contents: Data("kdf = interactive\n".utf8), attributes: [.posixPermissions: 0o644]))
        try FileManager.default.createDirectory(atPath: h.directory + "/config/kc", withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: ConfigTests.file(h), withDestinationPath: target)
        let out = try h.kc(["config"])
        #expect(out.status == 0 && ConfigTests.row("kdf", out.stdout) == ["kdf", "interactive", ConfigTests.file(h) + ":1"], "\(out.stderr)\(out.stdout)")
    }

    /// The attack (docs/security.md, "The configuration file"): a configuration file that
    /// another account can write, or that another account owns, asks for a year's
    /// timeouts, unlock-on-prompt and the weakest KDF. kc reads none of it: every command
    /// stops with exit 206 before it asks for or sends any password, the agent holds
    /// nothing, and no keychain is made with the planted profile. Before, any file at the
    /// path was read.
    @Test func aConfigurationFileAnotherAccountCanWriteIsRefused() throws {
        let planted = "idle-timeout = 31536000\nmax-timeout = 31536000\nunlock-on-prompt = yes\nkdf = interactive\n"
        let h = try ConfigTests.home(nil)
        try h.createKeychain()
        try ConfigTests.write(planted, in: h)
        let path = ConfigTests.file(h)
        var modes: [mode_t] = [0o620, 0o602, 0o666]
        if geteuid() == 0 { modes.append(0) }   // 0: owned by another account (nobody), mode 0644
        for mode in modes {
            if mode == 0 {
                #expect(chmod(path, 0o644) == 0 && chown(path, OtherUser.uid, OtherUser.uid) == 0)
            } else {
                #expect(chmod(path, mode) == 0)
            }
            let unlock = try h.kc(["unlock"], password: KCHome.password)
            #expect(unlock.status == 206, "\(unlock.stderr)")
            let expected =
                mode == 0
                ? "kc: the configuration file \(path) belongs to uid \(OtherUser.uid), not to you; not read"
                : "kc: the configuration file \(path) can be written by other users (mode \(String(mode, radix: 8))); not read"
            #expect(unlock.stderr.hasPrefix(expected), "\(unlock.stderr)")
            // (Asked with no configuration file: `kc status` stops at this one too.)
            #expect(try h.kc(["status"], extra: ["XDG_CONFIG_HOME": h.directory + "/elsewhere"]).stdout == "no keychain is unlocked\n")
            let create = try h.kc(["create", "work"], password: KCHome.password)
            #expect(create.status == 206 && !FileManager.default.fileExists(atPath: h.directory + "/data/kc/work.keychain-db"), "\(create.stderr)")
            // On a terminal too: the prompt is never shown, so no password is typed into it.
            let s = try TerminalTests().drive(h, ["find", "-s", "x", "-w"], [])
            #expect(s.status == 206 && !s.screen.contains("Password for keychain"), "\(s.screen)")
        }
        // Made the user's own and private again, it is read.
        #expect(chown(path, geteuid(), getegid()) == 0 && chmod(path, 0o600) == 0)
        let out = try h.kc(["config"])
        #expect(out.status == 0 && ConfigTests.row("kdf", out.stdout) == ["kdf", "interactive", path + ":4"], "\(out.stderr)")
    }

    /// A file put at the path that holds a secret (~/.git-credentials, a .env) is refused
    /// without quoting it: stderr may be a CI log. Only a key's name is named, when the
    /// line has one. Before, "found \"https://alice:ghp_…@github.com\"" was printed.
    @Test func aRejectedLineIsNotQuoted() throws {
        let token = "ghp_k3Yt0kEnNeverPrinted"
        for text in [
            "https://alice:\(token)@github.com\n", "https://alice:\(token)@github.com/?a=1\n", "idle-timeout = \(token)\n",
            "keychain = team:\(token)!\n", "kdf = \(token)\n", "team = \(token)!\n", "unlock-on-prompt = \(token)\n"
        ] {
            let h = try ConfigTests.home(text)
            let out = try h.kc(["config"])
            #expect(out.status == 206 && out.stderr.hasPrefix("kc: \(ConfigTests.file(h)):1: "), "\(text): \(out.stderr)")
            #expect(!out.stderr.contains(token) && !out.stderr.contains("alice"), "\(text): \(out.stderr)")
        }
        let env = try ConfigTests.home("GITHUB_TOKEN=\(token)\n")
        let out = try env.kc(["config"])
        #expect(out.status == 206 && out.stderr.contains("unknown key \"GITHUB_TOKEN\"") && !out.stderr.contains(token), "\(out.stderr)")
    }

    /// A UTF-8 byte-order mark at the start, as some editors write, is not part of the
    /// first key.
    @Test func aByteOrderMarkIsSkipped() throws {
        let h = try ConfigTests.home(nil)
        try ConfigTests.write("\u{FEFF}kdf = interactive\n", in: h)
        let out = try h.kc(["config"])
        #expect(out.status == 0 && ConfigTests.row("kdf", out.stdout) == ["kdf", "interactive", ConfigTests.file(h) + ":1"], "\(out.stderr)")
    }

    /// The attack on the path (docs/security.md, "The configuration file"): an account that
    /// can write a folder on the way to the file plants `config` as a link to a file the
    /// victim owns (a repository's example.conf asking for a year's timeouts and
    /// unlock-on-prompt). The file itself passes every check, so the link and the folders
    /// are what kc checks, as sshd does: a folder another account owns, one others can
    /// write (not sticky), or a link another account owns is exit 206, and nothing of the
    /// file is applied (the unlock is refused, the agent holds nothing).
    @Test func aFileReachedThroughAnotherAccountsFolderOrLinkIsRefused() throws {
        let h = try ConfigTests.home(nil)
        try h.createKeychain()
        let victims = h.directory + "/src/repo"
        try FileManager.default.createDirectory(atPath: victims, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let example = victims + "/example.conf"
        #expect(
            FileManager.default.createFile(
                atPath: example, contents: Data("idle-timeout = 31536000\nmax-timeout = 31536000\nunlock-on-prompt = yes\n".utf8),
                attributes: [.posixPermissions: 0o644]))
        let folder = h.directory + "/config/kc"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o755])
        let path = ConfigTests.file(h)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: example)
        // (folder's owner, folder's mode, link's owner, what kc says)
        var cases: [(uid_t, mode_t, uid_t, String)] = [
            (geteuid(), 0o777, geteuid(), "is in \(folder), which other users can write (mode 777); not read"),
            (geteuid(), 0o775, geteuid(), "is in \(folder), which other users can write (mode 775); not read")
        ]
        if geteuid() == 0 {
            cases.append((OtherUser.uid, 0o755, OtherUser.uid, "is in \(folder), which belongs to uid \(OtherUser.uid)"))
            cases.append((OtherUser.uid, 0o755, 0, "is in \(folder), which belongs to uid \(OtherUser.uid)"))
            cases.append((0, 0o755, OtherUser.uid, "is a link that belongs to uid \(OtherUser.uid), not to you; not read"))
        }
        for (folderOwner, mode, linkOwner, message) in cases {
            #expect(chown(folder, folderOwner, folderOwner) == 0 && chmod(folder, mode) == 0)
            #expect(lchown(path, linkOwner, linkOwner) == 0)
            let config = try h.kc(["config"])
            #expect(config.status == 206 && config.stderr.hasPrefix("kc: the configuration file \(path) \(message)"), "\(config.stderr)")
            let unlock = try h.kc(["unlock"], password: KCHome.password)
            #expect(unlock.status == 206, "\(unlock.stderr)")
            #expect(try h.kc(["status", "--json"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
        }
        // The user's own folder and link: read, as a dotfiles manager's link is.
        #expect(chown(folder, geteuid(), getegid()) == 0 && chmod(folder, 0o700) == 0 && lchown(path, geteuid(), getegid()) == 0)
        let out = try h.kc(["config"])
        #expect(out.status == 0 && ConfigTests.row("unlock-on-prompt", out.stdout).contains("yes"), "\(out.stderr)\(out.stdout)")
    }

    /// The path is walked as given, not as realpath(3) resolves it (a second attack
    /// review): (a) a link another account owns in a folder on the way (XDG_CONFIG_HOME =
    /// /shared/cfg, /shared sticky and cfg the other account's link to a folder of yours),
    /// (b) a folder on the way that others can write, whose child could be swapped for a
    /// link, and (c) a folder others can write that the file's own link points into, were
    /// never looked at. Each is exit 206 and nothing of the file is applied; the same
    /// layouts made safe are read.
    @Test func linksAndFoldersOnThePathAsGivenAreChecked() throws {
        let h = try ConfigTests.home(nil)
        try h.createKeychain()
        let fm = FileManager.default
        let settings = Data("idle-timeout = 31536000\nunlock-on-prompt = yes\n".utf8)
        func folder(_ path: String, _ mode: mode_t) throws {
            try fm.createDirectory(atPath: path, withIntermediateDirectories: true)
            #expect(chmod(path, mode) == 0)
        }
        let victim = h.directory + "/victim"
        try folder(victim + "/kc", 0o700)
        #expect(fm.createFile(atPath: victim + "/kc/config", contents: settings, attributes: [.posixPermissions: 0o600]))
        // (b) a loose folder on the way, its child a link of yours to your own folder.
        let loose = h.directory + "/loose"
        try folder(loose, 0o777)
        try fm.createSymbolicLink(atPath: loose + "/me", withDestinationPath: victim)
        // (c) your own file's link into a loose folder.
        let grp = h.directory + "/grp"
        try folder(grp, 0o777)
        #expect(fm.createFile(atPath: grp + "/kc.conf", contents: settings, attributes: [.posixPermissions: 0o600]))
        try folder(h.directory + "/mine/kc", 0o700)
        try fm.createSymbolicLink(atPath: h.directory + "/mine/kc/config", withDestinationPath: grp + "/kc.conf")
        // (config home, what kc says, how to make it safe)
        var cases: [(String, String, () -> Bool)] = [
            (loose + "/me", "is in \(loose), which other users can write (mode 777); not read", { chmod(loose, 0o755) == 0 }),
            (h.directory + "/mine", "is in \(grp), which other users can write (mode 777); not read", { chmod(grp, 0o755) == 0 })
        ]
        if geteuid() == 0 {
            // (a) a sticky shared folder holding the other account's link to your folder.
            let shared = h.directory + "/shared"
            try folder(shared, 0o1777)
            try fm.createSymbolicLink(atPath: shared + "/cfg", withDestinationPath: victim)
            #expect(lchown(shared + "/cfg", OtherUser.uid, OtherUser.uid) == 0)
            cases.insert(
                (
                    shared + "/cfg", "is reached through \(shared)/cfg, a link that belongs to uid \(OtherUser.uid), not to you; not read",
                    { lchown(shared + "/cfg", geteuid(), getegid()) == 0 }
                ), at: 0)
        }
        for (configHome, message, makeSafe) in cases {
            let env = ["XDG_CONFIG_HOME": configHome]
            let config = try h.kc(["config"], extra: env)
            #expect(config.status == 206 && config.stderr.hasPrefix("kc: the configuration file \(configHome)/kc/config \(message)"), "\(config.stderr)")
            let unlock = try h.kc(["unlock"], password: KCHome.password, extra: env)
            #expect(unlock.status == 206, "\(unlock.stderr)")
            #expect(try h.kc(["status", "--json"]).stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "[]")
            #expect(makeSafe())
            let out = try h.kc(["config"], extra: env)
            #expect(out.status == 0 && ConfigTests.row("unlock-on-prompt", out.stdout).contains("yes"), "\(configHome): \(out.stderr)\(out.stdout)")
        }
    }

    /// A HOME that is not an absolute path is ignored, as such an XDG_CONFIG_HOME is: the
    /// file would be a different one in every working folder.
    @Test func aRelativeHomeIsIgnored() throws {
        let h = try ConfigTests.home(nil)
        try FileManager.default.createDirectory(atPath: h.directory + "/rel/.config/kc", withIntermediateDirectories: true)
        #expect(FileManager.default.createFile(atPath: h.directory + "/rel/.config/kc/config", contents: Data("kdf = fast\n".utf8)))
        let out = try h.sh("HOME=rel XDG_CONFIG_HOME= kc config")
        #expect(out.status == 0 && !out.stdout.contains("rel/.config"), "\(out.stderr)\(out.stdout)")
    }
}
