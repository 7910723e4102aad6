import Foundation
import Testing
import KeychainFormats

/// The dates import sources write: ISO 8601 variants and Firefox's milliseconds.
@Suite struct ImportDatesTests {
    static let noon = epoch(2024, 1, 15, 10, 20, 30)

    @Test func iso8601Variants() {
        let cases: [(String, Double)] = [
            ("2024-01-15T10:20:30Z", Self.noon),
            ("2024-01-15 10:20:30", Self.noon),
            ("  2024-01-15T10:20:30Z\n", Self.noon),
            ("2024-01-15T10:20:30.250Z", Self.noon + 0.25),
            ("2024-01-15T12:20:30+02:00", Self.noon),
            ("2024-01-15T05:20:30-0500", Self.noon),
            ("2024-01-15T11:20:30+01", Self.noon)
        ]
        for (text, seconds) in cases {
            #expect(ImportDates.iso8601(text)?.timeIntervalSince1970 == seconds, "\(text)")
        }
    }

    @Test func iso8601Rejects() {
        for text in [
            "", "2024-01-15", "2024-13-01T00:00:00Z", "2024-01-32T00:00:00Z", "2024-01-15T24:00:00Z",
            "2024-01-15T10:20:30Zjunk", "2024-01-15T10:20:30+2:00", "15/01/2024 10:20:30", "2024-01-15X10:20:30"
        ] {
            #expect(ImportDates.iso8601(text) == nil, "\(text)")
        }
    }

    @Test func milliseconds() {
        #expect(ImportDates.milliseconds("1700000000000")?.timeIntervalSince1970 == 1_700_000_000)
        #expect(ImportDates.milliseconds(" 1700000000123 ")?.timeIntervalSince1970 == 1_700_000_000.123)
        for text in ["0", "-5", "abc", "", "1.5"] {
            #expect(ImportDates.milliseconds(text) == nil, "\(text)")
        }
    }
}
