import Foundation
import Testing
import KCTestSupport

/// Issue 29, item 9: wrong passwords through the agent back off. A process of the user with
/// no terminal used to get one Argon2id per guess, as fast as the agent could derive; now
/// one typo is free, then the agent tries no password for 1 s, 2 s, 4 s … (doubling per
/// wrong one, at most an hour), and a right one resets it (docs/security.md, "Other
/// processes of your user").
@Suite struct PasswordBackoffTests {
    @Test func wrongUnlockPasswordsDoubleTheWaitAndARightOneResetsIt() throws {
        let h = try KCHome()
        try h.createKeychain()
        // The agent runs (a keychain held), so every unlock below goes to the same agent.
        #expect(try h.kc(["unlock"], password: KCHome.password).status == 0)
        var out = try h.kc(["unlock"], password: "guess-1")
        #expect(out.status == 51 && out.stderr.contains("wrong password"), "the first typo is tried: \(out.stderr)")
        out = try h.kc(["unlock"], password: "guess-2")
        #expect(out.status == 51 && out.stderr.contains("wrong password") && !out.stderr.contains("not tried"), "\(out.stderr)")
        // Two wrong in a row: the next password, even the right one, waits 1 s untried.
        let refusedAt = Date()
        out = try h.kc(["unlock"], password: "guess-3")
        #expect(out.status == 51 && out.stderr.contains("2 wrong passwords in a row") && out.stderr.contains("this one was not tried"), "\(out.stderr)")
        out = try h.kc(["unlock"], password: KCHome.password)
        let stillWaiting = Date().timeIntervalSince(refusedAt) < 1
        if stillWaiting { #expect(out.status == 51 && out.stderr.contains("not tried"), "\(out.stderr)") }
        // After the wait: a wrong one is tried (and now three in a row: 2 s), a right one after that wait resets.
        Thread.sleep(forTimeInterval: 1.1)
        out = try h.kc(["unlock"], password: "guess-4")
        #expect(out.status == 51 && !out.stderr.contains("not tried"), "\(out.stderr)")
        out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 51 && out.stderr.contains("3 wrong passwords in a row") && out.stderr.contains("not tried"), "the wait doubled: \(out.stderr)")
        Thread.sleep(forTimeInterval: 2.1)
        out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 0, "\(out.stderr)")
        // Reset: one typo is free again, then the right password works at once.
        #expect(try h.kc(["unlock"], password: "guess-5").status == 51)
        out = try h.kc(["unlock"], password: KCHome.password)
        #expect(out.status == 0, "after a reset one typo costs nothing: \(out.stderr)")
        #expect(try h.kc(["find", "-s", "nothing"]).status == 44, "the agent holds it")
    }
}
