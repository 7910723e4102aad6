import Foundation
import Testing
import KeychainCore
import KCTestSupport
@testable import kc

/// `kc find -w --clip` and `kc read --clip` (issue 19): the copy arrives on a real X
/// server (Xvfb) through xclip, is cleared after the delay only when the clipboard still
/// holds it, goes to the terminal as OSC 52 when no display is reachable, and fails with
/// a message naming what was tried when nothing works. The keeper that clears it holds no
/// descriptor of its caller and is gone afterwards.
@Suite struct ClipboardTests {
    /// An Xvfb on a display number of its own, killed when the value goes; run as `user`
    /// (another account, for the tests that attack with it) and listening on TCP too when
    /// `tcp` is set.
    final class XServer {
        let display: String
        /// The display number N (`:N`; TCP port 6000+N).
        let number: Int
        /// The account the server runs as (nil: this process's).
        let user: uid_t?
        private let child: SpawnedChild

        /// - Parameter abstract: false for a server that does not listen on the abstract
        ///   socket `@/tmp/.X11-unix/XN` (`-nolisten local`), only on the socket file.
        init(user: uid_t? = nil, tcp: Bool = false, abstract: Bool = true) throws {
            var lastError = ""
            for _ in 0..<20 {
                let n = Int.random(in: 300..<30000)
                if FileManager.default.fileExists(atPath: "/tmp/.X\(n)-lock") { continue }
                let server =
                    ["/usr/bin/Xvfb", ":\(n)"] + (tcp ? ["-listen", "tcp"] : ["-nolisten", "tcp"])
                    + (abstract ? [] : ["-nolisten", "local"]) + ["-screen", "0", "320x200x8"]
                let child = try Spawn.start(Self.as(user, server), environment: ["PATH": "/usr/bin:/bin"], timeout: 300)
                for _ in 0..<200 where !FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") {
                    if kill(child.pid, 0) != 0 { break }
                    usleep(20_000)
                }
                // The socket exists once the server listens; it answers clients only once it
                // has set itself up: wait for that (xclip opens the display), as long as it takes.
                for _ in 0..<1500 where FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") {
                    let probe = try Spawn.run(
                        ["/usr/bin/xclip", "-selection", "clipboard", "-out"],
                        environment: ["DISPLAY": ":\(n)", "PATH": "/usr/bin:/bin"], timeout: 30)
                    if !probe.stderr.contains("Can't open display") || kill(child.pid, 0) != 0 { break }
                    usleep(20_000)
                }
                var status: Int32 = 0
                if FileManager.default.fileExists(atPath: "/tmp/.X11-unix/X\(n)") && waitpid(child.pid, &status, WNOHANG) == 0 {
                    display = ":\(n)"
                    number = n
                    self.user = user
                    self.child = child
                    return
                }
                lastError = "Xvfb :\(n) did not start"
            }
            throw KeychainError(errSecIO, lastError)
        }

        deinit { kill(child.pid, SIGTERM) }

        /// `argv` run as `user` (setpriv: real and effective uid and gid, no groups).
        static func `as`(_ user: uid_t?, _ argv: [String]) -> [String] {
            guard let user else { return argv }
            return ["/usr/bin/setpriv", "--reuid=\(user)", "--regid=\(user)", "--clear-groups"] + argv
        }

        /// What the CLIPBOARD selection holds now, read with xclip as the server's own user
        /// ("" when nothing).
        func clipboard() throws -> String {
            let out = try Spawn.run(
                Self.as(user, ["/usr/bin/xclip", "-selection", "clipboard", "-out"]),
                environment: ["DISPLAY": display, "PATH": "/usr/bin:/bin"], timeout: 10)
            return out.status == 0 ? out.stdout : ""
        }

        /// Copies `text` as the server's user would (xclip's background owner keeps no pipe of ours).
        func copy(_ text: String) throws {
            let out = try Spawn.run(
                Self.as(user, ["/bin/sh", "-c", "printf %s \"$1\" | /usr/bin/xclip -selection clipboard -in >/dev/null 2>&1", "sh", text]),
                environment: ["DISPLAY": display, "PATH": "/usr/bin:/bin"], timeout: 10)
            #expect(out.status == 0)
        }
    }

    /// A headless sway (wlroots: the data-control protocol that wl-copy and wl-paste use
    /// without a window) with a runtime folder of its own, killed when the value goes.
    /// wlroots refuses to run as root, so as root it runs as nobody (root can still use
    /// its socket).
    final class WaylandServer {
        let runtime: String
        let display: String
        private let child: SpawnedChild

        init(in folder: String) throws {
            runtime = folder + "/wayland-runtime"
            try FileManager.default.createDirectory(
                atPath: runtime, withIntermediateDirectories: true,
                attributes: [.posixPermissions: 0o700])
            var argv = ["/usr/bin/sway", "-c", "/dev/null"]
            if getuid() == 0 {
                guard chown(runtime, 65534, 65534) == 0, chmod(folder, 0o711) == 0 else {
                    throw KeychainError(errSecIO, "cannot give the runtime folder to nobody")
                }
                argv = ["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"] + argv
            }
            child = try Spawn.start(
                argv,
                environment: [
                    "PATH": "/usr/bin:/bin", "HOME": runtime, "XDG_RUNTIME_DIR": runtime,
                    "WLR_BACKENDS": "headless", "WLR_LIBINPUT_NO_DEVICES": "1",
                    "WLR_RENDERER": "pixman"
                ], timeout: 300)
            var found: String?
            for _ in 0..<250 where found == nil {
                found = ((try? FileManager.default.contentsOfDirectory(atPath: runtime)) ?? [])
                    .first { $0.hasPrefix("wayland-") && !$0.hasSuffix(".lock") }
                if found == nil { usleep(20_000) }
            }
            guard let found else { throw KeychainError(errSecIO, "sway did not start") }
            display = found
        }

        deinit { kill(child.pid, SIGTERM) }

        /// The variables a client of this compositor needs.
        var environment: [String: String] { ["WAYLAND_DISPLAY": display, "XDG_RUNTIME_DIR": runtime] }

        /// What the clipboard holds now, read with wl-paste ("" when nothing).
        func clipboard() throws -> String {
            let out = try Spawn.run(
                ["/usr/bin/wl-paste", "--no-newline"],
                environment: environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }, timeout: 10)
            return out.status == 0 ? out.stdout : ""
        }
    }

    /// The pids of running keepers whose command line names `target`.
    static func keepers(for target: String) -> [pid_t] {
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: "/proc")) ?? []
        return entries.compactMap { pid_t($0) }.filter { pid in
            guard let raw = FileManager.default.contents(atPath: "/proc/\(pid)/cmdline") else { return false }
            let words = raw.split(separator: 0).map { String(decoding: $0, as: UTF8.self) }
            return words.count >= 5 && words[1] == "__clipboard-keeper" && words[4] == target && !isZombie(pid)
        }
    }

    /// Whether `pid` has exited and waits only to be reaped.
    static func isZombie(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return true }
        return stat[stat.index(close, offsetBy: 2)...].hasPrefix("Z")
    }

    /// Polls `condition` every 100 ms for up to `seconds`.
    static func eventually(_ seconds: Double, _ condition: () throws -> Bool) rethrows -> Bool {
        let end = Date().addingTimeInterval(seconds)
        while Date() < end {
            if try condition() { return true }
            usleep(100_000)
        }
        return try condition()
    }

    func homeWithSecret(_ secret: String) throws -> KCHome {
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "clip.example", "-a", "alice", "-w", secret], password: KCHome.password).status == 0)
        return h
    }

    @Test func copiedThenClearedAndTheKeeperIsGone() throws {
        let x = try XServer()
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        let out = try h.kc(
            ["find", "-s", "clip.example", "-a", "alice", "-w", "--clip", "5"], password: KCHome.password,
            extra: ["DISPLAY": x.display])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(out.stdout.isEmpty && !out.stderr.contains(secret), "the secret is not printed")
        #expect(out.stderr.contains("kc: copied to the clipboard with xclip; cleared in 5 s if it still holds the secret"), "\(out.stderr)")
        #expect(try x.clipboard() == secret)

        let keepers = Self.keepers(for: x.display)
        #expect(keepers.count == 1, "one keeper for this display: \(keepers)")
        if let keeper = keepers.first {
            // Once it has detached (at once; the runner may be slow): 0-2 on /dev/null, nothing else.
            func descriptors() -> [String] {
                let fds = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(keeper)/fd")) ?? []
                return fds.sorted().map { fd in
                    fd + " -> " + ((try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(keeper)/fd/\(fd)")) ?? "?")
                }
            }
            let expected = ["0 -> /dev/null", "1 -> /dev/null", "2 -> /dev/null"]
            #expect(Self.eventually(5) { descriptors() == expected }, "the keeper holds 0-2 on /dev/null only: \(descriptors())")
            let sid = (try? String(contentsOfFile: "/proc/\(keeper)/stat", encoding: .utf8))
                .flatMap { $0.split(separator: ")").last?.split(separator: " ").dropFirst(3).first }
            #expect(sid.flatMap { pid_t($0) } == keeper, "the keeper leads its own session")
        }
        #expect(try Self.eventually(20) { try x.clipboard().isEmpty }, "cleared after 5 s")
        #expect(Self.eventually(5) { Self.keepers(for: x.display).isEmpty }, "the keeper exits after clearing")
    }

    /// `kc totp --clip` copies the code oathtool computes for the same seed and moment, and
    /// `kc generate --clip` a new secret of the asked form; neither prints it, both clear.
    @Test func totpAndGenerateCopyToo() throws {
        let x = try XServer()
        let h = try KCHome()
        try h.createKeychain()
        let seed = "JBSWY3DPEHPK3PXP"
        #expect(try h.kc(["add", "-s", "clip.example", "-a", "alice", "--totp", "-w", seed], password: KCHome.password).status == 0)
        let now = Int(Date().timeIntervalSince1970) / 30 * 30 + 1   // early in a period: the same code for oathtool
        let code = try h.kc(
            ["totp", "-s", "clip.example", "-a", "alice", "--clip", "3"], password: KCHome.password,
            extra: ["DISPLAY": x.display, "KC_TOTP_TIME": String(now)])
        #expect(code.status == 0 && code.stdout.isEmpty, "\(code.stderr)")
        let expected = try Spawn.run(
            ["/usr/bin/oathtool", "--totp", "-b", "--now", "@\(now)", seed],
            environment: ["PATH": "/usr/bin:/bin", "TZ": "UTC"], timeout: 10)
        #expect(expected.status == 0 && expected.stdout.count == 7, "\(expected.stderr)")
        #expect(try x.clipboard() == expected.stdout.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(try Self.eventually(20) { try x.clipboard().isEmpty }, "cleared after 3 s")

        let generated = try h.kc(["generate", "--length", "40", "--no-symbols", "--clip", "3"], extra: ["DISPLAY": x.display])
        #expect(generated.status == 0 && generated.stdout.isEmpty, "\(generated.stderr)")
        let copied = try x.clipboard()
        #expect(copied.count == 40 && copied.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }, "\(copied.count) characters")
        #expect(!generated.stderr.contains(copied), "the secret is not on stderr either")
        #expect(try Self.eventually(20) { try x.clipboard().isEmpty }, "cleared after 3 s")
        let many = try h.kc(["generate", "--count", "2", "--clip", "3"], extra: ["DISPLAY": x.display])
        #expect(many.status == 2 && many.stderr.contains("--clip copies one secret"), "\(many.stderr)")
    }

    /// kc returns while its keeper waits: a keeper holding kc's stdout or stderr would keep
    /// the pipe to `cat` open, and the pipeline, for the 60 s of the copy.
    @Test func theCallReturnsWhileTheKeeperWaits() throws {
        let x = try XServer()
        let h = try homeWithSecret("clip-secret")
        let said = h.directory + "/kc.out"
        let out = try h.sh(
            """
            start=$(date +%s)
            DISPLAY=\(x.display) kc find -s clip.example -w --clip 60 2>&1 | cat >'\(said)'
            echo $(( $(date +%s) - start ))
            """)
        #expect(out.status == 0, "\(out.stderr)")
        let seconds = Int(out.stdout.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 999
        #expect(seconds < 30, "the pipeline ended after \(seconds) s")
        let keepers = Self.keepers(for: x.display)
        #expect(keepers.count == 1, "the keeper still waits; kc said: \((try? String(contentsOfFile: said, encoding: .utf8)) ?? "")")
        for pid in keepers { kill(pid, SIGKILL) }
    }

    @Test func leftAloneWhenSomethingElseWasCopied() throws {
        let x = try XServer()
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        let out = try h.kc(["find", "-s", "clip.example", "-w", "--clip", "5"], password: KCHome.password, extra: ["DISPLAY": x.display])
        #expect(out.status == 0, "\(out.stderr)")
        #expect(try x.clipboard() == secret)
        try x.copy("the user's own text")
        #expect(Self.keepers(for: x.display).count == 1, "copied before the keeper's deadline")
        #expect(Self.eventually(20) { Self.keepers(for: x.display).isEmpty }, "the keeper is done")
        #expect(try x.clipboard() == "the user's own text", "what the user copied meanwhile stays")
    }

    /// Wayland first, even with an X display: wl-copy, then the clearing with wl-copy --clear.
    /// wl-copy keeps what it serves in a file under /tmp, so kc uses it only where /tmp is a
    /// tmpfs; elsewhere (Debian 12's default, this machine's perhaps) it says why it passed
    /// wl-copy over and copies with the next way, here xclip on an X display.
    @Test func waylandWithWlCopy() throws {
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        let w = try WaylandServer(in: h.directory)
        let tmpType = try Spawn.run(["/usr/bin/stat", "-f", "-c", "%T", "/tmp"], environment: ["PATH": "/usr/bin:/bin"], timeout: 10)
        let tmpInMemory = tmpType.stdout.hasPrefix("tmpfs") || tmpType.stdout.hasPrefix("ramfs")
        // Run as root, the test's sway runs as nobody: kc then refuses its socket (another
        // account's compositor) and goes on to xclip too.
        guard tmpInMemory && getuid() != 0 else {
            let x = try XServer()
            let out = try h.kc(
                ["find", "-s", "clip.example", "-w", "--clip", "5"], password: KCHome.password,
                extra: w.environment.merging(["DISPLAY": x.display]) { a, _ in a })
            #expect(out.status == 0 && out.stdout.isEmpty, "\(out.stderr)")
            #expect(out.stderr.contains("copied to the clipboard with xclip"), "\(out.stderr)")
            #expect(try w.clipboard().isEmpty, "nothing went through wl-copy's file under /tmp")
            #expect(try x.clipboard() == secret)
            #expect(try Self.eventually(20) { try x.clipboard().isEmpty }, "cleared after 5 s")
            let none = try h.kc(
                ["find", "-s", "clip.example", "-w", "--clip", "5"], password: KCHome.password,
                extra: w.environment.merging(["TERM": "dumb"]) { a, _ in a })
            #expect(none.status == 53 && none.stdout.isEmpty, "\(none.stderr)")
            #expect(none.stderr.contains(tmpInMemory ? "is not a socket of this user" : "which is on disk here (not tmpfs)"), "\(none.stderr)")
            return
        }
        let out = try h.kc(
            ["find", "-s", "clip.example", "-w", "--clip", "5"], password: KCHome.password,
            extra: w.environment.merging(["DISPLAY": ":29998"]) { a, _ in a })
        #expect(out.status == 0 && out.stdout.isEmpty, "\(out.stderr)")
        #expect(out.stderr.contains("copied to the clipboard with wl-copy; cleared in 5 s"), "\(out.stderr)")
        #expect(try w.clipboard() == secret)
        // The keeper is given the socket's resolved path (`ClipboardBackend.ownSocket`).
        #expect(Self.keepers(for: w.runtime + "/" + w.display).count == 1)
        #expect(try Self.eventually(20) { try w.clipboard().isEmpty }, "cleared after 5 s")
        #expect(Self.eventually(5) { Self.keepers(for: w.runtime + "/" + w.display).isEmpty }, "the keeper exits after clearing")
    }

    /// Without xclip on PATH, xsel: the same copy and the same clearing.
    @Test func xselWhenXclipIsMissing() throws {
        let x = try XServer()
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        let bin = h.directory + "/bin"
        try FileManager.default.createDirectory(atPath: bin, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: bin + "/xsel", withDestinationPath: "/usr/bin/xsel")
        let out = try h.kc(
            ["find", "-s", "clip.example", "-w", "--clip", "5"], password: KCHome.password,
            extra: ["DISPLAY": x.display, "PATH": bin])
        #expect(out.status == 0 && out.stdout.isEmpty, "\(out.stderr)")
        #expect(out.stderr.contains("copied to the clipboard with xsel"), "\(out.stderr)")
        #expect(try x.clipboard() == secret)
        #expect(try Self.eventually(20) { try x.clipboard().isEmpty }, "cleared after 5 s")
        #expect(Self.eventually(5) { Self.keepers(for: x.display).isEmpty })
    }

    /// In tmux (no display): `tmux load-buffer -w` keeps a buffer and sets the outer
    /// terminal's clipboard with OSC 52 (tmux's default `set-clipboard external`); at the
    /// deadline the buffer is deleted and, as it was still the newest, the outer clipboard
    /// is emptied with OSC 52 on the client's terminal.
    @Test func tmuxBufferAndTheOuterTerminal() throws {
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        let socket = h.directory + "/tmux.sock"
        defer { _ = try? Spawn.run(["/usr/bin/tmux", "-S", socket, "kill-server"], environment: ["PATH": "/usr/bin:/bin"], timeout: 10) }
        let encoded = Data(secret.utf8).base64EncodedString()
        var env = h.environment
        env["KC_PASSWORD"] = KCHome.password
        env["PATH"] = "/usr/bin:/bin"
        env["TERM"] = "xterm-256color"
        let pane =
            "'\(KCBinary.path)' find -s clip.example -w --clip 1; tmux list-buffers -F 'held #{buffer_name}'; "
            + "for i in $(seq 100); do tmux list-buffers | grep -q kc-clipboard || break; sleep 0.2; done; "
            + "echo gone:; tmux list-buffers -F 'held #{buffer_name}'; echo :end; sleep 1"
        let spec: [String: Any] = [
            "argv": ["/usr/bin/tmux", "-S", socket, "-f", "/dev/null", "new-session", "-x", "200", "-y", "20", pane],
            "env": env,
            "steps": [["expect", "\u{1B}]52;;\(encoded)"], ["expect", "\u{1B}]52;c;\u{07}"], ["expect", ":end"]],
            "timeout": 60
        ]
        let file = h.directory + "/tmux.json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(["/usr/bin/python3", TerminalTests.script, file], environment: ["PATH": "/usr/bin:/bin"], timeout: 90)
        let s = try JSONDecoder().decode(TerminalTests.Session.self, from: Data(out.stdoutBytes))
        #expect(s.error == nil, "\(s.error ?? ""): \(s.screen.debugDescription)")
        #expect(s.screen.contains("copied to the clipboard with tmux"), "\(s.screen.debugDescription)")
        #expect(s.screen.contains("held kc-clipboard-"), "the buffer is there at first: \(s.screen.debugDescription)")
        if let gone = s.screen.range(of: "gone:"), let end = s.screen.range(of: ":end") {
            #expect(!s.screen[gone.upperBound..<end.lowerBound].contains("held"), "and deleted at the deadline: \(s.screen.debugDescription)")
        }
    }

    /// The README's clipboard example, as written, on an X display.
    @Test func readmeExample() throws {
        let x = try XServer()
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try KCHome()
        try h.createKeychain()
        #expect(try h.kc(["add", "-s", "github.com", "-a", "alice", "-w", secret], password: KCHome.password).status == 0)
        let seed = "JBSWY3DPEHPK3PXP"
        #expect(try h.kc(["add", "-s", "github.com", "-a", "alice", "--totp", "-w", seed], password: KCHome.password).status == 0)
        let now = 1_700_000_001
        let code = try Spawn.run(
            ["/usr/bin/oathtool", "--totp", "-b", "--now", "@\(now)", seed],
            environment: ["PATH": "/usr/bin:/bin"], timeout: 10
        ).stdout
            .trimmingCharacters(in: .whitespacesAndNewlines)
        let lines = try ReadmeTests.example("clip")
        #expect(lines.count == 3)
        // And the one-time code, which the text after the block copies the same way.
        for line in lines + ["kc totp github.com --clip"] {
            let command = line.split(separator: "#", maxSplits: 1)[0].split(separator: " ").map(String.init)
            #expect(command.first == "kc")
            try x.copy("before")
            let out = try h.kc(
                Array(command.dropFirst()), password: KCHome.password,
                extra: ["DISPLAY": x.display, "KC_TOTP_TIME": String(now)])
            #expect(out.status == 0 && out.stdout.isEmpty, "\(line): \(out.stderr)")
            switch command.dropFirst().first {
            case "totp": #expect(try x.clipboard() == code && code.count == 6, "\(line)")
            case "generate": #expect(try x.clipboard().count == 24, "\(line)")
            default: #expect(try x.clipboard() == secret, "\(line)")
            }
        }
        for pid in Self.keepers(for: x.display) { kill(pid, SIGKILL) }
    }

    /// `kc read REF --clip`, the default delay: copied, and the keeper waits 45 s.
    @Test func readCopiesWithTheDefaultDelay() throws {
        let x = try XServer()
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        let out = try h.kc(["read", "kc://clip.example/alice", "--clip"], password: KCHome.password, extra: ["DISPLAY": x.display])
        #expect(out.status == 0 && out.stdout.isEmpty, "\(out.stderr)")
        #expect(out.stderr.contains("cleared in 45 s"), "\(out.stderr)")
        #expect(try x.clipboard() == secret)
        let keepers = Self.keepers(for: x.display)
        #expect(keepers.count == 1)
        // Not left running past the test.
        for pid in keepers { kill(pid, SIGKILL) }
    }

    /// No display, no tmux, a terminal: OSC 52 carries the copy to the terminal, and the
    /// empty OSC 52 clears it at the deadline (a terminal's clipboard cannot be read back).
    @Test func osc52OnTheTerminalWhenNoDisplayIsReachable() throws {
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        let encoded = Data(secret.utf8).base64EncodedString()
        var env = h.environment
        env["KC_PASSWORD"] = KCHome.password
        env["PATH"] = "/usr/bin:/bin"
        env["TERM"] = "xterm-256color"
        let spec: [String: Any] = [
            "argv": ["/bin/sh", "-c", "'\(KCBinary.path)' find -s clip.example -w --clip 1; sleep 10"],
            "env": env,
            "steps": [["expect", "\u{1B}]52;c;\(encoded)\u{07}"], ["expect", "\u{1B}]52;c;\u{07}"]],
            "timeout": 60
        ]
        let file = h.directory + "/osc52.json"
        try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
        let out = try Spawn.run(["/usr/bin/python3", TerminalTests.script, file], environment: ["PATH": "/usr/bin:/bin"], timeout: 90)
        let s = try JSONDecoder().decode(TerminalTests.Session.self, from: Data(out.stdoutBytes))
        #expect(s.error == nil, "\(s.error ?? ""): \(s.screen.debugDescription)")
        #expect(s.screen.contains("copied to the clipboard with OSC 52; cleared in 1 s"), "\(s.screen.debugDescription)")
        #expect(!s.screen.contains(secret), "only the base64 sequence reaches the terminal")
    }

    @Test func noWayToCopyNamesWhatWasTried() throws {
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        // No display, no tmux, no controlling terminal (KCBinary runs kc in a new session).
        var out = try h.kc(["find", "-s", "clip.example", "-w", "--clip"], password: KCHome.password)
        #expect(out.status == 53)
        #expect(out.stdout.isEmpty && !out.stderr.contains(secret))
        #expect(
            out.stderr == """
                kc: no way to copy to the clipboard; the secret was not printed (tried wl-copy: WAYLAND_DISPLAY is not set; \
                xclip: DISPLAY is not set; xsel: DISPLAY is not set; tmux: TMUX is not set; OSC 52: no controlling terminal)
                kc: hint: install wl-clipboard (Wayland) or xclip (X11), or run kc in a terminal that supports OSC 52; \
                without --clip, -w prints the secret

                """, "\(out.stderr)")
        // A display where no server answers: kc finds no server to check, and passes it over.
        out = try h.kc(["find", "-s", "clip.example", "-w", "--clip", "5"], password: KCHome.password, extra: ["DISPLAY": ":29999"])
        #expect(out.status == 53 && out.stdout.isEmpty, "status \(out.status)")
        #expect(
            out.stderr.contains("xclip: no X server answers at :29999 (/tmp/.X11-unix/X29999); xsel: no X server answers at :29999"),
            "\(out.stderr)")
    }

    /// Issue 29, item 12: `su` without `-` keeps $DISPLAY, and every client of an X server
    /// reads its clipboard. An Xvfb run by another account (nobody), named in each local
    /// form (`:N`, `unix:N`, the socket's path, `localhost:N` over TCP), gets no copy: kc
    /// exits 53 naming whose server it is, and that account's clipboard still holds what
    /// it held (read with xclip as nobody). A display on another host is refused unchecked.
    /// Before, xclip copied the secret to nobody's server.
    @Test(.enabled(if: getuid() == 0, "runs an X server as another account"))
    func anotherAccountsXServerGetsNoCopy() throws {
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        let x = try XServer(user: 65534, tcp: true)
        try x.copy("nobody's own")
        #expect(try x.clipboard() == "nobody's own")
        for display in [
            x.display, "unix:\(x.number)", "unix/:\(x.number).0", "/tmp/.X11-unix/X\(x.number)", "localhost:\(x.number).0",
            "127.0.0.1:\(x.number)"
        ] {
            for arguments in [["find", "-s", "clip.example", "-w", "--clip", "5"], ["read", "kc://clip.example/alice", "--clip", "5"]] {
                let out = try h.kc(arguments, password: KCHome.password, extra: ["DISPLAY": display, "TERM": "dumb"])
                #expect(out.status == 53 && out.stdout.isEmpty && !out.stderr.contains(secret), "\(display) \(arguments): \(out.stderr)")
                #expect(
                    out.stderr.contains("xclip: the X server at \(display) is another account's (uid 65534), not this user's or root's"),
                    "\(display): \(out.stderr)")
            }
            #expect(try x.clipboard() == "nobody's own", "\(display): the secret reached nobody's X server")
        }
        #expect(Self.keepers(for: x.display).isEmpty)
        let remote = try h.kc(
            ["find", "-s", "clip.example", "-w", "--clip", "5"], password: KCHome.password,
            extra: ["DISPLAY": "192.0.2.7:0", "TERM": "dumb"])
        #expect(remote.status == 53 && remote.stderr.contains("xclip: DISPLAY=192.0.2.7:0 is on another host"), "\(remote.stderr)")
        // Root's own server (and this user's) still gets the copy: XServer() runs as root here.
        let own = try XServer()
        let out = try h.kc(["find", "-s", "clip.example", "-w", "--clip", "5"], password: KCHome.password, extra: ["DISPLAY": "unix:\(own.number)"])
        #expect(out.status == 0 && out.stderr.contains("copied to the clipboard with xclip"), "\(out.stderr)")
        #expect(try own.clipboard() == secret)
        for pid in Self.keepers(for: "unix:\(own.number)") { kill(pid, SIGKILL) }
    }

    /// `su` without `-` keeps $TMUX (and $WAYLAND_DISPLAY, $XDG_RUNTIME_DIR), and the
    /// account that ran `su` chooses it: it names a socket of this user's own through a
    /// folder of that account's, a link it flips, in a loop, between this user's tmux
    /// folder and its own, where its tmux server listens. kc checked the path as given
    /// (a socket of this user's, not itself a link) and tmux then connected through the
    /// link as it was a moment later: the secret landed in nobody's tmux buffer within a
    /// few tries. Now kc resolves the path, requires that no other account can change what
    /// it names, and gives tmux the resolved path: nobody's server gets nothing in 30 tries,
    /// while the copies to this user's own server still go through.
    @Test(.enabled(if: getuid() == 0, "runs a tmux server as another account"))
    func aSocketPathThroughAnotherAccountsFolderGetsNoCopy() throws {
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        let base = h.directory + "/race"
        let own = base + "/own", theirs = base + "/theirs"
        try FileManager.default.createDirectory(atPath: own, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        try FileManager.default.createDirectory(atPath: theirs + "/server", withIntermediateDirectories: true)
        #expect(chmod(h.directory, 0o711) == 0 && chmod(base, 0o755) == 0)
        #expect(chown(theirs, OtherUser.uid, OtherUser.uid) == 0 && chown(theirs + "/server", OtherUser.uid, OtherUser.uid) == 0)
        let env = ["PATH": "/usr/bin:/bin", "TERM": "xterm", "SHELL": "/bin/sh"]
        let tmux = "/usr/bin/tmux"
        #expect(try Spawn.run([tmux, "-S", own + "/s", "-f", "/dev/null", "new-session", "-d", "sleep 120"], environment: env, timeout: 20).status == 0)
        defer { _ = try? Spawn.run([tmux, "-S", own + "/s", "kill-server"], environment: env, timeout: 10) }
        let nobody = OtherUser.setpriv
        #expect(
            try Spawn.run(
                nobody + [tmux, "-S", theirs + "/server/s", "-f", "/dev/null", "new-session", "-d", "sleep 120"],
                environment: env, timeout: 20
            ).status == 0)
        defer { _ = try? Spawn.run(nobody + [tmux, "-S", theirs + "/server/s", "kill-server"], environment: env, timeout: 10) }
        // nobody flips its link `theirs/d` between this user's folder and its own, as fast as it can.
        let flipper = """
            import os, sys, time
            theirs, own = sys.argv[1], sys.argv[2]
            end, i = time.time() + 90, 0
            while time.time() < end:
                i += 1
                t = theirs + "/t%d" % (i % 2)
                try: os.unlink(t)
                except OSError: pass
                os.symlink(own if i % 2 else theirs + "/server", t)
                os.rename(t, theirs + "/d")
            """
        let flipping = try Spawn.start(nobody + ["/usr/bin/python3", "-c", flipper, theirs, own], environment: env, timeout: 120)
        defer { kill(flipping.pid, SIGKILL) }
        var copied = 0
        for attempt in 1...30 {
            let out = try h.kc(
                ["find", "-s", "clip.example", "-w", "--clip", "5"], password: KCHome.password,
                extra: ["TMUX": theirs + "/d/s,1,0", "DISPLAY": "", "WAYLAND_DISPLAY": "", "TERM": "dumb"])
            #expect(!out.stdout.contains(secret) && !out.stderr.contains(secret))
            if out.stderr.contains("copied to the clipboard with tmux") { copied += 1 }
            let held = try Spawn.run(nobody + [tmux, "-S", theirs + "/server/s", "list-buffers", "-F", "#{buffer_sample}"], environment: env, timeout: 10)
            if held.stdout.contains(secret) {
                Issue.record("attempt \(attempt): the secret reached nobody's tmux server")
                break
            }
        }
        #expect(copied > 0, "copies to this user's own tmux server still go through")
    }

    /// A relay to the X server `server`'s socket file, run as `user`: it listens on an
    /// abstract name (`kind` "abstract", `at` the name) or on TCP at 127.0.0.1 ("tcp4") or
    /// ::1 ("tcp6"), `at` the port. With `waitForTheTool` it binds only when an xclip or
    /// xsel starts: it watches each new process (the last pid given, /proc/loadavg) and
    /// takes its place while that tool loads its libraries, after kc's check.
    static func relay(as user: uid_t?, _ kind: String, _ at: String, to server: XServer, waitForTheTool: Bool) throws -> SpawnedChild {
        let script = """
            import os, socket, sys, time, threading
            kind, at, target, wait = sys.argv[1], sys.argv[2], sys.argv[3], sys.argv[4] == "1"
            def last(): return int(open("/proc/loadavg").read().split()[4])
            seen, fresh, end = last(), {}, time.time() + 60
            found = not wait
            while time.time() < end and not found:
                now = last()
                for pid in range(seen + 1, now + 1): fresh[pid] = time.time()
                seen = max(seen, now)
                for pid in list(fresh):
                    try: comm = open("/proc/%d/comm" % pid).read().strip()
                    except OSError: comm = ""
                    if comm in ("xclip", "xsel"): found = True
                    if time.time() - fresh[pid] > 0.5: del fresh[pid]
                time.sleep(0.0001)
            if kind == "abstract":
                s = socket.socket(socket.AF_UNIX); s.bind("\\0" + at)
            elif kind == "tcp4":
                s = socket.socket(socket.AF_INET); s.bind(("127.0.0.1", int(at)))
            else:
                s = socket.socket(socket.AF_INET6); s.setsockopt(socket.IPPROTO_IPV6, socket.IPV6_V6ONLY, 1); s.bind(("::1", int(at)))
            s.listen(8); s.settimeout(60)
            print("listening", flush=True)
            def pump(a, b):
                try:
                    while True:
                        d = a.recv(65536)
                        if not d: break
                        b.sendall(d)
                except OSError: pass
                try: b.shutdown(socket.SHUT_WR)
                except OSError: pass
            while True:
                try: c, _ = s.accept()
                except socket.timeout: break
                u = socket.socket(socket.AF_UNIX); u.connect(target)
                threading.Thread(target=pump, args=(c, u), daemon=True).start()
                threading.Thread(target=pump, args=(u, c), daemon=True).start()
            """
        return try Spawn.start(
            XServer.as(
                user,
                [
                    "/usr/bin/python3", "-c", script, kind, at, "/tmp/.X11-unix/X\(server.number)",
                    waitForTheTool ? "1" : "0"
                ]),
            environment: ["PATH": "/usr/bin:/bin"], timeout: 120)
    }

    /// xclip and xsel (libxcb) try the abstract socket `@/tmp/.X11-unix/XN` before the
    /// file, and any account may bind an abstract name that is free. This user's X server
    /// listens on the file only (`-nolisten local`); nobody watches /proc for an xclip or
    /// xsel, takes the abstract name the moment one starts (after kc's check) and relays it
    /// to its own X server. Before, kc checked the file's server (this user's), xclip then
    /// connected to nobody's name, and the secret landed on nobody's clipboard. Now a
    /// display is taken only when the server answers on its abstract socket too (a name a
    /// live server holds cannot be taken): kc passes it over, exit 53, saying why.
    @Test(.enabled(if: getuid() == 0, "runs an X server as another account"))
    func aSquatterOnTheAbstractNameGetsNoCopy() throws {
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        let own = try XServer(abstract: false)
        let theirs = try XServer(user: 65534)
        try theirs.copy("nobody's own")
        // A few tries: the squatter must win a race with the tool's start-up (it did in
        // most tries before; a single win is the leak). Each try has its own squatter.
        for attempt in 1...6 {
            let squatting = try Self.relay(as: OtherUser.uid, "abstract", "/tmp/.X11-unix/X\(own.number)", to: theirs, waitForTheTool: true)
            let out = try h.kc(
                ["find", "-s", "clip.example", "-w", "--clip", "5"], password: KCHome.password,
                extra: ["DISPLAY": own.display, "TERM": "dumb"])
            #expect(!out.stdout.contains(secret) && !out.stderr.contains(secret))
            // Read while the squatter still relays (the copy's owner is connected through it).
            let reached = try theirs.clipboard() == secret
            #expect(!reached, "attempt \(attempt): the secret reached nobody's X server through the abstract name")
            // (A squatter that an xclip of a test running beside this one set off early is
            // refused as what it is.)
            #expect(
                out.status == 53
                    && (out.stderr.contains("xclip: the X server at \(own.display) does not listen on its abstract socket")
                        || out.stderr.contains("xclip: the X server at \(own.display) is another account's (uid 65534)")),
                "\(out.stderr)")
            _ = squatting   // killed and reaped here
            if reached { break }
        }
        for pid in Self.keepers(for: own.display) { kill(pid, SIGKILL) }
    }

    /// TCP: xcb connects to the addresses the host resolves to, in order, and takes the
    /// first that answers. This user's server (as an sshd run with `AddressFamily inet`
    /// forwards `ssh -X`) listens on 127.0.0.1 only; ::1 on that port is free, and nobody
    /// takes it the moment xclip starts, relaying to its own X server. Before, kc saw only
    /// this user's listener on the port and let xclip go, which connected to nobody's ::1.
    /// (On a dual-stack resolver `localhost` gives ::1 first; this machine's /etc/hosts
    /// does not, so the display names ::1 itself.) Now every address up to the first that
    /// a listener of this user's or root's holds must be held: kc passes it over, exit 53.
    @Test(.enabled(if: getuid() == 0 && FileManager.default.fileExists(atPath: "/proc/net/if_inet6"), "runs an X server as another account"))
    func aSquatterOnAFreeLoopbackAddressGetsNoCopy() throws {
        let secret = "clip-secret-\(UInt32.random(in: 0...UInt32.max))"
        let h = try homeWithSecret(secret)
        let own = try XServer()
        let theirs = try XServer(user: 65534)
        try theirs.copy("nobody's own")
        // A display number whose port nothing holds, served on 127.0.0.1 by this user's relay.
        var number = 0
        for _ in 0..<50 {
            let n = Int.random(in: 40000..<50000)
            if XServerOwner.tcpListenerUIDs(port: 6000 + n).isEmpty { number = n; break }
        }
        #expect(number > 0)
        let forwarded = try Self.relay(as: nil, "tcp4", String(6000 + number), to: own, waitForTheTool: false)
        #expect(Self.eventually(20) { !XServerOwner.tcpListenerUIDs(port: 6000 + number).isEmpty })
        let display = "[::1]:\(number)"
        for attempt in 1...6 {
            let squatting = try Self.relay(as: OtherUser.uid, "tcp6", String(6000 + number), to: theirs, waitForTheTool: true)
            let out = try h.kc(
                ["find", "-s", "clip.example", "-w", "--clip", "5"], password: KCHome.password,
                extra: ["DISPLAY": display, "TERM": "dumb"])
            #expect(!out.stdout.contains(secret) && !out.stderr.contains(secret))
            let reached = try theirs.clipboard() == secret
            #expect(!reached, "attempt \(attempt): the secret reached nobody's X server through ::1")
            #expect(
                out.status == 53
                    && (out.stderr.contains("xclip: nothing of this user's or root's listens at ::1 port \(6000 + number)")
                        || out.stderr.contains("is another account's (uid 65534)")),
                "\(out.stderr)")
            _ = squatting
            if reached { break }
        }
        _ = forwarded
        for pid in Self.keepers(for: display) { kill(pid, SIGKILL) }
    }

    @Test func clipRefusesWhatItCannotDo() throws {
        let h = try homeWithSecret("s")
        for arguments in [["--clip", "0"], ["--clip", "-g"], ["--clip", "--all"], ["--json", "--clip", "3"]] {
            let out = try h.kc(["find", "-s", "clip.example"] + arguments, password: KCHome.password)
            #expect(out.status == 2, "\(arguments): \(out.stderr)")
        }
    }
}

