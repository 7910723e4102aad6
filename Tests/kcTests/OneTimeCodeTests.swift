import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Issue 19, "One-time codes": `kc add --totp`, `kc totp` and `kc://…?totp` references
/// through the real binary, compared with Debian's `oathtool` at a fixed clock
/// (`KC_TOTP_TIME`), at period boundaries, and HOTP counters under concurrent use.
@Suite struct OneTimeCodeTests {
    /// RFC 6238's SHA-1 seed ("12345678901234567890") in base32.
    static let seed = "GEZDGNBVGY3TQOJQGEZDGNBVGY3TQOJQ"

    /// What oathtool prints for these options (the code, no newline).
    static func oathtool(_ arguments: [String]) throws -> String {
        let out = try Spawn.run(["/usr/bin/oathtool"] + arguments, environment: [:])
        #expect(out.status == 0, "oathtool \(arguments): \(out.stderr)")
        return out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// A home with a keychain, unlocked in the agent when `unlock`.
    static func home(unlock: Bool = true) throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        if unlock { #expect(try h.kc(["unlock"], password: KCHome.password).status == 0) }
        return h
    }

    /// The code kc prints at `time` (stdout exactly: no newline off a terminal, nothing on stderr).
    static func code(_ h: KCHome, _ arguments: [String], at time: Int64) throws -> String {
        let out = try h.kc(["totp"] + arguments, extra: ["KC_TOTP_TIME": String(time)])
        #expect(out.status == 0 && out.stderr.isEmpty, "\(arguments) at \(time): \(out.stderr)")
        return out.stdout
    }

    /// SHA-1/256/512, 6–8 digits, periods 30/60/45, given as flags or as a URI on stdin: the
    /// same codes as oathtool at 0, on both sides of each boundary k·period, and far ahead.
    @Test func codesMatchOathtoolAtPeriodBoundaries() throws {
        let h = try Self.home()
        let seeds: [(name: String, algorithm: String, digits: Int, period: Int64, viaURI: Bool)] = [
            ("plain", "SHA1", 6, 30, false), ("wide", "SHA256", 8, 60, false),
            ("odd", "SHA512", 7, 45, true), ("default", "SHA1", 6, 30, true)
        ]
        for s in seeds {
            var add = ["add", "-s", s.name, "-a", "me", "--totp"]
            let out: KCBinary.Output
            if s.viaURI {
                let uri = "otpauth://totp/\(s.name):me?secret=\(Self.seed.lowercased())&algorithm=\(s.algorithm)&digits=\(s.digits)&period=\(s.period)"
                out = try h.kc(add, stdin: Data((uri + "\n").utf8))
            } else {
                add += ["--algorithm", s.algorithm.lowercased(), "--digits", String(s.digits), "--period", String(s.period), "-w", Self.seed]
                out = try h.kc(add)
            }
            #expect(out.status == 0 && out.stderr.isEmpty, "\(s.name): \(out.stderr)")
            for t in [0, s.period - 1, s.period, 2 * s.period - 1, 2 * s.period, 1_234_567_890, 20_000_000_000] {
                let expected = try Self.oathtool([
                    "--totp=\(s.algorithm.lowercased())", "-d", String(s.digits), "-s", "\(s.period)s",
                    "-N", "@\(t)", "-b", Self.seed
                ])
                #expect(try Self.code(h, ["-s", s.name], at: t) == expected, "\(s.name) at \(t)")
            }
            // The code changes exactly at the boundary.
            #expect(try Self.code(h, [s.name], at: s.period - 1) != Self.code(h, [s.name], at: s.period))
        }
        // RFC 6238's SHA-512 vector, end to end: a 64-byte seed, 8 digits.
        let seed512 = Data("1234567890123456789012345678901234567890123456789012345678901234".utf8)
        let b32 =
            try Self.oathtool(["-v", "--totp", Array(seed512).map { String(format: "%02x", $0) }.joined()])
            .split(separator: "\n").first { $0.hasPrefix("Base32 secret: ") }.map { String($0.dropFirst(15)) } ?? ""
        #expect(try h.kc(["add", "-s", "rfc", "--totp", "--digits", "8", "--algorithm", "SHA512", "-w", b32]).status == 0)
        #expect(try Self.code(h, ["rfc"], at: 20_000_000_000) == "47863826")
    }

    /// Each HOTP code advances the stored counter once: the codes are oathtool's for
    /// counters 5, 6, 7…, and the URI keeps every other byte.
    @Test func hotpCountersAdvanceOncePerCode() throws {
        let h = try Self.home()
        let uri = "otpauth://hotp/Corp%20VPN:me?secret=\(Self.seed)&counter=5&issuer=Corp%20VPN"
        #expect(try h.kc(["add", "-s", "vpn", "-a", "me", "--totp", "-w", uri]).status == 0)
        let expected = try Self.oathtool(["--hotp", "-c", "5", "-w", "3", "-b", Self.seed]).split(separator: "\n").map(String.init)
        var codes: [String] = []
        for _ in 0..<3 { codes.append(try Self.code(h, ["-s", "vpn", "-a", "me"], at: 0)) }
        codes.append(try h.kc(["read", "kc://vpn/me?totp"]).stdout)
        #expect(codes == expected, "\(codes) vs \(expected)")
        #expect(try h.kc(["find", "-s", "otpauth/vpn", "-w"]).stdout == uri.replacingOccurrences(of: "counter=5", with: "counter=9"))
        // Flags make a HOTP seed too.
        #expect(try h.kc(["add", "-s", "token", "--totp", "--counter", "0", "-w", Self.seed]).status == 0)
        #expect(try Self.code(h, ["token"], at: 0) == "755224" && Self.code(h, ["token"], at: 0) == "287082", "RFC 4226 Appendix D")
    }

    /// Concurrent `kc totp` processes on one HOTP seed, through the agent and each with its
    /// own connection (KC_PASSWORD): every code is printed once, and the counter ends at
    /// the number of codes printed.
    @Test(arguments: [true, false]) func concurrentHOTPCallsNeverPrintTheSameCode(throughAgent: Bool) throws {
        let h = try Self.home(unlock: throughAgent)
        #expect(try h.kc(["add", "-s", "hotp", "--totp", "--counter", "0", "-w", Self.seed], password: KCHome.password).status == 0)
        let (processes, each) = throughAgent ? (8, 8) : (8, 3)
        let out = try h.sh(
            """
            for p in $(seq \(processes)); do
              (for i in $(seq \(each)); do kc totp hotp || echo FAILED; echo; done > codes.$p 2>&1) &
            done
            wait
            cat codes.*
            """, password: throughAgent ? nil : KCHome.password)
        let codes = out.stdout.split(separator: "\n").map(String.init)
        let total = processes * each
        #expect(codes.count == total && !codes.contains("FAILED"), "\(out.stdout)")
        #expect(Set(codes).count == total, "no code printed twice: \(codes.sorted())")
        let expected = try Self.oathtool(["--hotp", "-w", String(total - 1), "-b", Self.seed]).split(separator: "\n").map(String.init)
        #expect(codes.sorted() == expected.sorted(), "exactly counters 0..<\(total)")
        #expect(try h.kc(["find", "-s", "otpauth/hotp", "-w"], password: KCHome.password).stdout.hasSuffix("&counter=\(total)"))
    }

    /// A malformed seed is errSecParam (206) naming the fault, never echoing the secret,
    /// and nothing is stored; flag values out of range are usage errors.
    @Test func malformedSeedsAreRefusedNamingTheFault() throws {
        let h = try Self.home()
        let cases: [(String, String)] = [
            ("JBSW Y3DP EH1K 3PXP", "not base32 at position 13"),
            ("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&algorithm=MD5", "unknown algorithm \"MD5\""),
            ("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&digits=10", "digits must be 6, 7 or 8, not 10"),
            ("otpauth://totp/x?secret=JBSWY3DPEHPK3PXP&period=0", "period must be"),
            ("otpauth://totp/x?issuer=JBSWY3DPEHPK3PXP", "no secret"),
            ("otpauth://yotp/x?secret=JBSWY3DPEHPK3PXP", "not totp or hotp")
        ]
        for (seed, fault) in cases {
            let out = try h.kc(["add", "-s", "bad", "-a", "me", "--totp"], stdin: Data(seed.utf8))
            #expect(out.status == 206 && out.stderr.contains(fault), "\(seed): \(out.stderr)")
            #expect(!out.stderr.contains("JBSW") && !out.stderr.contains("Y3DP"), "the secret is never echoed: \(out.stderr)")
        }
        var out = try h.kc(["add", "-s", "bad", "--totp", "--digits", "8", "-w", "otpauth://totp/x?secret=JBSWY3DPEHPK3PXP"])
        #expect(out.status == 206 && out.stderr.contains("carries its own"), "\(out.stderr)")
        for flags in [["--digits", "9"], ["--period", "0"], ["--algorithm", "md5"], ["--period", "30", "--counter", "1"]] {
            out = try h.kc(["add", "-s", "bad", "--totp", "-w", "JBSWY3DPEHPK3PXP"] + flags)
            #expect(out.status == 2, "\(flags): \(out.stderr)")
        }
        out = try h.kc(["add", "-s", "bad", "--digits", "8", "-w", "x"])
        #expect(out.status == 2 && out.stderr.contains("go with --totp"), "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "otpauth/bad"]).status == 44, "nothing was stored")
        // A stored secret that is not a seed, and no item at all.
        #expect(try h.kc(["add", "-s", "plain", "-w", "hunter2"]).status == 0)
        out = try h.kc(["totp", "plain"])
        #expect(out.status == 206 && out.stderr.contains("not an otpauth:// URI") && !out.stderr.contains("hunter2"), "\(out.stderr)")
        out = try h.kc(["totp", "-s", "nothing"])
        #expect(out.status == 44 && out.stderr.contains("otpauth/SERVICE"), "\(out.stderr)")
        out = try h.kc(["totp", "plain"], extra: ["KC_TOTP_TIME": "yesterday"])
        #expect(out.status == 206 && out.stderr.contains("KC_TOTP_TIME"), "\(out.stderr)")
        #expect(try h.kc(["totp"]).status == 2, "an item must be named")
    }

    /// `kc read`, `kc inject` and `kc run` give the code of a `?totp` reference; a login
    /// imported from Bitwarden (internet password + otpauth/ sibling) is found by its server.
    @Test func referencesAndImportedLoginsGiveTheCode() throws {
        let h = try Self.home()
        let csv = h.directory + "/bitwarden.csv"
        try Data(
            """
            folder,favorite,type,name,notes,fields,reprompt,login_uri,login_username,login_password,login_totp
            ,,login,GitHub,,,0,https://github.com/login,alice,hunter2,\(Self.seed.lowercased())
            """.utf8
        ).write(to: URL(fileURLWithPath: csv))
        let imported = try h.kc(["import", csv])
        #expect(imported.status == 0, "\(imported.stderr)")
        let t: Int64 = 1_111_111_111
        let expected = try Self.oathtool(["--totp", "-N", "@\(t)", "-b", Self.seed])
        let env = ["KC_TOTP_TIME": String(t)]
        #expect(try Self.code(h, ["github.com"], at: t) == expected)
        #expect(try Self.code(h, ["--class", "internet", "-s", "github.com", "-a", "alice"], at: t) == expected)
        #expect(try Self.code(h, ["-s", "otpauth/github.com"], at: t) == expected, "the full service name works too")
        #expect(try Self.code(h, ["kc://github.com/alice?class=internet"], at: t) == expected)
        #expect(try h.kc(["read", "kc://github.com/alice?totp"], extra: env).stdout == expected)
        #expect(try h.kc(["read", "kc://github.com/alice?class=internet&totp"], extra: env).stdout == expected)
        #expect(try h.kc(["read", "kc://github.com/alice?class=internet"]).stdout == "hunter2", "without totp: the password")
        let template = h.directory + "/login.tmpl"
        try Data("user=alice pass={{ kc://github.com/alice?class=internet }} otp={{ kc://github.com/alice?totp }}\n".utf8)
            .write(to: URL(fileURLWithPath: template))
        var out = try h.kc(["inject", "-i", template], extra: env)
        #expect(out.status == 0 && out.stdout == "user=alice pass=hunter2 otp=\(expected)\n", "\(out.stdout) \(out.stderr)")
        let file = h.directory + "/otp"
        out = try h.kc(["run", "--env", "OTP=kc://github.com/alice?totp", "--", "/bin/sh", "-c", "printf %s \"$OTP\" > '\(file)'"], extra: env)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try String(contentsOfFile: file, encoding: .utf8) == expected)
        out = try h.kc(["read", "kc://github.com/alice?totp=1"])
        #expect(out.status == 206, "totp takes no value: \(out.stderr)")
    }

