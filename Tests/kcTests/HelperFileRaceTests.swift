import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Root (sudo keeping HOME) rewriting a user's AWS or kubectl files, attacked by that user:
/// the folder is held by descriptor from the check to the rename, root works in it with
/// the user's file-system ids, and a folder that is a link (or a file with other names) is
/// refused. Each attack runs the real kc as root against a user (uid 65534) who races it.
@Suite struct HelperFileRaceTests {
    static let json = #"{"Version":1,"AccessKeyId":"AKIARACE000000000001","SecretAccessKey":"race-secret"}"#

    /// Swaps `home/.aws` (a real folder) and `home/evil` (a link to `target`) with
    /// renameat2(RENAME_EXCHANGE) in a loop, as the user, until `stop` exists or 60 s pass.
    static let swapper = """
        import ctypes, os, sys, time
        home, target, stop = sys.argv[1:4]
        libc = ctypes.CDLL(None, use_errno=True)
        os.chdir(home)
        os.mkdir(".aws", 0o700)
        os.symlink(target, "evil")
        open("ready", "w").close()
        end = time.time() + 60
        while time.time() < end and not os.path.exists(stop):
            for _ in range(200):
                libc.renameat2(-100, b".aws", -100, b"evil", 2)
        """

    /// A root keychain (unlocked) in a home the user can enter, and the user's HOME in it.
    func setUp() throws -> (KCHome, String) {
        let h = try KCHome(base: OtherUser.base)
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        #expect(chmod(h.directory, 0o711) == 0)
        let user = h.directory + "/user"
        #expect(mkdir(user, 0o700) == 0 && chown(user, OtherUser.uid, OtherUser.uid) == 0)
        return (h, user)
    }

    /// The attack the review won on its second to fourth try: while root's `kc
    /// aws-credentials --store` runs, the user swaps ~/.aws for a link to a folder of
    /// root's. Root must never write there: the folder is opened once without following
    /// links, and every later step is relative to it. The user's new ~/.aws/config is the
    /// user's (written with the user's ids), not root's.
    @Test func rootNeverWritesThroughASwappedFolder() throws {
        let (h, user) = try setUp()
        let target = h.directory + "/roots"
        #expect(mkdir(target, 0o755) == 0)
        let script = h.directory + "/swap.py"
        try Self.swapper.write(toFile: script, atomically: false, encoding: .utf8)
        #expect(chmod(script, 0o644) == 0)
        let stop = h.directory + "/stop"
        let swapper = try Spawn.start(
            OtherUser.setpriv + ["/usr/bin/python3", script, user, target, stop], environment: ["PATH": "/usr/bin:/bin"], timeout: 90)
        defer {
            FileManager.default.createFile(atPath: stop, contents: nil)
            _ = try? swapper.finish()
        }
        let ready = Date().addingTimeInterval(20)
        while !FileManager.default.fileExists(atPath: user + "/ready") && Date() < ready { usleep(10_000) }
        #expect(FileManager.default.fileExists(atPath: user + "/ready"), "the swapper did not start")
        var env = h.environment
        env["HOME"] = user
        var stored = 0
        for _ in 0..<20 {
            let out = try Spawn.run([KCBinary.path, "aws-credentials", "--store", "race"], environment: env, stdin: Data(Self.json.utf8), timeout: 30)
            if out.status == 0 { stored += 1 }
            #expect(!out.stderr.contains("race-secret"))
            let written = try FileManager.default.contentsOfDirectory(atPath: target)
            #expect(written.isEmpty, "root wrote \(written) into its own folder through the user's link")
            if !written.isEmpty { break }
        }
        FileManager.default.createFile(atPath: stop, contents: nil)
        let end = try swapper.finish()
        #expect(end.status == 0, "\(end.stderr)")
        #expect(stored > 0, "no run stored the keys: the race was not run")
        // Whichever name the real folder has now, its config is the user's.
        for name in [".aws", "evil"] {
            var st = stat()
            guard lstat(user + "/" + name, &st) == 0, st.st_mode & S_IFMT == S_IFDIR else { continue }
            #expect(stat(user + "/" + name + "/config", &st) == 0 && st.st_uid == OtherUser.uid, "config owned by \(st.st_uid)")
        }
    }

    /// A folder that is a link, the user's folder holding root's file, a hard-linked
    /// kubeconfig: refused, nothing written, for AWS and kubectl alike.
    @Test func rootRefusesLinksAndMixedOwners() throws {
        let (h, user) = try setUp()
        var env = h.environment
        env["HOME"] = user
        let target = h.directory + "/roots"
        #expect(mkdir(target, 0o755) == 0)
        #expect(symlink(target, user + "/.aws") == 0 && lchown(user + "/.aws", OtherUser.uid, OtherUser.uid) == 0)
        var out = try Spawn.run([KCBinary.path, "aws-credentials", "--store", "race"], environment: env, stdin: Data(Self.json.utf8), timeout: 30)
        #expect(out.status != 0 && out.stderr.contains("link"), "\(out.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: target).isEmpty)
        // A kubeconfig of root's in the user's folder, then a hard-linked one of the user's.
        let kube = user + "/kube"
        #expect(mkdir(kube, 0o700) == 0 && chown(kube, OtherUser.uid, OtherUser.uid) == 0)
        try "users:\n- name: dev\n  user:\n    token: RACETOKEN\n".write(toFile: kube + "/config", atomically: false, encoding: .utf8)
        out = try Spawn.run([KCBinary.path, "kube-credential", "--import", kube + "/config", "dev"], environment: env, timeout: 30)
        #expect(out.status != 0 && out.stderr.contains("uid 0"), "\(out.stderr)")
        #expect(chown(kube + "/config", OtherUser.uid, OtherUser.uid) == 0 && link(kube + "/config", kube + "/other") == 0)
        out = try Spawn.run([KCBinary.path, "kube-credential", "--import", kube + "/config", "dev"], environment: env, timeout: 30)
        #expect(out.status != 0 && out.stderr.contains("hard links"), "\(out.stderr)")
        #expect((try? String(contentsOfFile: kube + "/other", encoding: .utf8))?.contains("RACETOKEN") == true)
        #expect((try? String(contentsOfFile: kube + "/config", encoding: .utf8))?.contains("RACETOKEN") == true)
        #expect(try h.kc(["find", "-s", "kube:dev"]).status != 0, "nothing stored")
    }

    /// Root's `kc export -o PATH --force` in a shared sticky folder removed another
    /// account's file named like kc's leftover of a killed rewrite (`.NAME.kc-…`): only kc's
    /// own leftovers go (this user's, or, for root in a user's folder, the folder owner's).
    @Test func rootRemovesNoOtherAccountsFileNamedLikeALeftover() throws {
        let (h, _) = try setUp()
        let shared = h.directory + "/shared"
        #expect(mkdir(shared, 0o777) == 0 && chmod(shared, 0o1777) == 0)
        let planted = shared + "/.kcout.kc-0123456789ab"
        let plant = try Spawn.run(
            OtherUser.setpriv + ["/bin/sh", "-c", "echo victim > \"$0\"", planted], environment: ["PATH": "/usr/bin:/bin"], timeout: 10)
        #expect(plant.status == 0, "\(plant.stderr)")
        let out = try h.kc(["export", "-o", shared + "/kcout", "--force"])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(FileManager.default.fileExists(atPath: planted), "root removed the other account's file")
    }
}