/// `--clip` alone means `--clip=45`; a number after it is its value; words after `--`
/// and other commands are left alone.
@Suite struct ClipTargetTests {
    /// $DISPLAY is read as libxcb (under xclip and xsel) reads it, so kc checks the server
    /// the tool will reach (issue 29, item 12).
    @Test func displaysAreResolvedAsXcbResolvesThem() {
        #expect(XServerOwner.parse(":0") == .socket("/tmp/.X11-unix/X0"))
        #expect(XServerOwner.parse(":12.1") == .socket("/tmp/.X11-unix/X12"))
        #expect(XServerOwner.parse("unix:3") == .socket("/tmp/.X11-unix/X3"))
        #expect(XServerOwner.parse("unix/:3") == .socket("/tmp/.X11-unix/X3"))
        #expect(XServerOwner.parse("tcp/:3") == .socket("/tmp/.X11-unix/X3"), "no host: xcb takes the Unix socket")
        #expect(XServerOwner.parse("localhost:10.0") == .tcp(host: "localhost", port: 6010))
        #expect(XServerOwner.parse("[::1]:2") == .tcp(host: "::1", port: 6002))
        #expect(XServerOwner.parse("tcp/example.org:1") == .tcp(host: "example.org", port: 6001))
        for bad in ["", "0", ":", ":x", ":1.", ":1.x", "host", "/no/such/socket", "/no/such/socket.0"] {
            #expect(XServerOwner.parse(bad) == nil, "\(bad)")
        }
        #expect(XServerOwner.isLoopback("localhost") && XServerOwner.isLoopback("127.0.0.1") && XServerOwner.isLoopback("::1"))
        #expect(!XServerOwner.isLoopback("127.example.org") && !XServerOwner.isLoopback("192.0.2.7"))
    }

