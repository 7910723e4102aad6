import Foundation
import Testing
import KCTestSupport

/// docs/design.md's map of the targets ("Targets and layers") against Package.swift as
/// SwiftPM reads it (`swift package dump-package`): every target appears in the table with
/// exactly its dependencies, no row names a target that is gone, and the two pictures (the
/// design's and the comment at the top of Package.swift) name every target that is not a
/// test. LayerTests then holds the sources to Package.swift.
@Suite struct LayerMapTests {
    static let root = LayerTests.root

    /// Each target of Package.swift with its dependencies (targets, and products by name),
    /// and which targets are tests; read once for the suite.
    struct Manifest: Sendable {
        var targets: [String: Set<String>] = [:]
        var tests = Set<String>()
    }
    static let manifest = Result { try readManifest() }

    /// Why the manifest could not be read.
    struct ManifestFailure: Error, CustomStringConvertible {
        var description: String
    }

    static func readManifest() throws -> Manifest {
        // SwiftPM locks the package's own .build for as long as `swift test` runs; a scratch
        // folder of its own (which dump-package leaves empty) keeps it off that lock.
        let scratch = NSTemporaryDirectory() + "kc-layer-map-" + UUID().uuidString
        defer { try? FileManager.default.removeItem(atPath: scratch) }
        var environment = ProcessInfo.processInfo.environment
        environment["PATH"] = (environment["PATH"] ?? "") + ":/usr/bin:/bin"
        let dump = try Spawn.run(
            ["/usr/bin/env", "swift", "package", "--package-path", root, "--scratch-path", scratch, "dump-package"],
            environment: environment, timeout: 120)
        guard dump.status == 0 else { throw ManifestFailure(description: "swift package dump-package failed:\n\(dump.stderr)") }
        guard let json = try JSONSerialization.jsonObject(with: Data(dump.stdoutBytes)) as? [String: Any],
            let targets = json["targets"] as? [[String: Any]]
        else {
            throw ManifestFailure(description: "dump-package printed no targets:\n\(dump.stdout)")
        }
        var out = Manifest()
        for target in targets {
            guard let name = target["name"] as? String else { throw ManifestFailure(description: "a target without a name: \(target)") }
            // Each dependency is {"byName" | "target" | "product": [name, …]}.
            let dependencies = (target["dependencies"] as? [[String: [Any]]] ?? []).compactMap { $0.values.first?.first as? String }
            out.targets[name] = Set(dependencies)
            if target["type"] as? String == "test" { out.tests.insert(name) }
        }
        return out
    }

    /// The section "Targets and layers" of docs/design.md, up to its first subsection.
    static func section() throws -> [String] {
        let lines = try String(contentsOfFile: root + "/docs/design.md", encoding: .utf8).components(separatedBy: "\n")
        let start = try #require(lines.firstIndex(of: "## Targets and layers"), "docs/design.md has no section \"Targets and layers\"")
        let rest = lines[(start + 1)...]
        let end = rest.firstIndex { $0.hasPrefix("## ") || $0.hasPrefix("### ") } ?? lines.endIndex
        return Array(lines[(start + 1)..<end])
    }

    /// The rows of the section's tables: `| \`target\` | holds | a, b (a note), c |`, where the
    /// last cell lists the dependencies, comma-separated, notes in parentheses, or "nothing".
    static func table() throws -> [String: Set<String>] {
        var rows: [String: Set<String>] = [:]
        for line in try section() where line.hasPrefix("| `") {
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            let name = cells[1].trimmingCharacters(in: CharacterSet(charactersIn: "`"))
            #expect(rows[name] == nil, "docs/design.md lists \(name) twice")
            var list = "", depth = 0
            for c in cells[cells.count - 2] {
                if c == "(" { depth += 1 } else if c == ")" { depth -= 1 } else if depth == 0 { list.append(c) }
            }
            let names = list.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            rows[name] = names == ["nothing"] ? [] : Set(names)
        }
        return rows
    }

    /// The words of a picture, for whole-name matching.
    static func words(_ text: String) -> Set<String> {
        Set(text.split { !($0.isLetter || $0.isNumber || $0 == "-") }.map(String.init))
    }

    @Test func theDesignTableIsPackageSwift() throws {
        let manifest = try Self.manifest.get().targets
        let table = try Self.table()
        #expect(manifest.count > 20, "dump-package found only \(manifest.keys.sorted())")
        for (target, dependencies) in manifest {
            guard let listed = table[target] else {
                Issue.record("docs/design.md (\"Targets and layers\") has no row for \(target), which Package.swift declares")
                continue
            }
            #expect(
                listed == dependencies,
                "docs/design.md gives \(target) \(listed.sorted()); Package.swift gives it \(dependencies.sorted())")
        }
        let stale = Set(table.keys).subtracting(manifest.keys)
        #expect(stale.isEmpty, "docs/design.md lists \(stale.sorted()), which Package.swift does not declare")
    }

    @Test func thePicturesNameEveryTarget() throws {
        let manifest = try Self.manifest.get()
        // The picture: the section's first indented block.
        let section = try Self.section()
        let picture = section.drop { !$0.hasPrefix("    ") }.prefix { $0.hasPrefix("    ") }
        #expect(!picture.isEmpty, "docs/design.md's section \"Targets and layers\" has no picture")
        let design = Self.words(picture.joined(separator: "\n"))
        let package = try String(contentsOfFile: Self.root + "/Package.swift", encoding: .utf8)
        let comment = Self.words(
            package.components(separatedBy: "\n").prefix { !$0.hasPrefix("let package") }
                .filter { $0.hasPrefix("//") }.joined(separator: "\n"))
        for target in Set(manifest.targets.keys).subtracting(manifest.tests).sorted() {
            let inDesign = design.contains(target), inPackage = comment.contains(target)
            #expect(inDesign, "docs/design.md's layer picture leaves out \(target)")
            #expect(inPackage, "the picture at the top of Package.swift leaves out \(target)")
        }
    }
}
