import Foundation
import Testing

/// The layers of docs/design.md ("Targets"), checked on the sources: a target imports only
/// the targets it may depend on, Package.swift declares exactly those, only the `kc agent`
/// command imports the agent's server, and the code linked into `kc` takes
/// FoundationEssentials rather than Foundation. SwiftPM alone would let a target import any
/// module built before it, so this test is what refuses an import that crosses a layer the
/// wrong way. The floor (SecurityVocabulary, KeychainStatus) imports nothing of ours and no
/// system module either; POSIXSupport stands on it alone; and the floor is the only thing
/// any target re-exports.
@Suite struct LayerTests {
    /// Each source target and the targets (and products) it may import.
    static let allowed: [String: Set<String>] = [
        "SecurityVocabulary": [],
        "KeychainStatus": ["SecurityVocabulary"],
        "KeychainCore": ["KeychainStatus", "CSodium", "CSQLite"],
        "POSIXSupport": ["KeychainStatus"],
        "AgentWire": ["KeychainCore", "POSIXSupport"],
        "KeychainAgent": ["KeychainCore", "POSIXSupport", "AgentWire"],
        "KeychainClient": ["KeychainCore", "POSIXSupport", "AgentWire"],
        "KeychainFormats": ["KeychainCore", "POSIXSupport"],
        "Security": ["SecurityVocabulary", "KeychainCore", "KeychainClient"],
        "kc": ["KeychainCore", "POSIXSupport", "KeychainClient", "KeychainAgent", "KeychainFormats", "TeamCore", "ArgumentParser"],
        "kc-loadgen": ["KeychainCore"],
        "TPMSeal": ["KeychainStatus", "CSodium", "CTSS2"],
        "kc-tpm": ["KeychainCore", "POSIXSupport", "TPMSeal"],
        "BenchSupport": [],
        "kc-bench": ["KeychainCore", "BenchSupport"],
        "kc-team-bench": ["KeychainCore", "KeychainClient", "TeamCore", "TeamStore", "BenchSupport"],
        "KeychainFuzz": ["KeychainCore", "AgentWire", "SSHAgent"],
        "KCTestSupport": ["KeychainCore", "POSIXSupport"],
        "SecretService": ["KeychainCore", "POSIXSupport", "AgentWire", "KeychainClient", "CSystemd", "COpenSSL"],
        "kc-secret-service": ["KeychainCore", "POSIXSupport", "KeychainClient", "SecretService"],
        "SSHAgent": ["KeychainCore", "POSIXSupport", "AgentWire", "KeychainClient", "CSodium", "COpenSSL"],
        "kc-ssh": ["KeychainCore", "POSIXSupport", "AgentWire", "KeychainClient", "SSHAgent"],
        "TeamCore": ["KeychainCore", "CSodium"],
        "TeamStore": ["KeychainCore", "POSIXSupport", "KeychainFormats", "TeamCore", "CPostgres"],
        "kc-team": [
            "KeychainCore", "POSIXSupport", "AgentWire", "KeychainAgent", "KeychainClient", "KeychainFormats", "TeamCore", "TeamStore", "ArgumentParser"
        ]
    ]
    /// The floor: Apple's names, and KeychainError over them.
    static let floor: Set<String> = ["SecurityVocabulary", "KeychainStatus"]
    /// Each `@_exported import` there may be, as "target re-exports module": re-exporting widens
    /// what a target's importers see past what Package.swift lists, so only the floor may be.
    static let reExports: Set<String> = [
        "KeychainStatus re-exports SecurityVocabulary",   // KeychainError's codes with it
        "KeychainCore re-exports KeychainStatus",   // its interface's vocabulary
        "Security re-exports SecurityVocabulary"   // Apple's names, and only them
    ]
    /// Modules of the toolchain any target may import.
    static let system: Set<String> = ["Glibc", "Foundation", "FoundationEssentials", "Synchronization", "Dispatch", "Testing"]
    /// The targets linked into the `kc` binary, which must start fast.
    static let inKC: Set<String> = [
        "SecurityVocabulary", "KeychainStatus", "KeychainCore", "POSIXSupport", "AgentWire", "KeychainAgent", "KeychainClient", "KeychainFormats", "TeamCore",
        "kc"
    ]

    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path

    static func folder(_ target: String) -> String {
        switch target {
        case "KeychainFuzz": root + "/fuzz/Targets"
        case "KCTestSupport": root + "/Tests/KCTestSupport"
        default: root + "/Sources/" + target
        }
    }

    /// (file, line, module) of every import statement of a target.
    static func imports(_ target: String) -> [(file: String, lines: [String], module: String)] {
        let base = folder(target)
        guard let walker = FileManager.default.enumerator(atPath: base) else { return [] }
        var out: [(String, [String], String)] = []
        for case let relative as String in walker where relative.hasSuffix(".swift") {
            guard let text = try? String(contentsOfFile: base + "/" + relative, encoding: .utf8) else { continue }
            let lines = text.components(separatedBy: "\n")
            var inLiteral = false   // inside a multi-line string literal (a script, not Swift)
            for line in lines {
                if line.components(separatedBy: "\"\"\"").count % 2 == 0 { inLiteral.toggle(); continue }
                if inLiteral { continue }
                let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
                guard let i = words.firstIndex(of: "import"), i + 1 < words.count,
                    words[..<i].allSatisfy({ $0.hasPrefix("@") || ["public", "package", "internal"].contains($0) })
                else { continue }
                // A scoped import (`import var KeychainCore.kSecClass`) names its kind first.
                let kinds: Set<Substring> = ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"]
                let m = kinds.contains(words[i + 1]) && i + 2 < words.count ? i + 2 : i + 1
                out.append((relative, lines, String(words[m].split(separator: ".")[0])))
            }
        }
        return out
    }

