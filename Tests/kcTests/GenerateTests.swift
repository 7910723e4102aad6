import Foundation
import Testing
import KCTestSupport
@testable import kc

/// Issue 19, "Generated secrets": `kc generate` and `kc add --generate`, run as the real
/// binary. Distributions are checked with a chi-square test whose threshold is the
/// 1 - 1e-6 quantile (a correct generator fails about once in a million runs).
@Suite struct GenerateTests {
    /// The EFF large word list as Debian's `diceware` package ships it (make test-deps).
    static let effList = "/usr/lib/python3/dist-packages/diceware/wordlists/wordlist_en_eff.txt"

    /// The printable ASCII characters of each class, for checks independent of kc's code.
    static let lower = Set("abcdefghijklmnopqrstuvwxyz")
    static let upper = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZ")
    static let digits = Set("0123456789")
    static let symbols = Set(##"!"#$%&'()*+,-./:;<=>?@[\]^_`{|}~"##)

    /// The chi-square value above which `degrees` degrees of freedom are rejected at
    /// p = 1e-6 (Wilson–Hilferty; z = 4.753 is the normal's 1 - 1e-6 quantile).
    static func chiSquareLimit(degrees: Int) -> Double {
        let k = Double(degrees)
        let z = 4.753
        return k * pow(1 - 2 / (9 * k) + z * (2 / (9 * k)).squareRoot(), 3)
    }

    /// Pearson's chi-square of `counts` against equal expected counts over `categories`.
    static func chiSquare<K: Hashable>(_ counts: [K: Int], categories: Int) -> Double {
        let total = Double(counts.values.reduce(0, +))
        let expected = total / Double(categories)
        let seen = counts.values.reduce(0.0) { $0 + pow(Double($1) - expected, 2) / expected }
        return seen + Double(categories - counts.count) * expected   // categories never drawn
    }

    /// `kc generate ARGS --count N`, its lines.
    func lines(_ arguments: [String], count: Int) throws -> [String] {
        let out = try KCBinary.run(["generate"] + arguments + ["--count", String(count)], timeout: 120)
        #expect(out.status == 0 && out.stderr.isEmpty, "\(arguments): \(out.stderr)")
        let lines = out.stdout.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.count == count + 1 && lines.last == "", "one secret a line, each ending in a newline")
        return Array(lines.dropLast())
    }

    // MARK: Characters

