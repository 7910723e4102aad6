import Foundation
import Testing
import KeychainCore

/// Runs the built `kc` binary, as a user would, and captures what it prints.
struct KCBinary {
    struct Output {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `kc` built beside this test bundle.
    static var path: String {
        let exe = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return URL(fileURLWithPath: exe).deletingLastPathComponent().appendingPathComponent("kc").path
    }

    static func run(_ arguments: [String], environment: [String: String] = [:], stdin: Data? = nil) throws -> Output {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: path)
        process.arguments = arguments
        process.environment = environment.merging(["PATH": "/usr/bin:/bin"]) { a, _ in a }
        let out = Pipe(), err = Pipe(), input = Pipe()
        process.standardOutput = out
        process.standardError = err
        process.standardInput = input
        try process.run()
        if let stdin { input.fileHandleForWriting.write(stdin) }
        try input.fileHandleForWriting.close()
        let o = out.fileHandleForReading.readDataToEndOfFile()
        let e = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Output(status: process.terminationStatus, stdout: String(decoding: o, as: UTF8.self), stderr: String(decoding: e, as: UTF8.self))
    }
}

@Suite struct VersionTests {
    @Test func versionNamesKcLibsodiumAndSQLite() throws {
        let out = try KCBinary.run(["--version"])
        #expect(out.status == 0)
        #expect(out.stdout == "kc 0.1.0 (libsodium \(LibraryVersions.sodium), SQLite \(LibraryVersions.sqlite))\n")
        #expect(out.stderr == "")
        #expect(LibraryVersions.sodium.hasPrefix("1."))
        #expect(LibraryVersions.sqlite.hasPrefix("3."))
    }
}
