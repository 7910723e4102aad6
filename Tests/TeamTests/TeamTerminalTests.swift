import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Issue 29, item 11, for team keychains: a member's name is text from the signed roster
/// on the server, and `kc team members` printed it raw; now it goes through the one
/// escaping function (`TerminalSafe`) as every other message does.
@Suite struct TeamTerminalTests {
    @Test func memberNamesAreEscapedInTheListAndTheNotes() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let (admin, _) = try TeamCommandTests.admin(dsn)
        let name = "ci\u{1B}]0;owned\u{07}\u{9D}52;c;eA==\u{9C}\u{202E}tsil"
        let added = try TeamCommandTests.run(admin, ["team", "add-runner", name, "-k", "team:infra", "--role", "reader"])
        let members = try TeamCommandTests.run(admin, ["team", "members", "-k", "team:infra"])
        for (what, text) in [("note", added.stderr), ("members", members.stdout)] {
            #expect(
                !text.unicodeScalars.contains { ["\u{1B}", "\u{07}", "\u{9D}", "\u{9C}", "\u{202E}"].contains($0) },
                "\(what): a raw control reached the output: \(text.debugDescription)")
            #expect(text.contains("ci\\u001b]0;owned\\u0007\\u009d52;c;eA==\\u009c\\u202etsil"), "\(what): \(text.debugDescription)")
        }
    }
}
