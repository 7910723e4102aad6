import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// kc in shell scripts and CI jobs: exact bytes through pipes and files, and no waiting
/// for input that cannot come.
@Suite struct ScriptTests {
    @Test func commandSubstitutionGivesTheExactSecret() throws {
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.sh(
            """
            printf %s 's3cr3t-token' | kc add -s ci -a bot
            TOKEN=$(kc find -s ci -a bot -w)
            [ "$TOKEN" = 's3cr3t-token' ] && printf 'same'
            """)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "same")
    }

    /// Trailing newlines, spaces and every byte value survive add → find -w through pipes
    /// and files, byte for byte.
    @Test(arguments: [
        ("trailing newline", Array("line\n".utf8)),
        ("spaces", Array("  padded  ".utf8)),
        ("CRLF and tabs", Array("a\r\n\tb\r\n".utf8)),
        ("every byte value", (0...255).map { UInt8($0) }),
        ("NUL first", [0, 1, 2])
    ])
    func secretsSurviveByteForByte(_ name: String, _ secret: [UInt8]) throws {
        let h = try KCHome()
        try h.createKeychain()
        let input = h.directory + "/in.bin"
        try Data(secret).write(to: URL(fileURLWithPath: input))
        let out = try h.sh(
            """
            kc add -s pipe -a t < in.bin &&
            kc add -s file -a t --data-file in.bin &&
            kc find -s pipe -a t -w > out-pipe.bin &&
            kc find -s file -a t -w | cat > out-file.bin &&
            cmp in.bin out-pipe.bin && cmp in.bin out-file.bin && echo identical
            """)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "identical\n")
    }

    @Test func noPasswordSourceAndNoTerminalFailsAtOnce() throws {
        let h = try KCHome()
        try h.createKeychain()
        _ = try h.kc(["add", "-s", "ci", "-a", "bot", "-w", "x"], password: KCHome.password)
        let started = Date()
        let out = try h.sh("kc find -s ci -a bot -w </dev/null", password: nil)
        #expect(out.status == 36)
        #expect(out.stdout == "")
        #expect(
            out.stderr == """
                kc: the keychain \(h.defaultKeychain) is locked and there is no terminal to ask for its password
                kc: hint: run `kc unlock` first, or set KC_PASSWORD, or pass --password-file PATH or --password-stdin

                """)
        #expect(Date().timeIntervalSince(started) < 20, "it does not wait for input")
        // The same for add: no secret source and no terminal.
        let add = try h.sh("kc add -s other -a bot </dev/null")
        #expect(add.status == 206 || add.status == 36)
        #expect(add.stderr.contains("the secret on stdin is empty") || add.stderr.contains("no terminal"))
    }

    @Test func ciJobWithPasswordFromTheEnvironment() throws {
        let h = try KCHome()
        let out = try h.sh(
            """
            set -e
            kc create ./ci.keychain-db --kdf interactive
            export KC_KEYCHAIN=./ci.keychain-db
            printf %s "$DEPLOY_TOKEN" | kc add -s deploy -a ci
            kc find -s deploy -a ci -w
            """.replacingOccurrences(of: "$DEPLOY_TOKEN", with: "dep-123"), password: "ci-password")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "dep-123")
    }

    @Test func aSecretGivenWithWIsScrubbedFromTheCommandLine() throws {
        let h = try KCHome()
        try h.createKeychain()
        // kc waits for its password on stdin while we read its /proc/PID/cmdline.
        let out = try h.sh(
            """
            ( sleep 2; printf '%s' '\(KCHome.password)' ) | kc add -s s -w 'argv-secret-123' --password-stdin &
            PID=$!
            sleep 1
            tr '\\0' ' ' < /proc/$PID/cmdline; echo
            wait; echo "exit $?"
            """, password: nil)
        #expect(out.stdout.contains("kc add -s s -w *************** --password-stdin"), "\(out.stdout)")
        #expect(!out.stdout.contains("argv-secret-123"))
        #expect(out.stdout.hasSuffix("exit 0\n"), "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "s", "-w"], password: KCHome.password).stdout == "argv-secret-123", "the secret itself is intact")
    }

    /// getopt's forms of -w (issue 32): `-wVALUE` and grouped `-UwVALUE` are scrubbed too.
    @Test func aSecretAttachedToWIsScrubbedFromTheCommandLine() throws {
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.sh(
            """
            ( sleep 2; printf '%s' '\(KCHome.password)' ) | kc add -s s -Uwargv-secret-456 --password-stdin &
            PID=$!
            sleep 1
            tr '\\0' ' ' < /proc/$PID/cmdline; echo
            wait; echo "exit $?"
            """, password: nil)
        #expect(out.stdout.contains("kc add -s s -Uw*************** --password-stdin"), "\(out.stdout)")
        #expect(!out.stdout.contains("argv-secret-456"))
        #expect(out.stdout.hasSuffix("exit 0\n"), "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "s", "-w"], password: KCHome.password).stdout == "argv-secret-456", "the secret itself is intact")
    }

    /// Grouped flags ending with `-w` take the next word as the secret, whatever it looks
    /// like: the normaliser split `-Uw -pA55word` as another option, so kc printed most of the
    /// secret in a usage error, or stored `-s=--` for `-s--` (found attacking getopt's forms).
    @Test(arguments: ["-pA55wordSECRET", "-s--", "--", "-lMYSECRET"])
    func aGroupedWTakesTheNextWordAsItIs(_ secret: String) throws {
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.kc(["add", "-s", "grouped", "-Uw", secret], password: KCHome.password)
        #expect(out.status == 0 && !out.stderr.contains(String(secret.dropFirst(2))), "\(out.stderr)")
        let found = try h.kc(["find", "-s", "grouped", "-w"], password: KCHome.password)
        #expect(found.stdout == secret, "stored as given: \(found.stdout)")
    }

    @Test func passwordIsWipedFromTheProcessEnvironment() throws {
        // kc reads KC_PASSWORD once, overwrites its bytes and unsets it, so neither
        // /proc/PID/environ nor any child shows it. Checked on a running kc (here: kc
        // waiting on a stdin pipe).
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.sh(
            """
            ( sleep 2 ) | kc add -s s -a a &
            PID=$!
            sleep 1
            if [ -r /proc/$PID/environ ]; then
              tr '\\0' '\\n' < /proc/$PID/environ | grep -c 'test password' || true
            else
              echo unreadable
            fi
            wait
            """)
        let result = out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        if geteuid() == 0 {
            #expect(result == "0", "root can read it: the password must be gone")
        } else {
            // kc is non-dumpable, so its /proc files belong to root: unreadable is the defence.
            #expect(result == "unreadable" || result == "0")
        }
    }
}