    /// A copy goes only to a compositor or tmux server whose socket is this user's: not to
    /// a file that is no socket, a link, or another account's socket (`su` keeps $TMUX).
    @Test func onlyOwnSocketsAreUsed() throws {
        let h = try KCHome()
        let path = h.directory + "/own.sock"
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        #expect(fd >= 0)
        defer { close(fd) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { raw in
            for (i, byte) in path.utf8.enumerated() where i < raw.count - 1 { raw[i] = byte }
        }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        #expect(bound == 0)
        #expect(ClipboardBackend.isOwnSocket(path))
        #expect(!ClipboardBackend.isOwnSocket("/dev/null"), "not a socket")
        #expect(symlink(path, h.directory + "/link.sock") == 0)
        #expect(!ClipboardBackend.isOwnSocket(h.directory + "/link.sock"), "a link to one")
        if getuid() == 0 {
            #expect(chown(path, 65534, 65534) == 0)
            #expect(!ClipboardBackend.isOwnSocket(path), "another account's")
            let out = try h.kc(["generate", "--clip", "3"], extra: ["TMUX": path + ",1,0", "TERM": "dumb"])
            #expect(out.status == 53 && out.stderr.contains("tmux: \(path) is not a socket of this user"), "\(out.stderr)")
        }
    }
}

@Suite struct ClipArgumentTests {
    @Test func bareClipGetsTheDefault() throws {
        #expect(try ArgumentNormaliser.normalised(["kc", "find", "-s", "x", "--clip"]) == ["kc", "find", "-s", "x", "--clip=45"])
        #expect(try ArgumentNormaliser.normalised(["kc", "find", "--clip", "-w"]) == ["kc", "find", "--clip=45", "-w"])
        #expect(try ArgumentNormaliser.normalised(["kc", "find", "--clip", "10", "-w"]) == ["kc", "find", "--clip", "10", "-w"])
        #expect(try ArgumentNormaliser.normalised(["kc", "read", "--clip", "kc://s/a"]) == ["kc", "read", "--clip=45", "kc://s/a"])
        #expect(try ArgumentNormaliser.normalised(["kc", "run", "--", "x", "--clip"]) == ["kc", "run", "--", "x", "--clip"])
        #expect(try ArgumentNormaliser.normalised(["kc", "find", "--", "--clip"]) == ["kc", "find", "--", "--clip"])
        // The value of another option stays a value: a service named --clip.
        #expect(try ArgumentNormaliser.normalised(["kc", "find", "-s", "--clip", "-w"]) == ["kc", "find", "-s", "--clip", "-w"])
        #expect(try ArgumentNormaliser.normalised(["kc", "totp", "--clip"]) == ["kc", "totp", "--clip=45"])
        #expect(try ArgumentNormaliser.normalised(["kc", "generate", "--length", "8", "--clip"]) == ["kc", "generate", "--length", "8", "--clip=45"])
        // Both parsers then give the same request.
        let quick = FindFastPath.parse(["-s", "x", "--clip=45"])
        #expect(quick?.clip == 45)
    }
}