    /// On a terminal the code is followed by a newline and the seconds it stays valid; in a
    /// pipe, only the code (tested above: stderr empty, no newline).
    @Test func secondsLeftOnATerminal() throws {
        let h = try Self.home()
        #expect(try h.kc(["add", "-s", "site", "--totp", "--period", "60", "-w", Self.seed]).status == 0)
        let script = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("pty_session.py").path
        let spec: [String: Any] = [
            "argv": [KCBinary.path, "totp", "site"],
            "env": h.environment.merging(["PATH": "/usr/bin:/bin", "TERM": "dumb", "KC_TOTP_TIME": "1000"]) { a, _ in a },
            "steps": [["expect", "more second"]], "answers": [], "timeout": 30
        ]
        let file = h.directory + "/session.json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(["/usr/bin/python3", script, file], environment: ["PATH": "/usr/bin:/bin"])
        let session = try JSONSerialization.jsonObject(with: Data(out.stdoutBytes)) as? [String: Any] ?? [:]
        let screen = session["screen"] as? String ?? ""
        let expected = try Self.oathtool(["--totp", "-s", "60s", "-N", "@1000", "-b", Self.seed])
        #expect(session["status"] as? Int == 0, "\(screen)")
        #expect(screen.contains(expected + "\r\n") && screen.contains("valid for 20 more seconds"), "1000 = 16·60 + 40: \(screen)")
        #expect(screen.contains("KC_TOTP_TIME is set"), "a fixed clock is said on a terminal: \(screen)")
    }

