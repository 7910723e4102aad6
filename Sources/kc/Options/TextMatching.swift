import ArgumentParser
import KeychainCore

/// How the text attributes given on the command line (-s, -a, -l, -D, -j, -G, -d, -p,
/// --tag) match an item's, once parsed (by ArgumentParser through `MatchOptions`, or by
/// `FindFastPath`). Exact matching is an index lookup; the rest are kc extensions that scan
/// and decrypt every item of the class (`docs/commands.md`, "Matching").
struct TextMatching: Equatable {
    /// --ignore-case.
    var ignoreCase = false
    /// --contains: the given text occurs anywhere in the item's.
    var contains = false
    /// --prefix: the item's text starts with the given text.
    var prefix = false

    func validate() throws {
        if contains && prefix { throw ValidationError("choose one of --contains and --prefix") }
    }

    /// Whether the values given must equal the item's byte for byte (an index lookup).
    var isExact: Bool { !ignoreCase && !contains && !prefix }

    /// The query keys that ask for this matching (none for exact matching).
    func apply(to query: inout [String: Any]) {
        if ignoreCase { query[kSecMatchCaseInsensitive] = true }
        if contains { query[kcMatchText] = kcMatchTextContains }
        if prefix { query[kcMatchText] = kcMatchTextPrefix }
    }

    /// The flags that ask for this matching, as a user types them (for suggested commands).
    var arguments: [String] {
        [(ignoreCase, Options.ignoreCase), (contains, Options.contains), (prefix, Options.prefix)].filter(\.0).map(\.1.shortest)
    }

    /// How `summary` (`ItemFields.summary`) matched, for messages: "service=git" stays as
    /// it is when exact, else gains "(containing, ignoring case)" or the like.
    func describe(_ summary: String) -> String {
        let ways = [(contains, "containing"), (prefix, "as a prefix"), (ignoreCase, "ignoring case")]
            .filter(\.0).map(\.1)
        return ways.isEmpty ? summary : "\(summary) (\(ways.joined(separator: ", ")))"
    }
}
