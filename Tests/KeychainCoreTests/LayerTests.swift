import Foundation
import Testing

/// The layers of docs/design.md ("Targets"), checked on the sources: a target imports only
/// the targets it may depend on, Package.swift declares exactly those, only the `kc agent`
/// command imports the agent's server, and the code linked into `kc` takes
/// FoundationEssentials rather than Foundation. SwiftPM alone would let a target import any
/// module built before it, so this test is what refuses an import that crosses a layer the
/// wrong way.
@Suite struct LayerTests {
    /// Each source target and the targets (and products) it may import.
    static let allowed: [String: Set<String>] = [
        "KeychainCore": ["CSodium", "CSQLite"],
        "POSIXSupport": ["KeychainCore"],
        "AgentWire": ["KeychainCore", "POSIXSupport"],
        "KeychainAgent": ["KeychainCore", "POSIXSupport", "AgentWire"],
        "KeychainClient": ["KeychainCore", "POSIXSupport", "AgentWire"],
        "KeychainFormats": ["KeychainCore", "POSIXSupport"],
        "Security": ["KeychainCore", "KeychainClient"],
        "kc": ["KeychainCore", "POSIXSupport", "KeychainClient", "KeychainAgent", "KeychainFormats", "TeamCore", "ArgumentParser"],
        "kc-loadgen": ["KeychainCore"],
        "BenchSupport": [],
        "kc-bench": ["KeychainCore", "BenchSupport"],
        "kc-team-bench": ["KeychainCore", "KeychainClient", "TeamCore", "TeamStore", "BenchSupport"],
        "KeychainFuzz": ["KeychainCore", "AgentWire"],
        "KCTestSupport": ["KeychainCore", "POSIXSupport"],
        "SecretService": ["KeychainCore", "POSIXSupport", "AgentWire", "KeychainClient", "CSystemd", "COpenSSL"],
        "kc-secret-service": ["KeychainCore", "POSIXSupport", "KeychainClient", "SecretService"],
        "TeamCore": ["KeychainCore", "CSodium"],
        "TeamStore": ["KeychainCore", "POSIXSupport", "TeamCore", "CPostgres"],
        "kc-team": ["KeychainCore", "POSIXSupport", "AgentWire", "KeychainAgent", "KeychainClient", "TeamCore", "TeamStore", "ArgumentParser"],
    ]
    /// Modules of the toolchain any target may import.
    static let system: Set<String> = ["Glibc", "Foundation", "FoundationEssentials", "Synchronization", "Dispatch", "Testing"]
    /// The targets linked into the `kc` binary, which must start fast.
    static let inKC: Set<String> = ["KeychainCore", "POSIXSupport", "AgentWire", "KeychainAgent", "KeychainClient", "KeychainFormats", "TeamCore", "kc"]

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
                      words[..<i].allSatisfy({ $0.hasPrefix("@") || ["public", "package", "internal"].contains($0) }) else { continue }
                // A scoped import (`import var KeychainCore.kSecClass`) names its kind first.
                let kinds: Set<Substring> = ["typealias", "struct", "class", "enum", "protocol", "let", "var", "func"]
                let m = kinds.contains(words[i + 1]) && i + 2 < words.count ? i + 2 : i + 1
                out.append((relative, lines, String(words[m].split(separator: ".")[0])))
            }
        }
        return out
    }

    @Test(arguments: LayerTests.allowed.keys.sorted())
    func aTargetImportsOnlyWhatItMayDependOn(_ target: String) throws {
        let found = Self.imports(target)
        #expect(!found.isEmpty, "no sources found for \(target) at \(Self.folder(target))")
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
