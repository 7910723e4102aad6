import Testing
import KeychainCore
import KeychainFormats

/// CSVTable: RFC 4180 with LF or CRLF, a byte-order mark, quoted fields across lines, and a
/// named problem for each kind of malformed record.
@Suite struct CSVTableTests {
    @Test func bomCRLFQuotesAndEmbeddedNewlines() throws {
        let table = try Fixtures.table("csv/table/bom-crlf-embedded-newline.csv")
        #expect(table.header == ["a", "b", "c"], "the byte-order mark is not part of the first name")
        #expect(table.records.map(\.line) == [2, 5, 6], "the blank line 4 is skipped; a record's line is where it starts")
        #expect(table.records.map(\.fields) == [["1", "x\r\ny", "3"], ["", "\"q\"", ""], ["last", "row", "end"]])
        #expect(table.records.allSatisfy { $0.problem == nil })
        #expect(table.column("b") == 1 && table.column("z", "c") == 2 && table.column("z") == nil)
    }

    @Test func quoteInsideAnUnquotedField() throws {
        let table = try Fixtures.table("csv/table/quote-inside-field.csv")
        #expect(table.records.map(\.problem) == [nil, "a quote inside field 1 that does not start with one"])
        #expect(table.records[1].line == 3 && table.records[1].fields.isEmpty)
    }

    @Test func textAfterAClosingQuote() throws {
        let table = try Fixtures.table("csv/table/text-after-closing-quote.csv")
        #expect(table.records.map(\.problem) == ["text after the closing quote of field 1"])
    }

    @Test func wrongFieldCount() throws {
        let table = try Fixtures.table("csv/table/wrong-field-count.csv")
        #expect(table.records.map(\.problem) == ["2 fields where the header has 3", "4 fields where the header has 3", nil])
        #expect(table.records[2].fields == ["1", "2", "3"])
    }

    @Test func invalidUTF8() throws {
        let table = try Fixtures.table("csv/table/invalid-utf8.csv")
        #expect(table.records.map(\.problem) == ["field 1 is not valid UTF-8", nil])
        #expect(table.records[1].fields == ["ok", "3"])
    }

    @Test func unterminatedQuote() throws {
        let table = try Fixtures.table("csv/table/unterminated-quote.csv")
        #expect(table.records.count == 1)
        #expect(table.records[0].line == 2 && table.records[0].problem == "a quoted field that never ends")
    }

    @Test func aFieldOverOneMiB() throws {
        let bytes = Array("a,b\nx,".utf8) + [UInt8](repeating: UInt8(ascii: "A"), count: CSVTable.maxField + 1) + Array("\nok,1\n".utf8)
        let table = try bytes.withUnsafeBytes { try CSVTable($0) }
        #expect(table.records.map(\.problem) == ["field 2 is longer than 1048576 bytes", nil])
    }

    @Test func malformedHeaderOrNoHeaderIsAnError() throws {
        var error = keychainError { _ = try Fixtures.table("csv/table/malformed-header.csv") }
        #expect(error?.status == errSecParam && error?.message == "line 1: a quoted field that never ends (in the header)")
        error = keychainError { _ = try Fixtures.table("csv/table/blank-lines-only.csv") }
        #expect(error?.status == errSecParam && error?.message == "the input is empty")
    }

    /// A malformed record reaches the importer as a malformed entry named by its line.
    @Test func malformedRecordsBecomeMalformedEntries() throws {
        let table = try Fixtures.table("csv/table/wrong-field-count.csv")
        let entries = CSVFormats.entries(table, format: .chromeCSV)
        #expect(entries.map(\.source) == ["line 2", "line 3", "line 4"])
        // The good row has none of Chrome's columns: read, then refused for having no name.
        #expect(
            entries.map(\.malformed) == [
                "2 fields where the header has 3", "4 fields where the header has 3",
                "the entry has no title, address or username"
            ])
    }
}