    /// Steam Guard codes (KeePassXC's `encoder=steam`, Aegis's `otpauth://steam/`): five
    /// letters, compared with an independent implementation in Python's hmac module.
    @Test func steamCodesMatchAnIndependentImplementation() throws {
        let h = try Self.home()
        let uris = [
            "otpauth://totp/Steam:gamer?secret=\(Self.seed)&period=30&digits=5&issuer=Steam&encoder=steam",
            "otpauth://steam/Steam:gamer?secret=\(Self.seed)&issuer=Steam"
        ]
        for (n, uri) in uris.enumerated() {
            #expect(try h.kc(["add", "-s", "steam\(n)", "-a", "gamer", "--totp", "-w", uri]).status == 0)
        }
        let python = """
            import base64, hashlib, hmac, struct, sys
            key = base64.b32decode(sys.argv[1]); counter = int(sys.argv[2]) // 30
            mac = hmac.new(key, struct.pack('>Q', counter), hashlib.sha1).digest()
            o = mac[-1] & 15; n = struct.unpack('>I', mac[o:o + 4])[0] & 0x7fffffff
            letters = '23456789BCDFGHJKMNPQRTVWXY'; code = ''
            for _ in range(5): code += letters[n % 26]; n //= 26
            print(code, end='')
            """
        for t: Int64 in [0, 29, 30, 1_700_000_000] {
            let expected = try Spawn.run(["/usr/bin/python3", "-c", python, Self.seed, String(t)], environment: [:]).stdout
            #expect(expected.count == 5)
            for n in uris.indices { #expect(try Self.code(h, ["steam\(n)"], at: t) == expected, "steam\(n) at \(t)") }
        }
    }
}
