import KeychainCore
import TeamCore
#if canImport(Glibc)
import Glibc
#endif

/// Entry times (`docs/team.md`, "Entry times"; issue 29, item 4): they never go back along
/// the log and never lie more than `clockSkew` ahead of the reader's clock.
extension TeamAuthority {
    /// Refuses an entry dated before the entry it follows or later than now plus
    /// `clockSkew` (`docs/team.md`, "Entry times"): one entry dated in the future would
    /// otherwise switch off the freeze check (`KC_TEAM_MAX_STALENESS`) until that date.
    func checkTime(_ e: LogEntry, after previousTime: UInt64, now: UInt64) throws {
        guard e.time >= previousTime else {
            throw serverError("entry \(e.generation) is dated \(previousTime - e.time) s before the entry it follows: entry times never go back")
        }
        guard e.time <= now &+ Self.clockSkew else {
            throw serverError(
                "entry \(e.generation) is dated \(e.time - now) s in the future, more than the \(Self.clockSkew) s of clock skew allowed: a writer's clock is wrong, or it set the date to defeat the freeze check"
            )
        }
    }

    /// How far (seconds) an entry's time may lie ahead of this device's clock.
    package static let clockSkew: UInt64 = 300

    /// The time a new entry is signed with: now, or the time of the entry it follows when
    /// that is later (another writer's clock ahead of this one, within `clockSkew`), so that
    /// entry times never go back along the log.
    var nextEntryTime: UInt64 { max(Self.now, lastTime) }
}
