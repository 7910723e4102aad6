import ArgumentParser
import KeychainCore
import TeamCore
#if canImport(Glibc)
import Glibc
#endif

/// Which team keychain a `kc team` command acts on (`add`, `add-runner`, `remove`,
/// `members`, `head`, `verify`, `heartbeat`): `-k team:NAME` when given, else
/// `KC_KEYCHAIN` when it names a team keychain (`team:NAME`; a file keychain there is not
/// for these commands), else the configured default team, else the only team this device
/// has joined; with several joined and none of these, a usage error that lists them.
///
///     kc team members                 # the only team joined
///     kc team members -k team:infra   # one of several
struct TeamChoice: ParsableArguments {
    @Option(
        name: .shortAndLong,
        help: ArgumentHelp(
            "The team keychain, team:NAME (default: $KC_KEYCHAIN when it is a team:NAME, else the config file's team, else the only team joined).",
            valueName: "team:NAME"))
    var keychain: String?

    /// The configured default team: the configuration file's `team` (docs/config.md), nil
    /// when none is configured; the one place it enters. Read only when neither `-k` nor
    /// `KC_KEYCHAIN` chose. - Throws: the file's own error (206, 220) when it is malformed,
    /// unsafe or unreadable, as kc's commands do.
    static func configured() throws -> String? { try ConfigFile.load().team?.value }

    /// The NAME of the team keychain chosen. - Throws: see `resolve`.
    func name() throws -> String {
        try Self.resolve(
            flag: keychain, environment: getenv("KC_KEYCHAIN").map { String(cString: $0) }, configured: Self.configured,
            joined: Self.joinedTeams)
    }

    /// The team NAME chosen, in this order: `flag` (`-k`), `environment` (`KC_KEYCHAIN`)
    /// when it names a team keychain, `configured` (a configuration file's default team),
    /// the only name `joined` answers.
    /// - Throws: errSecParam for a malformed name (in `KC_KEYCHAIN` too); errSecNoSuchKeychain when nothing chooses
    ///   and no team is joined; `SeveralJoined` (exit 2) listing the teams when several are.
    static func resolve(flag: String?, environment: String?, configured: () throws -> String?, joined: () -> [String]) throws -> String {
        if let flag { return try teamName(flag) }
        // A malformed `team:…` is an error, never passed over for another team: only a value
        // naming a file keychain leaves the choice to what follows.
        if let environment, case .team(let name) = try KeychainAddress(environment) { return name }
        if let configured = try configured(), !configured.isEmpty { return try teamName(configured) }
        let teams = joined()
        guard teams.count <= 1 else { throw SeveralJoined(teams: teams) }
        guard let only = teams.first else {
            throw KeychainError(
                errSecNoSuchKeychain, "this device has joined no team keychain",
                hint: "join one with `kc team join JOIN-STRING`, or create one with `kc team create NAME --dsn DSN`")
        }
        return only
    }

    /// Several teams joined and nothing chose one: a usage error (exit 2) in kc-team's voice,
    /// `kc-team: …` and `kc-team: hint: …` (`main.swift`).
    struct SeveralJoined: Error {
        let teams: [String]
        var message: String {
            "this device has joined \(teams.count) team keychains (\(teams.map { TeamName.prefix + $0 }.joined(separator: ", "))): which one?"
        }
        var hint: String { "say which with -k team:NAME, e.g. -k \(TeamName.prefix + (teams.first ?? "NAME"))" }
    }

    /// The names of the team keychains this device has joined: its team files
    /// (`$XDG_DATA_HOME/kc/teams/NAME.team`) with a valid NAME, sorted.
    static func joinedTeams() -> [String] {
        guard let folder = opendir(TeamFile.directory) else { return [] }
        defer { closedir(folder) }
        var names: [String] = []
        while let entry = readdir(folder) {
            let file = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
            }
            guard file.hasSuffix(".team"), entry.pointee.d_type == DT_REG || entry.pointee.d_type == DT_UNKNOWN else { continue }
            let name = String(file.dropLast(".team".count))
            if (try? TeamName.validate(name)) != nil { names.append(name) }
        }
        return names.sorted()
    }
}
