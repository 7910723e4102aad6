import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Issue 21: what a locked keychain says where the usual hint does not fit. A credential
/// helper cannot take `--password-stdin` (its stdin is git's or Docker's protocol), so it
/// suggests `kc unlock`; `kc run` and `kc inject` name the variable and the reference whose
/// secret could not be read, as docs/integrations.md says. (The Python keyring backend's one
/// line is in integrations/python/tests, run by PythonKeyringTests.)
@Suite struct LockedKeychainMessageTests {
    /// git-credential-kc and docker-credential-kc, locked, no terminal, no password.
    @Test func credentialHelpersSuggestKcUnlock() throws {
        let helpers = CredentialHelperTests()
        let h = try helpers.home(unlock: false)
        #expect(try h.kc(["create", "--kdf", "interactive", "-k", "work"], password: KCHome.password).status == 0)
        let out = try helpers.sh(
            h,
            """
            printf 'protocol=https\\nhost=example.com\\n\\n' | setsid -w timeout 10 git-credential-kc get 2> git.err; echo "git $?"
            printf 'protocol=https\\nhost=example.com\\n\\n' | setsid -w timeout 10 git-credential-kc -k work get 2> work.err; echo "work $?"
            echo example.com | setsid -w timeout 10 docker-credential-kc get > docker.out 2>&1; echo "docker $?"
            """)
        #expect(out.stdout == "git 0\nwork 0\ndocker 1\n", "\(out.stdout) \(out.stderr)")
        let read = { (name: String) in (try? String(contentsOfFile: h.directory + "/" + name, encoding: .utf8)) ?? "?" }
        let git = read("git.err")
        #expect(
            git == "kc: the keychain \(h.defaultKeychain) is locked and there is no terminal to ask for its password "
                + "(git-credential-kc: run `kc unlock`; a credential helper cannot ask for the keychain's password)\n", "\(git)")
        #expect(read("work.err").contains("(git-credential-kc: run `kc unlock -k work`;"), "\(read("work.err"))")
        let docker = read("docker.out")
        #expect(docker.contains("is locked") && docker.contains("(run `kc unlock`;") && !docker.contains("--password-stdin"), "\(docker)")
    }

    /// `kc run` said only that the keychain was locked; now it names every variable (and
    /// its reference) that needed it, and CMD does not start. `kc inject` names the reference.
    @Test func runAndInjectNameWhatCouldNotBeRead() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "db", "-a", "app", "-w", "hunter2"], password: KCHome.password).status == 0)
        let out = try h.sh(
            """
            setsid -w timeout 10 kc run --env DB_PASSWORD=kc://db/app --env API=kc://api/ci -- touch started < /dev/null 2> run.err; echo "run $?"
            echo 'x={{ kc://db/app }}' > t && setsid -w timeout 10 kc inject -i t < /dev/null 2> inject.err; echo "inject $?"
            """, password: nil)
        #expect(out.stdout == "run 36\ninject 36\n", "\(out.stdout) \(out.stderr)")
        #expect(!FileManager.default.fileExists(atPath: h.directory + "/started"))
        let read = { (name: String) in (try? String(contentsOfFile: h.directory + "/" + name, encoding: .utf8)) ?? "?" }
        #expect(
            read("run.err").hasPrefix("kc: DB_PASSWORD (kc://db/app), API (kc://api/ci): the keychain \(h.defaultKeychain) is locked"),
            "\(read("run.err"))")
        #expect(read("inject.err").hasPrefix("kc: kc://db/app: the keychain \(h.defaultKeychain) is locked"), "\(read("inject.err"))")
    }
}