    /// The Swift files of a target, relative to its folder.
    static func sources(_ target: String) -> [String] {
        let walker = FileManager.default.enumerator(atPath: folder(target))
        return (walker?.allObjects as? [String] ?? []).filter { $0.hasSuffix(".swift") }
    }

    @Test(arguments: LayerTests.allowed.keys.sorted())
    func aTargetImportsOnlyWhatItMayDependOn(_ target: String) throws {
        let found = Self.imports(target)
        #expect(!Self.sources(target).isEmpty, "no sources found for \(target) at \(Self.folder(target))")
        for (file, _, module) in found where !Self.system.contains(module) {
            #expect(Self.allowed[target]?.contains(module) == true, "\(target)/\(file) imports \(module), which \(target) may not depend on")
        }
    }

    @Test func onlyTheAgentCommandImportsTheAgentServer() {
        let users = Set(Self.imports("kc").filter { $0.module == "KeychainAgent" }.map(\.file))
        #expect(users == ["Commands/Agent.swift"])
    }

    @Test(arguments: LayerTests.inKC.sorted())
    func codeInTheKCBinaryTakesFoundationEssentials(_ target: String) {
        for (file, lines, module) in Self.imports(target) where module == "Foundation" {
            // Only as the fallback of `#if canImport(FoundationEssentials) … #else`.
            let index = lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "import Foundation" } ?? 0
            let previous = index > 0 ? lines[index - 1].trimmingCharacters(in: .whitespaces) : ""
            #expect(previous == "#else", "\(target)/\(file) imports Foundation, which slows kc's start-up")
        }
    }

    /// The floor is below everything: no target of ours, no C library, not even a system
    /// module (its names are plain Swift), so anything may stand on it.
    @Test(arguments: LayerTests.floor.sorted())
    func theFloorImportsNothingButItself(_ target: String) {
        for (file, _, module) in Self.imports(target) {
            #expect(Self.allowed[target]?.contains(module) == true, "\(target)/\(file) imports \(module): the floor imports nothing")
        }
    }

    /// POSIXSupport (sockets, spawning, clocks) throws KeychainError and nothing more of the
    /// keychain: it imports the floor and system modules only, never KeychainCore (SQLite,
    /// libsodium, the file format).
    @Test func posixSupportStandsOnTheFloorAlone() {
        let modules = Set(Self.imports("POSIXSupport").map(\.module))
        #expect(modules.contains("KeychainStatus"), "POSIXSupport throws KeychainError: it should import KeychainStatus")
        let ours = modules.subtracting(Self.system).subtracting(Self.floor)
        #expect(ours.isEmpty, "POSIXSupport imports \(ours.sorted()), above the floor")
    }

    /// Every `@_exported import` of every target, as "target re-exports module", is one of
    /// `reExports`: in particular Security re-exports SecurityVocabulary whole and nothing of
    /// KeychainCore, whose types (and KeychainStatus's KeychainError) would collide with the
    /// same names in Apple code.
    @Test func theFloorIsTheOnlyReExport() {
        var found = Set<String>()
        for target in Self.allowed.keys {
            for (file, lines, module) in Self.imports(target) {
                let exported = lines.contains { line in
                    let words = line.trimmingCharacters(in: .whitespaces).split(separator: " ")
                    return words.first == "@_exported" && words.contains { $0 == module || $0.hasPrefix(module + ".") }
                }
                if exported { found.insert("\(target) re-exports \(module)") }
                #expect(
                    !exported || Self.reExports.contains("\(target) re-exports \(module)"),
                    "\(target)/\(file) re-exports \(module); only the floor may be re-exported")
            }
        }
        #expect(found == Self.reExports, "missing re-exports: \(Self.reExports.subtracting(found).sorted())")
    }

    @Test func packageDeclaresExactlyTheAllowedDependencies() throws {
        let manifest = try String(contentsOfFile: Self.root + "/Package.swift", encoding: .utf8)
        for (target, allowed) in Self.allowed {
            // The target's declaration, `….target(` / `executableTarget(` / `testTarget(` then
            // `name: "T",`, and the `dependencies: [ … ]` that follows it.
            var start: Substring.Index?
            var from = manifest.startIndex
            while let r = manifest[from...].range(of: "name: \"\(target)\",\n") {
                let before = manifest[..<r.lowerBound].trimmingCharacters(in: .whitespacesAndNewlines)
                if before.hasSuffix("arget(") { start = r.upperBound; break }
                from = r.upperBound
            }
            let rest = manifest[try #require(start, "Package.swift declares no target \(target)")...]
            let open = try #require(rest.range(of: "dependencies: ["))
            let close = try #require(rest[open.upperBound...].firstIndex(of: "]"))
            let list = rest[open.upperBound..<close]
            var declared = Set<String>()
            var scanner = list[...]
            while let q = scanner.firstIndex(of: "\"") {
                let after = scanner.index(after: q)
                guard let end = scanner[after...].firstIndex(of: "\"") else { break }
                declared.insert(String(scanner[after..<end]))
                scanner = scanner[scanner.index(after: end)...]
            }
            declared.remove("swift-argument-parser")
            #expect(declared == allowed, "Package.swift gives \(target) \(declared.sorted()), the layers allow \(allowed.sorted())")
        }
    }
}
