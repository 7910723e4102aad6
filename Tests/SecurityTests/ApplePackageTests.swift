import Foundation
import Security
import Testing
import KCTestSupport

/// Examples/apple-keychain-app is a separate Swift package: the Apple-style code of
/// AppleStyle/ (the same files, linked) and a main.swift, depending on kc only through
/// `.product(name: "Security", package: "kc", condition: .when(platforms: [.linux]))`.
/// It must build with no source change and its keychain calls must work.
@Suite struct ApplePackageTests {
    /// A first `swift build` of the app and kc from a fresh clone takes minutes on two cores.
    private static let buildTimeout: Double = 1800
    private static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    @Test(.timeLimit(.minutes(10))) func anAppPackageBuildsAndWorksWithKcAsADependency() throws {
        let package = Self.root + "/Examples/apple-keychain-app"
        // Its own build folder (ignored by git), kept between runs so later builds are incremental.
        let scratch = Self.root + "/.build-example-app"
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = (environment["PATH"] ?? "") + ":/usr/bin:/bin"
        let command = ["/usr/bin/env", "swift", "build", "--package-path", package, "--scratch-path", scratch]
        var build = try Spawn.run(command, environment: environment, timeout: Self.buildTimeout)
        if build.status != 0 {
            // SwiftPM's incremental build of a path dependency misses source files added to
            // kc since its last run ("cannot find … in scope"): build again from scratch.
            // A real compile error fails both.
            try? FileManager.default.removeItem(atPath: scratch)
            build = try Spawn.run(command, environment: environment, timeout: Self.buildTimeout)
        }
        try #require(build.status == 0, "swift build failed:\n\(build.stdout)\n\(build.stderr)")
        let app = scratch + "/debug/apple-keychain-app"

        let home = try KCHome()
        try home.createKeychain()
        // Locked, no password in the environment: Apple's status for a locked keychain.
        let locked = try Spawn.run([app, "svc", "alice", "t0ken"], environment: home.environment)
        #expect(locked.status == 1)
        #expect(locked.stdout == "error: User interaction is not allowed. (-25308)\n")

        // Unlocked in the agent: the app's calls go through it.
        #expect(try home.kc(["unlock"], password: KCHome.password).status == 0)
        let run = try Spawn.run([app, "svc", "alice", "t0ken"], environment: home.environment)
        #expect(run.status == 0, "\(run.stdout)\(run.stderr)")
        #expect(run.stdout == "token: t0ken\nsession scopes: [\"x\"]\n")
        let found = try home.kc(["find", "-s", "svc", "-a", "alice", "-w"])
        #expect(found.stdout == "t0ken")

        // User presence through the Security module: with no terminal, Apple's status for
        // "nobody can answer"; through a pty, the prompt shows kSecUseOperationPrompt and the
        // keychain password typed there reads the item, even though the agent holds it.
        // (Setting the flag is done in kc's own process with the keychain password, never
        // through the agent's socket, where a relay could drop it: docs/security.md.)
        #expect(try home.kc(["update", "-s", "svc", "-a", "alice", "--user-presence"], password: KCHome.password).status == 0)
        let unattended = try Spawn.run([app, "--read", "svc", "alice", "Sign in to svc"], environment: home.environment)
        #expect(
            unattended.status == 1 && unattended.stdout == "error: User interaction is not allowed. (-25308)\n",
            "\(unattended.stdout)\(unattended.stderr)")
        for (typed, expected) in [(KCHome.password, "read: t0ken"), ("wrong password", "(-25293)")] {
            let spec: [String: Any] = [
                "argv": [app, "--read", "svc", "alice", "Sign in to svc"],
                "env": home.environment,
                "steps": [["expect", "Sign in to svc"], ["send", typed + "\n"], ["expect", expected]],
                "timeout": 60
            ]
            let file = home.directory + "/presence.json"
            try JSONSerialization.data(withJSONObject: spec).write(to: URL(fileURLWithPath: file))
            let out = try Spawn.run(
                ["/usr/bin/python3", Self.root + "/Tests/kcTests/pty_session.py", file],
                environment: ["PATH": "/usr/bin:/bin"], timeout: 90)
            let session = try JSONSerialization.jsonObject(with: Data(out.stdoutBytes)) as? [String: Any]
            #expect(session?["error"] == nil || session?["error"] is NSNull, "\(typed == KCHome.password ? "right" : "wrong"): \(session ?? [:]) \(out.stderr)")
            #expect((session?["screen"] as? String)?.contains(expected) == true, "\(session ?? [:])")
            #expect((session?["screen"] as? String)?.contains(KCHome.password) == false, "no echo")
        }
    }
}
