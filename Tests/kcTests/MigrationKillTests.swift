import Foundation
import Testing
import KCTestSupport

/// The migration to format 6 (issue 35: the key-slot table) is one write transaction, like
/// every migration before it: `kc` killed with SIGKILL at any moment while it opens, checks
/// and migrates a copy of the format-5 fixture leaves either the format-5 file as it was or
/// the migrated one, every item intact and the file opening with its password.
@Suite struct MigrationKillTests {
    static let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Fixtures/format/v5.keychain-db").path
    static let password = "fixture-v5-password"

    /// Starts `kc find` on a fresh copy of the fixture (it migrates the file first).
    static func start(_ h: KCHome, _ path: String) throws -> SpawnedChild {
        for file in [path, path + "-wal", path + "-shm"] where FileManager.default.fileExists(atPath: file) {
            try FileManager.default.removeItem(atPath: file)
        }
        try FileManager.default.copyItem(atPath: fixture, toPath: path)
        chmod(path, 0o600)
        var env = h.environment.merging(["KC_PASSWORD": password, "KC_AGENT_DIR": h.directory + "/no-agent", "PATH": "/usr/bin:/bin"]) { _, b in b }
        env["KC_KEYCHAIN"] = nil
        return try Spawn.start([KCBinary.path, "find", "-k", path, "-s", "deploy", "-a", "prod", "-w"], environment: env, timeout: 60)
    }

    /// Whether `pid` still runs (a child that exited stays a zombie until it is reaped).
    static func isRunning(_ pid: pid_t) -> Bool {
        guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8),
            let close = stat.lastIndex(of: ")")
        else { return false }
        return !stat[close...].hasPrefix(") Z")
    }

    /// What the file holds after the kill: its format (5 or 6), checked whole by `kc verify`
    /// and read back (the verify migrates a format-5 file it finds).
    static func expectIntact(_ h: KCHome, _ path: String, _ what: String) throws -> String {
        let format = try FileSplicer.sqlite(path, "SELECT format_version FROM kc_keychain;").trimmingCharacters(in: .whitespacesAndNewlines)
        #expect(format == "5" || format == "6", "\(what): format \(format)")
        let verify = try h.kc(["verify", "-k", path], password: password, extra: ["KC_AGENT_DIR": h.directory + "/no-agent"])
        #expect(verify.status == 0 && verify.stderr.contains(": 10 items"), "\(what): \(verify.stderr)")
        let read = try h.kc(["find", "-k", path, "-s", "backup", "-a", "cron", "-w"], password: password, extra: ["KC_AGENT_DIR": h.directory + "/no-agent"])
        #expect(read.stdout == "cron-token", "\(what): \(read.stderr)")
        return format
    }

    @Test func killingKcDuringTheMigrationLosesNothing() throws {
        let h = try KCHome()
        let path = h.directory + "/v5.keychain-db"
        // How long the whole command takes here, unkilled (the kills are spread over it).
        let began = Date()
        let whole = try Self.start(h, path).finish()
        let seconds = Date().timeIntervalSince(began)
        try #require(whole.status == 0 && whole.stdout == "prod-token-2", "\(whole.stderr)")
        var formats: [String] = []
        for round in 0..<24 {
            let child = try Self.start(h, path)
            usleep(useconds_t(seconds * 1_000_000 * Double(round) / 24))
            kill(child.pid, SIGKILL)
            _ = try child.finish()
            formats.append(try Self.expectIntact(h, path, "killed after \(round)/24 of the command"))
        }
        // And at the commit itself: killed as soon as the migration's first frames reach the log.
        for round in 0..<8 {
            let child = try Self.start(h, path)
            let wal = path + "-wal"
            let deadline = Date().addingTimeInterval(30)
            var st = stat()
            while Date() < deadline, !(stat(wal, &st) == 0 && st.st_size > 0), Self.isRunning(child.pid) { usleep(200) }
            kill(child.pid, SIGKILL)
            _ = try child.finish()
            formats.append(try Self.expectIntact(h, path, "killed at the commit, round \(round)"))
        }
        // Both outcomes were met: kills before the commit and after it.
        #expect(formats.contains("5") && formats.contains("6"), "\(formats)")
    }
}
