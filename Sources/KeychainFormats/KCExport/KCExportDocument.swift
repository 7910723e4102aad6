import KeychainCore
#if canImport(FoundationEssentials)
import FoundationEssentials
#endif

/// kc's own export, format "kc-export" version 1 (`docs/import-export.md`, "Export"):
/// every class and attribute, dates kept, so export → import → export gives the same
/// document. `kc export` writes it with `json`, `kc import` reads it with `decode(_:)`.
///
///     {"format":"kc-export","version":1,"exported":"2026-11-22T10:32:19Z","items":[…]}
///
/// Reading uses JSONDecoder; writing uses kc's JSON writer, the one `kc find --json` uses,
/// because FoundationEssentials' JSONEncoder orders object keys by hash (a new order each
/// run) unless sorted, and writes C1 control characters raw (`docs/design.md`).
package struct KCExportDocument: Decodable, Equatable {
    /// The value of `"format"`.
    package static let formatName = "kc-export"
    /// The version this kc writes and reads.
    package static let version = 1

    /// When the export was made (whole seconds when read back); nil when a document has none.
    package var exported: Date?
    /// Each element of `"items"`: an item, or why that element is not one (an import fails
    /// on it, or skips it with `--skip-invalid`). A document kc writes has only items.
    package var items: [Result<KCExportItem, KeychainError>]

    /// A document to write.
    package init(exported: Date, items: [KCExportItem]) {
        self.exported = exported
        self.items = items.map { .success($0) }
    }

    /// Reads a whole document.
    ///
    ///     let document = try KCExportDocument.decode(bytes)
    ///
    /// - Throws: errSecParam when the bytes are not JSON, or there is no `"version"` or no
    ///   `"items"` list; errSecWrongSecVersion for a version other than 1. An element of
    ///   `"items"` that is not a valid item is not an error here: it is a failure in `items`.
    package static func decode(_ bytes: UnsafeRawBufferPointer) throws -> KCExportDocument {
        do {
            return try JSONDecoder().decode(KCExportDocument.self, from: Data(bytes))
        } catch let error as KeychainError {
            throw error
        } catch let DecodingError.dataCorrupted(context) {
            throw KeychainError(errSecParam, "the input is not valid JSON: \(context.debugDescription)")
        } catch {
            throw KeychainError(errSecParam, "the input is not valid JSON")
        }
    }

    /// Reads the document's fields; see `decode(_:)`.
    package init(from decoder: any Decoder) throws {
        guard let container = try? decoder.container(keyedBy: KCExportItem.Key.self),
            let version = try? container.decode(Int.self, forKey: KCExportItem.Key("version"))
        else {
            throw KeychainError(errSecParam, "a kc export has a \"version\"; this one has none")
        }
        guard version == Self.version else {
            throw KeychainError(
                errSecWrongSecVersion, "this kc export has version \(version); this kc reads version \(Self.version)",
                hint: "import it with the kc that wrote it, or a newer one")
        }
        guard var list = try? container.nestedUnkeyedContainer(forKey: KCExportItem.Key("items")) else {
            throw KeychainError(errSecParam, "a kc export has an \"items\" list; this one has none")
        }
        exported = (try? container.decode(String.self, forKey: KCExportItem.Key("exported"))).flatMap(ImportDates.iso8601)
        items = []
        while !list.isAtEnd { items.append(try list.decode(Element.self).result) }
    }

    /// The document as kc writes it: one line, fields in a fixed order, each item as
    /// `kc find --json -g` prints it, binary values always `{"base64": …}`.
    package var json: String {
        let objects = items.compactMap { try? $0.get().json }
        return JSON.object([
            ("format", JSON.string(Self.formatName)), ("version", String(Self.version)),
            ("exported", JSON.string(ISO8601.string(exported ?? Date()))),
            ("items", JSON.array(objects))
        ]) + "\n"
    }

    /// The entries to import, "item 1", "item 2", … in the document's order.
    package var entries: [ImportEntry] {
        items.enumerated().map { index, element in
            let source = "item \(index + 1)"
            switch element {
            case .success(let item):
                return ImportEntry(source: source, name: item.name, items: [item.importItem(source: source)])
            case .failure(let error):
                return .failed(source, .malformed(error.message))
            }
        }
    }

    /// One element of `"items"`, read without failing the document.
    private struct Element: Decodable {
        var result: Result<KCExportItem, KeychainError>

        init(from decoder: any Decoder) throws {
            do {
                result = .success(try KCExportItem(from: decoder))
            } catch let error as KeychainError {
                result = .failure(error)
            } catch {
                result = .failure(KeychainError(errSecParam, "the item cannot be read"))
            }
        }
    }
}
