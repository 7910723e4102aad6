import Foundation
import Testing

/// docs/security.md and docs/team.md name, for each promise, the test that attacks it
/// (`[Suite.test]`, `[Suite.test, .other]`, or a bare `Suite.test` in a table). A name
/// that no longer resolves is a promise nobody attacks any more: a renamed or deleted test
/// must take its documentation with it. This test reads the documents and the test sources
/// and fails on every reference that names no `@Test` function of that suite.
@Suite struct PromiseIndexTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent().path

    /// The documents whose promises must each name a test that exists.
    static let documents = ["docs/security.md", "docs/team.md"]

    /// Every Swift file under Tests/, read once.
    static let sources: [String] = {
        let tests = root + "/Tests"
        guard let walker = FileManager.default.enumerator(atPath: tests) else { return [] }
        var out: [String] = []
        while let path = walker.nextObject() as? String {
            guard path.hasSuffix(".swift"),
                let text = try? String(contentsOfFile: tests + "/" + path, encoding: .utf8)
            else { continue }
            out.append(text)
        }
        return out
    }()

    /// A reference as written in a document: a suite and, when given, a test of it.
    struct Reference: CustomStringConvertible {
        let document: String
        let suite: String
        let test: String?
        var description: String { "\(document): \(suite)" + (test.map { ".\($0)" } ?? "") }
    }

    /// The references of one document: `SuiteTests`, `SuiteTests.name`, and the
    /// `, .other` names that follow one in the same bracket or cell (a folder of a path,
    /// `Tests/TeamTests/…`, is not a reference).
    static func references(in document: String) throws -> [Reference] {
        let text = try String(contentsOfFile: root + "/" + document, encoding: .utf8)
        let pattern = try NSRegularExpression(
            pattern: #"(?<![/\w])([A-Z][A-Za-z0-9]*Tests)\b(?!/)((?:\.[A-Za-z_][A-Za-z0-9_]*)?)((?:,\s*\.[A-Za-z_][A-Za-z0-9_]*)*)"#)
        var out: [Reference] = []
        let ns = text as NSString
        for match in pattern.matches(in: text, range: NSRange(location: 0, length: ns.length)) {
            let suite = ns.substring(with: match.range(at: 1))
            var names: [String] = []
            let first = ns.substring(with: match.range(at: 2))
            if !first.isEmpty { names.append(String(first.dropFirst())) }
            for part in ns.substring(with: match.range(at: 3)).split(separator: ",") {
                let name = part.trimmingCharacters(in: .whitespaces)
                if name.hasPrefix(".") { names.append(String(name.dropFirst())) }
            }
            if names.isEmpty { out.append(Reference(document: document, suite: suite, test: nil)) }
            for name in names { out.append(Reference(document: document, suite: suite, test: name)) }
        }
        return out
    }

    /// Whether a suite of that name is declared (or extended) under Tests/ and, when a test
    /// is named, whether one of those files has a `func` of that name marked `@Test`.
    static func resolves(_ reference: Reference) -> Bool {
        let declaration = try? NSRegularExpression(pattern: #"\b(struct|class|enum|extension)\s+"# + reference.suite + #"\b"#)
        let files = sources.filter { text in
            declaration?.firstMatch(in: text, range: NSRange(location: 0, length: (text as NSString).length)) != nil
        }
        guard let test = reference.test else { return !files.isEmpty }
        for text in files {
            let source = text as NSString
            var from = 0
            while true {
                let found = source.range(of: "func \(test)(", range: NSRange(location: from, length: source.length - from))
                if found.location == NSNotFound { break }
                let start = max(0, found.location - 600)
                let before = source.substring(with: NSRange(location: start, length: found.location - start)) as NSString
                // The nearest attribute block above the function must be a test's.
                let lastTest = before.range(of: "@Test", options: .backwards)
                if lastTest.location != NSNotFound,
                    !before.substring(from: lastTest.location + lastTest.length).contains("func ")
                {
                    return true
                }
                from = found.location + found.length
            }
        }
        return false
    }

    @Test func everyTestTheSecurityDocumentsNameExists() throws {
        var count = 0
        for document in Self.documents {
            let references = try Self.references(in: document)
            count += references.count
            for reference in references {
                #expect(Self.resolves(reference), "\(reference) names no @Test of that suite under Tests/")
            }
        }
        // The documents cite well over a hundred tests; a parse that finds few is broken.
        #expect(count > 80, "only \(count) test references found in \(Self.documents)")
    }

    /// The adversaries the documents point to (`Tests/…` paths in backticks) exist.
    @Test func everyAdversaryTheSecurityDocumentsNameExists() throws {
        let pattern = try NSRegularExpression(pattern: #"`(Tests/[A-Za-z0-9_/.-]+\.swift)`"#)
        var count = 0
        for document in Self.documents {
            let text = try String(contentsOfFile: Self.root + "/" + document, encoding: .utf8) as NSString
            for match in pattern.matches(in: text as String, range: NSRange(location: 0, length: text.length)) {
                let path = text.substring(with: match.range(at: 1))
                count += 1
                #expect(FileManager.default.fileExists(atPath: Self.root + "/" + path), "\(document) names \(path), which does not exist")
            }
        }
        #expect(count >= 5, "the documents name the adversaries under Tests/ (\(count) found)")
    }

    @Test func aNameThatDoesNotExistIsCaught() {
        #expect(!Self.resolves(Reference(document: "-", suite: "PromiseIndexTests", test: "noSuchTest")))
        #expect(!Self.resolves(Reference(document: "-", suite: "NoSuchSuiteTests", test: nil)))
        #expect(Self.resolves(Reference(document: "-", suite: "PromiseIndexTests", test: "aNameThatDoesNotExistIsCaught")))
    }
}