    /// The defaults: 24 printable ASCII characters with one of each class, all different.
    @Test func defaultsAreTwentyFourCharactersWithEveryClass() throws {
        let secrets = try lines([], count: 2000)
        for secret in secrets {
            #expect(secret.count == 24, "\(secret.count)")
            #expect(secret.allSatisfy { Self.lower.contains($0) || Self.upper.contains($0) || Self.digits.contains($0) || Self.symbols.contains($0) })
            #expect(
                secret.contains(where: Self.lower.contains) && secret.contains(where: Self.upper.contains)
                    && secret.contains(where: Self.digits.contains) && secret.contains(where: Self.symbols.contains))
        }
        #expect(Set(secrets).count == secrets.count)
        // One secret in a pipe: exactly its bytes, no newline, nothing on stderr.
        let one = try KCBinary.run(["generate"])
        #expect(one.status == 0 && one.stdout.count == 24 && !one.stdout.hasSuffix("\n") && one.stderr.isEmpty, "\(one)")
    }

    /// Every one of the 94 characters equally likely, at every position (a byte taken
    /// modulo 94 would make the first 68 half again as likely as the rest).
    @Test func charactersAreUniform() throws {
        let secrets = try lines(["--require", "none", "--length", "40"], count: 5000)
        var counts: [Character: Int] = [:]
        var firsts: [Character: Int] = [:]
        for secret in secrets {
            for c in secret { counts[c, default: 0] += 1 }
            if let first = secret.first { firsts[first, default: 0] += 1 }
        }
        #expect(counts.count == 94)
        let chi = Self.chiSquare(counts, categories: 94)
        #expect(chi < Self.chiSquareLimit(degrees: 93), "chi-square \(chi) over \(counts)")
        let firstChi = Self.chiSquare(firsts, categories: 94)
        #expect(firstChi < Self.chiSquareLimit(degrees: 93), "first characters: chi-square \(firstChi)")
    }

    /// --require keeps the draw uniform over exactly the strings that meet it: over
    /// {a, b, 0, 1}, the 3-character strings with a digit and a lowercase letter.
    @Test func requireIsUniformOverTheAllowedStrings() throws {
        let alphabet = Array("ab01")
        var allowed: Set<String> = []
        for x in alphabet {
            for y in alphabet {
                for z in alphabet {
                    let s = String([x, y, z])
                    if s.contains(where: Self.digits.contains) && s.contains(where: Self.lower.contains) { allowed.insert(s) }
                }
            }
        }
        #expect(allowed.count == 48)
        let secrets = try lines(["--charset", "ab01", "--length", "3", "--require", "digit,lower"], count: 24000)
        var counts: [String: Int] = [:]
        for secret in secrets { counts[secret, default: 0] += 1 }
        #expect(Set(counts.keys) == allowed, "only allowed strings, and every one of them")
        let chi = Self.chiSquare(counts, categories: allowed.count)
        #expect(chi < Self.chiSquareLimit(degrees: allowed.count - 1), "chi-square \(chi)")
    }

    /// Each option, over many draws.
    @Test func optionsAreHonoured() throws {
        for secret in try lines(["--length", "7"], count: 300) { #expect(secret.count == 7) }
        for secret in try lines(["--digits-only", "--length", "6"], count: 500) {
            #expect(secret.count == 6 && secret.allSatisfy(Self.digits.contains))
        }
        var seen: Set<Character> = []
        for secret in try lines(["--no-symbols", "--length", "32"], count: 500) {
            #expect(secret.count == 32 && !secret.contains(where: Self.symbols.contains))
            #expect(secret.contains(where: Self.digits.contains) && secret.contains(where: Self.upper.contains) && secret.contains(where: Self.lower.contains))
            seen.formUnion(secret)
        }
        #expect(seen.count == 62)
        seen = []
        for secret in try lines(["--charset", "0-9a-f", "--length", "64"], count: 300) {
            #expect(secret.count == 64 && secret.allSatisfy { "0123456789abcdef".contains($0) })
            seen.formUnion(secret)
        }
        #expect(seen.count == 16)
        seen = []
        for secret in try lines(["--charset", "upper,digits,!@#"], count: 300) {
            #expect(secret.allSatisfy { Self.upper.contains($0) || Self.digits.contains($0) || "!@#".contains($0) }, "\(secret)")
            seen.formUnion(secret)
        }
        #expect(seen.count == 39)
        // --exclude with the default set: none of them, and still one of each class.
        let excluded = #"O0Il1"'`\ "#.filter { $0 != " " }
        seen = []
        for secret in try lines(["--exclude", excluded], count: 2000) {
            #expect(!secret.contains(where: excluded.contains), "\(secret)")
            #expect(secret.contains(where: Self.digits.contains) && secret.contains(where: Self.symbols.contains))
            seen.formUnion(secret)
        }
        #expect(seen.count == 94 - excluded.count)
        // --require with --exclude and a --charset: the rules hold in every draw.
        for secret in try lines(["--charset", "letters,digits,symbols", "--exclude", #"",;\"#, "--require", "digit,symbol", "--length", "8"], count: 2000) {
            #expect(secret.contains(where: Self.digits.contains) && secret.contains(where: Self.symbols.contains), "\(secret)")
            #expect(!secret.contains(where: #"",;\"#.contains))
        }
    }

    // MARK: Words

    /// --words: N words of the EFF list (Debian's copy), each equally likely.
    @Test func wordsComeFromTheEFFListUniformly() throws {
        let text = try String(contentsOfFile: Self.effList, encoding: .utf8)
        let list = text.split(separator: "\n").compactMap { $0.split(separator: "\t").last.map(String.init) }
        #expect(list.count == 7776)
        let index = Dictionary(uniqueKeysWithValues: list.enumerated().map { ($1, $0) })
        var buckets: [Int: Int] = [:]
        for line in try lines(["--words", "6", "--separator", " "], count: 4000) {
            let words = line.split(separator: " ", omittingEmptySubsequences: false).map(String.init)
            #expect(words.count == 6, "\(line)")
            for word in words {
                guard let at = index[word] else { Issue.record("\(word) is not in the EFF list"); continue }
                buckets[at / 216, default: 0] += 1   // 36 buckets of 216 words
            }
        }
        let chi = Self.chiSquare(buckets, categories: 36)
        #expect(chi < Self.chiSquareLimit(degrees: 35), "chi-square \(chi) over \(buckets)")
        // The default separator, and none.
        let dashed = try lines(["--words", "3"], count: 50)
        #expect(dashed.allSatisfy { $0.filter { $0 == "-" }.count >= 2 })
        for line in try lines(["--words", "2", "--separator", ""], count: 50) {
            #expect(line.allSatisfy { Self.lower.contains($0) || $0 == "-" })
        }
    }

    // MARK: Errors

    /// Every value that cannot be used, with its exit code and a message that names it.
    @Test func badOptionsAreRefusedWithAClearMessage() throws {
        let cases: [([String], Int32, String)] = [
            (["--length", "0"], 206, "--length 0 is out of range; give 1 to 4096"),
            (["--length", "4097"], 206, "out of range"),
            (["--length", "abc"], 2, "abc"),
            (["--length", "1"], 206, "1 character cannot hold one of each of the 4 required classes"),
            (["--length", "3", "--no-symbols", "--require", "lower,upper,digit,symbol"], 206, "a symbol is required, but the character set has none"),
            (["--charset", "abc", "--exclude", "abc"], 206, "has no characters left"),
            (["--charset", "aa"], 206, "has only 'a' left"),
            (["--charset", "aé"], 206, "'é' (U+00E9) is not a printable ASCII character"),
            (["--charset", "a b"], 206, "a space is not a printable ASCII character"),
            (["--exclude", "ß"], 206, "--exclude: 'ß' (U+00DF)"),
            (["--charset", "lowr"], 206, "unknown class 'lowr'; did you mean 'lower'?"),
            (["--charset", "--"], 206, "has only '-' left"),
            (["--charset", "z-a"], 206, "the range z-a is backwards"),
            (["--charset", "a,,b"], 206, "an empty element"),
            (["--charset", "letters", "--require", "digit"], 206, "a digit is required, but the character set has none"),
            (["--require", "vowel"], 206, "'vowel' is not a class"),
            (["--no-symbols", "--digits-only"], 2, "--no-symbols and --digits-only each choose the characters"),
            (["--charset", "digits", "--no-symbols"], 2, "give one"),
            (["--words", "6", "--length", "10"], 2, "--words makes a passphrase of words; --length is for characters"),
            (["--words", "6", "--exclude", "a"], 2, "--exclude is for characters"),
            (["--separator", "."], 2, "use it with --words N"),
            (["--words", "0"], 206, "--words 0 is out of range; give 1 to 64"),
            (["--words", "65"], 206, "out of range"),
            (["--words", "3", "--separator", "·"], 206, "--separator: only printable ASCII"),
            (["--words", "3", "--separator", String(repeating: ".", count: 17)], 206, "at most 16"),
            (["--count", "0"], 206, "--count 0 is out of range")
        ]
        for (arguments, status, message) in cases {
            let out = try KCBinary.run(["generate"] + arguments)
            #expect(out.status == status, "\(arguments): \(out.status) \(out.stderr)")
            #expect(out.stderr.contains(message), "\(arguments): \(out.stderr)")
            #expect(out.stdout.isEmpty, "\(arguments): nothing is printed")
        }
    }

    // MARK: The entropy line

    /// On a terminal the entropy follows the secret on stderr; its value is checked against
    /// a count made here another way (a walk over which classes have been seen).
    @Test func entropyIsShownOnATerminalOnly() throws {
        let h = try KCHome()
        // The default: 24 from 94 with each of the class sizes 26, 26, 10, 32 present.
        var seen = [Double](repeating: 0, count: 16)   // probability of each set of classes seen
        seen[0] = 1
        let sizes = [26.0, 26, 10, 32]
        for _ in 0..<24 {
            var next = [Double](repeating: 0, count: 16)
            for mask in 0..<16 { for (i, size) in sizes.enumerated() { next[mask | (1 << i)] += seen[mask] * size / 94 } }
            seen = next
        }
        let bits = 24 * log2(94.0) + log2(seen[15])
        var s = try TerminalTests().drive(h, ["generate"], [["expect", "bits of entropy"]])
        #expect(s.status == 0, "\(s.screen)")
        #expect(
            s.screen.contains(
                "kc: \(String(format: "%.1f", bits)) bits of entropy (24 characters from a set of 94, at least one of each: lower, upper, digit, symbol)"),
            "\(s.screen)")
        s = try TerminalTests().drive(h, ["generate", "--words", "6"], [["expect", "bits of entropy"]])
        #expect(s.screen.contains("kc: \(String(format: "%.1f", 6 * log2(7776.0))) bits of entropy (6 words from the EFF list of 7776)"), "\(s.screen)")
        // {a,b,0,1}^3 with a digit and a letter: 48 strings.
        s = try TerminalTests().drive(h, ["generate", "--charset", "ab01", "--length", "3", "--require", "digit,lower"], [["expect", "bits of entropy"]])
        #expect(s.screen.contains("kc: \(String(format: "%.1f", log2(48.0))) bits of entropy (3 characters from a set of 4"), "\(s.screen)")
        s = try TerminalTests().drive(h, ["generate", "--digits-only", "--length", "6"], [["expect", "bits of entropy"]])
        #expect(s.screen.contains("kc: \(String(format: "%.1f", 6 * log2(10.0))) bits of entropy (6 characters from a set of 10)"), "\(s.screen)")
        // The secret has its own line, ending in a newline, before the entropy.
        let secretLine = s.screen.components(separatedBy: "\r\n").first ?? ""
        #expect(secretLine.count == 6 && secretLine.allSatisfy(Self.digits.contains), "\(s.screen)")
        // In a pipe: no entropy line at all.
        let piped = try KCBinary.run(["generate", "--words", "6"])
        #expect(piped.status == 0 && piped.stderr.isEmpty, "\(piped.stderr)")
    }

    // MARK: kc add --generate

    /// `add --generate` stores a secret that `find -w` gives back; it is printed only with
    /// --print; SPEC works as documented; bad SPECs store nothing.
    @Test func addGenerateRoundTrip() throws {
        let h = try KCHome()
        try h.createKeychain()
        var out = try h.kc(["add", "-s", "site", "-a", "alice", "--generate"], password: KCHome.password)
        #expect(out.status == 0 && out.stdout.isEmpty && out.stderr.isEmpty, "\(out)")
        var stored = try h.kc(["find", "-s", "site", "-a", "alice", "-w"], password: KCHome.password).stdout
        #expect(stored.count == 24 && stored.contains(where: Self.symbols.contains) && stored.contains(where: Self.digits.contains), "\(stored)")

        out = try h.kc(["add", "-s", "wifi", "--generate=words:5,sep:.", "--print"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr.isEmpty, "\(out.stderr)")
        stored = try h.kc(["find", "-s", "wifi", "-w"], password: KCHome.password).stdout
        #expect(out.stdout == stored && stored.split(separator: ".").count == 5, "printed \(out.stdout), stored \(stored)")

        out = try h.kc(["add", "-s", "api", "--generate=40,letters,digits", "--print"], password: KCHome.password)
        #expect(
            out.status == 0 && out.stdout.count == 40
                && out.stdout.allSatisfy { Self.lower.contains($0) || Self.upper.contains($0) || Self.digits.contains($0) }, "\(out)")
        #expect(try h.kc(["find", "-s", "api", "-w"], password: KCHome.password).stdout == out.stdout)

        out = try h.kc(["add", "-s", "pin", "--generate=digitsonly,8", "--print"], password: KCHome.password)
        #expect(out.stdout.count == 8 && out.stdout.allSatisfy(Self.digits.contains), "\(out)")
        out = try h.kc(["add", "-s", "site2", "--generate=12,require:digit+symbol,exclude:,\"", "--print"], password: KCHome.password)
        #expect(out.status == 0 && out.stdout.count == 12 && !out.stdout.contains(where: ",\"".contains), "\(out)")
        #expect(out.stdout.contains(where: Self.digits.contains) && out.stdout.contains(where: Self.symbols.contains), "\(out)")

        // -U replaces with a new one.
        out = try h.kc(["add", "-U", "-s", "site", "-a", "alice", "--generate=30", "--print"], password: KCHome.password)
        #expect(out.status == 0 && out.stdout.count == 30, "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "site", "-a", "alice", "-w"], password: KCHome.password).stdout == out.stdout)

        // A service named --generate is still a service.
        out = try h.kc(["add", "-s", "--generate", "-a", "x", "-w", "v"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "--generate", "-w"], password: KCHome.password).stdout == "v")

        // Refused before the keychain is opened (no password given), nothing stored.
        let refused: [([String], Int32, String)] = [
            (["--generate=0"], 206, "--length 0 is out of range"),
            (["--generate=nosymbol"], 206, "--generate=nosymbol: unknown item 'nosymbol'"),
            (["--generate=words:x"], 206, "words:N needs a number"),
            (["--generate=12,"], 206, "ends in a comma"),
            (["--generate=words:3,12"], 206, "two word counts"),
            (["--generate=1"], 206, "cannot hold one of each"),
            (["--generate", "-w", "x"], 2, "--generate makes the secret"),
            (["--print", "-w", "x"], 2, "--print shows a generated secret")
        ]
        for (arguments, status, message) in refused {
            out = try h.kc(["add", "-s", "refused", "-a", "a"] + arguments)
            #expect(out.status == status && out.stderr.contains(message), "\(arguments): \(out.status) \(out.stderr)")
        }
        #expect(try h.kc(["find", "-s", "refused"], password: KCHome.password).status == 44)
    }

    /// On a terminal, add --generate says what it stored (not the secret) unless --print.
    @Test func addGenerateOnATerminalShowsEntropyNotTheSecret() throws {
        let h = try KCHome()
        try h.createKeychain()
        let s = try TerminalTests().drive(
            h, ["add", "-s", "tty", "--generate=words:4"], [["expect", "bits of entropy"]],
            env: ["KC_PASSWORD": KCHome.password])
        #expect(
            s.status == 0
                && s.screen.contains(
                    "kc: stored a generated secret: \(String(format: "%.1f", 4 * log2(7776.0))) bits of entropy (4 words from the EFF list of 7776)"),
            "\(s.screen)")
        let stored = try h.kc(["find", "-s", "tty", "-w"], password: KCHome.password).stdout
        #expect(stored.count > 10 && !s.screen.contains(stored), "the secret is not on the screen")
    }

    /// The completion scripts offer the command and its options.
    @Test func completionScriptsKnowGenerate() throws {
        for shell in ["bash", "zsh", "fish"] {
            let out = try KCBinary.run(["--generate-completion-script", shell])
            #expect(out.status == 0)
            for word in ["digits-only", "no-symbols", "separator", "charset", "words:6"] {
                #expect(out.stdout.contains(word), "\(shell): \(word)")
            }
        }
    }

    /// The README's example, each line run by /bin/sh as written.
    @Test func readmeExample() throws {
        let h = try KCHome()
        try h.createKeychain()
        let lines = try ReadmeTests.example("generate")
        #expect(lines.count == 5)
        var outputs: [KCBinary.Output] = []
        for line in lines {
            let out = try h.sh(line)
            #expect(out.status == 0 && out.stderr.isEmpty, "\(line): \(out.stderr)")
            outputs.append(out)
        }
        #expect(outputs[0].stdout.count == 24)
        #expect(outputs[1].stdout.split(separator: "-").count >= 6)
        let third = outputs[2].stdout
        #expect(
            third.count == 16 && third.contains(where: Self.digits.contains) && third.contains(where: Self.symbols.contains)
                && !third.contains("\"") && !third.contains("`"), "\(third)")
        #expect(outputs[3].stdout.isEmpty)
        #expect(try h.kc(["find", "-s", "example.com", "-a", "bob", "-w"], password: KCHome.password).stdout.count == 24)
        #expect(try h.kc(["find", "-s", "wifi", "-w"], password: KCHome.password).stdout == outputs[4].stdout)
    }

    /// `--generate` alone becomes `--generate=default`; a value of another option is left alone.
    @Test func bareGenerateIsRewritten() throws {
        func normalised(_ words: [String]) throws -> [String] { Array(try ArgumentNormaliser.normalised(["kc"] + words).dropFirst()) }
        #expect(try normalised(["add", "--generate", "-s", "x"]) == ["add", "--generate=default", "-s", "x"])
        #expect(try normalised(["add", "-s", "--generate", "--generate"]) == ["add", "-s", "--generate", "--generate=default"])
        #expect(try normalised(["add", "--", "--generate"]) == ["add", "--", "--generate"])
        #expect(try normalised(["find", "--generate"]) == ["find", "--generate"])
    }
}
