import Foundation
import Testing
import KCTestSupport

/// Issue 21: what a new user tripped over, run the way the user ran it.
@Suite struct FirstHourTests {
    /// `kc lock -k wrok` (a typo) exited 0 while the real keychain stayed unlocked.
    @Test func lockingAKeychainThatDoesNotExistIsExit50() throws {
        let h = try KCHome()
        try h.createKeychain()
        let out = try h.kc(["lock", "-k", "wrok"])
        #expect(out.status == 50, "\(out.stderr)")
        #expect(out.stderr.hasPrefix("kc: no keychain at "), "\(out.stderr)")
        #expect(try h.kc(["lock"]).status == 0, "the existing keychain still locks")
    }

    /// `kc delete --all` with no attribute deleted every generic password without a word.
    /// In a script it now needs --yes, and --all always says how many went.
    @Test func deleteAllWithoutAFilterNeedsYesInAScript() throws {
        let h = try KCHome()
        try h.createKeychain()
        for name in ["a", "b", "c"] {
            #expect(try h.kc(["add", "-s", name, "-a", "me", "-w", "s-" + name], password: KCHome.password).status == 0)
        }
        var out = try h.kc(["delete", "--all"], password: KCHome.password)
        #expect(out.status == 206, "\(out.stderr)")
        #expect(out.stderr.contains("would delete all 3 generic items") && out.stderr.contains("--yes"), "\(out.stderr)")
        #expect(try h.kc(["find", "-s", "a", "-w"], password: KCHome.password).stdout == "s-a", "nothing was deleted")
        // An attribute narrows it: no question, and the count is reported.
        out = try h.kc(["delete", "-s", "a", "--all"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr == "kc: deleted 1 item\n", "\(out.stderr)")
        out = try h.kc(["delete", "--all", "--yes"], password: KCHome.password)
        #expect(out.status == 0 && out.stderr == "kc: deleted 2 items\n", "\(out.stderr)")
        #expect(try h.kc(["find", "--all"], password: KCHome.password).status == 44)
    }
}
