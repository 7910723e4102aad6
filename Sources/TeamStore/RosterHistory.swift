import TeamCore

/// When each member of a team keychain entered the roster and which admin signed it in, and
/// when and by whom members left it, as the verified roster entries say (only entries
/// `verifyRosterEntry` accepted, or this member's own, are taken). `kc team members` shows
/// the additions; a device the log shows removed is told so, by whom and when
/// (`TeamAuthority.removed`), where any other refusal stays errSecAuthFailed.
///
///     var history = RosterHistory(root: genesis.root, at: genesis.created)
///     history.take(entry, from: rosterBefore, to: entry.roster)   // after its signature was checked
///     history.added[bob.memberID]?.by   // "admin-laptop"
package struct RosterHistory: Sendable, Equatable {
    /// A change of the roster: the time of its signed entry and the name of the admin who
    /// signed it (a member of the roster before it).
    package struct Change: Sendable, Equatable {
        package let time: UInt64
        package let by: String
    }

    /// Member id → the roster entry that last added it (the genesis, for the root admin).
    package private(set) var added: [[UInt8]: Change] = [:]
    /// Member id → the roster entry that last removed it; only members not in the roster.
    package private(set) var removed: [[UInt8]: Change] = [:]

    /// An empty history (a view not yet verified).
    init() {}

    /// The history at the genesis: its root admin, added by itself when it was created.
    init(root: MemberRecord, at time: UInt64) {
        added[root.memberID] = Change(time: time, by: root.name)
    }

    /// Takes a roster entry whose signature was checked against `old`, the roster before
    /// it, as carrying `new`: members only in `new` were added, members only in `old`
    /// removed, both at the entry's time by its signer.
    mutating func take(_ entry: LogEntry, from old: Roster, to new: Roster) {
        let change = Change(time: entry.time, by: old.member(entry.signer)?.name ?? "an admin")
        let before = Set(old.members.map(\.memberID)), after = Set(new.members.map(\.memberID))
        for m in new.members where !before.contains(m.memberID) {
            added[m.memberID] = change
            removed[m.memberID] = nil
        }
        for m in old.members where !after.contains(m.memberID) {
            removed[m.memberID] = change
            added[m.memberID] = nil
        }
    }
}
