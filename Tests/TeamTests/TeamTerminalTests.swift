import Foundation
import Testing
import KeychainCore
import KCTestSupport

/// Issue 29, item 11, for team keychains: a member's name is text from the signed roster
/// on the server, and `kc team members` printed it raw; it goes through the one escaping
/// function (`TerminalSafe`) as every other message does. Since issue 32's attack review,
/// kc-team also refuses a name holding a control or bidirectional-text character at
/// create, join, add and add-runner (`MemberName`): the refusal quotes the name escaped,
/// and nothing is added for `members` to print.
@Suite struct TeamTerminalTests {
    @Test func memberNamesWithControlsAreRefusedAndNeverPrintedRaw() throws {
        let dsn = try TestPostgres.shared.newDatabase()
        let (admin, _) = try TeamCommandTests.admin(dsn)
        let name = "ci\u{1B}]0;owned\u{07}\u{9D}52;c;eA==\u{9C}\u{202E}tsil"
        let refused = try TeamCommandTests.run(
            admin, ["team", "add-runner", name, "-k", "team:infra", "--role", "reader"], expect: 206)
        let members = try TeamCommandTests.run(admin, ["team", "members", "-k", "team:infra"])
        #expect(!members.stdout.contains("owned") && !members.stdout.contains("tsil"), "\(members.stdout)")
        for (what, text) in [("refusal", refused.stderr), ("members", members.stdout)] {
            #expect(
                !text.unicodeScalars.contains { ["\u{1B}", "\u{07}", "\u{9D}", "\u{9C}", "\u{202E}"].contains($0) },
                "\(what): a raw control reached the output: \(text.debugDescription)")
        }
        #expect(refused.stderr.contains("\\u001b") || refused.stderr.contains("U+1B"), "\(refused.stderr.debugDescription)")
    }
}
