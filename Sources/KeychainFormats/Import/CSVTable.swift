import KeychainCore

/// A CSV file read strictly (RFC 4180 with LF or CRLF line ends): a header and records,
/// each with the line it starts on. A record that breaks the rules carries its problem
/// instead of fields, so the importer can fail on it or, with `--skip-invalid`, skip it.
package struct CSVTable {
    /// One record: its first line and its fields, or what is wrong with it.
    package struct Record {
        /// The line the record starts on (a quoted field may span several).
        package var line: Int
        /// The fields, empty when there is a problem.
        package var fields: [String]
        /// Why the record breaks the rules, nil when it does not.
        package var problem: String?
    }

    /// The longest field kc reads: larger than any password, far smaller than memory.
    package static let maxField = 1 << 20
    /// The most rows one import reads (memory stays bounded whatever the input).
    package static let maxRecords = 1_000_000

    package var header: [String]
    package var records: [Record]

    /// Splits `bytes` into records. The first non-empty record is the header; a byte-order
    /// mark before it is ignored. Blank lines are skipped.
    /// - Throws: errSecParam when there is no header or the header itself is malformed.
    package init(_ bytes: UnsafeRawBufferPointer) throws {
        guard var all = Self.split(bytes) else {
            throw KeychainError(
                errSecDataTooLarge, "the input has more than \(Self.maxRecords) rows; kc imports at most that many at once",
                hint: "split the file and import the parts")
        }
        guard !all.isEmpty else { throw KeychainError(errSecParam, "the input is empty") }
        let first = all.removeFirst()
        if let problem = first.problem { throw KeychainError(errSecParam, "line \(first.line): \(problem) (in the header)") }
        header = first.fields
        records = all
        for i in records.indices where records[i].problem == nil && records[i].fields.count != header.count {
            records[i].problem = "\(records[i].fields.count) fields where the header has \(header.count)"
        }
    }

    /// The column index of the first header name equal (ignoring case and spaces) to one of `names`.
    package func column(_ names: String...) -> Int? {
        let normal = header.map { $0.trimmingSpaces.lowercased() }
        for name in names { if let i = normal.firstIndex(of: name) { return i } }
        return nil
    }

    /// The records, or nil past `maxRecords`.
    private static func split(_ bytes: UnsafeRawBufferPointer) -> [Record]? {
        var records: [Record] = []
        var fields: [String] = []
        var field: [UInt8] = []
        var problem: String?
        var line = 1, recordLine = 1
        var inQuotes = false, wasQuoted = false, afterQuote = false
        var i = 0
        if bytes.count >= 3 && bytes[0] == 0xEF && bytes[1] == 0xBB && bytes[2] == 0xBF { i = 3 }

        func endField() {
            if problem == nil {
                if let s = String(validating: field, as: UTF8.self) {
                    fields.append(s)
                } else {
                    problem = "field \(fields.count + 1) is not valid UTF-8"
                }
            }
            field.removeAll(keepingCapacity: true)
            wasQuoted = false
            afterQuote = false
        }
        func endRecord() {
            endField()
            let blank = fields.count == 1 && fields[0].isEmpty && problem == nil
            if !blank && records.count <= maxRecords { records.append(Record(line: recordLine, fields: problem == nil ? fields : [], problem: problem)) }
            fields.removeAll()
            problem = nil
            recordLine = line
        }
        func append(_ b: UInt8) {
            if field.count < maxField {
                field.append(b)
            } else if problem == nil {
                problem = "field \(fields.count + 1) is longer than \(maxField) bytes"
            }
        }

        while i < bytes.count {
            let b = bytes[i]
            i += 1
            if inQuotes {
                if b == UInt8(ascii: "\"") {
                    if i < bytes.count && bytes[i] == UInt8(ascii: "\"") {
                        append(b)
                        i += 1
                    } else {
                        inQuotes = false
                        afterQuote = true
                    }
                } else {
                    if b == 0x0A { line += 1 }
                    append(b)
                }
                continue
            }
            switch b {
            case UInt8(ascii: ","):
                endField()
            case 0x0A:
                line += 1
                endRecord()
            case 0x0D where i < bytes.count && bytes[i] == 0x0A:
                continue
            case UInt8(ascii: "\""):
                if field.isEmpty && !wasQuoted && !afterQuote {
                    inQuotes = true
                    wasQuoted = true
                } else if problem == nil {
                    problem = "a quote inside field \(fields.count + 1) that does not start with one"
                }
            default:
                if afterQuote {
                    if problem == nil { problem = "text after the closing quote of field \(fields.count + 1)" }
                } else {
                    append(b)
                }
            }
        }
        if inQuotes && problem == nil { problem = "a quoted field that never ends" }
        if !(fields.isEmpty && field.isEmpty && !wasQuoted && problem == nil) || inQuotes { endRecord() }
        return records.count > maxRecords ? nil : records
    }
}

extension String {
    /// Without leading and trailing spaces, tabs and line ends.
    package var trimmingSpaces: String {
        let scalars = unicodeScalars
        guard let start = scalars.firstIndex(where: { !" \t\r\n".unicodeScalars.contains($0) }) else { return "" }
        let end = scalars.lastIndex(where: { !" \t\r\n".unicodeScalars.contains($0) })!
        return String(scalars[start...end])
    }
}
