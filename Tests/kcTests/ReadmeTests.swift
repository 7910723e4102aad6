import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Every example in the README runs as written: the terminal session through a
/// pseudo-terminal, the script and CI blocks with /bin/sh -e.
@Suite struct ReadmeTests {
    static func example(_ name: String) throws -> [String] {
        let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("README.md")
        let text = try String(contentsOf: readme, encoding: .utf8)
        guard let marker = text.range(of: "<!-- example: \(name) -->") else { throw KeychainError(errSecParam, "no \(name) example") }
        let after = text[marker.upperBound...]
        guard let open = after.range(of: "```"), let lineEnd = after[open.upperBound...].firstIndex(of: "\n"),
            let close = after[lineEnd...].range(of: "\n```")
        else { throw KeychainError(errSecParam, "no code block") }
        return after[after.index(after: lineEnd)..<close.lowerBound].split(separator: "\n").map(String.init)
    }

    @Test func terminalExample() throws {
        let h = try KCHome()
        let lines = try Self.example("terminal")
        #expect(lines.count == 7)
        let answers = [
            ["New password for keychain", "pw-typed\n"], ["Retype new password:", "pw-typed\n"],
            ["Password for keychain", "pw-typed\n"], ["Secret:", "s3cret\n"], ["Retype secret:", "s3cret\n"]
        ]
        var screens: [String] = []
        for line in lines {
            let command = line.split(separator: "#", maxSplits: 1)[0].split(separator: " ").map(String.init)
            #expect(command.first == "kc")
            let s = try TerminalTests().drive(h, Array(command.dropFirst()), [], answers: answers)
            #expect(s.status == 0, "\(line): \(s.screen)")
            #expect(!s.screen.contains("pw-typed"), "\(line): the password is never echoed")
            screens.append(s.screen)
        }
        #expect(screens.filter { $0.contains("Password for keychain") }.count == 1, "the keychain password is typed once: \(screens)")
        #expect(screens[2].hasSuffix("s3cret\r\n"), "find -w prints the secret")
        #expect(screens[3].contains("service: github.com") && !screens[3].contains("s3cret"))
        #expect(
            screens[4].contains("CLASS") && screens[4].contains("generic  github.com  alice") && !screens[4].contains("s3cret"),
            "kc list: aligned columns under a header, no secret: \(screens[4])")
        #expect(try h.kc(["find", "-s", "github.com"], password: "pw-typed").status == 44, "deleted")
    }

    @Test func presenceExample() throws {
        let h = try KCHome()
        try h.createKeychain()
        let lines = try Self.example("presence")
        #expect(lines.count == 3)
        let answers = [["Password for keychain", KCHome.password + "\n"], ["Secret:", "pin-4711\n"], ["Retype secret:", "pin-4711\n"]]
        var screens: [String] = []
        for line in lines {
            let command = line.split(separator: "#", maxSplits: 1)[0].split(separator: " ").map(String.init)
            let s = try TerminalTests().drive(h, Array(command.dropFirst()), [], answers: answers)
            #expect(s.status == 0, "\(line): \(s.screen)")
            screens.append(s.screen)
        }
        #expect(
            screens[2].contains("requires your presence. Password for keychain") && screens[2].hasSuffix("pin-4711\r\n"),
            "asked although unlocked: \(screens[2])")
        #expect(try h.kc(["find", "-s", "bank", "-a", "me", "-w"]).status == 36, "a script gets exit 36")
        #expect(try h.kc(["lock"]).status == 0)
    }

    @Test func agentExample() throws {
        let h = try KCHome()
        try h.createKeychain()
        _ = try h.kc(["add", "-s", "github.com", "-a", "alice", "-w", "s3cret"], password: KCHome.password)
        let lines = try Self.example("agent")
        #expect(lines.count == 4)
        var outputs: [KCBinary.Output] = []
        for (i, line) in lines.enumerated() {
            let command = line.split(separator: "#", maxSplits: 1)[0].split(separator: " ").map(String.init)
            // The first line is typed at a prompt elsewhere (TerminalTests); here the
            // password comes from the environment, and only for that line.
            let out = try h.kc(Array(command.dropFirst()), password: i == 0 ? KCHome.password : nil)
            #expect(out.status == 0, "\(line): \(out.stderr)")
            outputs.append(out)
        }
        #expect(outputs[1].stdout == "s3cret")
        #expect(outputs[2].stdout.hasPrefix("\(h.defaultKeychain): unlocked, locks in "))
        #expect(try h.kc(["find", "-s", "github.com", "-w"]).status == 36, "locked again")
    }

    @Test func scriptExample() throws {
        let h = try KCHome()
        try Data("hunter2\n".utf8).write(to: URL(fileURLWithPath: h.directory + "/password.txt"))
        let script = try Self.example("script").joined(separator: "\n")
        let out = try h.sh("set -e\nexport API_TOKEN='tok-123'\n" + script + "\n[ \"$TOKEN\" = \"$API_TOKEN\" ] && echo token-ok\n")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("\"service\":\"api.example.com\""))
        #expect(out.stdout.contains("no such item (exit 44)"))
        #expect(out.stdout.hasSuffix("token-ok\n"))
        #expect(try h.kc(["find", "--class", "internet", "-s", "example.com", "-w"], password: KCHome.password).stdout == "hunter2\n")
    }

    /// The moving-in example with a Bitwarden export and a pass store made here (a
    /// throwaway gpg key without passphrase), on a fresh machine: no keychain yet, so the
    /// dry run must work without one (issue 21: it exited 50) and the import creates it.
    @Test func movingExample() throws {
        let h = try KCHome()
        let fixtures = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/import").path
        let script = try Self.example("moving").joined(separator: "\n")
        let out = try h.sh(
            """
            export GNUPGHOME="$PWD/gnupg" PASSWORD_STORE_DIR="$HOME/.password-store"
            mkdir -m 700 gnupg
            gpg --batch --quiet --passphrase '' --quick-gen-key 'kc test <kc@test.invalid>' default default never 2>/dev/null
            pass init "$(gpg --list-keys --with-colons | awk -F: '/^fpr/ {print $10; exit}')" >/dev/null
            printf 'gh-token\\nlogin: alice\\nurl: https://github.com\\n' | pass insert -m web/github >/dev/null
            cp '\(fixtures)/bitwarden.json' bitwarden_export.json
            set +e
            \(script)
            """)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stderr.contains("does not exist yet; the import will create it"), "\(out.stderr)")
        #expect(out.stderr.contains("created the keychain"), "\(out.stderr)")
        #expect(out.stdout.contains("entry 1: created internet mastodon.social liz"), "\(out.stdout)")
        #expect(out.stderr.contains("4 created, 0 updated, 0 unchanged, 0 skipped, 0 invalid, 1 unsupported (from bitwarden-json)"), "\(out.stderr)")
        #expect(out.stderr.contains("1 created, 0 updated, 0 unchanged, 0 skipped, 0 invalid, 0 unsupported (from pass)"), "\(out.stderr)")
        #expect(out.stdout.contains("gh-token"), "the -w line prints the pass entry's secret")
        #expect(out.stdout.contains("internet\tgithub.com\talice\t"), "kc list shows the imported internet password: \(out.stdout)")
        #expect(out.stderr.contains("exported 5 items") && out.stderr.contains("backed up 5 items"), "\(out.stderr)")
        #expect(out.stderr.contains(": 5 items, storage, schema and header intact"), "\(out.stderr)")
    }

    /// The git example: a token added by hand as an internet password with its protocol is
    /// what `git credential fill` gets from git-credential-kc.
    @Test func gitExample() throws {
        let h = try KCHome()
        try h.createKeychain()
        let bin = h.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: false)
        try FileManager.default.createSymbolicLink(atPath: bin + "/git-credential-kc", withDestinationPath: KCBinary.path)
        let script = try Self.example("git").joined(separator: "\n")
        let out = try h.sh(
            """
            set -e
            export PATH="\(bin):$PATH" GITHUB_TOKEN='ghp-by-hand' GIT_TERMINAL_PROMPT=0
            git config --global credential.helper kc
            \(script)
            """)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("username=alice\npassword=ghp-by-hand\n"), "\(out.stdout)")
        // The same token as a generic password is not what git asks for.
        let generic = try h.sh(
            """
            export PATH="\(bin):$PATH" GIT_TERMINAL_PROMPT=0 GIT_ASKPASS=/bin/false
            git config --global credential.helper kc
            printf %s tok | kc add -s gitlab.com -a bob
            printf 'protocol=https\\nhost=gitlab.com\\n\\n' | git credential fill
            """)
        #expect(generic.status != 0 && !generic.stdout.contains("password=tok"), "\(generic.stdout)")
    }

    @Test func referencesExample() throws {
        let h = try KCHome()
        try h.createKeychain()
        let script = try Self.example("references").joined(separator: "\n")
        let out = try h.sh("set -e\nexport NPM_TOKEN='npm-tok-123'\n" + script + "\ncat npmrc\n")
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout == "npm-tok-123token: <concealed by kc>\ntoken=npm-tok-123\n", "\(out.stdout)")
    }

    @Test func ciExample() throws {
        let h = try KCHome()
        let temp = h.directory + "/runner-temp"
        try FileManager.default.createDirectory(atPath: temp, withIntermediateDirectories: false, attributes: [.posixPermissions: 0o700])
        let script = try Self.example("ci").joined(separator: "\n")
        let out = try h.sh(
            """
            set -e
            export RUNNER_TEMP='\(temp)' CI_KEYCHAIN_PASSWORD='ci pass' DEPLOY_TOKEN='dep-456'
            \(script)
            [ "$DEPLOY" = "$DEPLOY_TOKEN" ] && echo deploy-ok
            """, password: nil)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.contains("\"service\":\"deploy\""))
        #expect(out.stdout.hasSuffix("deploy-ok\n"))
        #expect(!out.stderr.contains("warning"), "the password file is private")
    }

    /// One-time codes: a URI from a variable, a base32 seed from a file, and a CI login
    /// that gets its code by reference; every code is oathtool's for the same moment.
    @Test func totpExample() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        let script = try Self.example("totp").joined(separator: "\n")
        let seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"
        let out = try h.sh(
            """
            set -e
            export KC_TOTP_TIME=1234567890 GITHUB_OTPAUTH='otpauth://totp/GitHub:alice?secret=\(seed)&issuer=GitHub'
            printf '%s\\n' 'JBSW Y3DP EHPK 3PXP' > vpn-seed.txt
            printf '#!/bin/sh\\nprintf "%%s" "$OTP" > vpn-otp\\n' > vpn-login.sh && chmod +x vpn-login.sh
            \(script)
            echo; cat vpn-otp
            """, password: nil)
        #expect(out.status == 0, "\(out.stderr)")
        let github = try Spawn.run(["/usr/bin/oathtool", "--totp", "-N", "@1234567890", "-b", seed], environment: [:]).stdout
        let vpn = try Spawn.run(["/usr/bin/oathtool", "--totp", "-d", "8", "-N", "@1234567890", "-b", "JBSWY3DPEHPK3PXP"], environment: [:]).stdout
        let lines = out.stdout.split(separator: "\n").map(String.init)
        #expect(lines.count == 2 && !github.isEmpty, "\(out.stdout)")
        #expect(lines.first == github.trimmingCharacters(in: .newlines) + github.trimmingCharacters(in: .newlines), "kc totp, then kc read")
        #expect(lines.last == vpn.trimmingCharacters(in: .newlines), "the CI login got the VPN code")
    }
}
